// RUN: ein-opt %s --ein-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: ein-opt %s --ein-build-train-step="optimizer=sgd" | FileCheck %s
// RUN: ein-opt %s --ein-build-train-step="optimizer=sgd" | ein-opt | FileCheck %s
// RUN: ein-opt %s --ein-build-train-step="optimizer=sgd" | not grep ein.dropout
// ein.dropout's gradient is a dropout of dY with the same p and site (the
// same mask); ein-train-step expands both in @train_step, keyed by its step
// and a new i32 `seed` argument, and erases them in @forward and @grad.
func.func @forward(%w: tensor<4xf32> {ein.axes = ["j"], ein.kind = "param", ein.name = "w"}) -> tensor<f32> {
  %d = ein.dropout %w {axes = ["j"], p = 2.500000e-01 : f64, site = 3 : i64} : tensor<4xf32>
  %e = ein.exp %d {axes = ["j"]} : tensor<4xf32>
  %l = ein.reduce sum %e dims [0] {axes = []} : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// GRAD-LABEL: func.func @grad(
// GRAD: %[[D:.+]] = ein.dropout %arg0 {axes = ["j"], ein.phase = "forward", p = 2.500000e-01 : f64, site = 3 : i64}
// GRAD: %[[E:.+]] = ein.exp %[[D]]
// GRAD: %[[DE:.+]] = ein.mul %{{.+}}, %[[E]] {axes = ["j"], ein.phase = "backward"}
// GRAD-NEXT: %[[DX:.+]] = ein.dropout %[[DE]] {axes = ["j"], ein.phase = "backward", p = 2.500000e-01 : f64, site = 3 : i64}
// GRAD-NEXT: return %{{.+}}, %[[DX]]

// CHECK-LABEL: func.func @forward(
// CHECK-NEXT: ein.exp %arg0
// CHECK-LABEL: func.func @grad(
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %arg1: tensor<f32> {ein.kind = "step", ein.name = "step"}, %arg2: tensor<f32> {ein.kind = "lr", ein.name = "lr"}, %arg3: tensor<i32> {ein.kind = "seed", ein.name = "seed"})
// p · 2^-24, 2^-24, 2^24 / (1 - p); the key's constants: site 3 · 0xC2B2AE35,
// 0x9E3779B1, 0x85EBCA6B (as i32).
// CHECK-DAG: %[[SCALE:.+]] = ein.constant {{.*}} dense<0x4BAAAAAB> : tensor<f32>
// CHECK-DAG: %[[ULP:.+]] = ein.constant {{.*}} dense<5.96046448E-8> : tensor<f32>
// CHECK-DAG: %[[V:.+]] = ein.constant {{.*}} dense<1.49011612E-8> : tensor<f32>
// CHECK-DAG: %[[SITE:.+]] = ein.constant {{.*}} dense<1209535135> : tensor<i32>
// CHECK-DAG: %[[PHI:.+]] = ein.constant {{.*}} dense<-1640531535> : tensor<i32>
// CHECK-DAG: %[[C1:.+]] = ein.constant {{.*}} dense<-2048144789> : tensor<i32>
// CHECK: %[[T:.+]] = ein.cast %arg1 {axes = [], ein.phase = "forward"} : tensor<f32> -> tensor<i32>
// CHECK-NEXT: %[[K0:.+]] = ein.mul %arg3, %[[PHI]]
// CHECK-NEXT: %[[K1:.+]] = ein.add %[[K0]], %[[T]]
// CHECK-NEXT: %[[K2:.+]] = ein.mul %[[K1]], %[[C1]]
// CHECK-NEXT: %[[K:.+]] = ein.add %[[K2]], %[[SITE]]
// CHECK-NEXT: %[[KS:.+]] = ein.broadcast %[[K]] dims [] {axes = ["j"], ein.phase = "forward"} : tensor<i32> -> tensor<4xi32>
// CHECK-NEXT: %[[VS:.+]] = ein.broadcast %[[V]]
// CHECK-NEXT: %[[R:.+]] = ein.stochastic_round %[[VS]], %[[KS]] {axes = ["j"], ein.phase = "forward"} : tensor<4xf32>, tensor<4xi32> -> tensor<4xf16>
// CHECK-NEXT: %[[RF:.+]] = ein.cast %[[R]] {{.*}} : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT: %[[US:.+]] = ein.broadcast %[[ULP]]
// CHECK-NEXT: %[[KEEP:.+]] = ein.sub %[[US]], %[[RF]]
// CHECK-NEXT: %[[SS:.+]] = ein.broadcast %[[SCALE]]
// CHECK-NEXT: %[[F:.+]] = ein.mul %[[KEEP]], %[[SS]]
// CHECK-NEXT: %[[Y:.+]] = ein.mul %arg0, %[[F]] {axes = ["j"], ein.phase = "forward"}
// CHECK-NEXT: ein.exp %[[Y]]
// The backward draws the same mask again (not stored): the same key, in its phase.
// CHECK: ein.stochastic_round %{{.+}}, %{{.+}} {axes = ["j"], ein.phase = "backward"}
// CHECK-LABEL: func.func @apply_update(
// CHECK-NOT: "seed"
// CHECK-SAME: {
