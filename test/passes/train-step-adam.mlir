// RUN: ein-opt %s --ein-train-step="optimizer=adam weight-decay=0.01" | FileCheck %s
// RUN: ein-opt %s --ein-train-step=optimizer=adam | FileCheck %s --check-prefix=DEFAULTS
// RUN: ein-opt %s --ein-train-step="optimizer=adam weight-decay=0 clip=0" | FileCheck %s --check-prefix=NOWD

// Adam (torch.optim.Adam): L2 weight decay added to the gradient (matrices
// only by default), the same moments and step as AdamW, no decoupled decay.

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
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3xf32> {ein.axes = ["b", "d"], ein.kind = "input", ein.name = "x"}
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.kind = "param", ein.name = "w"}
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<4xf32> {ein.axes = ["h"], ein.kind = "param", ein.name = "b"}
// CHECK-SAME: %[[WM:[a-z0-9]+]]: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.kind = "opt_state", ein.name = "w.m"}
// CHECK-SAME: %[[WV:[a-z0-9]+]]: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.kind = "opt_state", ein.name = "w.v"}
// CHECK-SAME: %[[BM:[a-z0-9]+]]: tensor<4xf32> {ein.axes = ["h"], ein.kind = "opt_state", ein.name = "b.m"}
// CHECK-SAME: %[[BV:[a-z0-9]+]]: tensor<4xf32> {ein.axes = ["h"], ein.kind = "opt_state", ein.name = "b.v"}
// CHECK-SAME: %[[STEP:[a-z0-9]+]]: tensor<f32> {ein.kind = "step", ein.name = "step"}
// CHECK-SAME: %[[LR:[a-z0-9]+]]: tensor<f32> {ein.kind = "lr", ein.name = "lr"})
// CHECK-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<f32> {ein.name = "grad_norm"}, tensor<3x4xf32> {ein.kind = "param", ein.name = "w"}, tensor<4xf32> {ein.kind = "param", ein.name = "b"}, tensor<3x4xf32> {ein.kind = "opt_state", ein.name = "w.m"}, tensor<3x4xf32> {ein.kind = "opt_state", ein.name = "w.v"}, tensor<4xf32> {ein.kind = "opt_state", ein.name = "b.m"}, tensor<4xf32> {ein.kind = "opt_state", ein.name = "b.v"})

// Clipping ends with the scaled gradients.
// CHECK: %[[CL:.+]] = ein.min
// CHECK-NEXT: ein.broadcast %[[CL]]
// CHECK-NEXT: %[[G:.+]] = ein.mul
// CHECK-NEXT: ein.broadcast %[[CL]]
// CHECK-NEXT: %[[GC:.+]] = ein.mul
// Shared scalars: no 1 - lr*wd factor.
// CHECK-NEXT: %[[H1:.+]] = ein.constant {axes = []{{.*}}} dense<-0.0526802577> : tensor<f32>
// CHECK-NEXT: %[[X1:.+]] = ein.mul %[[STEP]], %[[H1]]
// CHECK-NEXT: %[[T1:.+]] = ein.tanh %[[X1]]
// CHECK-NEXT: %[[M2:.+]] = ein.constant {axes = []{{.*}}} dense<-2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[N1:.+]] = ein.mul %[[M2]], %[[T1]]
// CHECK-NEXT: %[[D1:.+]] = ein.sub %{{.+}}, %[[T1]]
// CHECK-NEXT: %[[BC1:.+]] = ein.div %[[N1]], %[[D1]]
// CHECK-NEXT: %[[H2:.+]] = ein.constant {axes = []{{.*}}} dense<-5.00250142E-4> : tensor<f32>
// CHECK-NEXT: %[[X2:.+]] = ein.mul %[[STEP]], %[[H2]]
// CHECK-NEXT: %[[T2:.+]] = ein.tanh %[[X2]]
// CHECK-NEXT: %[[N2:.+]] = ein.mul %[[M2]], %[[T2]]
// CHECK-NEXT: %[[D2:.+]] = ein.sub %{{.+}}, %[[T2]]
// CHECK-NEXT: %[[BC2:.+]] = ein.div %[[N2]], %[[D2]]
// CHECK-NEXT: %[[SSZ:.+]] = ein.div %[[LR]], %[[BC1]]
// CHECK-NEXT: %[[BC2S:.+]] = ein.sqrt %[[BC2]]
// The matrix: g + wd * p first.
// CHECK-NEXT: %[[WD:.+]] = ein.constant {axes = []{{.*}}} dense<0.00999999977> : tensor<f32>
// CHECK-NEXT: %[[WDB:.+]] = ein.broadcast %[[WD]] dims [] {axes = ["d", "h"]{{.*}}}
// CHECK-NEXT: %[[PEN:.+]] = ein.mul %[[WDB]], %[[W]]
// CHECK-NEXT: %[[GD:.+]] = ein.add %[[G]], %[[PEN]] {axes = ["d", "h"]{{.*}}}
// CHECK-NEXT: %[[D:.+]] = ein.sub %[[GD]], %[[WM]]
// CHECK-NEXT: ein.constant {axes = []{{.*}}} dense<1.000000e-01>
// CHECK-NEXT: ein.broadcast
// CHECK-NEXT: %[[DW:.+]] = ein.mul %[[D]]
// CHECK-NEXT: %[[M:.+]] = ein.add %[[WM]], %[[DW]]
// CHECK-NEXT: %[[B2:.+]] = ein.constant {axes = []{{.*}}} dense<9.990000e-01>
// CHECK-NEXT: ein.broadcast %[[B2]]
// CHECK-NEXT: %[[VD:.+]] = ein.mul %[[WV]]
// CHECK-NEXT: ein.constant {axes = []{{.*}}} dense<1.000000e-03>
// CHECK-NEXT: ein.broadcast
// CHECK-NEXT: %[[CG:.+]] = ein.mul %{{.+}}, %[[GD]]
// CHECK-NEXT: %[[CGG:.+]] = ein.mul %[[CG]], %[[GD]]
// CHECK-NEXT: %[[V:.+]] = ein.add %[[VD]], %[[CGG]]
// CHECK-NEXT: %[[RV:.+]] = ein.sqrt %[[V]]
// CHECK-NEXT: ein.broadcast %[[BC2S]]
// CHECK-NEXT: %[[SC:.+]] = ein.div %[[RV]]
// CHECK-NEXT: ein.constant {axes = []{{.*}}} dense<9.99999993E-9>
// CHECK-NEXT: ein.broadcast
// CHECK-NEXT: %[[DEN:.+]] = ein.add %[[SC]]
// CHECK-NEXT: ein.broadcast %[[SSZ]]
// CHECK-NEXT: %[[SM:.+]] = ein.mul %{{.+}}, %[[M]]
// CHECK-NEXT: %[[UPD:.+]] = ein.div %[[SM]], %[[DEN]]
// No decoupled decay: the update applies to the param itself.
// CHECK-NEXT: %[[NW:.+]] = ein.sub %[[W]], %[[UPD]] {axes = ["d", "h"]{{.*}}}
// The vector: no penalty.
// CHECK-NEXT: %[[DB:.+]] = ein.sub %[[GC]], %[[BM]] {axes = ["h"]{{.*}}}
// CHECK: %[[NB:.+]] = ein.sub %[[B]], %{{.+}} {axes = ["h"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %{{.+}}, %[[NW]], %[[NB]], %[[M]], %[[V]], %{{.+}}, %{{.+}} :

// NOWD-LABEL: func.func @train_step(
// NOWD-NOT: dense<0.00999999977>
// NOWD: ein.tanh
// NOWD: ein.tanh
// NOWD: ein.div %{{.+}}, %{{.+}} {axes = []{{.*}}} : tensor<f32>
// NOWD-NEXT: ein.div %{{.+}}, %{{.+}} {axes = []{{.*}}} : tensor<f32>
// NOWD-NEXT: ein.sqrt %{{.+}} {axes = []{{.*}}} : tensor<f32>
// NOWD-NEXT: ein.sub %{{.+}}, %{{.+}} {axes = ["d", "h"]{{.*}}}

// Nothing but the optimizer given: torch.optim.Adam's defaults, no weight
// decay at all and eps 1e-8.
// DEFAULTS-LABEL: func.func @train_step(
// DEFAULTS-NOT: dense<0.00999999977>
// DEFAULTS: ein.constant {axes = []{{.*}}} dense<9.99999993E-9> : tensor<f32>
// DEFAULTS-NOT: dense<0.00999999977>
// DEFAULTS: return
