// RUN: ein-opt %s --ein-autodiff="forward=loss_fn grad=loss_grad" | FileCheck %s
// The `forward` and `grad` options name the functions; the loss may be a
// param itself (its gradient is then 1). Every op @grad adds is tagged
// `ein.phase = "backward"`.

func.func @loss_fn(%w: tensor<f32> {ein.kind = "param", ein.name = "w"},
                   %v: tensor<2xf32> {ein.kind = "param", ein.name = "v"}) -> tensor<f32> {
  return %w : tensor<f32>
}
// CHECK-LABEL: func.func @loss_fn(
// CHECK-LABEL: func.func @loss_grad(
// CHECK-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<f32> {ein.kind = "grad", ein.name = "w"}, tensor<2xf32> {ein.kind = "grad", ein.name = "v", ein.unused})
// CHECK-NEXT: %[[ONE:.+]] = ein.constant {axes = [], ein.phase = "backward"} dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[C0:.+]] = ein.constant {axes = [], ein.phase = "backward"} dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DV:.+]] = ein.broadcast %[[C0]] dims [] {ein.phase = "backward"} : tensor<f32> -> tensor<2xf32>
// CHECK-NEXT: return %arg0, %[[ONE]], %[[DV]] :
