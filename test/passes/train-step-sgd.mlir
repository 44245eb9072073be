// RUN: ein-opt %s --ein-train-step="optimizer=sgd momentum=0.9 weight-decay=0.01" | FileCheck %s
// RUN: ein-opt %s --ein-train-step=optimizer=sgd | FileCheck %s --check-prefix=DEFAULTS
// RUN: ein-opt %s --ein-train-step="optimizer=sgd momentum=0 weight-decay=0.01" | FileCheck %s --check-prefix=PLAIN
// RUN: ein-opt %s --ein-train-step="optimizer=sgd momentum=0 weight-decay=0.01 decay=all clip=0" | FileCheck %s --check-prefix=ALL

// SGD (torch.optim.SGD): L2 weight decay into the gradient (matrices only by
// default), then the momentum buffer b <- momentum * b + g, then p - lr * b.
// With momentum 0 there is no state and p <- p - lr * g.

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
// CHECK-SAME: %[[WB:[a-z0-9]+]]: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.kind = "opt_state", ein.name = "w.momentum"}
// CHECK-SAME: %[[BB:[a-z0-9]+]]: tensor<4xf32> {ein.axes = ["h"], ein.kind = "opt_state", ein.name = "b.momentum"}
// CHECK-SAME: %[[STEP:[a-z0-9]+]]: tensor<f32> {ein.kind = "step", ein.name = "step"}
// CHECK-SAME: %[[LR:[a-z0-9]+]]: tensor<f32> {ein.kind = "lr", ein.name = "lr"})
// CHECK-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<f32> {ein.name = "grad_norm"}, tensor<3x4xf32> {ein.kind = "param", ein.name = "w"}, tensor<4xf32> {ein.kind = "param", ein.name = "b"}, tensor<3x4xf32> {ein.kind = "opt_state", ein.name = "w.momentum"}, tensor<4xf32> {ein.kind = "opt_state", ein.name = "b.momentum"})
// CHECK: %[[CL:.+]] = ein.min
// CHECK-NEXT: ein.broadcast %[[CL]]
// CHECK-NEXT: %[[G:.+]] = ein.mul
// CHECK-NEXT: ein.broadcast %[[CL]]
// CHECK-NEXT: %[[GC:.+]] = ein.mul
// The matrix: g + wd * p, b * momentum + g, p - lr * b.
// CHECK-NEXT: %[[WD:.+]] = ein.constant {axes = []{{.*}}} dense<0.00999999977> : tensor<f32>
// CHECK-NEXT: %[[WDB:.+]] = ein.broadcast %[[WD]] dims [] {axes = ["d", "h"]{{.*}}}
// CHECK-NEXT: %[[PEN:.+]] = ein.mul %[[WDB]], %[[W]]
// CHECK-NEXT: %[[GD:.+]] = ein.add %[[G]], %[[PEN]]
// CHECK-NEXT: %[[MOM:.+]] = ein.constant {axes = []{{.*}}} dense<0.899999976> : tensor<f32>
// CHECK-NEXT: %[[MOMB:.+]] = ein.broadcast %[[MOM]] dims [] {axes = ["d", "h"]{{.*}}}
// CHECK-NEXT: %[[BD:.+]] = ein.mul %[[WB]], %[[MOMB]]
// CHECK-NEXT: %[[NWB:.+]] = ein.add %[[BD]], %[[GD]] {axes = ["d", "h"]{{.*}}}
// CHECK-NEXT: %[[LRB:.+]] = ein.broadcast %[[LR]] dims [] {axes = ["d", "h"]{{.*}}}
// CHECK-NEXT: %[[UPD:.+]] = ein.mul %[[LRB]], %[[NWB]]
// CHECK-NEXT: %[[NW:.+]] = ein.sub %[[W]], %[[UPD]] {axes = ["d", "h"]{{.*}}}
// The vector: no penalty.
// CHECK-NEXT: %[[MOMB2:.+]] = ein.broadcast %[[MOM]] dims [] {axes = ["h"]{{.*}}}
// CHECK-NEXT: %[[BD2:.+]] = ein.mul %[[BB]], %[[MOMB2]]
// CHECK-NEXT: %[[NBB:.+]] = ein.add %[[BD2]], %[[GC]] {axes = ["h"]{{.*}}}
// CHECK-NEXT: %[[LRB2:.+]] = ein.broadcast %[[LR]] dims [] {axes = ["h"]{{.*}}}
// CHECK-NEXT: %[[UPD2:.+]] = ein.mul %[[LRB2]], %[[NBB]]
// CHECK-NEXT: %[[NB:.+]] = ein.sub %[[B]], %[[UPD2]] {axes = ["h"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %{{.+}}, %[[NW]], %[[NB]], %[[NWB]], %[[NBB]] :

// momentum=0: no state arguments or results.
// PLAIN-LABEL: func.func @train_step(
// PLAIN-SAME: %{{[a-z0-9]+}}: tensor<4xf32> {ein.axes = ["h"], ein.kind = "param", ein.name = "b"}, %{{[a-z0-9]+}}: tensor<f32> {ein.kind = "step", ein.name = "step"}
// PLAIN-NOT: opt_state
// PLAIN-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<f32> {ein.name = "grad_norm"}, tensor<3x4xf32> {ein.kind = "param", ein.name = "w"}, tensor<4xf32> {ein.kind = "param", ein.name = "b"}) {
// PLAIN-NOT: dense<0.899999976>
// PLAIN: %[[GD:.+]] = ein.add %{{.+}}, %{{.+}} {axes = ["d", "h"]{{.*}}}
// PLAIN-NEXT: %[[LRB:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["d", "h"]{{.*}}}
// PLAIN-NEXT: %[[UPD:.+]] = ein.mul %[[LRB]], %[[GD]]
// PLAIN-NEXT: %[[NW:.+]] = ein.sub %{{.+}}, %[[UPD]]
// PLAIN-NEXT: %[[LRB2:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["h"]{{.*}}}
// PLAIN-NEXT: %[[UPD2:.+]] = ein.mul %[[LRB2]], %{{.+}}
// PLAIN-NEXT: %[[NB:.+]] = ein.sub %{{.+}}, %[[UPD2]]
// PLAIN-NEXT: return %{{.+}}, %{{.+}}, %[[NW]], %[[NB]] : tensor<f32>, tensor<f32>, tensor<3x4xf32>, tensor<4xf32>

// decay=all: the vector gets the L2 penalty too (no clipping: the raw grad).
// ALL-LABEL: func.func @train_step(
// ALL-SAME: %[[W:[a-z0-9]+]]: tensor<3x4xf32>
// ALL-SAME: %[[B:[a-z0-9]+]]: tensor<4xf32>
// ALL: %[[GB:.+]] = ein.neg %[[B]]
// ALL-NOT: ein.min
// ALL: %[[WD:.+]] = ein.constant {axes = []{{.*}}} dense<0.00999999977>
// ALL: ein.sub %[[W]]
// ALL-NEXT: %[[WDB:.+]] = ein.broadcast %[[WD]] dims [] {axes = ["h"]{{.*}}}
// ALL-NEXT: %[[PEN:.+]] = ein.mul %[[WDB]], %[[B]]
// ALL-NEXT: %[[GD:.+]] = ein.add %[[GB]], %[[PEN]] {axes = ["h"]{{.*}}}
// ALL-NEXT: ein.broadcast
// ALL-NEXT: ein.mul %{{.+}}, %[[GD]]
// ALL-NEXT: ein.sub %[[B]]

// Nothing but the optimizer given: torch.optim.SGD's defaults, momentum 0
// (no state) and no weight decay.
// DEFAULTS-LABEL: func.func @train_step(
// DEFAULTS-NOT: opt_state
// DEFAULTS-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<f32> {ein.name = "grad_norm"}, tensor<3x4xf32> {ein.kind = "param", ein.name = "w"}, tensor<4xf32> {ein.kind = "param", ein.name = "b"}) {
// DEFAULTS-NOT: dense<0.00999999977>
// DEFAULTS: return
