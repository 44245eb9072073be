// RUN: ein-opt %s --pass-pipeline='builtin.module(func.func(ein-fuse-elementwise))' -split-input-file | FileCheck %s

// Groups whose members are not adjacent in program order (issue 9). Before
// the fix, the dependency check skipped every op before a group's first
// member; a path from the group can reach such ops through another group that
// starts before it and ends after it, so a cycle between two groups went
// unnoticed and the schedule left its ops in place, before their operands
// ("operand #0 does not dominate this use").

// tanh(reduce(tanh(w), "b e -> e", sum) - tanh(w)), differentiated (issue 9,
// reproducer 2). The backward group {%8 .. %11} reads %13's group through
// %15; %12 reduces %10, so %17 (reading %12's broadcast) must not join %13's
// group {%13, %14}: that group would then read %12, which reads a group that
// reads it. The merge walk then makes {%8 .. %11} and {%13, %14} one kernel
// (%15 reads both; nothing outside them lies between).
// CHECK-LABEL: func.func @tanh_twice
// CHECK:      %[[T:.*]] = ein.tanh %arg0
// CHECK:      %[[T2:.*]] = ein.tanh %{{.*}} {axes = ["b", "e"], ein.fusion = 0
// CHECK:      ein.mul %[[T2]], %[[T2]] {{{.*}}ein.fusion = 1
// CHECK-NEXT: ein.sub {{.*}}ein.fusion = 1
// CHECK-NEXT: %[[G:.*]] = ein.mul {{.*}}ein.fusion = 1
// CHECK-NEXT: ein.neg %[[G]] {{{.*}}ein.fusion = 1
// CHECK-NEXT: %[[SQ:.*]] = ein.mul %[[T]], %[[T]] {{{.*}}ein.fusion = 1
// CHECK-NEXT: %[[D:.*]] = ein.sub %{{.*}}, %[[SQ]] {{{.*}}ein.fusion = 1
// CHECK-NEXT: ein.mul %{{.*}}, %[[D]] {{{.*}}ein.fusion = 1
// CHECK-NEXT: %[[R:.*]] = ein.reduce sum %[[G]]
// CHECK-NEXT: %[[B:.*]] = ein.broadcast %[[R]]
// CHECK-NEXT: ein.mul %[[B]], %[[D]] {{{.*}}ein.fusion = 2
// CHECK-NEXT: ein.add {{.*}}ein.fusion = 2
// CHECK-NEXT: return
func.func @tanh_twice(%arg0: tensor<2x2xf32>) -> (tensor<f32>, tensor<2x2xf32>) {
  %0 = ein.constant {axes = [], ein.phase = "backward"} dense<1.000000e+00> : tensor<f32>
  %1 = ein.tanh %arg0 {axes = ["b", "e"], ein.phase = "forward"} : tensor<2x2xf32>
  %2 = ein.reduce sum %1 dims [0] {axes = ["e"], ein.phase = "forward"} : tensor<2x2xf32> -> tensor<2xf32>
  %3 = ein.broadcast %2 dims [1] {axes = ["b", "e"], ein.phase = "forward"} : tensor<2xf32> -> tensor<2x2xf32>
  %4 = ein.sub %3, %1 {axes = ["b", "e"], ein.phase = "forward"} : tensor<2x2xf32>
  %5 = ein.tanh %4 {axes = ["b", "e"], ein.phase = "forward"} : tensor<2x2xf32>
  %6 = ein.reduce sum %5 dims [0, 1] {axes = [], ein.phase = "forward"} : tensor<2x2xf32> -> tensor<f32>
  %7 = ein.broadcast %0 dims [] {axes = ["b", "e"], ein.phase = "backward"} : tensor<f32> -> tensor<2x2xf32>
  %8 = ein.mul %5, %5 {axes = ["b", "e"], ein.phase = "backward"} : tensor<2x2xf32>
  %9 = ein.sub %7, %8 {axes = ["b", "e"], ein.phase = "backward"} : tensor<2x2xf32>
  %10 = ein.mul %7, %9 {axes = ["b", "e"], ein.phase = "backward"} : tensor<2x2xf32>
  %11 = ein.neg %10 {axes = ["b", "e"], ein.phase = "backward"} : tensor<2x2xf32>
  %12 = ein.reduce sum %10 dims [0] {axes = ["e"], ein.phase = "backward"} : tensor<2x2xf32> -> tensor<2xf32>
  %13 = ein.mul %1, %1 {axes = ["b", "e"], ein.phase = "backward"} : tensor<2x2xf32>
  %14 = ein.sub %7, %13 {axes = ["b", "e"], ein.phase = "backward"} : tensor<2x2xf32>
  %15 = ein.mul %11, %14 {axes = ["b", "e"], ein.phase = "backward"} : tensor<2x2xf32>
  %16 = ein.broadcast %12 dims [1] {axes = ["b", "e"], ein.phase = "backward"} : tensor<2xf32> -> tensor<2x2xf32>
  %17 = ein.mul %16, %14 {axes = ["b", "e"], ein.phase = "backward"} : tensor<2x2xf32>
  %18 = ein.add %15, %17 {axes = ["b", "e"], ein.phase = "backward"} : tensor<2x2xf32>
  return %6, %18 : tensor<f32>, tensor<2x2xf32>
}

// -----

// cross_entropy(logits, t) + cross_entropy(logits - logsumexp(logits), t),
// the forward (issue 9, reproducer 1): each log follows the sum it reads.
// CHECK-LABEL: func.func @forward
// CHECK:     %[[S1:.*]] = ein.reduce sum %{{.*}} dims [1]
// CHECK:     ein.log %[[S1]] {{{.*}}ein.fusion
// CHECK:     %[[S2:.*]] = ein.reduce sum %{{.*}} dims [1]
// CHECK:     ein.log %[[S2]] {{{.*}}ein.fusion
// CHECK:     return
func.func @forward(%arg0: tensor<4x8xf32>, %arg1: tensor<4xi32>, %arg2: tensor<8xf32>) -> (tensor<f32>) {
  %0 = ein.constant {axes = []} dense<2.500000e-01> : tensor<f32>
  %1 = ein.constant {axes = []} dense<0.000000e+00> : tensor<f32>
  %2 = ein.broadcast %arg2 dims [1] {axes = ["batch", "vocab"]} : tensor<8xf32> -> tensor<4x8xf32>
  %3 = ein.mul %arg0, %2 {axes = ["batch", "vocab"]} : tensor<4x8xf32>
  %4 = ein.reduce max %3 dims [1] {axes = ["batch"]} : tensor<4x8xf32> -> tensor<4xf32>
  %5 = ein.broadcast %4 dims [0] {axes = ["batch", "vocab"]} : tensor<4xf32> -> tensor<4x8xf32>
  %6 = ein.sub %3, %5 {axes = ["batch", "vocab"]} : tensor<4x8xf32>
  %7 = ein.exp %6 {axes = ["batch", "vocab"]} : tensor<4x8xf32>
  %8 = ein.reduce sum %7 dims [1] {axes = ["batch"]} : tensor<4x8xf32> -> tensor<4xf32>
  %9 = ein.log %8 {axes = ["batch"]} : tensor<4xf32>
  %10 = ein.add %4, %9 {axes = ["batch"]} : tensor<4xf32>
  %11 = ein.broadcast %10 dims [0] {axes = ["batch", "vocab"]} : tensor<4xf32> -> tensor<4x8xf32>
  %12 = ein.sub %3, %11 {axes = ["batch", "vocab"]} : tensor<4x8xf32>
  %13 = ein.iota dim 1 {axes = ["batch", "vocab"]} : tensor<4x8xi32>
  %14 = ein.broadcast %arg1 dims [0] {axes = ["batch", "vocab"]} : tensor<4xi32> -> tensor<4x8xi32>
  %15 = ein.cmp eq, %13, %14 {axes = ["batch", "vocab"]} : tensor<4x8xi32> -> tensor<4x8xi1>
  %16 = ein.broadcast %1 dims [] {axes = ["batch", "vocab"]} : tensor<f32> -> tensor<4x8xf32>
  %17 = ein.select %15, %3, %16 {axes = ["batch", "vocab"]} : tensor<4x8xi1>, tensor<4x8xf32>
  %18 = ein.reduce sum %17 dims [1] {axes = ["batch"]} : tensor<4x8xf32> -> tensor<4xf32>
  %19 = ein.sub %10, %18 {axes = ["batch"]} : tensor<4xf32>
  %20 = ein.reduce sum %19 dims [0] {axes = []} : tensor<4xf32> -> tensor<f32>
  %21 = ein.mul %20, %0 {axes = []} : tensor<f32>
  %22 = ein.reduce max %12 dims [1] {axes = ["batch"]} : tensor<4x8xf32> -> tensor<4xf32>
  %23 = ein.broadcast %22 dims [0] {axes = ["batch", "vocab"]} : tensor<4xf32> -> tensor<4x8xf32>
  %24 = ein.sub %12, %23 {axes = ["batch", "vocab"]} : tensor<4x8xf32>
  %25 = ein.exp %24 {axes = ["batch", "vocab"]} : tensor<4x8xf32>
  %26 = ein.reduce sum %25 dims [1] {axes = ["batch"]} : tensor<4x8xf32> -> tensor<4xf32>
  %27 = ein.log %26 {axes = ["batch"]} : tensor<4xf32>
  %28 = ein.add %22, %27 {axes = ["batch"]} : tensor<4xf32>
  %29 = ein.select %15, %12, %16 {axes = ["batch", "vocab"]} : tensor<4x8xi1>, tensor<4x8xf32>
  %30 = ein.reduce sum %29 dims [1] {axes = ["batch"]} : tensor<4x8xf32> -> tensor<4xf32>
  %31 = ein.sub %28, %30 {axes = ["batch"]} : tensor<4xf32>
  %32 = ein.reduce sum %31 dims [0] {axes = []} : tensor<4xf32> -> tensor<f32>
  %33 = ein.mul %32, %0 {axes = []} : tensor<f32>
  %34 = ein.add %21, %33 {axes = []} : tensor<f32>
  return %34 : tensor<f32>
}

// -----

// Three scalar losses (issue 9, reproducer 3): the backward scalar group
// follows the forward constants and the forward tanh it reads; the scalar
// %43 * %3 stays out of it (it reads a reduction of a group that reads it).
// CHECK-LABEL: func.func @grad
// CHECK:     %[[TANH:.*]] = ein.tanh %{{.*}} {axes = [], ein.fusion
// CHECK:     ein.mul %[[TANH]], %[[TANH]] {axes = [], ein.fusion = [[BWD:[0-9]+]]
// CHECK:     %[[SUM:.*]] = ein.reduce sum %{{.*}} dims [0, 1] {axes = [], ein.phase = "backward"}
// CHECK-NEXT: ein.mul %[[SUM]], %{{.*}} {axes = [], ein.phase = "backward"}
// CHECK:     return
func.func @grad(%arg0: tensor<3xf32>, %arg1: tensor<1xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<1xf32>) {
  %0 = ein.constant {axes = [], ein.phase = "forward"} dense<5.000000e-01> : tensor<f32>
  %1 = ein.constant {axes = [], ein.phase = "forward"} dense<2.000000e+00> : tensor<f32>
  %2 = ein.constant {axes = [], ein.phase = "forward"} dense<1.000000e+00> : tensor<f32>
  %3 = ein.constant {axes = [], ein.phase = "forward"} dense<0.333333343> : tensor<f32>
  %4 = ein.contract %arg1, %arg0 batch [], [] contract [], [] {axes = ["k", "a"], ein.phase = "forward"} : tensor<1xf32>, tensor<3xf32> -> tensor<1x3xf32>
  %5 = ein.tanh %4 {axes = ["k", "a"], ein.phase = "forward"} : tensor<1x3xf32>
  %6 = ein.broadcast %arg0 dims [1] {axes = ["k", "a"], ein.phase = "forward"} : tensor<3xf32> -> tensor<1x3xf32>
  %7 = ein.sub %5, %6 {axes = ["k", "a"], ein.phase = "forward"} : tensor<1x3xf32>
  %8 = ein.reduce sum %5 dims [0, 1] {axes = [], ein.phase = "forward"} : tensor<1x3xf32> -> tensor<f32>
  %9 = ein.mul %8, %3 {axes = [], ein.phase = "forward"} : tensor<f32>
  %10 = ein.broadcast %9 dims [] {axes = ["k", "a"], ein.phase = "forward"} : tensor<f32> -> tensor<1x3xf32>
  %11 = ein.add %7, %10 {axes = ["k", "a"], ein.phase = "forward"} : tensor<1x3xf32>
  %12 = ein.neg %11 {axes = ["k", "a"], ein.phase = "forward"} : tensor<1x3xf32>
  %13 = ein.exp %12 {axes = ["k", "a"], ein.phase = "forward"} : tensor<1x3xf32>
  %14 = ein.broadcast %2 dims [] {axes = ["k", "a"], ein.phase = "forward"} : tensor<f32> -> tensor<1x3xf32>
  %15 = ein.add %14, %13 {axes = ["k", "a"], ein.phase = "forward"} : tensor<1x3xf32>
  %16 = ein.div %14, %15 {axes = ["k", "a"], ein.phase = "forward"} : tensor<1x3xf32>
  %17 = ein.reduce sum %arg0 dims [0] {axes = [], ein.phase = "forward"} : tensor<3xf32> -> tensor<f32>
  %18 = ein.mul %17, %3 {axes = [], ein.phase = "forward"} : tensor<f32>
  %19 = ein.reshape %arg1 {axes = [], ein.phase = "forward"} : tensor<1xf32> -> tensor<f32>
  %20 = ein.tanh %19 {axes = [], ein.phase = "forward"} : tensor<f32>
  %21 = ein.mul %1, %20 {axes = [], ein.phase = "forward"} : tensor<f32>
  %22 = ein.add %18, %21 {axes = [], ein.phase = "forward"} : tensor<f32>
  %23 = ein.reduce sum %16 dims [0, 1] {axes = [], ein.phase = "forward"} : tensor<1x3xf32> -> tensor<f32>
  %24 = ein.mul %23, %3 {axes = [], ein.phase = "forward"} : tensor<f32>
  %25 = ein.mul %0, %24 {axes = [], ein.phase = "forward"} : tensor<f32>
  %26 = ein.add %22, %25 {axes = [], ein.phase = "forward"} : tensor<f32>
  %27 = ein.mul %2, %0 {axes = [], ein.phase = "backward"} : tensor<f32>
  %28 = ein.mul %27, %3 {axes = [], ein.phase = "backward"} : tensor<f32>
  %29 = ein.broadcast %28 dims [] {axes = ["k", "a"], ein.phase = "backward"} : tensor<f32> -> tensor<1x3xf32>
  %30 = ein.mul %2, %1 {axes = [], ein.phase = "backward"} : tensor<f32>
  %31 = ein.mul %20, %20 {axes = [], ein.phase = "backward"} : tensor<f32>
  %32 = ein.sub %2, %31 {axes = [], ein.phase = "backward"} : tensor<f32>
  %33 = ein.mul %30, %32 {axes = [], ein.phase = "backward"} : tensor<f32>
  %34 = ein.reshape %33 {axes = ["1"], ein.phase = "backward"} : tensor<f32> -> tensor<1xf32>
  %35 = ein.mul %2, %3 {axes = [], ein.phase = "backward"} : tensor<f32>
  %36 = ein.broadcast %35 dims [] {axes = ["a"], ein.phase = "backward"} : tensor<f32> -> tensor<3xf32>
  %37 = ein.div %29, %15 {axes = ["k", "a"], ein.phase = "backward"} : tensor<1x3xf32>
  %38 = ein.mul %37, %16 {axes = ["k", "a"], ein.phase = "backward"} : tensor<1x3xf32>
  %39 = ein.neg %38 {axes = ["k", "a"], ein.phase = "backward"} : tensor<1x3xf32>
  %40 = ein.mul %39, %13 {axes = ["k", "a"], ein.phase = "backward"} : tensor<1x3xf32>
  %41 = ein.neg %40 {axes = ["k", "a"], ein.phase = "backward"} : tensor<1x3xf32>
  %42 = ein.reduce sum %41 dims [0, 1] {axes = [], ein.phase = "backward"} : tensor<1x3xf32> -> tensor<f32>
  %43 = ein.mul %42, %3 {axes = [], ein.phase = "backward"} : tensor<f32>
  %44 = ein.broadcast %43 dims [] {axes = ["k", "a"], ein.phase = "backward"} : tensor<f32> -> tensor<1x3xf32>
  %45 = ein.mul %5, %5 {axes = ["k", "a"], ein.phase = "backward"} : tensor<1x3xf32>
  %46 = ein.broadcast %2 dims [] {axes = ["k", "a"], ein.phase = "backward"} : tensor<f32> -> tensor<1x3xf32>
  %47 = ein.sub %46, %45 {axes = ["k", "a"], ein.phase = "backward"} : tensor<1x3xf32>
  %48 = ein.mul %44, %47 {axes = ["k", "a"], ein.phase = "backward"} : tensor<1x3xf32>
  %49 = ein.neg %41 {axes = ["k", "a"], ein.phase = "backward"} : tensor<1x3xf32>
  %50 = ein.reduce sum %49 dims [0] {axes = ["a"], ein.phase = "backward"} : tensor<1x3xf32> -> tensor<3xf32>
  %51 = ein.add %36, %50 {axes = ["a"], ein.phase = "backward"} : tensor<3xf32>
  %52 = ein.mul %41, %47 {axes = ["k", "a"], ein.phase = "backward"} : tensor<1x3xf32>
  %53 = ein.add %48, %52 {axes = ["k", "a"], ein.phase = "backward"} : tensor<1x3xf32>
  %54 = ein.contract %53, %arg0 batch [], [] contract [1], [0] {axes = ["1"], ein.phase = "backward"} : tensor<1x3xf32>, tensor<3xf32> -> tensor<1xf32>
  %55 = ein.contract %53, %arg1 batch [], [] contract [0], [0] {axes = ["a"], ein.phase = "backward"} : tensor<1x3xf32>, tensor<1xf32> -> tensor<3xf32>
  %56 = ein.add %34, %54 {axes = ["1"], ein.phase = "backward"} : tensor<1xf32>
  %57 = ein.add %51, %55 {axes = ["a"], ein.phase = "backward"} : tensor<3xf32>
  return %26, %57, %56 : tensor<f32>, tensor<3xf32>, tensor<1xf32>
}

// -----

// One AdamW update (mlp_lm's step, simplified): `v * beta2` and `p * decay`
// read no grouped value, so the greedy walk starts a group at each, and
// `v * beta2 + (1 - beta2) * g * g` joins the first of its producers' groups.
// The merge walk makes the whole update one kernel: it reads g, m, v and p
// and writes m', v' and p' (before it, three kernels wrote and read two
// temporaries).
// CHECK-LABEL: func.func @adamw_update
// CHECK-COUNT-13: ein.fusion = 0
// CHECK-NOT:  ein.fusion = 1
// CHECK:      return
func.func @adamw_update(%g: tensor<4x8xf32>, %m: tensor<4x8xf32>, %v: tensor<4x8xf32>, %p: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = ein.constant {axes = [], ein.phase = "optimizer"} dense<1.000000e-01> : tensor<f32>
  %c1 = ein.constant {axes = [], ein.phase = "optimizer"} dense<9.990000e-01> : tensor<f32>
  %c2 = ein.constant {axes = [], ein.phase = "optimizer"} dense<1.000000e-03> : tensor<f32>
  %c3 = ein.constant {axes = [], ein.phase = "optimizer"} dense<9.99999993E-9> : tensor<f32>
  %c4 = ein.constant {axes = [], ein.phase = "optimizer"} dense<0.99999> : tensor<f32>
  %b0 = ein.broadcast %c0 dims [] {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<f32> -> tensor<4x8xf32>
  %b1 = ein.broadcast %c1 dims [] {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<f32> -> tensor<4x8xf32>
  %b2 = ein.broadcast %c2 dims [] {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<f32> -> tensor<4x8xf32>
  %b3 = ein.broadcast %c3 dims [] {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<f32> -> tensor<4x8xf32>
  %b4 = ein.broadcast %c4 dims [] {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<f32> -> tensor<4x8xf32>
  %0 = ein.sub %g, %m {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<4x8xf32>
  %1 = ein.mul %0, %b0 {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<4x8xf32>
  %2 = ein.add %m, %1 {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<4x8xf32>
  %3 = ein.mul %b2, %g {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<4x8xf32>
  %4 = ein.mul %3, %g {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<4x8xf32>
  %5 = ein.mul %b2, %2 {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<4x8xf32>
  %6 = ein.mul %v, %b1 {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<4x8xf32>
  %7 = ein.add %6, %4 {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<4x8xf32>
  %8 = ein.sqrt %7 {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<4x8xf32>
  %9 = ein.add %8, %b3 {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<4x8xf32>
  %10 = ein.div %5, %9 {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<4x8xf32>
  %11 = ein.mul %p, %b4 {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<4x8xf32>
  %12 = ein.sub %11, %10 {axes = ["a", "b"], ein.phase = "optimizer"} : tensor<4x8xf32>
  return %12, %2, %7 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
