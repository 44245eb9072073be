// RUN: rm -rf %t && split-file %s %t
// RUN: ein-opt %t/policy.mlir --ein-remat=policy=layer -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/every.mlir --ein-remat="policy=every every=0" -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/names.mlir --ein-remat="policy=names names=y" -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/none.mlir --ein-remat=policy=full | FileCheck %s --check-prefix=NONE

// ein-remat's diagnostics: one error on the function, naming what is valid.

//--- policy.mlir
// expected-error @+1 {{ein-remat: unknown policy 'layer' (valid: none, full, every, sqrt, selective, names, budget)}}
func.func @grad(%w: tensor<3xf32> {ein.kind = "param", ein.name = "w"}) -> (tensor<f32>, tensor<3xf32>) {
  %e = ein.exp %w {axes = ["d"], ein.phase = "forward"} : tensor<3xf32>
  %l = ein.reduce sum %e dims [0] {axes = [], ein.phase = "forward"} : tensor<3xf32> -> tensor<f32>
  %g = ein.mul %e, %e {axes = ["d"], ein.phase = "backward"} : tensor<3xf32>
  return %l, %g : tensor<f32>, tensor<3xf32>
}

//--- every.mlir
// expected-error @+1 {{ein-remat: every needs a spacing of at least 1 iteration, got 0}}
func.func @grad(%w: tensor<3xf32> {ein.kind = "param", ein.name = "w"}) -> (tensor<f32>, tensor<3xf32>) {
  %e = ein.exp %w {axes = ["d"], ein.phase = "forward"} : tensor<3xf32>
  %l = ein.reduce sum %e dims [0] {axes = [], ein.phase = "forward"} : tensor<3xf32> -> tensor<f32>
  %g = ein.mul %e, %e {axes = ["d"], ein.phase = "backward"} : tensor<3xf32>
  return %l, %g : tensor<f32>, tensor<3xf32>
}

//--- names.mlir
// expected-error @+1 {{ein-remat: names: 'y' is not a value of the program; its let-bound names: e, x}}
func.func @grad(%w: tensor<3xf32> {ein.kind = "param", ein.name = "w"}) -> (tensor<f32>, tensor<3xf32>) {
  %e = ein.exp %w {axes = ["d"], ein.let = ["e", "x"], ein.phase = "forward"} : tensor<3xf32>
  %l = ein.reduce sum %e dims [0] {axes = [], ein.phase = "forward"} : tensor<3xf32> -> tensor<f32>
  %g = ein.mul %e, %e {axes = ["d"], ein.phase = "backward"} : tensor<3xf32>
  return %l, %g : tensor<f32>, tensor<3xf32>
}

//--- none.mlir
// Outside loops `full` keeps everything; a function the pass is not asked
// to rewrite (@forward) is left alone.
// NONE-LABEL: func.func @forward(
// NONE-NOT: recompute
// NONE-LABEL: func.func @grad(
// NONE-SAME: attributes {ein.remat = {kept = 1 : i64, kept_bytes = 12 : i64, policy = "full", predicted_peak = 256 : i64, recompute_flops = 0 : i64, recompute_seconds = 0.000000e+00 : f64, recomputed_ops = 0 : i64}}
// NONE-NOT: recompute
// NONE: return
func.func @forward(%w: tensor<3xf32> {ein.kind = "param", ein.name = "w"}) -> tensor<f32> {
  %e = ein.exp %w {axes = ["d"]} : tensor<3xf32>
  %l = ein.reduce sum %e dims [0] {axes = []} : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
func.func @grad(%w: tensor<3xf32> {ein.kind = "param", ein.name = "w"}) -> (tensor<f32>, tensor<3xf32>) {
  %e = ein.exp %w {axes = ["d"], ein.phase = "forward"} : tensor<3xf32>
  %l = ein.reduce sum %e dims [0] {axes = [], ein.phase = "forward"} : tensor<3xf32> -> tensor<f32>
  %g = ein.mul %e, %e {axes = ["d"], ein.phase = "backward"} : tensor<3xf32>
  return %l, %g : tensor<f32>, tensor<3xf32>
}
