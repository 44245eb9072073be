// RUN: ein-opt %s --ein-train-step="optimizer=adagrad weight-decay=0.01" | FileCheck %s

// Adagrad (torch.optim.Adagrad, lr_decay 0): L2 weight decay into the
// gradient (matrices only), s <- s + g*g, p <- p - (lr * g) / (sqrt(s) + eps),
// eps torch's default 1e-10.

func.func @grad(%x: tensor<2x3xf32> {ein.axes = ["b", "d"], ein.kind = "input", ein.name = "x"},
                %w: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.kind = "param", ein.name = "w"},
                %c: tensor<4xf32> {ein.axes = ["h"], ein.kind = "param", ein.name = "b"})
    -> (tensor<f32> {ein.name = "loss"},
        tensor<3x4xf32> {ein.kind = "grad", ein.name = "w"},
        tensor<4xf32> {ein.kind = "grad", ein.name = "b"}) {
  %loss = ein.reduce sum %x dims [0, 1] {axes = []} : tensor<2x3xf32> -> tensor<f32>
  %gw = ein.neg %w {axes = ["d", "h"]} : tensor<3x4xf32>
  %gc = ein.neg %c {axes = ["h"]} : tensor<4xf32>
  return %loss, %gw, %gc : tensor<f32>, tensor<3x4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.kind = "param", ein.name = "w"}
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<4xf32> {ein.axes = ["h"], ein.kind = "param", ein.name = "b"}
// CHECK-SAME: %[[WS:[a-z0-9]+]]: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.kind = "opt_state", ein.name = "w.sum"}
// CHECK-SAME: %[[BS:[a-z0-9]+]]: tensor<4xf32> {ein.axes = ["h"], ein.kind = "opt_state", ein.name = "b.sum"}
// CHECK-SAME: %[[STEP:[a-z0-9]+]]: tensor<f32> {ein.kind = "step", ein.name = "step"}
// CHECK-SAME: %[[LR:[a-z0-9]+]]: tensor<f32> {ein.kind = "lr", ein.name = "lr"})
// CHECK-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<f32> {ein.name = "grad_norm"}, tensor<3x4xf32> {ein.kind = "param", ein.name = "w"}, tensor<4xf32> {ein.kind = "param", ein.name = "b"}, tensor<3x4xf32> {ein.kind = "opt_state", ein.name = "w.sum"}, tensor<4xf32> {ein.kind = "opt_state", ein.name = "b.sum"})
// CHECK: %[[CL:.+]] = ein.min
// CHECK-NEXT: ein.broadcast %[[CL]]
// CHECK-NEXT: %[[G:.+]] = ein.mul
// CHECK-NEXT: ein.broadcast %[[CL]]
// CHECK-NEXT: %[[GC:.+]] = ein.mul
// The matrix.
// CHECK-NEXT: %[[WD:.+]] = ein.constant {axes = []{{.*}}} dense<0.00999999977> : tensor<f32>
// CHECK-NEXT: %[[WDB:.+]] = ein.broadcast %[[WD]] dims [] {axes = ["d", "h"]{{.*}}}
// CHECK-NEXT: %[[PEN:.+]] = ein.mul %[[WDB]], %[[W]]
// CHECK-NEXT: %[[GD:.+]] = ein.add %[[G]], %[[PEN]]
// CHECK-NEXT: %[[GG:.+]] = ein.mul %[[GD]], %[[GD]] {axes = ["d", "h"]{{.*}}}
// CHECK-NEXT: %[[S:.+]] = ein.add %[[WS]], %[[GG]] {axes = ["d", "h"]{{.*}}}
// CHECK-NEXT: %[[RS:.+]] = ein.sqrt %[[S]]
// CHECK-NEXT: %[[EPS:.+]] = ein.constant {axes = []{{.*}}} dense<1.000000e-10> : tensor<f32>
// CHECK-NEXT: %[[EPSB:.+]] = ein.broadcast %[[EPS]] dims [] {axes = ["d", "h"]{{.*}}}
// CHECK-NEXT: %[[STD:.+]] = ein.add %[[RS]], %[[EPSB]]
// CHECK-NEXT: %[[LRB:.+]] = ein.broadcast %[[LR]] dims [] {axes = ["d", "h"]{{.*}}}
// CHECK-NEXT: %[[LG:.+]] = ein.mul %[[LRB]], %[[GD]]
// CHECK-NEXT: %[[UPD:.+]] = ein.div %[[LG]], %[[STD]]
// CHECK-NEXT: %[[NW:.+]] = ein.sub %[[W]], %[[UPD]] {axes = ["d", "h"]{{.*}}}
// The vector: no penalty.
// CHECK-NEXT: %[[GG2:.+]] = ein.mul %[[GC]], %[[GC]] {axes = ["h"]{{.*}}}
// CHECK-NEXT: %[[S2:.+]] = ein.add %[[BS]], %[[GG2]]
// CHECK-NEXT: %[[RS2:.+]] = ein.sqrt %[[S2]]
// CHECK-NEXT: ein.broadcast %[[EPS]] dims [] {axes = ["h"]{{.*}}}
// CHECK-NEXT: %[[STD2:.+]] = ein.add %[[RS2]]
// CHECK-NEXT: ein.broadcast %[[LR]] dims [] {axes = ["h"]{{.*}}}
// CHECK-NEXT: %[[LG2:.+]] = ein.mul %{{.+}}, %[[GC]]
// CHECK-NEXT: %[[UPD2:.+]] = ein.div %[[LG2]], %[[STD2]]
// CHECK-NEXT: %[[NB:.+]] = ein.sub %[[B]], %[[UPD2]] {axes = ["h"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %{{.+}}, %[[NW]], %[[NB]], %[[S]], %[[S2]] :
