// RUN: ein-opt %s --ein-freeze-params=freeze=w1 | FileCheck %s
// RUN: ein-opt %s --ein-freeze-params=freeze=w1 --ein-autodiff --ein-train-step=optimizer=adamw \
// RUN:   | FileCheck %s --check-prefix=STEP
// RUN: not ein-opt %s --ein-freeze-params=freeze=w3 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not ein-opt %s --ein-freeze-params="freeze=w*" 2>&1 | FileCheck %s --check-prefix=ALL

// ein-freeze-params marks the params `freeze` names; ein-autodiff computes
// no gradient for them, ein-train-step gives them no optimizer state and
// returns them as they came.

func.func @forward(%x: tensor<2x3xf32> {ein.axes = ["b", "d"], ein.kind = "input", ein.name = "x"},
                   %w1: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.kind = "param", ein.name = "w1"},
                   %w2: tensor<4xf32> {ein.axes = ["h"], ein.kind = "param", ein.name = "w2"})
    -> (tensor<f32> {ein.name = "loss"}) {
  %h = ein.contract %x, %w1 batch [], [] contract [1], [0] {axes = ["b", "h"]} : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  %y = ein.contract %h, %w2 batch [], [] contract [1], [0] {axes = ["b"]} : tensor<2x4xf32>, tensor<4xf32> -> tensor<2xf32>
  %loss = ein.reduce sum %y dims [0] {axes = []} : tensor<2xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: ein.frozen, ein.kind = "param", ein.name = "w1"
// CHECK-NOT: ein.frozen
// CHECK-SAME: ein.name = "w2"

// @grad: one gradient, w2's.
// STEP-LABEL: func.func @grad(
// STEP-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<4xf32> {ein.kind = "grad", ein.name = "w2"})
// @train_step: state for w2 alone; w1 comes back as it came.
// STEP-LABEL: func.func @train_step(
// STEP-SAME: %[[W1:[a-z0-9]+]]: tensor<3x4xf32> {{{.*}}ein.frozen, ein.kind = "param", ein.name = "w1"}
// STEP-NOT: w1.m
// STEP-SAME: ein.kind = "opt_state", ein.name = "w2.m"
// STEP-NOT: w1.m
// STEP-SAME: ein.kind = "opt_state", ein.name = "w2.v"
// STEP-NOT: w1.v
// STEP-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<f32> {ein.name = "grad_norm"}, tensor<4xf32> {ein.kind = "param", ein.name = "w2"}, tensor<3x4xf32> {ein.kind = "param", ein.name = "w1"}, tensor<4xf32> {ein.kind = "opt_state", ein.name = "w2.m"}, tensor<4xf32> {ein.kind = "opt_state", ein.name = "w2.v"})
// STEP: return %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %[[W1]], %{{[0-9]+}}, %{{[0-9]+}} :
// @apply_update takes the trained params alone.
// STEP-LABEL: func.func @apply_update(
// STEP-NOT: "w1"
// STEP: return

// NONE: error: ein-freeze-params: freeze: 'w3' names no param (the params: w1, w2)
// ALL: error: ein-freeze-params: freeze: every param is frozen (w1, w2): nothing is left to train
