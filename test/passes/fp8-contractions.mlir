// RUN: ein-opt %s --ein-fp8-contractions | FileCheck %s --check-prefix=BLOCK
// RUN: ein-opt %s --ein-fp8-contractions="scaling=tensor" | FileCheck %s --check-prefix=TENSOR
// RUN: ein-opt %s --ein-fp8-contractions --ein-fp8-contractions | FileCheck %s --check-prefix=ONCE
// RUN: ein-opt %s --ein-build-train-step="fp8=block optimizer=sgd" | FileCheck %s --check-prefix=STEP
// RUN: not ein-opt %s --ein-fp8-contractions="scaling=rows" 2>&1 | FileCheck %s --check-prefix=BAD
// The fp8 setting: each contraction of @forward reads E4M3 operands in
// blocks of 32 along their contracted dimension (or one scale per tensor),
// and its result passes through a quantiser that is the identity forward
// and makes the incoming gradient E5M2.

func.func @forward(%x: tensor<4x64xf32> {ein.axes = ["b", "k"], ein.kind = "input", ein.name = "x"},
                   %w: tensor<64x8xf32> {ein.axes = ["k", "n"], ein.kind = "param", ein.name = "w"}) -> tensor<f32> {
  %y = ein.contract %x, %w batch [], [] contract [1], [0] {axes = ["b", "n"], ein.layer = "layer.0"} : tensor<4x64xf32>, tensor<64x8xf32> -> tensor<4x8xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// BLOCK-LABEL: func.func @forward(
// BLOCK: %[[QX:.+]] = ein.quantize e4m3 %arg0 block 32 axis 1 {axes = ["b", "k"], ein.layer = "layer.0"} : tensor<4x64xf32>
// BLOCK: %[[QW:.+]] = ein.quantize e4m3 %arg1 block 32 axis 0 {axes = ["k", "n"], ein.layer = "layer.0"} : tensor<64x8xf32>
// BLOCK: %[[Y:.+]] = ein.contract %[[QX]], %[[QW]] batch [], [] contract [1], [0]
// BLOCK: %[[G:.+]] = ein.quantize none %[[Y]] grad e5m2 block 32 axis 1 {axes = ["b", "n"], ein.layer = "layer.0"} : tensor<4x8xf32>
// BLOCK: ein.reduce sum %[[G]]

// TENSOR: ein.quantize e4m3 %arg0 block 0 axis 0
// TENSOR: ein.quantize e4m3 %arg1 block 0 axis 0
// TENSOR: ein.quantize none %{{.+}} grad e5m2 block 0 axis 0

// ONCE-COUNT-3: ein.quantize
// ONCE-NOT: ein.quantize

// The backward contraction reads the forward's E4M3 x and the E5M2 gradient.
// STEP-LABEL: func.func @train_step(
// STEP: %[[QX:.+]] = ein.quantize e4m3 %arg0 block 32 axis 1
// STEP: %[[DY:.+]] = ein.quantize e5m2 %{{.+}} block 32 axis 1 {{.*}} : tensor<4x8xf32>
// STEP: ein.contract %[[QX]], %[[DY]] batch [], [] contract [0], [0]

// BAD: ein-fp8-contractions: scaling must be none, block or tensor, got 'rows'
