// RUN: ein-opt %s -split-input-file --ein-autodiff | FileCheck %s
// The backward of ein.contract: one contraction per operand that needs a
// gradient, batch dims paired, contracted over the other operand's free dims,
// and a transpose only when neither operand order yields the operand's layout.

// x @ w with x an input: only dw = xᵀ·dY is computed (one contraction).
func.func @forward(%x: tensor<4x3xf32> {ein.axes = ["b", "i"], ein.kind = "input", ein.name = "x"},
                   %w: tensor<3x5xf32> {ein.axes = ["i", "o"], ein.kind = "param", ein.name = "w"}) -> tensor<f32> {
  %y = ein.contract %x, %w batch [], [] contract [1], [0] {axes = ["b", "o"]} : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<4x5xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x3xf32> {ein.axes = ["b", "i"], ein.kind = "input", ein.name = "x"}
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<3x5xf32> {ein.axes = ["i", "o"], ein.kind = "param", ein.name = "w"}
// CHECK-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<3x5xf32> {ein.kind = "grad", ein.name = "w"})
// CHECK: %[[Y:.+]] = ein.contract %[[X]], %[[W]]
// CHECK: %[[L:.+]] = ein.reduce sum %[[Y]]
// CHECK: %[[ONE:.+]] = ein.constant {axes = []{{.*}}} dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DY:.+]] = ein.broadcast %[[ONE]] dims [] {axes = ["b", "o"]{{.*}}} : tensor<f32> -> tensor<4x5xf32>
// CHECK-NOT: ein.contract %[[DY]], %[[W]]
// CHECK: %[[DW:.+]] = ein.contract %[[X]], %[[DY]] batch [], [] contract [0], [0] {axes = ["i", "o"]{{.*}}} : tensor<4x3xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
// CHECK-NOT: ein.contract
// CHECK-NOT: ein.transpose
// CHECK: return %[[L]], %[[DW]] : tensor<f32>, tensor<3x5xf32>

// -----

// Two params: dx = dY·wᵀ and dw = xᵀ·dY, no transpose.
func.func @forward(%x: tensor<4x3xf32> {ein.axes = ["b", "i"], ein.kind = "param", ein.name = "x"},
                   %w: tensor<3x5xf32> {ein.axes = ["i", "o"], ein.kind = "param", ein.name = "w"}) -> tensor<f32> {
  %y = ein.contract %x, %w batch [], [] contract [1], [0] {axes = ["b", "o"]} : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<4x5xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x3xf32>
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<3x5xf32>
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["b", "o"]{{.*}}}
// CHECK: %[[DX:.+]] = ein.contract %[[DY]], %[[W]] batch [], [] contract [1], [1] {axes = ["b", "i"]{{.*}}} : tensor<4x5xf32>, tensor<3x5xf32> -> tensor<4x3xf32>
// CHECK: %[[DW:.+]] = ein.contract %[[X]], %[[DY]] batch [], [] contract [0], [0] {axes = ["i", "o"]{{.*}}} : tensor<4x3xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
// CHECK-NOT: ein.transpose
// CHECK: return %{{.+}}, %[[DX]], %[[DW]] :

// -----

// Tied-embedding logits h·wteᵀ: d wte = dYᵀ·h puts dY first (no transpose).
func.func @forward(%h: tensor<4x8xf32> {ein.axes = ["b", "d"], ein.kind = "param", ein.name = "h"},
                   %wte: tensor<16x8xf32> {ein.axes = ["v", "d"], ein.kind = "param", ein.name = "wte"}) -> tensor<f32> {
  %y = ein.contract %h, %wte batch [], [] contract [1], [1] {axes = ["b", "v"]} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<4x16xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK-SAME: %[[H:[a-z0-9]+]]: tensor<4x8xf32>
// CHECK-SAME: %[[WTE:[a-z0-9]+]]: tensor<16x8xf32>
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["b", "v"]{{.*}}}
// CHECK: %[[DH:.+]] = ein.contract %[[DY]], %[[WTE]] batch [], [] contract [1], [0] {axes = ["b", "d"]{{.*}}} : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK: %[[DWTE:.+]] = ein.contract %[[DY]], %[[H]] batch [], [] contract [0], [0] {axes = ["v", "d"]{{.*}}} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
// CHECK-NOT: ein.transpose
// CHECK: return %{{.+}}, %[[DH]], %[[DWTE]] :

// -----

// Attention scores q·kᵀ with batch dims [b, h]: dq = dY·k, dk = dYᵀ·q.
func.func @forward(%q: tensor<2x3x5x4xf32> {ein.axes = ["b", "h", "t", "e"], ein.kind = "param", ein.name = "q"},
                   %k: tensor<2x3x6x4xf32> {ein.axes = ["b", "h", "s", "e"], ein.kind = "param", ein.name = "k"}) -> tensor<f32> {
  %y = ein.contract %q, %k batch [0, 1], [0, 1] contract [3], [3] {axes = ["b", "h", "t", "s"]} : tensor<2x3x5x4xf32>, tensor<2x3x6x4xf32> -> tensor<2x3x5x6xf32>
  %l = ein.reduce sum %y dims [0, 1, 2, 3] {axes = []} : tensor<2x3x5x6xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x3x5x4xf32>
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<2x3x6x4xf32>
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["b", "h", "t", "s"]{{.*}}}
// CHECK: %[[DQ:.+]] = ein.contract %[[DY]], %[[K]] batch [0, 1], [0, 1] contract [3], [2] {axes = ["b", "h", "t", "e"]{{.*}}} : tensor<2x3x5x6xf32>, tensor<2x3x6x4xf32> -> tensor<2x3x5x4xf32>
// CHECK: %[[DK:.+]] = ein.contract %[[DY]], %[[Q]] batch [0, 1], [0, 1] contract [2], [2] {axes = ["b", "h", "s", "e"]{{.*}}} : tensor<2x3x5x6xf32>, tensor<2x3x5x4xf32> -> tensor<2x3x6x4xf32>
// CHECK-NOT: ein.transpose
// CHECK: return %{{.+}}, %[[DQ]], %[[DK]] :

// -----

// Batch dims in different positions and two contracted dims in different
// orders: a[b, i, k, l] · c[l, b, j, k] -> y[b, i, j]. Neither operand order
// yields the operands' layouts, so each gradient ends in a transpose.
func.func @forward(%a: tensor<2x3x4x5xf32> {ein.axes = ["b", "i", "k", "l"], ein.kind = "param", ein.name = "a"},
                   %c: tensor<5x2x6x4xf32> {ein.axes = ["l", "b", "j", "k"], ein.kind = "param", ein.name = "c"}) -> tensor<f32> {
  %y = ein.contract %a, %c batch [0], [1] contract [2, 3], [3, 0] {axes = ["b", "i", "j"]} : tensor<2x3x4x5xf32>, tensor<5x2x6x4xf32> -> tensor<2x3x6xf32>
  %l = ein.reduce sum %y dims [0, 1, 2] {axes = []} : tensor<2x3x6xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<2x3x4x5xf32>
// CHECK-SAME: %[[C:[a-z0-9]+]]: tensor<5x2x6x4xf32>
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["b", "i", "j"]{{.*}}}
// da[b, i, l, k] = sum_j dY[b, i, j] c[l, b, j, k], then [b, i, l, k] -> [b, i, k, l]
// CHECK: %[[DA0:.+]] = ein.contract %[[DY]], %[[C]] batch [0], [1] contract [2], [2] {axes = ["b", "i", "l", "k"]{{.*}}} : tensor<2x3x6xf32>, tensor<5x2x6x4xf32> -> tensor<2x3x5x4xf32>
// CHECK: %[[DA:.+]] = ein.transpose %[[DA0]] [0, 1, 3, 2] {axes = ["b", "i", "k", "l"]{{.*}}} : tensor<2x3x5x4xf32> -> tensor<2x3x4x5xf32>
// dc[b, k, l, j] = sum_i a[b, i, k, l] dY[b, i, j], then -> [l, b, j, k]
// CHECK: %[[DC0:.+]] = ein.contract %[[A]], %[[DY]] batch [0], [0] contract [1], [1] {axes = ["b", "k", "l", "j"]{{.*}}} : tensor<2x3x4x5xf32>, tensor<2x3x6xf32> -> tensor<2x4x5x6xf32>
// CHECK: %[[DC:.+]] = ein.transpose %[[DC0]] [2, 0, 3, 1] {axes = ["l", "b", "j", "k"]{{.*}}} : tensor<2x4x5x6xf32> -> tensor<5x2x6x4xf32>
// CHECK: return %{{.+}}, %[[DA]], %[[DC]] :

// -----

// A full contraction to a scalar (no free dims): the gradients are outer
// products with the scalar dY (contractions with nothing contracted).
func.func @forward(%u: tensor<7xf32> {ein.axes = ["k"], ein.kind = "param", ein.name = "u"},
                   %v: tensor<7xf32> {ein.axes = ["k"], ein.kind = "param", ein.name = "v"}) -> tensor<f32> {
  %y = ein.contract %u, %v batch [], [] contract [0], [0] {axes = []} : tensor<7xf32>, tensor<7xf32> -> tensor<f32>
  return %y : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK-SAME: %[[U:[a-z0-9]+]]: tensor<7xf32>
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<7xf32>
// CHECK: %[[ONE:.+]] = ein.constant {axes = []{{.*}}} dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DU:.+]] = ein.contract %[[ONE]], %[[V]] batch [], [] contract [], [] {axes = ["k"]{{.*}}} : tensor<f32>, tensor<7xf32> -> tensor<7xf32>
// CHECK: %[[DV:.+]] = ein.contract %[[ONE]], %[[U]] batch [], [] contract [], [] {axes = ["k"]{{.*}}} : tensor<f32>, tensor<7xf32> -> tensor<7xf32>
// CHECK: return %{{.+}}, %[[DU]], %[[DV]] :

// -----

// bf16 operands accumulated in f32: dY is cast to bf16 for the backward
// contractions, whose results are bf16 like the operands.
func.func @forward(%x: tensor<4x3xbf16> {ein.axes = ["b", "i"], ein.kind = "input", ein.name = "x"},
                   %w: tensor<3x5xbf16> {ein.axes = ["i", "o"], ein.kind = "param", ein.name = "w"}) -> tensor<f32> {
  %y = ein.contract %x, %w batch [], [] contract [1], [0] {axes = ["b", "o"]} : tensor<4x3xbf16>, tensor<3x5xbf16> -> tensor<4x5xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<4x5xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x3xbf16>
// CHECK-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<3x5xbf16> {ein.kind = "grad", ein.name = "w"})
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["b", "o"]{{.*}}} : tensor<f32> -> tensor<4x5xf32>
// CHECK: %[[DYH:.+]] = ein.cast %[[DY]] {axes = ["b", "o"]{{.*}}} : tensor<4x5xf32> -> tensor<4x5xbf16>
// CHECK: %[[DW:.+]] = ein.contract %[[X]], %[[DYH]] batch [], [] contract [0], [0] {axes = ["i", "o"]{{.*}}} : tensor<4x3xbf16>, tensor<4x5xbf16> -> tensor<3x5xbf16>
// CHECK: return %{{.+}}, %[[DW]] :
