// RUN: ein-opt %s -split-input-file --ein-autodiff | FileCheck %s
// The gradients of ein.slice and ein.concat (ir/EinGradients.cpp) and their
// sum (buildGradientSum, ir/EinBuilders.h): slices of one value covering
// disjoint rows give it one concat of their gradients, no zeros where all
// rows are covered, no adds, no scatter_add.

// All parts used (q, k, v): one concat of the three gradients.
func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["three", "d"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %q = ein.slice %x offset 0 : tensor<3x4xf32> -> tensor<1x4xf32>
  %k = ein.slice %x offset 1 : tensor<3x4xf32> -> tensor<1x4xf32>
  %v = ein.slice %x offset 2 : tensor<3x4xf32> -> tensor<1x4xf32>
  %qk = ein.mul %q, %k : tensor<1x4xf32>
  %y = ein.mul %qk, %v : tensor<1x4xf32>
  %l = ein.reduce sum %y dims [0, 1] : tensor<1x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK-NOT: ein.add
// CHECK-NOT: dense<0.000000e+00>
// CHECK: %[[DQK:.+]] = ein.mul %{{.+}}, %{{.+}} {{.*}}ein.phase = "backward"
// CHECK-NEXT: %[[DV:.+]] = ein.mul
// CHECK-NEXT: %[[DQ:.+]] = ein.mul
// CHECK-NEXT: %[[DK:.+]] = ein.mul
// CHECK-NEXT: %[[DX:.+]] = ein.concat %[[DQ]], %[[DK]], %[[DV]] {axes = ["three", "d"]{{.*}}} : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// A part unused (the middle row): zeros in its rows; two rows of one slice.
func.func @forward(%x: tensor<4x2xf32> {ein.axes = ["r", "d"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %a = ein.slice %x offset 0 : tensor<4x2xf32> -> tensor<1x2xf32>
  %c = ein.slice %x offset 2 : tensor<4x2xf32> -> tensor<2x2xf32>
  %ea = ein.exp %a : tensor<1x2xf32>
  %ec = ein.exp %c : tensor<2x2xf32>
  %la = ein.reduce sum %ea dims [0, 1] : tensor<1x2xf32> -> tensor<f32>
  %lc = ein.reduce sum %ec dims [0, 1] : tensor<2x2xf32> -> tensor<f32>
  %l = ein.add %la, %lc : tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DC:.+]] = ein.mul %{{.+}}, %{{.+}} {{.*}}: tensor<2x2xf32>
// CHECK: %[[DA:.+]] = ein.mul %{{.+}}, %{{.+}} {{.*}}: tensor<1x2xf32>
// CHECK-NEXT: %[[Z:.+]] = ein.constant {{.*}}dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[ZB:.+]] = ein.broadcast %[[Z]] dims [] {axes = ["r", "d"]{{.*}}} : tensor<f32> -> tensor<1x2xf32>
// CHECK-NEXT: %[[DX:.+]] = ein.concat %[[DA]], %[[ZB]], %[[DC]] {axes = ["r", "d"]{{.*}}} : tensor<1x2xf32>, tensor<1x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// Sliced and also used whole: the concat plus the other gradient.
func.func @forward(%x: tensor<2x3xf32> {ein.axes = ["two", "d"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %t = ein.tanh %x : tensor<2x3xf32>
  %a = ein.slice %t offset 0 : tensor<2x3xf32> -> tensor<1x3xf32>
  %b = ein.slice %t offset 1 : tensor<2x3xf32> -> tensor<1x3xf32>
  %ab = ein.mul %a, %b : tensor<1x3xf32>
  %s = ein.reduce sum %ab dims [0, 1] : tensor<1x3xf32> -> tensor<f32>
  %w = ein.reduce sum %t dims [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %l = ein.add %s, %w : tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DT1:.+]] = ein.broadcast %{{.+}} dims [] {{.*}}: tensor<f32> -> tensor<2x3xf32>
// CHECK: %[[DA:.+]] = ein.mul
// CHECK-NEXT: %[[DB:.+]] = ein.mul
// CHECK-NEXT: %[[CAT:.+]] = ein.concat %[[DA]], %[[DB]] {{.*}}: tensor<1x3xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DT:.+]] = ein.add %[[DT1]], %[[CAT]] {{.*}}: tensor<2x3xf32>
// CHECK-NOT: ein.concat
// CHECK: return

// -----

// Overlapping slices (rows 0..1 and 1..2): their gradients add up.
func.func @forward(%x: tensor<3x2xf32> {ein.axes = ["r", "d"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %a = ein.slice %x offset 0 : tensor<3x2xf32> -> tensor<2x2xf32>
  %b = ein.slice %x offset 1 : tensor<3x2xf32> -> tensor<2x2xf32>
  %ab = ein.mul %a, %b : tensor<2x2xf32>
  %l = ein.reduce sum %ab dims [0, 1] : tensor<2x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[GB:.+]] = ein.concat %{{.+}}, %{{.+}} {{.*}}: tensor<1x2xf32>, tensor<2x2xf32> -> tensor<3x2xf32>
// CHECK: %[[GA:.+]] = ein.concat %{{.+}}, %{{.+}} {{.*}}: tensor<2x2xf32>, tensor<1x2xf32> -> tensor<3x2xf32>
// CHECK-NEXT: %[[DX:.+]] = ein.add %[[GB]], %[[GA]]
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// concat: each input its rows of dY (dY itself for an input of the whole).
func.func @forward(%a: tensor<1x2xf32> {ein.axes = ["r", "d"], ein.kind = "param", ein.name = "a"},
                   %b: tensor<2x2xf32> {ein.axes = ["r", "d"], ein.kind = "param", ein.name = "b"}) -> tensor<f32> {
  %c = ein.concat %a, %b {axes = ["r", "d"]} : tensor<1x2xf32>, tensor<2x2xf32> -> tensor<3x2xf32>
  %e = ein.exp %c {axes = ["r", "d"]} : tensor<3x2xf32>
  %l = ein.reduce sum %e dims [0, 1] : tensor<3x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DC:.+]] = ein.mul %{{.+}}, %{{.+}} {axes = ["r", "d"]{{.*}}} : tensor<3x2xf32>
// CHECK-NEXT: %[[DA:.+]] = ein.slice %[[DC]] offset 0 {axes = ["r", "d"]{{.*}}} : tensor<3x2xf32> -> tensor<1x2xf32>
// CHECK-NEXT: %[[DB:.+]] = ein.slice %[[DC]] offset 1 {axes = ["r", "d"]{{.*}}} : tensor<3x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT: return %{{.+}}, %[[DA]], %[[DB]] :
