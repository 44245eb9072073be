// RUN: ein-opt %s --ein-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: ein-opt %s --ein-autodiff --ein-train-step | FileCheck %s --check-prefix=STEP
// RUN: ein-opt %s --ein-autodiff --ein-train-step | ein-opt --ein-print-costs=ops=true -o /dev/null | FileCheck %s --check-prefix=COSTS
//
// Every op of @grad and @train_step carries ein.phase (@forward's need not):
// RUN: ein-opt %s --ein-autodiff --ein-train-step | sed -n '/func.func @grad/,$p' | grep ' = ein\.' | not grep -v 'ein.phase = "\(forward\|backward\|optimizer\)"'
// The same for the pipeline (canonicalize and CSE keep the tags), on gpt:
// RUN: einc emit --stage=step %examples/gpt.ein --set layers=2 | sed -n '/func.func @grad/,$p' | grep ' = ein\.' | not grep -v 'ein.phase = "\(forward\|backward\|optimizer\)"'

// ein-autodiff tags the cloned forward "forward" and all it adds "backward";
// the gradient ops of a forward op copy its ein.layer (the contract and the
// add of layer.3 here; the top-level broadcast of b and the reduce have none).
// ein-train-step keeps @grad's tags, tags clipping and the optimizer
// "optimizer", and gives each param's clipping and update ops (constants
// aside) its layer: "layer.3" for layer.3.w, none for the top-level b.
func.func @forward(%x: tensor<2x3xf32> {ein.axes = ["i", "k"], ein.kind = "input", ein.name = "x"},
                   %w: tensor<3x3xf32> {ein.axes = ["k", "j"], ein.kind = "param", ein.name = "layer.3.w"},
                   %b: tensor<3xf32> {ein.axes = ["j"], ein.kind = "param", ein.name = "b"}) -> tensor<f32> {
  %y = ein.contract %x, %w batch [], [] contract [1], [0] {axes = ["i", "j"], ein.layer = "layer.3"} : tensor<2x3xf32>, tensor<3x3xf32> -> tensor<2x3xf32>
  %e = ein.exp %y {axes = ["i", "j"], ein.layer = "layer.3"} : tensor<2x3xf32>
  %bb = ein.broadcast %b dims [1] {axes = ["i", "j"]} : tensor<3xf32> -> tensor<2x3xf32>
  %z = ein.add %e, %bb {axes = ["i", "j"]} : tensor<2x3xf32>
  %l = ein.reduce sum %z dims [0, 1] {axes = []} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// GRAD-LABEL: func.func @forward(
// GRAD:       ein.contract %arg0, %arg1 batch [], [] contract [1], [0] {axes = ["i", "j"], ein.layer = "layer.3"}
// GRAD-LABEL: func.func @grad(
// GRAD:       %[[Y:.+]] = ein.contract %arg0, %arg1 batch [], [] contract [1], [0] {axes = ["i", "j"], ein.layer = "layer.3", ein.phase = "forward"}
// GRAD-NEXT:  %[[E:.+]] = ein.exp %[[Y]] {axes = ["i", "j"], ein.layer = "layer.3", ein.phase = "forward"}
// GRAD-NEXT:  %[[BB:.+]] = ein.broadcast %arg2 dims [1] {axes = ["i", "j"], ein.phase = "forward"}
// GRAD-NEXT:  %[[Z:.+]] = ein.add %[[E]], %[[BB]] {axes = ["i", "j"], ein.phase = "forward"}
// GRAD-NEXT:  %[[L:.+]] = ein.reduce sum %[[Z]] dims [0, 1] {axes = [], ein.phase = "forward"}
// GRAD-NEXT:  %[[ONE:.+]] = ein.constant {axes = [], ein.phase = "backward"} dense<1.000000e+00>
// GRAD-NEXT:  %[[DZ:.+]] = ein.broadcast %[[ONE]] dims [] {axes = ["i", "j"], ein.phase = "backward"}
// GRAD-NEXT:  %[[DB:.+]] = ein.reduce sum %[[DZ]] dims [0] {axes = ["j"], ein.phase = "backward"}
// GRAD-NEXT:  %[[DY:.+]] = ein.mul %[[DZ]], %[[E]] {axes = ["i", "j"], ein.layer = "layer.3", ein.phase = "backward"}
// GRAD-NEXT:  %[[DW:.+]] = ein.contract %arg0, %[[DY]] batch [], [] contract [0], [0] {axes = ["k", "j"], ein.layer = "layer.3", ein.phase = "backward"}
// GRAD-NEXT:  return %[[L]], %[[DW]], %[[DB]] :

// STEP-LABEL: func.func @train_step(
// STEP:       ein.contract %arg0, %arg1 {{.*}}ein.layer = "layer.3", ein.phase = "forward"}
// STEP:       ein.contract %arg0, %{{.+}} {{.*}}ein.layer = "layer.3", ein.phase = "backward"}
// Clipping: the per-param sums of squares, then the shared norm.
// STEP:       ein.mul %[[G0:[0-9]+]], %[[G0]] {axes = ["k", "j"], ein.layer = "layer.3", ein.phase = "optimizer"}
// STEP-NEXT:  ein.reduce sum {{.*}} {axes = [], ein.layer = "layer.3", ein.phase = "optimizer"}
// STEP-NEXT:  ein.mul %[[G1:[0-9]+]], %[[G1]] {axes = ["j"], ein.phase = "optimizer"}
// STEP-NEXT:  ein.reduce sum {{.*}} {axes = [], ein.phase = "optimizer"}
// STEP-NEXT:  ein.add {{.*}} {axes = [], ein.phase = "optimizer"}
// STEP-NEXT:  ein.sqrt {{.*}} {axes = [], ein.phase = "optimizer"}
// STEP:       ein.constant {axes = [], ein.phase = "optimizer"}
// The update of layer.3.w, then of b.
// STEP:       %[[NEWW:.+]] = ein.sub %{{[0-9]+}}, %{{[0-9]+}} {axes = ["k", "j"], ein.layer = "layer.3", ein.phase = "optimizer"} : tensor<3x3xf32>
// STEP-NEXT:  %{{.+}} = ein.sub %{{.+}}, %arg5 {axes = ["j"], ein.phase = "optimizer"} : tensor<3xf32>
// STEP:       %[[NEWB:.+]] = ein.sub %arg2, %{{.+}} {axes = ["j"], ein.phase = "optimizer"} : tensor<3xf32>
// STEP-NEXT:  return %{{.+}}, %{{.+}}, %[[NEWW]], %[[NEWB]],

// The per-op table of the step: phases and layers as tagged.
// COSTS: op 0 ein.contract contraction forward layer.3 flops 36
// COSTS: ein.contract contraction backward layer.3 flops 36
// COSTS: ein.sub elementwise optimizer layer.3 flops 9
// COSTS: ein.sub elementwise optimizer - flops 3
// COSTS: flops forward
// COSTS: model flops 72
