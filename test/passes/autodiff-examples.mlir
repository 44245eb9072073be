// RUN: einc emit %examples/gpt.ein | ein-opt --ein-autodiff > %t.gpt.mlir
// RUN: FileCheck %s --check-prefix=GPT < %t.gpt.mlir
// RUN: FileCheck %s --check-prefix=TRANSPOSE < %t.gpt.mlir
// RUN: FileCheck %s --check-prefix=SCATTER < %t.gpt.mlir
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
// wte gets a scatter_add (the gather) plus the logits contraction, summed;
// the q/k/v gathers of each layer give 3 scatter_adds: 1 + 3·4 = 13.
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
// SCATTER-COUNT-13: ein.scatter_add
// SCATTER-NOT: ein.scatter_add
// SCATTER: return
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
