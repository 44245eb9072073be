// RUN: ein-opt %s --pass-pipeline='builtin.module(func.func(ein-fuse-elementwise,ein-fuse-epilogues))' | FileCheck %s
// Without the epilogue pass no contraction is marked.
// RUN: ein-opt %s --pass-pipeline='builtin.module(func.func(ein-fuse-elementwise))' | FileCheck %s --check-prefix=NONE
// NONE-NOT: ein.epilogue

// A bias add and a ReLU after a contraction (mlp_lm's hidden layer): the
// group reading the product is the contraction's epilogue.
// CHECK-LABEL: func.func @bias_relu
// CHECK:      ein.contract {{.*}}ein.epilogue = 0 : i64
// CHECK-NEXT: ein.add {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: ein.max {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: return
func.func @bias_relu(%x: tensor<4x6xf32>, %w: tensor<6x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = ein.constant dense<0.0> : tensor<f32>
  %z = ein.broadcast %zero dims [] : tensor<f32> -> tensor<4x8xf32>
  %bb = ein.broadcast %b dims [1] : tensor<8xf32> -> tensor<4x8xf32>
  %h = ein.contract %x, %w batch [], [] contract [1], [0] : tensor<4x6xf32>, tensor<6x8xf32> -> tensor<4x8xf32>
  %p = ein.add %h, %bb : tensor<4x8xf32>
  %r = ein.max %p, %z : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// A lone residual add gets a group number of its own; the contraction moves
// next to it, past the unrelated op between them.
// CHECK-LABEL: func.func @residual_moves
// CHECK:      ein.exp
// CHECK-NEXT: ein.contract {{.*}}ein.epilogue = 0 : i64
// CHECK-NEXT: ein.add {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: return
func.func @residual_moves(%x: tensor<4x6xf32>, %w: tensor<6x8xf32>, %r: tensor<4x8xf32>, %y: tensor<3xf32>) -> (tensor<4x8xf32>, tensor<3xf32>) {
  %h = ein.contract %x, %w batch [], [] contract [1], [0] : tensor<4x6xf32>, tensor<6x8xf32> -> tensor<4x8xf32>
  %e = ein.exp %y : tensor<3xf32>
  %s = ein.add %r, %h : tensor<4x8xf32>
  return %s, %e : tensor<4x8xf32>, tensor<3xf32>
}

// The product is also read after the group (a GELU's input kept for the
// backward: the epilogue's aux): still an epilogue.
// CHECK-LABEL: func.func @aux_after
// CHECK:      ein.contract {{.*}}ein.epilogue = 0 : i64
// CHECK-NEXT: ein.mul {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: ein.tanh {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: ein.reduce
func.func @aux_after(%x: tensor<4x6xf32>, %w: tensor<6x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %h = ein.contract %x, %w batch [], [] contract [1], [0] : tensor<4x6xf32>, tensor<6x8xf32> -> tensor<4x8xf32>
  %m = ein.mul %h, %h : tensor<4x8xf32>
  %t = ein.tanh %m : tensor<4x8xf32>
  %s = ein.reduce sum %h dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %t, %s : tensor<4x8xf32>, tensor<4xf32>
}

// Another reader of the product before the group: the product is needed
// whole before the epilogue could run, so there is none.
// CHECK-LABEL: func.func @reader_before
// CHECK:      ein.contract
// CHECK-NOT:  ein.epilogue
// CHECK:      return
func.func @reader_before(%x: tensor<4x6xf32>, %w: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %h = ein.contract %x, %w batch [], [] contract [1], [0] : tensor<4x6xf32>, tensor<6x8xf32> -> tensor<4x8xf32>
  %s = ein.reduce sum %h dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %sb = ein.broadcast %s dims [0] : tensor<4xf32> -> tensor<4x8xf32>
  %d = ein.sub %h, %sb : tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// A reader of another phase (the backward reading a forward product) is
// not its epilogue.
// CHECK-LABEL: func.func @other_phase
// CHECK:      ein.contract
// CHECK-NOT:  ein.epilogue
// CHECK:      return
func.func @other_phase(%x: tensor<4x6xf32>, %w: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %h = ein.contract %x, %w batch [], [] contract [1], [0] {ein.phase = "forward"} : tensor<4x6xf32>, tensor<6x8xf32> -> tensor<4x8xf32>
  %n = ein.neg %h {ein.phase = "backward"} : tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// A per-row statistic over the product's leading dim (2 of 2 x 3 x 4) makes
// one kernel iteration 12 elements, more than a row (4): rows are not whole
// iterations, so the group is not an epilogue.
// CHECK-LABEL: func.func @rows_not_iterations
// CHECK:      ein.contract
// CHECK-NOT:  ein.epilogue
// CHECK:      return
func.func @rows_not_iterations(%x: tensor<2x3x5xf32>, %w: tensor<5x4xf32>, %p: tensor<2xf32>) -> tensor<2x3x4xf32> {
  %h = ein.contract %x, %w batch [], [] contract [2], [0] : tensor<2x3x5xf32>, tensor<5x4xf32> -> tensor<2x3x4xf32>
  %pb = ein.broadcast %p dims [0] : tensor<2xf32> -> tensor<2x3x4xf32>
  %m = ein.mul %h, %pb : tensor<2x3x4xf32>
  return %m : tensor<2x3x4xf32>
}

// Two contractions read by one group: the first is its head; the second
// is an input of the epilogue.
// CHECK-LABEL: func.func @two_products
// CHECK:      %[[B:.*]] = ein.contract %arg0, %arg2 batch [], [] contract [1], [0] : tensor
// CHECK-NEXT: %[[A:.*]] = ein.contract %arg0, %arg1 {{.*}}ein.epilogue = 0 : i64
// CHECK-NEXT: ein.add %[[A]], %[[B]] {ein.fusion = 0 : i64}
func.func @two_products(%x: tensor<4x6xf32>, %w: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %a = ein.contract %x, %w batch [], [] contract [1], [0] : tensor<4x6xf32>, tensor<6x8xf32> -> tensor<4x8xf32>
  %b = ein.contract %x, %v batch [], [] contract [1], [0] : tensor<4x6xf32>, tensor<6x8xf32> -> tensor<4x8xf32>
  %s = ein.add %a, %b : tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}
