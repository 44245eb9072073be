// RUN: ein-opt %s --pass-pipeline='builtin.module(func.func(ein-fold-constants))' | FileCheck %s
// RUN: ein-opt %s --pass-pipeline='builtin.module(func.func(ein-fold-constants{max-elements=4}))' \
// RUN:   | FileCheck %s --check-prefix=SMALL

// RoPE's tables from arange: angle[t, i] = t · exp(-i), read through
// broadcasts by two multiplications with the input. cos(angle) is computed
// twice (as each call of a model's `fn` computes it again): one constant
// serves both.
func.func @rope(%x: tensor<2x3x2xf32> {ein.kind = "input", ein.name = "x"}) -> tensor<2x3x2xf32> {
  %i = ein.iota dim 0 {axes = ["half"]} : tensor<2xi32>
  %if = ein.cast %i {axes = ["half"]} : tensor<2xi32> -> tensor<2xf32>
  %c = ein.constant {axes = []} dense<-1.0> : tensor<f32>
  %cb = ein.broadcast %c dims [] {axes = ["half"]} : tensor<f32> -> tensor<2xf32>
  %m = ein.mul %if, %cb {axes = ["half"]} : tensor<2xf32>
  %freq = ein.exp %m {axes = ["half"]} : tensor<2xf32>
  %t = ein.iota dim 0 {axes = ["ctx"]} : tensor<3xi32>
  %tf = ein.cast %t {axes = ["ctx"]} : tensor<3xi32> -> tensor<3xf32>
  %angle = ein.contract %tf, %freq batch [], [] contract [], [] {axes = ["ctx", "half"]} : tensor<3xf32>, tensor<2xf32> -> tensor<3x2xf32>
  %cos1 = ein.cos %angle {axes = ["ctx", "half"]} : tensor<3x2xf32>
  %b1 = ein.broadcast %cos1 dims [1, 2] {axes = ["b", "ctx", "half"]} : tensor<3x2xf32> -> tensor<2x3x2xf32>
  %y1 = ein.mul %x, %b1 {axes = ["b", "ctx", "half"]} : tensor<2x3x2xf32>
  %cos2 = ein.cos %angle {axes = ["ctx", "half"]} : tensor<3x2xf32>
  %b2 = ein.broadcast %cos2 dims [1, 2] {axes = ["b", "ctx", "half"]} : tensor<3x2xf32> -> tensor<2x3x2xf32>
  %y2 = ein.mul %y1, %b2 {axes = ["b", "ctx", "half"]} : tensor<2x3x2xf32>
  // A bare iota read by the step stays an iota (computed in its readers).
  %j = ein.iota dim 0 {axes = ["b", "ctx", "half"]} : tensor<2x3x2xf32>
  %y3 = ein.add %y2, %j {axes = ["b", "ctx", "half"]} : tensor<2x3x2xf32>
  return %y3 : tensor<2x3x2xf32>
}

// cos(t · exp(-i)) for t = 0, 1, 2 and i = 0, 1, rounded to f32.
// CHECK-LABEL: func.func @rope(
// CHECK-NEXT: %[[COS:.*]] = ein.constant {axes = ["ctx", "half"]} dense<{{\[}}[1.000000e+00, 1.000000e+00], [0.540302277, 0.933092057], [-0.416146845, 0.741321623]]> : tensor<3x2xf32>
// CHECK-NOT: ein.cos
// CHECK-NOT: ein.exp
// CHECK-NOT: ein.contract
// CHECK: ein.broadcast %[[COS]] dims [1, 2]
// CHECK: ein.broadcast %[[COS]] dims [1, 2]
// CHECK-NOT: ein.constant
// CHECK: ein.iota dim 0 {axes = ["b", "ctx", "half"]}
// CHECK: return

// Tables over max-elements are left to the step (the 2-element freq fits).
// SMALL-LABEL: func.func @rope(
// SMALL-NEXT: ein.constant {axes = ["half"]} dense<[1.000000e+00, 0.36787945]> : tensor<2xf32>
// SMALL-NOT: ein.exp
// SMALL: ein.contract
// SMALL: ein.cos
// SMALL: ein.cos
