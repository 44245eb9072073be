// RUN: ein-opt %s --ein-train-step=optimizer=adamw | FileCheck %s
// RUN: ein-opt %s --ein-train-step="optimizer=adamw decay=all" | FileCheck %s --check-prefix=ALL
// RUN: ein-opt %s --ein-train-step="optimizer=adamw weight-decay=0" | FileCheck %s --check-prefix=NOWD
// RUN: ein-opt %s --ein-train-step="optimizer=adamw clip=0" | FileCheck %s --check-prefix=NOCLIP
// RUN: ein-opt %s --ein-train-step="optimizer=adamw beta1=0.25" | FileCheck %s --check-prefix=LERP
// RUN: ein-opt %s --ein-train-step=optimizer=adamw --canonicalize --cse | FileCheck %s --check-prefix=CANON
// RUN: ein-opt %s --ein-train-step=optimizer=adamw | FileCheck %s --check-prefix=APPLY
// RUN: ein-opt %s --ein-train-step="optimizer=adamw apply=" | FileCheck %s --check-prefix=NOAPPLY
// RUN: ein-opt %s --ein-train-step="optimizer=adamw apply=upd" | FileCheck %s --check-prefix=RENAMED

// @train_step from a hand-written @grad (the autodiff pass's output form):
// signature, clipping, and AdamW in torch.optim.AdamW's order of operations.

func.func @grad(%x: tensor<2x3xf32> {ein.axes = ["b", "d"], ein.kind = "input", ein.name = "x"},
                %w: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.init = {kind = "normal", std = 2.000000e-02 : f64}, ein.kind = "param", ein.name = "layer.0.w_qkv"},
                %c: tensor<4xf32> {ein.axes = ["h"], ein.init = {kind = "zeros"}, ein.kind = "param", ein.name = "layer.0.b"})
    -> (tensor<f32> {ein.name = "loss"},
        tensor<3x4xf32> {ein.kind = "grad", ein.name = "layer.0.w_qkv"},
        tensor<4xf32> {ein.kind = "grad", ein.name = "layer.0.b"}) {
  %loss = ein.reduce sum %x dims [0, 1] {axes = []} : tensor<2x3xf32> -> tensor<f32>
  %gw = ein.neg %w {axes = ["d", "h"]} : tensor<3x4xf32>
  %gc = ein.neg %c {axes = ["h"]} : tensor<4xf32>
  return %loss, %gw, %gc : tensor<f32>, tensor<3x4xf32>, tensor<4xf32>
}

// @grad stays; @train_step follows it.
// CHECK-LABEL: func.func @grad(
// CHECK-LABEL: func.func @train_step(
// Inputs and params keep @grad's attributes, in @grad's order.
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3xf32> {ein.axes = ["b", "d"], ein.kind = "input", ein.name = "x"}
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.init = {kind = "normal", std = 2.000000e-02 : f64}, ein.kind = "param", ein.name = "layer.0.w_qkv"}
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<4xf32> {ein.axes = ["h"], ein.init = {kind = "zeros"}, ein.kind = "param", ein.name = "layer.0.b"}
// Optimizer state: param-major, slots m then v, the param's type and axes.
// CHECK-SAME: %[[WM:[a-z0-9]+]]: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.kind = "opt_state", ein.name = "layer.0.w_qkv.m"}
// CHECK-SAME: %[[WV:[a-z0-9]+]]: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.kind = "opt_state", ein.name = "layer.0.w_qkv.v"}
// CHECK-SAME: %[[BM:[a-z0-9]+]]: tensor<4xf32> {ein.axes = ["h"], ein.kind = "opt_state", ein.name = "layer.0.b.m"}
// CHECK-SAME: %[[BV:[a-z0-9]+]]: tensor<4xf32> {ein.axes = ["h"], ein.kind = "opt_state", ein.name = "layer.0.b.v"}
// CHECK-SAME: %[[STEP:[a-z0-9]+]]: tensor<f32> {ein.kind = "step", ein.name = "step"}
// CHECK-SAME: %[[LR:[a-z0-9]+]]: tensor<f32> {ein.kind = "lr", ein.name = "lr"})
// CHECK-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<f32> {ein.name = "grad_norm"},
// CHECK-SAME: tensor<3x4xf32> {ein.kind = "param", ein.name = "layer.0.w_qkv"}, tensor<4xf32> {ein.kind = "param", ein.name = "layer.0.b"},
// CHECK-SAME: tensor<3x4xf32> {ein.kind = "opt_state", ein.name = "layer.0.w_qkv.m"}, tensor<3x4xf32> {ein.kind = "opt_state", ein.name = "layer.0.w_qkv.v"},
// CHECK-SAME: tensor<4xf32> {ein.kind = "opt_state", ein.name = "layer.0.b.m"}, tensor<4xf32> {ein.kind = "opt_state", ein.name = "layer.0.b.v"})

// @grad's body, cloned.
// CHECK-NEXT: %[[LOSS:.+]] = ein.reduce sum %[[X]] dims [0, 1]
// CHECK-NEXT: %[[GW:.+]] = ein.neg %[[W]]
// CHECK-NEXT: %[[GB:.+]] = ein.neg %[[B]]

// Global norm: sqrt(sum over grads of sum g^2).
// CHECK-NEXT: %[[SQW:.+]] = ein.mul %[[GW]], %[[GW]] {axes = ["d", "h"]{{.*}}} : tensor<3x4xf32>
// CHECK-NEXT: %[[SW:.+]] = ein.reduce sum %[[SQW]] dims [0, 1] {axes = []{{.*}}} : tensor<3x4xf32> -> tensor<f32>
// CHECK-NEXT: %[[SQB:.+]] = ein.mul %[[GB]], %[[GB]] {axes = ["h"]{{.*}}} : tensor<4xf32>
// CHECK-NEXT: %[[SB:.+]] = ein.reduce sum %[[SQB]] dims [0] {axes = []{{.*}}} : tensor<4xf32> -> tensor<f32>
// CHECK-NEXT: %[[SS:.+]] = ein.add %[[SW]], %[[SB]] {axes = []{{.*}}} : tensor<f32>
// CHECK-NEXT: %[[NORM:.+]] = ein.sqrt %[[SS]] {axes = []{{.*}}} : tensor<f32>
// Clipping: g *= min(max_norm / (norm + 1e-6), 1).
// CHECK-NEXT: %[[ONE:.+]] = ein.constant {axes = []{{.*}}} dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[TINY:.+]] = ein.constant {axes = []{{.*}}} dense<9.99999997E-7> : tensor<f32>
// CHECK-NEXT: %[[PAD:.+]] = ein.add %[[NORM]], %[[TINY]] {axes = []{{.*}}}
// CHECK-NEXT: %[[COEF:.+]] = ein.div %[[ONE]], %[[PAD]] {axes = []{{.*}}}
// CHECK-NEXT: %[[CL:.+]] = ein.min %[[COEF]], %[[ONE]] {axes = []{{.*}}}
// CHECK-NEXT: %[[CLW:.+]] = ein.broadcast %[[CL]] dims [] {axes = ["d", "h"]{{.*}}} : tensor<f32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[G:.+]] = ein.mul %[[GW]], %[[CLW]] {axes = ["d", "h"]{{.*}}}
// CHECK-NEXT: %[[CLB:.+]] = ein.broadcast %[[CL]] dims [] {axes = ["h"]{{.*}}} : tensor<f32> -> tensor<4xf32>
// CHECK-NEXT: %[[GC:.+]] = ein.mul %[[GB]], %[[CLB]] {axes = ["h"]{{.*}}}

// Shared scalars: 1 - lr*wd; bc1 = 1 - b1^t; bc2 = 1 - b2^t; lr / bc1; sqrt(bc2).
// CHECK-NEXT: %[[WD:.+]] = ein.constant {axes = []{{.*}}} dense<0.00999999977> : tensor<f32>
// CHECK-NEXT: %[[LRWD:.+]] = ein.mul %[[LR]], %[[WD]] {axes = []{{.*}}}
// CHECK-NEXT: %[[FACTOR:.+]] = ein.sub %[[ONE]], %[[LRWD]] {axes = []{{.*}}}
// 1 - b^t = -expm1(t ln b), with expm1(x) = 2 tanh(x/2) / (1 - tanh(x/2)).
// CHECK-NEXT: %[[H1:.+]] = ein.constant {axes = []{{.*}}} dense<-0.0526802577> : tensor<f32>
// CHECK-NEXT: %[[X1:.+]] = ein.mul %[[STEP]], %[[H1]] {axes = []{{.*}}}
// CHECK-NEXT: %[[T1:.+]] = ein.tanh %[[X1]] {axes = []{{.*}}}
// CHECK-NEXT: %[[M2:.+]] = ein.constant {axes = []{{.*}}} dense<-2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[N1:.+]] = ein.mul %[[M2]], %[[T1]] {axes = []{{.*}}}
// CHECK-NEXT: %[[D1:.+]] = ein.sub %[[ONE]], %[[T1]] {axes = []{{.*}}}
// CHECK-NEXT: %[[BC1:.+]] = ein.div %[[N1]], %[[D1]] {axes = []{{.*}}}
// CHECK-NEXT: %[[H2:.+]] = ein.constant {axes = []{{.*}}} dense<-5.00250142E-4> : tensor<f32>
// CHECK-NEXT: %[[X2:.+]] = ein.mul %[[STEP]], %[[H2]] {axes = []{{.*}}}
// CHECK-NEXT: %[[T2:.+]] = ein.tanh %[[X2]] {axes = []{{.*}}}
// CHECK-NEXT: %[[N2:.+]] = ein.mul %[[M2]], %[[T2]] {axes = []{{.*}}}
// CHECK-NEXT: %[[D2:.+]] = ein.sub %[[ONE]], %[[T2]] {axes = []{{.*}}}
// CHECK-NEXT: %[[BC2:.+]] = ein.div %[[N2]], %[[D2]] {axes = []{{.*}}}
// CHECK-NEXT: %[[SSZ:.+]] = ein.div %[[LR]], %[[BC1]] {axes = []{{.*}}}
// CHECK-NEXT: %[[BC2S:.+]] = ein.sqrt %[[BC2]] {axes = []{{.*}}}

// The matrix: decoupled decay first.
// CHECK-NEXT: %[[F:.+]] = ein.broadcast %[[FACTOR]] dims [] {axes = ["d", "h"]{{.*}}}
// CHECK-NEXT: %[[P1:.+]] = ein.mul %[[W]], %[[F]] {axes = ["d", "h"]{{.*}}}
// m.lerp_(g, 1 - b1): m + (g - m) * 0.1
// CHECK-NEXT: %[[D:.+]] = ein.sub %[[G]], %[[WM]] {axes = ["d", "h"]{{.*}}}
// CHECK-NEXT: %[[W1:.+]] = ein.constant {axes = []{{.*}}} dense<1.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[W1B:.+]] = ein.broadcast %[[W1]] dims []
// CHECK-NEXT: %[[DW:.+]] = ein.mul %[[D]], %[[W1B]]
// CHECK-NEXT: %[[M:.+]] = ein.add %[[WM]], %[[DW]]
// v * b2 + ((1 - b2) * g) * g
// CHECK-NEXT: %[[B2:.+]] = ein.constant {axes = []{{.*}}} dense<9.990000e-01> : tensor<f32>
// CHECK-NEXT: %[[B2B:.+]] = ein.broadcast %[[B2]] dims []
// CHECK-NEXT: %[[VD:.+]] = ein.mul %[[WV]], %[[B2B]]
// CHECK-NEXT: %[[C2:.+]] = ein.constant {axes = []{{.*}}} dense<1.000000e-03> : tensor<f32>
// CHECK-NEXT: %[[C2B:.+]] = ein.broadcast %[[C2]] dims []
// CHECK-NEXT: %[[CG:.+]] = ein.mul %[[C2B]], %[[G]]
// CHECK-NEXT: %[[CGG:.+]] = ein.mul %[[CG]], %[[G]]
// CHECK-NEXT: %[[V:.+]] = ein.add %[[VD]], %[[CGG]]
// denom = sqrt(v) / sqrt(bc2) + eps
// CHECK-NEXT: %[[RV:.+]] = ein.sqrt %[[V]] {axes = ["d", "h"]{{.*}}}
// CHECK-NEXT: %[[BC2B:.+]] = ein.broadcast %[[BC2S]] dims []
// CHECK-NEXT: %[[SC:.+]] = ein.div %[[RV]], %[[BC2B]]
// CHECK-NEXT: %[[EPS:.+]] = ein.constant {axes = []{{.*}}} dense<9.99999993E-9> : tensor<f32>
// CHECK-NEXT: %[[EPSB:.+]] = ein.broadcast %[[EPS]] dims []
// CHECK-NEXT: %[[DEN:.+]] = ein.add %[[SC]], %[[EPSB]]
// p - (step_size * m) / denom
// CHECK-NEXT: %[[SSB:.+]] = ein.broadcast %[[SSZ]] dims [] {axes = ["d", "h"]{{.*}}}
// CHECK-NEXT: %[[SM:.+]] = ein.mul %[[SSB]], %[[M]]
// CHECK-NEXT: %[[UPD:.+]] = ein.div %[[SM]], %[[DEN]]
// CHECK-NEXT: %[[NW:.+]] = ein.sub %[[P1]], %[[UPD]] {axes = ["d", "h"]{{.*}}} : tensor<3x4xf32>

// The vector: no weight decay (decay=matrices).
// CHECK-NEXT: %[[DB:.+]] = ein.sub %[[GC]], %[[BM]] {axes = ["h"]{{.*}}}
// CHECK-NEXT: ein.broadcast %[[W1]] dims [] {axes = ["h"]{{.*}}}
// CHECK-NEXT: ein.mul %[[DB]]
// CHECK-NEXT: %[[MB:.+]] = ein.add %[[BM]]
// CHECK-NEXT: ein.broadcast %[[B2]]
// CHECK-NEXT: ein.mul %[[BV]]
// CHECK-NEXT: ein.broadcast %[[C2]]
// CHECK-NEXT: ein.mul
// CHECK-NEXT: ein.mul
// CHECK-NEXT: %[[VB:.+]] = ein.add
// CHECK-NEXT: ein.sqrt %[[VB]]
// CHECK-NEXT: ein.broadcast %[[BC2S]]
// CHECK-NEXT: ein.div
// CHECK-NEXT: ein.broadcast %[[EPS]]
// CHECK-NEXT: ein.add
// CHECK-NEXT: ein.broadcast %[[SSZ]]
// CHECK-NEXT: ein.mul {{.*}}, %[[MB]]
// CHECK-NEXT: ein.div
// CHECK-NEXT: %[[NB:.+]] = ein.sub %[[B]], {{.*}} {axes = ["h"]{{.*}}} : tensor<4xf32>
// CHECK-NEXT: return %[[LOSS]], %[[NORM]], %[[NW]], %[[NB]], %[[M]], %[[V]], %[[MB]], %[[VB]]

// decay=all: the vector decays too.
// ALL-LABEL: func.func @train_step(
// ALL: %[[FACTOR:.+]] = ein.sub %{{.+}}, %{{.+}} {axes = []{{.*}}}
// ALL: ein.broadcast %[[FACTOR]] dims [] {axes = ["d", "h"]{{.*}}}
// ALL: ein.broadcast %[[FACTOR]] dims [] {axes = ["h"]{{.*}}} : tensor<f32> -> tensor<4xf32>
// ALL-NEXT: ein.mul %{{.+}}, %{{.+}} {axes = ["h"]{{.*}}}
// ALL-NEXT: ein.sub

// weight-decay=0: no decay at all.
// NOWD-LABEL: func.func @train_step(
// NOWD-NOT: dense<0.00999999977>
// NOWD: ein.tanh
// NOWD-NOT: ein.broadcast %{{.+}} dims [] {axes = ["d", "h"]{{.*}}} : tensor<f32> -> tensor<3x4xf32>
// NOWD: ein.sub %{{.+}}, %{{.+}} {axes = ["d", "h"]{{.*}}} : tensor<3x4xf32>
// NOWD-NEXT: ein.constant {axes = []{{.*}}} dense<1.000000e-01>

// clip=0: the norm is computed and returned, the gradients are not scaled.
// NOCLIP-LABEL: func.func @train_step(
// NOCLIP: %[[GW:.+]] = ein.neg
// NOCLIP: %[[NORM:.+]] = ein.sqrt
// NOCLIP-NOT: ein.min
// NOCLIP: ein.sub %[[GW]], %{{.+}} {axes = ["d", "h"]{{.*}}}
// NOCLIP: return %{{.+}}, %[[NORM]],

// beta1 >= 0.5: torch's lerp computes g - (g - m) * (1 - w) with w = 1 - beta1.
// LERP-LABEL: func.func @train_step(
// LERP: %[[D:.+]] = ein.sub %[[G:.+]], %[[M:[a-z0-9]+]] {axes = ["d", "h"]{{.*}}}
// LERP-NEXT: %[[B1:.+]] = ein.constant {axes = []{{.*}}} dense<2.500000e-01>
// LERP-NEXT: %[[B:.+]] = ein.broadcast %[[B1]] dims [] {axes = ["d", "h"]{{.*}}}
// LERP-NEXT: %[[T:.+]] = ein.mul %[[D]], %[[B]]
// LERP-NEXT: ein.sub %[[G]], %[[T]] {axes = ["d", "h"]{{.*}}}

// The pipeline's clean-up keeps every result.
// CANON-LABEL: func.func @train_step(
// CANON: return %{{[a-z0-9]+}}, %{{[a-z0-9]+}}, %{{[a-z0-9]+}}, %{{[a-z0-9]+}}, %{{[a-z0-9]+}}, %{{[a-z0-9]+}}, %{{[a-z0-9]+}}, %{{[a-z0-9]+}} :

// @apply_update: the same clipping and AdamW on gradients passed in, after
// @train_step: params (with @grad's attributes), grads, state, step, lr ->
// grad_norm, params', state'. Every op is an optimizer op.
// APPLY-LABEL: func.func @train_step(
// APPLY-LABEL: func.func @apply_update(
// APPLY-SAME: %[[W:[a-z0-9]+]]: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.init = {kind = "normal", std = 2.000000e-02 : f64}, ein.kind = "param", ein.name = "layer.0.w_qkv"}
// APPLY-SAME: %[[B:[a-z0-9]+]]: tensor<4xf32> {ein.axes = ["h"], ein.init = {kind = "zeros"}, ein.kind = "param", ein.name = "layer.0.b"}
// APPLY-SAME: %[[GW:[a-z0-9]+]]: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.kind = "grad", ein.name = "layer.0.w_qkv"}
// APPLY-SAME: %[[GB:[a-z0-9]+]]: tensor<4xf32> {ein.axes = ["h"], ein.kind = "grad", ein.name = "layer.0.b"}
// APPLY-SAME: %[[WM:[a-z0-9]+]]: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.kind = "opt_state", ein.name = "layer.0.w_qkv.m"}
// APPLY-SAME: %[[WV:[a-z0-9]+]]: tensor<3x4xf32> {ein.axes = ["d", "h"], ein.kind = "opt_state", ein.name = "layer.0.w_qkv.v"}
// APPLY-SAME: %[[BM:[a-z0-9]+]]: tensor<4xf32> {ein.axes = ["h"], ein.kind = "opt_state", ein.name = "layer.0.b.m"}
// APPLY-SAME: %[[BV:[a-z0-9]+]]: tensor<4xf32> {ein.axes = ["h"], ein.kind = "opt_state", ein.name = "layer.0.b.v"}
// APPLY-SAME: %[[STEP:[a-z0-9]+]]: tensor<f32> {ein.kind = "step", ein.name = "step"}
// APPLY-SAME: %[[LR:[a-z0-9]+]]: tensor<f32> {ein.kind = "lr", ein.name = "lr"})
// APPLY-SAME: -> (tensor<f32> {ein.name = "grad_norm"}, tensor<3x4xf32> {ein.kind = "param", ein.name = "layer.0.w_qkv"}, tensor<4xf32> {ein.kind = "param", ein.name = "layer.0.b"}, tensor<3x4xf32> {ein.kind = "opt_state", ein.name = "layer.0.w_qkv.m"}, tensor<3x4xf32> {ein.kind = "opt_state", ein.name = "layer.0.w_qkv.v"}, tensor<4xf32> {ein.kind = "opt_state", ein.name = "layer.0.b.m"}, tensor<4xf32> {ein.kind = "opt_state", ein.name = "layer.0.b.v"})
// Clipping of the given gradients, first thing.
// APPLY-NEXT: %[[SQ:.+]] = ein.mul %[[GW]], %[[GW]] {axes = ["d", "h"], ein.layer = "layer.0", ein.phase = "optimizer"}
// APPLY-NEXT: %[[S1:.+]] = ein.reduce sum %[[SQ]] dims [0, 1] {axes = [], ein.layer = "layer.0", ein.phase = "optimizer"}
// APPLY-NEXT: %[[SQB:.+]] = ein.mul %[[GB]], %[[GB]]
// APPLY-NEXT: %[[S2:.+]] = ein.reduce sum %[[SQB]]
// APPLY-NEXT: %[[SUM:.+]] = ein.add %[[S1]], %[[S2]] {axes = [], ein.phase = "optimizer"}
// APPLY-NEXT: %[[NORM:.+]] = ein.sqrt %[[SUM]]
// APPLY: %[[CL:.+]] = ein.min
// APPLY-NEXT: ein.broadcast %[[CL]]
// APPLY-NEXT: %[[G:.+]] = ein.mul %[[GW]]
// APPLY-NEXT: ein.broadcast %[[CL]]
// APPLY-NEXT: %[[GC:.+]] = ein.mul %[[GB]]
// Decoupled decay with lr, then the bias corrections from step.
// APPLY: ein.mul %[[LR]], %{{.+}} {axes = [], ein.phase = "optimizer"}
// APPLY: ein.mul %[[STEP]], %{{.+}} {axes = [], ein.phase = "optimizer"}
// The moments read the state arguments and the clipped gradient.
// APPLY: %[[D:.+]] = ein.sub %[[G]], %[[WM]]
// APPLY: %[[NM:.+]] = ein.add %[[WM]], %{{.+}}
// APPLY: %[[VD:.+]] = ein.mul %[[WV]]
// APPLY: %[[NW:.+]] = ein.sub %{{.+}}, %{{.+}} {axes = ["d", "h"], ein.layer = "layer.0", ein.phase = "optimizer"}
// APPLY: %[[DB:.+]] = ein.sub %[[GC]], %[[BM]]
// APPLY: %[[NB:.+]] = ein.sub %[[B]], %{{.+}} {axes = ["h"], ein.layer = "layer.0", ein.phase = "optimizer"}
// APPLY-NEXT: return %[[NORM]], %[[NW]], %[[NB]], %[[NM]], %{{.+}}, %{{.+}}, %{{.+}} :
// APPLY-NOT: ein.

// NOAPPLY: func.func @train_step(
// NOAPPLY-NOT: func.func @apply_update(

// RENAMED: func.func @train_step(
// RENAMED: func.func @upd(
