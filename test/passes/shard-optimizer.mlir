// RUN: ein-opt %s --ein-train-step=optimizer=adamw --ein-shard-optimizer="ranks=2 rank=0" | FileCheck %s --check-prefix=R0
// RUN: ein-opt %s --ein-train-step=optimizer=adamw --ein-shard-optimizer="ranks=2 rank=1" | FileCheck %s --check-prefix=R1
// RUN: ein-opt %s --ein-train-step=optimizer=adamw --ein-shard-optimizer="ranks=1 rank=0" | FileCheck %s --check-prefix=ONE
// RUN: not ein-opt %s --ein-train-step=optimizer=adamw --ein-shard-optimizer="ranks=2 rank=2" 2>&1 | FileCheck %s --check-prefix=BADRANK
// RUN: not ein-opt %s --ein-shard-optimizer="ranks=2 rank=0" 2>&1 | FileCheck %s --check-prefix=NOAPPLY
// BADRANK: error: ein-shard-optimizer: rank 2 is not in [0, 2)
// NOAPPLY: error: ein-shard-optimizer: no @apply_update to shard

// ZeRO-1's @apply_update on two ranks: w (12 elements) is rank 0's, b (4)
// rank 1's. Each rank keeps every param and gradient (the norm is global)
// but only its own param's new value and AdamW state.

func.func @grad(%x: tensor<2x3xf32> {ein.axes = ["b", "d"], ein.kind = "input", ein.name = "x"},
                %w: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.init = {kind = "normal", std = 2.000000e-02 : f64}, ein.kind = "param", ein.name = "layer.0.w"},
                %c: tensor<4xf32> {ein.axes = ["h"], ein.init = {kind = "zeros"}, ein.kind = "param", ein.name = "layer.0.b"})
    -> (tensor<f32> {ein.name = "loss"},
        tensor<3x4xf32> {ein.kind = "grad", ein.name = "layer.0.w"},
        tensor<4xf32> {ein.kind = "grad", ein.name = "layer.0.b"}) {
  %loss = ein.reduce sum %x dims [0, 1] {axes = []} : tensor<2x3xf32> -> tensor<f32>
  %gw = ein.neg %w {axes = ["d", "h"]} : tensor<3x4xf32>
  %gc = ein.neg %c {axes = ["h"]} : tensor<4xf32>
  return %loss, %gw, %gc : tensor<f32>, tensor<3x4xf32>, tensor<4xf32>
}

// @train_step is not sharded (a single process runs it).
// R0-LABEL: func.func @train_step(
// R0-SAME: ein.name = "layer.0.b.v"
// R0-LABEL: func.func @apply_update(
// R0-SAME: ein.name = "layer.0.w"}
// R0-SAME: ein.name = "layer.0.b"}
// R0-SAME: ein.kind = "grad", ein.name = "layer.0.w"}
// R0-SAME: ein.kind = "grad", ein.name = "layer.0.b"}
// R0-SAME: ein.name = "layer.0.w.m"}
// R0-SAME: ein.name = "layer.0.w.v"}
// R0-NOT: layer.0.b.m
// R0-SAME: ein.kind = "step"
// R0-SAME: -> (tensor<f32> {ein.name = "grad_norm"}, tensor<3x4xf32> {ein.kind = "param", ein.name = "layer.0.w"}, tensor<3x4xf32> {ein.kind = "opt_state", ein.name = "layer.0.w.m"}, tensor<3x4xf32> {ein.kind = "opt_state", ein.name = "layer.0.w.v"})
// R0-SAME: ein.shard = [0, 2]
// R0: return {{.*}} : tensor<f32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>

// R1-LABEL: func.func @apply_update(
// R1-NOT: layer.0.w.m
// R1-SAME: ein.name = "layer.0.b.m"}
// R1-SAME: ein.name = "layer.0.b.v"}
// R1-SAME: -> (tensor<f32> {ein.name = "grad_norm"}, tensor<4xf32> {ein.kind = "param", ein.name = "layer.0.b"}, tensor<4xf32> {ein.kind = "opt_state", ein.name = "layer.0.b.m"}, tensor<4xf32> {ein.kind = "opt_state", ein.name = "layer.0.b.v"})
// R1: return {{.*}} : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>

// ONE-LABEL: func.func @apply_update(
// ONE-SAME: ein.name = "layer.0.w.m"
// ONE-SAME: ein.name = "layer.0.b.v"
// ONE-SAME: ein.shard = [0, 1]
