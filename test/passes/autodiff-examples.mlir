// RUN: einc emit %examples/gpt.ein | ein-opt --ein-autodiff > %t.gpt.mlir
// RUN: FileCheck %s --check-prefix=GPT < %t.gpt.mlir
// RUN: FileCheck %s --check-prefix=TRANSPOSE < %t.gpt.mlir
// RUN: FileCheck %s --check-prefix=SCATTER < %t.gpt.mlir
// RUN: FileCheck %s --check-prefix=QKV < %t.gpt.mlir
// RUN: grep "= ein\." %t.gpt.mlir | not grep -v "axes = "
// RUN: einc emit %examples/mlp_lm.ein | ein-opt --ein-autodiff | FileCheck %s --check-prefix=MLP
//
// The examples differentiate end to end, and every op of @grad carries axes.
//
// gpt.ein: 25 forward contractions (6 per layer × 4 + the tied logits). No
// contraction has an input or constant operand (the first layer's input is
// wte[idx] + wpe, which depends on params), so each gets two backward
// contractions: @grad holds 25 + 2·25 = 75, and no backward transpose beyond
// the 8 inverses of the forward's (q/k/v split and head merge): 16 in all.
// wte gets a scatter_add (the gather) plus the logits contraction, summed:
// the one scatter_add. q, k, v are slices of one tensor per layer, whose
// gradient is one concat of dq, dk, dv (the backward's two attention
// contractions, reshaped, and dv), with no zeros and no adds: 4 concats.
//
// GPT-LABEL: func.func @forward(
// GPT-COUNT-25: ein.contract
// GPT-NOT: ein.contract
// GPT-LABEL: func.func @grad(
// GPT-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<256x256xf32> {ein.kind = "grad", ein.name = "wte"}, tensor<128x256xf32> {ein.kind = "grad", ein.name = "wpe"}
// GPT-SAME: tensor<256xf32> {ein.kind = "grad", ein.name = "lnf_b"})
// GPT-COUNT-75: ein.contract
// GPT-NOT: ein.contract
// GPT: %[[WTE_S:.+]] = ein.scatter_add %{{.+}}, %arg0 {axes = ["vocab", "d"]{{.*}}}
// GPT-NEXT: %[[WTE:.+]] = ein.add %{{.+}}, %[[WTE_S]] {axes = ["vocab", "d"]{{.*}}}
// GPT-NEXT: return %{{[0-9]+}}, %[[WTE]],
//
// TRANSPOSE-LABEL: func.func @grad(
// TRANSPOSE-COUNT-16: ein.transpose
// TRANSPOSE-NOT: ein.transpose
// TRANSPOSE: return
//
// SCATTER-LABEL: func.func @grad(
// SCATTER-COUNT-1: ein.scatter_add
// SCATTER-NOT: ein.scatter_add
// SCATTER: return
//
// QKV-LABEL: func.func @forward(
// QKV-COUNT-12: ein.slice %{{[0-9]+}} offset {{[012]}} {axes = ["three", "batch", "heads", "ctx", "hd"]
// QKV-NOT: ein.gather %{{[0-9]+}}, %{{[0-9]+}} {axes = ["batch", "heads", "ctx", "hd"]
// QKV-LABEL: func.func @grad(
// QKV-NOT: ein.gather %{{[0-9]+}}, %{{[0-9]+}} {axes = ["batch", "heads", "ctx", "hd"]
// QKV: %[[DQ:[0-9]+]] = ein.contract %{{[0-9]+}}, %{{[0-9]+}} batch [0, 1], [0, 1] contract [3], [2] {axes = ["batch", "heads", "ctx", "hd"], ein.layer = "layer.3", ein.phase = "backward"}
// QKV-NEXT: %[[DK:[0-9]+]] = ein.contract
// QKV-NEXT: %[[DV4:[0-9]+]] = ein.reshape %{{[0-9]+}} {axes = ["three"
// QKV-NEXT: %[[DK4:[0-9]+]] = ein.reshape %[[DK]] {axes = ["three"
// QKV-NEXT: %[[DQ4:[0-9]+]] = ein.reshape %[[DQ]] {axes = ["three"
// QKV-NEXT: %[[DQKV:[0-9]+]] = ein.concat %[[DQ4]], %[[DK4]], %[[DV4]] {axes = ["three", "batch", "heads", "ctx", "hd"]{{.*}}} : tensor<1x16x4x128x64xf32>, tensor<1x16x4x128x64xf32>, tensor<1x16x4x128x64xf32> -> tensor<3x16x4x128x64xf32>
// QKV-NEXT: ein.transpose %[[DQKV]] [1, 3, 0, 2, 4]
// QKV-COUNT-3: ein.concat
// QKV-NOT: ein.concat
// QKV: return
//
// mlp_lm.ein: 2 forward contractions; x = wte[tokens] depends on a param, so
// both get two backward contractions: 2 + 4 = 6 in @grad.
//
// MLP-LABEL: func.func @grad(
// MLP-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<256x64xf32> {ein.kind = "grad", ein.name = "wte"}, tensor<512x512xf32> {ein.kind = "grad", ein.name = "w1"}, tensor<512xf32> {ein.kind = "grad", ein.name = "b1"}, tensor<512x256xf32> {ein.kind = "grad", ein.name = "w2"})
// MLP-COUNT-6: ein.contract
// MLP-NOT: ein.contract
// MLP: ein.scatter_add
// MLP-NOT: ein.contract
// MLP: return
