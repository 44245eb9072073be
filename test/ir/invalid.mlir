// RUN: ein-opt %s -split-input-file -verify-diagnostics
// One case per verifier message of the ein dialect.

func.func @dynamic(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'ein.neg' op dynamic dimensions are not supported, got 'tensor<?x4xf32>'}}
  %0 = ein.neg %x : tensor<?x4xf32>
  return
}

// -----

func.func @axes_rank(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'ein.exp' op axes has 1 names but the result has rank 2}}
  %0 = ein.exp %x {axes = ["i"]} : tensor<3x4xf32>
  return
}

// -----

func.func @contract_elt(%a: tensor<3x4xf32>, %b: tensor<4x5xbf16>) {
  // expected-error @+1 {{'ein.contract' op operands must have the same element type, got 'f32' and 'bf16'}}
  %0 = ein.contract %a, %b batch [], [] contract [1], [0] : tensor<3x4xf32>, tensor<4x5xbf16> -> tensor<3x5xf32>
  return
}

// -----

func.func @contract_batch_len(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'ein.contract' op lhs_batch and rhs_batch must have the same length, got 1 and 0}}
  %0 = ein.contract %a, %b batch [0], [] contract [2], [0] : tensor<2x3x4xf32>, tensor<4x5xf32> -> tensor<2x3x5xf32>
  return
}

// -----

func.func @contract_contract_len(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'ein.contract' op lhs_contract and rhs_contract must have the same length, got 1 and 2}}
  %0 = ein.contract %a, %b batch [], [] contract [1], [0, 1] : tensor<3x4xf32>, tensor<4x5xf32> -> tensor<3xf32>
  return
}

// -----

func.func @contract_range(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'ein.contract' op lhs_contract index 2 is out of range for lhs of rank 2}}
  %0 = ein.contract %a, %b batch [], [] contract [2], [0] : tensor<3x4xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
  return
}

// -----

func.func @contract_range_rhs(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'ein.contract' op rhs_batch index -1 is out of range for rhs of rank 2}}
  %0 = ein.contract %a, %b batch [0], [-1] contract [1], [0] : tensor<3x4xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
  return
}

// -----

func.func @contract_dup(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) {
  // expected-error @+1 {{'ein.contract' op dimension 0 of lhs appears more than once in lhs_batch and lhs_contract}}
  %0 = ein.contract %a, %b batch [0], [0] contract [0], [1] : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @contract_batch_size(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) {
  // expected-error @+1 {{'ein.contract' op batch dimensions lhs[0] and rhs[0] have different sizes: 2 vs 3}}
  %0 = ein.contract %a, %b batch [0], [0] contract [2], [1] : tensor<2x3x4xf32>, tensor<3x4x5xf32> -> tensor<2x3x5xf32>
  return
}

// -----

func.func @contract_contract_size(%a: tensor<3x4xf32>, %b: tensor<5x6xf32>) {
  // expected-error @+1 {{'ein.contract' op contracting dimensions lhs[1] and rhs[0] have different sizes: 4 vs 5}}
  %0 = ein.contract %a, %b batch [], [] contract [1], [0] : tensor<3x4xf32>, tensor<5x6xf32> -> tensor<3x6xf32>
  return
}

// -----

func.func @contract_shape(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) {
  // expected-error @+1 {{'ein.contract' op result shape [2, 5, 3] does not match the expected shape [2, 3, 5]}}
  %0 = ein.contract %a, %b batch [0], [0] contract [2], [1] : tensor<2x3x4xf32>, tensor<2x4x5xf32> -> tensor<2x5x3xf32>
  return
}

// -----

func.func @transpose_len(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'ein.transpose' op permutation has 1 entries but the input has rank 2}}
  %0 = ein.transpose %x [0] : tensor<3x4xf32> -> tensor<3xf32>
  return
}

// -----

func.func @transpose_range(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'ein.transpose' op permutation index 2 is out of range for rank 2}}
  %0 = ein.transpose %x [2, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @transpose_dup(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'ein.transpose' op permutation index 0 appears more than once}}
  %0 = ein.transpose %x [0, 0] : tensor<3x4xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @transpose_shape(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'ein.transpose' op result shape [3, 4] does not match the expected shape [4, 3]}}
  %0 = ein.transpose %x [1, 0] : tensor<3x4xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'ein.reshape' op input shape [3, 4] (12 elements) and result shape [5, 2] (10 elements) have different element counts}}
  %0 = ein.reshape %x : tensor<3x4xf32> -> tensor<5x2xf32>
  return
}

// -----

func.func @broadcast_len(%x: tensor<4xf32>) {
  // expected-error @+1 {{'ein.broadcast' op dimensions has 2 entries but the input has rank 1}}
  %0 = ein.broadcast %x dims [0, 1] : tensor<4xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @broadcast_range(%x: tensor<4xf32>) {
  // expected-error @+1 {{'ein.broadcast' op dimensions index 2 is out of range for result rank 2}}
  %0 = ein.broadcast %x dims [2] : tensor<4xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @broadcast_order(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'ein.broadcast' op dimensions must be strictly increasing}}
  %0 = ein.broadcast %x dims [1, 0] : tensor<4x3xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @broadcast_size(%x: tensor<3xf32>) {
  // expected-error @+1 {{'ein.broadcast' op input dimension 0 has size 3 but result dimension 1 has size 4 (input shape [3], result shape [2, 4]); sizes must be equal or the input size 1}}
  %0 = ein.broadcast %x dims [1] : tensor<3xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @reduce_range(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'ein.reduce' op dimensions index 2 is out of range for input rank 2}}
  %0 = ein.reduce sum %x dims [2] : tensor<3x4xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @reduce_order(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'ein.reduce' op dimensions must be strictly increasing}}
  %0 = ein.reduce sum %x dims [1, 1] : tensor<3x4xf32> -> tensor<3xf32>
  return
}

// -----

func.func @reduce_shape(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'ein.reduce' op result shape [4] does not match the expected shape [3]}}
  %0 = ein.reduce max %x dims [1] : tensor<3x4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @iota_range() {
  // expected-error @+1 {{'ein.iota' op dimension 2 is out of range for result rank 2}}
  %0 = ein.iota dim 2 : tensor<3x4xi32>
  return
}

// -----

func.func @slice_rank(%x: tensor<f32>) {
  // expected-error @+1 {{'ein.slice' op input must have rank at least 1}}
  %0 = ein.slice %x offset 0 : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @slice_dims(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'ein.slice' op result shape [1, 5] must be the input shape [3, 4] with another dimension 0 (a slice keeps the other dimensions)}}
  %0 = ein.slice %x offset 0 : tensor<3x4xf32> -> tensor<1x5xf32>
  return
}

// -----

func.func @slice_rows(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'ein.slice' op rows [2, 4) are outside dimension 0 of size 3}}
  %0 = ein.slice %x offset 2 : tensor<3x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @slice_negative(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'ein.slice' op rows [-1, 0) are outside dimension 0 of size 3}}
  %0 = ein.slice %x offset -1 : tensor<3x4xf32> -> tensor<1x4xf32>
  return
}

// -----

func.func @slice_type(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'ein.slice' op failed to verify that all of {input, result} have same element type}}
  %0 = ein.slice %x offset 0 : tensor<3x4xf32> -> tensor<1x4xbf16>
  return
}

// -----

func.func @concat_rows(%a: tensor<1x4xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{'ein.concat' op the inputs have 3 rows in all but the result's dimension 0 is 4}}
  %0 = ein.concat %a, %b : tensor<1x4xf32>, tensor<2x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @concat_dims(%a: tensor<1x4xf32>, %b: tensor<2x3xf32>) {
  // expected-error @+1 {{'ein.concat' op input 1 has shape [2, 3], which is not the result shape [3, 4] with another dimension 0}}
  %0 = ein.concat %a, %b : tensor<1x4xf32>, tensor<2x3xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @concat_type(%a: tensor<1x4xf32>, %b: tensor<2x4xbf16>) {
  // expected-error @+1 {{'ein.concat' op input 1 has element type 'bf16' but the result has 'f32'}}
  %0 = ein.concat %a, %b : tensor<1x4xf32>, tensor<2x4xbf16> -> tensor<3x4xf32>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+1 {{'ein.concat' op needs at least one input}}
  %0 = "ein.concat"() : () -> tensor<3x4xf32>
  return
}

// -----

func.func @gather_rank(%t: tensor<f32>, %i: tensor<4xi32>) {
  // expected-error @+1 {{'ein.gather' op table must have rank at least 1}}
  %0 = ein.gather %t, %i : tensor<f32>, tensor<4xi32> -> tensor<4xf32>
  return
}

// -----

func.func @gather_shape(%t: tensor<100x16xf32>, %i: tensor<4x8xi32>) {
  // expected-error @+1 {{'ein.gather' op result shape [4, 16] does not match the expected shape [4, 8, 16]}}
  %0 = ein.gather %t, %i : tensor<100x16xf32>, tensor<4x8xi32> -> tensor<4x16xf32>
  return
}

// -----

func.func @scatter_rank(%u: tensor<4xf32>, %i: tensor<4xi32>) {
  // expected-error @+1 {{'ein.scatter_add' op result must have rank at least 1}}
  %0 = ein.scatter_add %u, %i : tensor<4xf32>, tensor<4xi32> -> tensor<f32>
  return
}

// -----

func.func @scatter_shape(%u: tensor<4x16xf32>, %i: tensor<4x8xi32>) {
  // expected-error @+1 {{'ein.scatter_add' op updates shape [4, 16] does not match the expected shape [4, 8, 16]}}
  %0 = ein.scatter_add %u, %i : tensor<4x16xf32>, tensor<4x8xi32> -> tensor<100x16xf32>
  return
}

// -----
// Type constraints checked by the generated verifiers.

func.func @exp_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{'ein.exp' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float values}}
  %0 = ein.exp %x : tensor<4xi32>
  return
}

// -----

func.func @f64(%x: tensor<4xf64>) {
  // expected-error @+1 {{'ein.neg' op operand #0 must be ranked tensor of}}
  %0 = ein.neg %x : tensor<4xf64>
  return
}

// -----

func.func @cmp_shape(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'ein.cmp' op all non-scalar operands/results must have the same shape and base type}}
  %0 = ein.cmp lt, %a, %b : tensor<4xf32> -> tensor<5xi1>
  return
}

// -----

func.func @select_types(%m: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{'ein.select' op failed to verify that all of {on_true, on_false, result} have same type}}
  %0 = "ein.select"(%m, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return
}

// -----

func.func @constant_type() {
  // expected-error @+1 {{'ein.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "ein.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  return
}

// -----

func.func @reduce_type(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'ein.reduce' op failed to verify that all of {input, result} have same element type}}
  %0 = ein.reduce sum %x dims [1] : tensor<3x4xf32> -> tensor<3xbf16>
  return
}

// -----

func.func @dropout_p(%x: tensor<4xf32>) {
  // expected-error @+1 {{'ein.dropout' op p must be in [0, 1), got 1.000000e+00}}
  %0 = ein.dropout %x {p = 1.0 : f64, site = 0 : i64} : tensor<4xf32>
  return
}

// -----

func.func @dropout_site(%x: tensor<4xf32>) {
  // expected-error @+1 {{'ein.dropout' op site must be >= 0, got -1}}
  %0 = ein.dropout %x {p = 0.5 : f64, site = -1 : i64} : tensor<4xf32>
  return
}
