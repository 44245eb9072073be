// RUN: ein-opt %s --ein-train-step="optimizer=adam" --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s

// Without named parts in the module's location (no `train { }` entry), the shared ops
// the pass adds are located at @grad's return (the `minimize`); each
// param's at the param. train-step-locations.mlir has the rest.

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
} loc("m.ein":1:1)

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: ein.name = "w.m"} loc("m.ein":4:7)
// CHECK-SAME: ein.name = "b.v"} loc("m.ein":5:7)
// CHECK-SAME: ein.name = "step"} loc("m.ein":10:1)
// CHECK-SAME: ein.name = "lr"} loc("m.ein":10:1)
// CHECK: ein.reduce sum %5 {{.*}} loc("m.ein":5:7)
// CHECK-NEXT: ein.add {{.*}} loc("m.ein":10:1)
// CHECK-NEXT: ein.sqrt {{.*}} loc("m.ein":10:1)
// The bias corrections (shared) at the minimize; w's moments at w.
// CHECK: ein.tanh {{.*}} loc("m.ein":10:1)
// CHECK: ein.sub {{.*}}, %arg3 {{.*}} loc("m.ein":4:7)
// CHECK: ein.sub {{.*}}, %arg5 {{.*}} loc("m.ein":5:7)
// CHECK-NOT: loc("m.ein":1:1)
// CHECK-NOT: loc(unknown)
// CHECK: return {{.*}} loc("m.ein":10:1)
