// RUN: ein-opt %s --ein-autodiff=loss-scale=1 | FileCheck %s --check-prefix=GRAD
// RUN: ein-opt %s --ein-build-train-step="loss-scaling=dynamic micro-batches=2 optimizer=sgd momentum=0" | FileCheck %s --check-prefix=ACC

// Loss scaling across the pipeline: ein-autodiff seeds the backward with a
// last argument instead of 1 (the gradients of loss * scale; the loss
// returned is unscaled), and @accumulate_grad reads the scaler's state to
// seed each micro-batch with the scale @apply_update will unscale by.

func.func @forward(%x: tensor<2x4xf32> {ein.axes = ["b", "d"], ein.kind = "input", ein.name = "x"},
                   %w: tensor<4xf32> {ein.axes = ["d"], ein.kind = "param", ein.name = "w"})
    -> (tensor<f32> {ein.name = "loss"}) {
  %wb = ein.broadcast %w dims [1] {axes = ["b", "d"]} : tensor<4xf32> -> tensor<2x4xf32>
  %p = ein.mul %x, %wb {axes = ["b", "d"]} : tensor<2x4xf32>
  %loss = ein.reduce sum %p dims [0, 1] {axes = []} : tensor<2x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// GRAD-LABEL: func.func @grad(
// GRAD-SAME: %[[X:[a-z0-9]+]]: tensor<2x4xf32>
// GRAD-SAME: %[[S:[a-z0-9]+]]: tensor<f32> {ein.kind = "loss_scale", ein.name = "loss_scale"})
// GRAD: %[[LOSS:.+]] = ein.reduce sum {{.*}}ein.phase = "forward"
// GRAD-NEXT: %[[SEED:.+]] = ein.broadcast %[[S]] dims [] {axes = ["b", "d"], ein.phase = "backward"}
// GRAD-NEXT: %[[D:.+]] = ein.mul %[[SEED]], %[[X]]
// GRAD-NEXT: %[[GW:.+]] = ein.reduce sum %[[D]] dims [0]
// GRAD-NEXT: return %[[LOSS]], %[[GW]]

// ACC-LABEL: func.func @accumulate_grad(
// ACC-SAME: ein.name = "w"}, %[[RAW:[a-z0-9]+]]: tensor<f32> {ein.axes = [], ein.kind = "opt_state", ein.name = "loss_scale"}, %{{.+}}: tensor<f32> {ein.kind = "accumulator", ein.name = "loss"}
// ACC-DAG: %[[INIT:.+]] = ein.constant {{.*}}dense<6.553600e+04>
// ACC-DAG: %[[ZERO:.+]] = ein.constant {{.*}}dense<0.000000e+00>
// ACC: %[[STARTED:.+]] = ein.cmp gt, %[[RAW]], %[[ZERO]]
// ACC-NEXT: %[[SCALE:.+]] = ein.select %[[STARTED]], %[[RAW]], %[[INIT]]
// ACC: ein.broadcast %[[SCALE]] dims [] {axes = ["b", "d"], ein.phase = "backward"}
// ACC-LABEL: func.func @apply_update(
// ACC-SAME: ein.name = "loss_scale"
// ACC: ein.cmp lt
