// RUN: ein-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: ein-opt %s -split-input-file -verify-diagnostics --ein-autodiff | FileCheck %s --check-prefix=GRAD
// ein.stochastic_round: f32 -> bf16/f16 with an i32 seed of the input's
// shape (a broadcast of a rank-0 step count); its gradient is straight through.

// CHECK-LABEL: func.func @forward
// CHECK: %[[S:.+]] = ein.broadcast %arg1 dims [] : tensor<i32> -> tensor<3x4xi32>
// CHECK: ein.stochastic_round %arg0, %[[S]] : tensor<3x4xf32>, tensor<3x4xi32> -> tensor<3x4xbf16>
// CHECK: ein.stochastic_round %arg0, %[[S]] {axes = ["i", "j"]} : tensor<3x4xf32>, tensor<3x4xi32> -> tensor<3x4xf16>
// GRAD-LABEL: func.func @grad(
// GRAD: %[[DY:.+]] = ein.broadcast %{{.+}} dims [] {{.*}}: tensor<bf16> -> tensor<3x4xbf16>
// GRAD-NEXT: %[[DX:.+]] = ein.cast %[[DY]] {{.*}}: tensor<3x4xbf16> -> tensor<3x4xf32>
// GRAD: return %{{.+}}, %[[DX]] :
func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "x"},
                   %step: tensor<i32> {ein.kind = "input", ein.name = "step"}) -> tensor<bf16> {
  %s = ein.broadcast %step dims [] : tensor<i32> -> tensor<3x4xi32>
  %y = ein.stochastic_round %x, %s : tensor<3x4xf32>, tensor<3x4xi32> -> tensor<3x4xbf16>
  %h = ein.stochastic_round %x, %s {axes = ["i", "j"]} : tensor<3x4xf32>, tensor<3x4xi32> -> tensor<3x4xf16>
  %l = ein.reduce sum %y dims [0, 1] : tensor<3x4xbf16> -> tensor<bf16>
  return %l : tensor<bf16>
}

// -----

func.func @narrow_input(%x: tensor<4xbf16>, %s: tensor<4xi32>) {
  // expected-error @+1 {{'ein.stochastic_round' op operand #0 must be ranked tensor of 32-bit float values}}
  %y = ein.stochastic_round %x, %s : tensor<4xbf16>, tensor<4xi32> -> tensor<4xbf16>
  return
}

// -----

func.func @wide_result(%x: tensor<4xf32>, %s: tensor<4xi32>) {
  // expected-error @+1 {{'ein.stochastic_round' op result #0 must be ranked tensor of bfloat16 type or 16-bit float values}}
  %y = ein.stochastic_round %x, %s : tensor<4xf32>, tensor<4xi32> -> tensor<4xf32>
  return
}

// -----

func.func @scalar_seed(%x: tensor<4xf32>, %s: tensor<i32>) {
  // expected-error @+1 {{'ein.stochastic_round' op all non-scalar operands/results must have the same shape and base type}}
  %y = ein.stochastic_round %x, %s : tensor<4xf32>, tensor<i32> -> tensor<4xbf16>
  return
}
