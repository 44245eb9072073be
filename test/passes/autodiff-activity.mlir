// RUN: ein-opt %s -split-input-file --ein-autodiff | FileCheck %s
// Activity analysis: only values that depend on a param and on which the
// loss depends get gradients; inputs get none; gradients of a value used
// several times are summed; unused params get zeros.

// A param the loss does not use (u feeds only the extra output) gets a zero
// gradient and no backward op; the extra output and its ops are dropped. The
// input x gets no gradient.
func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "input", ein.name = "x"},
                   %w: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "w"},
                   %u: tensor<4xf32> {ein.axes = ["j"], ein.kind = "param", ein.name = "u"}) -> (tensor<f32>, tensor<4xf32>) {
  %y = ein.mul %x, %w {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  %o = ein.exp %u {axes = ["j"]} : tensor<4xf32>
  return %l, %o : tensor<f32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @grad(
// CHECK-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<3x4xf32> {ein.kind = "grad", ein.name = "w"}, tensor<4xf32> {ein.kind = "grad", ein.name = "u", ein.unused})
// CHECK-NOT: ein.exp
// CHECK: %[[Y:.+]] = ein.mul %arg0, %arg1
// CHECK-NEXT: %[[L:.+]] = ein.reduce sum %[[Y]]
// CHECK-NEXT: ein.constant {axes = []{{.*}}} dense<1.000000e+00>
// CHECK-NEXT: %[[DY:.+]] = ein.broadcast
// CHECK-NEXT: %[[DW:.+]] = ein.mul %[[DY]], %arg0 {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[C0:.+]] = ein.constant {axes = []{{.*}}} dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DU:.+]] = ein.broadcast %[[C0]] dims [] {axes = ["j"]{{.*}}} : tensor<f32> -> tensor<4xf32>
// CHECK-NEXT: return %[[L]], %[[DW]], %[[DU]] : tensor<f32>, tensor<3x4xf32>, tensor<4xf32>

// -----

// A value used twice sums its gradients: y = h·h with h = exp(w).
func.func @forward(%w: tensor<4xf32> {ein.axes = ["j"], ein.kind = "param", ein.name = "w"}) -> tensor<f32> {
  %h = ein.exp %w {axes = ["j"]} : tensor<4xf32>
  %y = ein.mul %h, %h {axes = ["j"]} : tensor<4xf32>
  %l = ein.reduce sum %y dims [0] {axes = []} : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[H:.+]] = ein.exp %arg0
// CHECK: %[[DY:.+]] = ein.broadcast
// CHECK-NEXT: %[[G1:.+]] = ein.mul %[[DY]], %[[H]]
// CHECK-NEXT: %[[G2:.+]] = ein.mul %[[DY]], %[[H]]
// CHECK-NEXT: %[[DH:.+]] = ein.add %[[G1]], %[[G2]] {axes = ["j"]{{.*}}}
// CHECK-NEXT: %[[DW:.+]] = ein.mul %[[DH]], %[[H]]
// CHECK-NEXT: return %{{.+}}, %[[DW]] :

// -----

// Tied embeddings: wte is used by the gather and by the logits contraction;
// its gradient is the sum of a contraction and a scatter_add.
func.func @forward(%ids: tensor<2x3xi32> {ein.axes = ["b", "t"], ein.kind = "input", ein.name = "ids"},
                   %wte: tensor<10x4xf32> {ein.axes = ["v", "d"], ein.kind = "param", ein.name = "wte"}) -> tensor<f32> {
  %e = ein.gather %wte, %ids {axes = ["b", "t", "d"]} : tensor<10x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %z = ein.contract %e, %wte batch [], [] contract [2], [1] {axes = ["b", "t", "v"]} : tensor<2x3x4xf32>, tensor<10x4xf32> -> tensor<2x3x10xf32>
  %l = ein.reduce sum %z dims [0, 1, 2] {axes = []} : tensor<2x3x10xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[E:.+]] = ein.gather %arg1, %arg0
// CHECK: %[[DZ:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["b", "t", "v"]{{.*}}}
// CHECK-NEXT: %[[DE:.+]] = ein.contract %[[DZ]], %arg1 batch [], [] contract [2], [0] {axes = ["b", "t", "d"]{{.*}}} : tensor<2x3x10xf32>, tensor<10x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[DW1:.+]] = ein.contract %[[DZ]], %[[E]] batch [], [] contract [0, 1], [0, 1] {axes = ["v", "d"]{{.*}}} : tensor<2x3x10xf32>, tensor<2x3x4xf32> -> tensor<10x4xf32>
// CHECK-NEXT: %[[DW2:.+]] = ein.scatter_add %[[DE]], %arg0 {axes = ["v", "d"]{{.*}}} : tensor<2x3x4xf32>, tensor<2x3xi32> -> tensor<10x4xf32>
// CHECK-NEXT: %[[DW:.+]] = ein.add %[[DW1]], %[[DW2]] {axes = ["v", "d"]{{.*}}} : tensor<10x4xf32>
// CHECK-NEXT: return %{{.+}}, %[[DW]] :

// -----

// A param reaching the loss only through a comparison gets zeros: cmp has
// no gradient, so nothing of the backward is emitted for it.
func.func @forward(%x: tensor<4xf32> {ein.axes = ["j"], ein.kind = "input", ein.name = "x"},
                   %w: tensor<4xf32> {ein.axes = ["j"], ein.kind = "param", ein.name = "w"}) -> tensor<f32> {
  %m = ein.cmp gt, %w, %x {axes = ["j"]} : tensor<4xf32> -> tensor<4xi1>
  %n = ein.neg %x {axes = ["j"]} : tensor<4xf32>
  %y = ein.select %m, %x, %n {axes = ["j"]} : tensor<4xi1>, tensor<4xf32>
  %l = ein.reduce sum %y dims [0] {axes = []} : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[L:.+]] = ein.reduce sum
// CHECK-NOT: dense<1.000000e+00>
// CHECK-NOT: ein.select
// CHECK-NEXT: %[[C0:.+]] = ein.constant {axes = []{{.*}}} dense<0.000000e+00>
// CHECK-NEXT: %[[DW:.+]] = ein.broadcast %[[C0]] dims [] {axes = ["j"]{{.*}}}
// CHECK-NEXT: return %[[L]], %[[DW]] :

// -----

// Constants and inputs on the way are not differentiated: in
// relu(x·w + b) with x an input, the contraction gives only dw and the bias
// broadcast only its reduce; the relu's zero operand gets nothing.
func.func @forward(%x: tensor<8x3xf32> {ein.axes = ["n", "i"], ein.kind = "input", ein.name = "x"},
                   %w: tensor<3x5xf32> {ein.axes = ["i", "h"], ein.kind = "param", ein.name = "w"},
                   %b: tensor<5xf32> {ein.axes = ["h"], ein.kind = "param", ein.name = "b"}) -> tensor<f32> {
  %z = ein.contract %x, %w batch [], [] contract [1], [0] {axes = ["n", "h"]} : tensor<8x3xf32>, tensor<3x5xf32> -> tensor<8x5xf32>
  %bb = ein.broadcast %b dims [1] {axes = ["n", "h"]} : tensor<5xf32> -> tensor<8x5xf32>
  %s = ein.add %z, %bb {axes = ["n", "h"]} : tensor<8x5xf32>
  %c = ein.constant {axes = []} dense<0.0> : tensor<f32>
  %zero = ein.broadcast %c dims [] {axes = ["n", "h"]} : tensor<f32> -> tensor<8x5xf32>
  %r = ein.max %s, %zero {axes = ["n", "h"]} : tensor<8x5xf32>
  %l = ein.reduce sum %r dims [0, 1] {axes = []} : tensor<8x5xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[R:.+]] = ein.max
// CHECK: %[[DR:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["n", "h"]{{.*}}}
// CHECK: %[[DS:.+]] = ein.select %{{.+}}, %[[DR]], %{{.+}} {axes = ["n", "h"]{{.*}}}
// CHECK-NOT: ein.cmp gt, %{{.+}}, %[[R]]
// CHECK-NEXT: %[[DB:.+]] = ein.reduce sum %[[DS]] dims [0] {axes = ["h"]{{.*}}}
// CHECK-NEXT: %[[DW:.+]] = ein.contract %arg0, %[[DS]] batch [], [] contract [0], [0] {axes = ["i", "h"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DW]], %[[DB]] :
