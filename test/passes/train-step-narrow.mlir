// RUN: ein-opt %s --ein-train-step="optimizer=adamw weight-decay=0" | FileCheck %s
// RUN: ein-opt %s --ein-train-step="optimizer=adamw weight-decay=0 narrow-update=nearest" | FileCheck %s --check-prefix=NEAREST
// RUN: not ein-opt %s --ein-train-step="narrow-update=up" 2>&1 | FileCheck %s --check-prefix=BAD

// A bf16 param (the `bf16` precision policy): its optimizer state is f32,
// the gradient and the param are cast up, the update is computed in f32,
// and the new value is stored back into bf16. The gradient norm
// accumulates in f32.

func.func @grad(%w: tensor<4xbf16> {ein.axes = ["d"], ein.kind = "param", ein.name = "w"})
    -> (tensor<f32> {ein.name = "loss"},
        tensor<4xbf16> {ein.kind = "grad", ein.name = "w"}) {
  %c = ein.constant {axes = []} dense<1.0> : tensor<f32>
  %g = ein.neg %w {axes = ["d"]} : tensor<4xbf16>
  return %c, %g : tensor<f32>, tensor<4xbf16>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4xbf16> {ein.axes = ["d"], ein.kind = "param", ein.name = "w"}
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<4xf32> {ein.axes = ["d"], ein.kind = "opt_state", ein.name = "w.m"}
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<4xf32> {ein.axes = ["d"], ein.kind = "opt_state", ein.name = "w.v"}
// CHECK-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<f32> {ein.name = "grad_norm"}, tensor<4xbf16> {ein.kind = "param", ein.name = "w"}, tensor<4xf32> {ein.kind = "opt_state", ein.name = "w.m"}, tensor<4xf32> {ein.kind = "opt_state", ein.name = "w.v"})
// CHECK: %[[G:.+]] = ein.neg %[[W]]
// CHECK-NEXT: %[[G32:.+]] = ein.cast %[[G]] {{.*}} : tensor<4xbf16> -> tensor<4xf32>
// CHECK-NEXT: %[[SQ:.+]] = ein.mul %[[G32]], %[[G32]] {{.*}} : tensor<4xf32>
// CHECK-NEXT: ein.reduce sum %[[SQ]] dims [0] {{.*}} : tensor<4xf32> -> tensor<f32>
// CHECK: %[[GC:.+]] = ein.mul %[[G32]], %{{.+}} {{.*}} : tensor<4xf32>
// CHECK: %[[P32:.+]] = ein.cast %[[W]] {{.*}} : tensor<4xbf16> -> tensor<4xf32>
// CHECK: ein.sub %[[GC]], %[[M]] {{.*}} : tensor<4xf32>
// CHECK: %[[NEW:.+]] = ein.sub %[[P32]], %{{.+}} {{.*}} : tensor<4xf32>
// Stored with stochastic rounding, seeded by step · 1 + 0 (the 0th of 1 params).
// CHECK: %[[SEED:.+]] = ein.add %[[TP:.+]], %{{.+}} {{.*}} : tensor<i32>
// CHECK-NEXT: %[[SEEDS:.+]] = ein.broadcast %[[SEED]] dims [] {axes = ["d"]{{.*}}} : tensor<i32> -> tensor<4xi32>
// CHECK-NEXT: %[[NW:.+]] = ein.stochastic_round %[[NEW]], %[[SEEDS]] {axes = ["d"]{{.*}}} : tensor<4xf32>, tensor<4xi32> -> tensor<4xbf16>
// CHECK-NEXT: return %{{.+}}, %{{.+}}, %[[NW]], %{{.+}}, %{{.+}} : tensor<f32>, tensor<f32>, tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>

// Rounding to nearest needs no seed.
// NEAREST-LABEL: func.func @train_step(
// NEAREST-NOT: stochastic_round
// NEAREST-NOT: tensor<i32>
// NEAREST: ein.cast %{{.+}} : tensor<4xf32> -> tensor<4xbf16>
// NEAREST-NOT: tensor<i32>
// NEAREST: return

// BAD: ein-train-step: narrow-update must be 'stochastic' or 'nearest', got 'up'
