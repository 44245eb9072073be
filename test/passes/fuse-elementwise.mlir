// RUN: ein-opt %s --pass-pipeline='builtin.module(func.func(ein-fuse-elementwise))' | FileCheck %s
// RUN: ein-opt %s --pass-pipeline='builtin.module(func.func(ein-fuse-elementwise{max-inputs=2}))' | FileCheck %s --check-prefix=BUDGET

// A chain of elementwise ops is one group; the contraction and the
// reduction stay outside.
// CHECK-LABEL: func.func @chain
// CHECK:      ein.contract
// CHECK-NEXT: ein.mul {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: ein.tanh {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: ein.add {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: ein.reduce
// CHECK-NOT:  ein.fusion
// CHECK:      return
func.func @chain(%a: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4xf32> {
  %h = ein.contract %a, %w batch [], [] contract [1], [0] : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %m = ein.mul %h, %h : tensor<4x8xf32>
  %t = ein.tanh %m : tensor<4x8xf32>
  %s = ein.add %t, %h : tensor<4x8xf32>
  %r = ein.reduce sum %s dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Ops reading the same value join one group (siblings), though neither
// produces the other's operands.
// CHECK-LABEL: func.func @siblings
// CHECK:      ein.exp {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: ein.neg {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: return
func.func @siblings(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e = ein.exp %x : tensor<16xf32>
  %n = ein.neg %x : tensor<16xf32>
  return %e, %n : tensor<16xf32>, tensor<16xf32>
}

// Layernorm-like: the reduction reads the first group and feeds the second
// through a broadcast, so the op after it cannot join the first group (a
// cycle); the groups are numbered in order and stay apart.
// CHECK-LABEL: func.func @no_cycle
// CHECK:      %[[C:.*]] = ein.sub {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: ein.mul %[[C]], %[[C]] {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: ein.reduce
// CHECK-NEXT: ein.broadcast
// CHECK-NEXT: ein.mul %[[C]], {{.*}}ein.fusion = 1 : i64
// CHECK-NEXT: ein.exp {{.*}}ein.fusion = 1 : i64
func.func @no_cycle(%x: tensor<4x8xf32>, %m: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = ein.sub %x, %m : tensor<4x8xf32>
  %sq = ein.mul %c, %c : tensor<4x8xf32>
  %v = ein.reduce sum %sq dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %vb = ein.broadcast %v dims [0] : tensor<4xf32> -> tensor<4x8xf32>
  %y = ein.mul %c, %vb : tensor<4x8xf32>
  %z = ein.exp %y : tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// Members are moved next to each other: the independent op that sat
// between them now comes after the group.
// CHECK-LABEL: func.func @reorder
// CHECK:      ein.exp %arg0 {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: ein.neg {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: ein.reduce
// CHECK-NEXT: return
func.func @reorder(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %e = ein.exp %x : tensor<4x8xf32>
  %r = ein.reduce sum %x dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %n = ein.neg %e : tensor<4x8xf32>
  return %n, %r : tensor<4x8xf32>, tensor<4xf32>
}

// Different shapes never share a group; a lone op gets no attribute.
// CHECK-LABEL: func.func @shapes
// CHECK:      ein.exp
// CHECK-NOT:  ein.fusion
// CHECK:      ein.reshape
// CHECK-NEXT: ein.neg
// CHECK-NOT:  ein.fusion
// CHECK:      return
func.func @shapes(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %e = ein.exp %x : tensor<4x8xf32>
  %r = ein.reshape %e : tensor<4x8xf32> -> tensor<32xf32>
  %n = ein.neg %r : tensor<32xf32>
  return %n : tensor<32xf32>
}

// Leading-dim reads (rows) and trailing-dim reads (a bias) share one split
// (outer 4 × inner 8): both broadcasts can be read in place by one group.
// CHECK-LABEL: func.func @split
// CHECK:      ein.sub {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: ein.add {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: return
func.func @split(%x: tensor<4x8xf32>, %row: tensor<4xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf32> {
  %rb = ein.broadcast %row dims [0] : tensor<4xf32> -> tensor<4x8xf32>
  %bb = ein.broadcast %bias dims [1] : tensor<8xf32> -> tensor<4x8xf32>
  %a = ein.sub %x, %rb : tensor<4x8xf32>
  %b = ein.add %a, %bb : tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// A leading-dim read of another block size (8 rows where the group reads 2)
// does not fit the split: the op still joins, reading that broadcast as a
// materialised tensor (an ordinary input of the group).
// CHECK-LABEL: func.func @split_conflict
// CHECK:      ein.sub {{.*}}ein.fusion = 0 : i64
// CHECK-NEXT: ein.mul {{.*}}ein.fusion = 0 : i64
func.func @split_conflict(%x: tensor<2x4x8xf32>, %p2: tensor<2xf32>, %p8: tensor<2x4xf32>) -> tensor<2x4x8xf32> {
  %b2 = ein.broadcast %p2 dims [0] : tensor<2xf32> -> tensor<2x4x8xf32>
  %b8 = ein.broadcast %p8 dims [0, 1] : tensor<2x4xf32> -> tensor<2x4x8xf32>
  %a = ein.sub %x, %b2 : tensor<2x4x8xf32>
  %b = ein.mul %a, %b8 : tensor<2x4x8xf32>
  return %b : tensor<2x4x8xf32>
}

// Groups stay within one `ein.phase`: the backward op reading the forward's
// tanh is not pulled into the forward group (it would be computed early and
// its result kept alive until the backward).
// CHECK-LABEL: func.func @phases
// CHECK:      ein.exp {{.*}}ein.fusion = 0 : i64, ein.phase = "forward"
// CHECK-NEXT: ein.tanh {{.*}}ein.fusion = 0 : i64, ein.phase = "forward"
// CHECK-NEXT: ein.mul {{.*}}ein.fusion = 1 : i64, ein.phase = "backward"
// CHECK-NEXT: ein.sub {{.*}}ein.fusion = 1 : i64, ein.phase = "backward"
func.func @phases(%x: tensor<8xf32>, %one: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = ein.exp %x {ein.phase = "forward"} : tensor<8xf32>
  %t = ein.tanh %e {ein.phase = "forward"} : tensor<8xf32>
  %sq = ein.mul %t, %t {ein.phase = "backward"} : tensor<8xf32>
  %d = ein.sub %one, %sq {ein.phase = "backward"} : tensor<8xf32>
  return %t, %d : tensor<8xf32>, tensor<8xf32>
}

// max-inputs=2: the third distinct input does not fit.
// BUDGET-LABEL: func.func @budget
// BUDGET:      ein.add {{.*}}ein.fusion = 0 : i64
// BUDGET-NEXT: ein.mul {{.*}}ein.fusion = 0 : i64
// BUDGET-NEXT: ein.sub
// BUDGET-NOT:  ein.fusion
// BUDGET:      return
func.func @budget(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>) -> tensor<8xf32> {
  %s = ein.add %a, %b : tensor<8xf32>
  %m = ein.mul %s, %s : tensor<8xf32>
  %d = ein.sub %m, %c : tensor<8xf32>
  return %d : tensor<8xf32>
}
