// RUN: ein-opt %s -split-input-file -verify-diagnostics
// One case per verifier message of ein.quantize.

func.func @identity(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'ein.quantize' op quantizes neither the value nor its gradient (format and grad are both none): use the input itself}}
  %0 = ein.quantize none %x block 32 axis 1 : tensor<4x64xf32>
  return
}

// -----

func.func @negative_block(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'ein.quantize' op block must be 0 (one scale per tensor) or a block size > 0, got -32}}
  %0 = ein.quantize e4m3 %x block -32 axis 1 : tensor<4x64xf32>
  return
}

// -----

func.func @axis_range(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'ein.quantize' op axis 2 is out of range for a tensor of rank 2}}
  %0 = ein.quantize e4m3 %x block 32 axis 2 : tensor<4x64xf32>
  return
}

// -----

func.func @block_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'ein.quantize' op block scaling needs a tensor of rank >= 1 (use block 0 for a scalar)}}
  %0 = ein.quantize e4m3 %x block 32 axis 0 : tensor<f32>
  return
}

// -----

func.func @tensor_axis(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'ein.quantize' op block 0 is one scale per tensor and takes axis 0, got axis 1}}
  %0 = ein.quantize e4m3 %x block 0 axis 1 : tensor<4x64xf32>
  return
}

// -----

func.func @integer(%x: tensor<4xi32>) {
  // expected-error @+1 {{'ein.quantize' op operand #0 must be ranked tensor of}}
  %0 = ein.quantize e4m3 %x block 0 axis 0 : tensor<4xi32>
  return
}

// -----

func.func @format(%x: tensor<4xf32>) {
  // expected-error @+1 {{custom op 'ein.quantize' expected string or keyword containing one of the following enum values for attribute 'format' [none, e4m3, e5m2]}}
  %0 = ein.quantize e3m4 %x block 0 axis 0 : tensor<4xf32>
  return
}
