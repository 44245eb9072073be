// RUN: ein-opt %s --ein-train-step="optimizer=sgd momentum=0 weight-decay=0 clip=1" --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s

// Where the ops the pass adds are located: one param's clipping and update at
// the param (its @grad argument: the declaration in the model file); the
// global norm and clipping scalars at the `train { }` entry `clip`, the
// optimizer's shared scalars and constants at `optimizer` (named parts of the
// module's fused location); without those, at @grad's return (the `minimize`).
// Never at the function's (or an unknown) location.

module {
func.func @grad(%x: tensor<2x3xf32> {ein.axes = ["b", "d"], ein.kind = "input", ein.name = "x"} loc("m.ein":3:7),
                %w: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.kind = "param", ein.name = "w"} loc("m.ein":4:7),
                %c: tensor<4xf32> {ein.axes = ["h"], ein.kind = "param", ein.name = "b"} loc("m.ein":5:7))
    -> (tensor<f32> {ein.name = "loss"},
        tensor<3x4xf32> {ein.kind = "grad", ein.name = "w"},
        tensor<4xf32> {ein.kind = "grad", ein.name = "b"}) {
  %loss = ein.reduce sum %x dims [0, 1] {axes = []} : tensor<2x3xf32> -> tensor<f32> loc("m.ein":10:10)
  %gw = ein.neg %w {axes = ["d", "h"]} : tensor<3x4xf32> loc("m.ein":10:10)
  %gc = ein.neg %c {axes = ["h"]} : tensor<4xf32> loc("m.ein":10:10)
  return %loss, %gw, %gc : tensor<f32>, tensor<3x4xf32>, tensor<4xf32> loc("m.ein":10:1)
} loc("m.ein":1:1)
} loc(fused["m.ein":1:1, "clip"("m.ein":8:10), "optimizer"("m.ein":7:15)])

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: ein.name = "x"} loc("m.ein":3:7)
// CHECK-SAME: ein.name = "w"} loc("m.ein":4:7)
// CHECK-SAME: ein.name = "b"} loc("m.ein":5:7)
// CHECK-SAME: ein.name = "step"} loc("m.ein":7:15)
// CHECK-SAME: ein.name = "lr"} loc("m.ein":7:15)
// The cloned @grad keeps its locations.
// CHECK: ein.neg %arg2 {{.*}} loc("m.ein":10:10)
// Each param's share of the norm at the param, the sum and the clip at `clip`.
// CHECK-NEXT: ein.mul %1, %1 {{.*}} loc("m.ein":4:7)
// CHECK-NEXT: ein.reduce sum %3 {{.*}} loc("m.ein":4:7)
// CHECK-NEXT: ein.mul %2, %2 {{.*}} loc("m.ein":5:7)
// CHECK-NEXT: ein.reduce sum %5 {{.*}} loc("m.ein":5:7)
// CHECK-NEXT: %[[SUM:.+]] = ein.add {{.*}} loc("m.ein":8:10)
// CHECK-NEXT: ein.sqrt %[[SUM]] {{.*}} loc("m.ein":8:10)
// CHECK-NEXT: ein.constant {{.*}} loc("m.ein":7:15)
// CHECK-NEXT: ein.constant {{.*}} loc("m.ein":7:15)
// CHECK-NEXT: ein.add {{.*}} loc("m.ein":8:10)
// CHECK-NEXT: ein.div {{.*}} loc("m.ein":8:10)
// CHECK-NEXT: %[[COEF:.+]] = ein.min {{.*}} loc("m.ein":8:10)
// Scaling each gradient and its update: at the param.
// CHECK-NEXT: ein.broadcast %[[COEF]] {{.*}} loc("m.ein":4:7)
// CHECK-NEXT: ein.mul {{.*}} loc("m.ein":4:7)
// CHECK-NEXT: ein.broadcast %[[COEF]] {{.*}} loc("m.ein":5:7)
// CHECK-NEXT: ein.mul {{.*}} loc("m.ein":5:7)
// CHECK-NEXT: ein.broadcast %arg4 {{.*}} loc("m.ein":4:7)
// CHECK-NEXT: ein.mul {{.*}} loc("m.ein":4:7)
// CHECK-NEXT: ein.sub %arg1, {{.*}} loc("m.ein":4:7)
// CHECK-NEXT: ein.broadcast %arg4 {{.*}} loc("m.ein":5:7)
// CHECK-NEXT: ein.mul {{.*}} loc("m.ein":5:7)
// CHECK-NEXT: ein.sub %arg2, {{.*}} loc("m.ein":5:7)
// CHECK-NEXT: return {{.*}} loc("m.ein":10:1)
// @apply_update: the same.
// CHECK-LABEL: func.func @apply_update(
// CHECK-SAME: ein.name = "w"} loc("m.ein":4:7)
// CHECK: ein.mul %arg2, %arg2 {{.*}} loc("m.ein":4:7)
// CHECK: ein.sqrt {{.*}} loc("m.ein":8:10)
// CHECK: ein.min {{.*}} loc("m.ein":8:10)
// CHECK: ein.sub %arg1, {{.*}} loc("m.ein":5:7)
// CHECK-NOT: loc("m.ein":1:1)
// CHECK-NOT: loc(unknown)
// CHECK: } loc("m.ein":1:1)
