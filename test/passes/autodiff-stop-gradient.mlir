// RUN: ein-opt %s -split-input-file --ein-autodiff -verify-diagnostics | FileCheck %s
// A canonicalize before autodiff keeps the stops (the op has no folder):
// RUN: ein-opt %s -split-input-file --canonicalize --ein-autodiff 2>&1 | FileCheck %s --check-prefix=KEPT
// ein.stop_gradient: its result is a constant to the backward. w reaches the
// loss directly and through a stopped copy (y = w · stop(exp(w))): its
// gradient is exp(w) · dY only, and exp gets no gradient rule run.
// u reaches the loss only through a stop_gradient: no gradient, the
// "does not reach the loss" warning and `ein.unused`. Once the backward is
// built the pass erases every stop_gradient, in @forward too.
func.func @forward(%w: tensor<4xf32> {ein.axes = ["j"], ein.kind = "param", ein.name = "w"},
                   // expected-warning @+1 {{param 'u' does not reach the loss}}
                   %u: tensor<4xf32> {ein.axes = ["j"], ein.kind = "param", ein.name = "u"}) -> tensor<f32> {
  %e = ein.exp %w {axes = ["j"]} : tensor<4xf32>
  %s = ein.stop_gradient %e {axes = ["j"]} : tensor<4xf32>
  %y = ein.mul %w, %s {axes = ["j"]} : tensor<4xf32>
  %su = ein.stop_gradient %u {axes = ["j"]} : tensor<4xf32>
  %z = ein.add %y, %su {axes = ["j"]} : tensor<4xf32>
  %l = ein.reduce sum %z dims [0] {axes = []} : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward(
// CHECK-NOT: ein.stop_gradient
// CHECK: %[[E:.+]] = ein.exp %arg0
// CHECK-NEXT: %[[Y:.+]] = ein.mul %arg0, %[[E]]
// CHECK-NEXT: ein.add %[[Y]], %arg1
// CHECK-LABEL: func.func @grad(
// CHECK-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<4xf32> {ein.kind = "grad", ein.name = "w"}, tensor<4xf32> {ein.kind = "grad", ein.name = "u", ein.unused})
// CHECK-NOT: ein.stop_gradient
// CHECK: %[[E:.+]] = ein.exp %arg0
// CHECK: %[[DZ:.+]] = ein.broadcast
// CHECK-NEXT: %[[DW:.+]] = ein.mul %[[DZ]], %[[E]]
// CHECK-NOT: ein.exp
// CHECK-NOT: ein.mul
// CHECK: return %{{.+}}, %[[DW]], %{{.+}} :

// KEPT-DAG: warning: param 'u' does not reach the loss
// KEPT-DAG: ein.name = "u", ein.unused}

// -----

// A stopped loss: nothing reaches it, every param is unused.
func.func @forward(%w: tensor<4xf32> {ein.axes = ["j"], ein.kind = "param", ein.name = "w"}) -> tensor<f32> {
  // expected-warning @-1 {{param 'w' does not reach the loss}}
  %l = ein.reduce sum %w dims [0] {axes = []} : tensor<4xf32> -> tensor<f32>
  %s = ein.stop_gradient %l {axes = []} : tensor<f32>
  return %s : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK-SAME: ein.name = "w", ein.unused}
// KEPT-DAG: warning: param 'w' does not reach the loss
