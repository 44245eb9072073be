// RUN: ein-opt %s -split-input-file --ein-autodiff | FileCheck %s
// One function per gradient rule (ir/EinGradients.cpp). Each loss is the sum
// of the op's result, so dY is ones (%[[DY]]); the checks follow the rule.

func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.neg %x {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["i", "j"]{{.*}}} : tensor<f32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[DX:.+]] = ein.neg %[[DY]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// exp reuses the forward result.
func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.exp %x {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[Y:.+]] = ein.exp %arg0
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[DX:.+]] = ein.mul %[[DY]], %[[Y]] {axes = ["i", "j"]{{.*}}}
// CHECK-NOT: ein.exp
// CHECK: return %{{.+}}, %[[DX]] :

// -----

func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.log %x {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[DX:.+]] = ein.div %[[DY]], %arg0 {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// tanh: dY · (1 - y²) with y the forward result.
func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.tanh %x {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[Y:.+]] = ein.tanh %arg0
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[Y2:.+]] = ein.mul %[[Y]], %[[Y]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[C1:.+]] = ein.constant {axes = []{{.*}}} dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[ONE:.+]] = ein.broadcast %[[C1]] dims [] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[D:.+]] = ein.sub %[[ONE]], %[[Y2]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[DX:.+]] = ein.mul %[[DY]], %[[D]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// sqrt: dY / (2y).
func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.sqrt %x {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[Y:.+]] = ein.sqrt %arg0
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[C2:.+]] = ein.constant {axes = []{{.*}}} dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[TWO:.+]] = ein.broadcast %[[C2]] dims []
// CHECK-NEXT: %[[TWOY:.+]] = ein.mul %[[TWO]], %[[Y]]
// CHECK-NEXT: %[[DX:.+]] = ein.div %[[DY]], %[[TWOY]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// rsqrt: dY · (-1/2 · y³).
func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.rsqrt %x {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[Y:.+]] = ein.rsqrt %arg0
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[Y2:.+]] = ein.mul %[[Y]], %[[Y]]
// CHECK-NEXT: %[[Y3:.+]] = ein.mul %[[Y2]], %[[Y]]
// CHECK-NEXT: %[[CH:.+]] = ein.constant {axes = []{{.*}}} dense<-5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[H:.+]] = ein.broadcast %[[CH]] dims []
// CHECK-NEXT: %[[S:.+]] = ein.mul %[[H]], %[[Y3]]
// CHECK-NEXT: %[[DX:.+]] = ein.mul %[[DY]], %[[S]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// softplus: dY · sigmoid(x), sigmoid(x) = 1 / (1 + exp(-x)).
func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.softplus %x {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[C1:.+]] = ein.constant {axes = []{{.*}}} dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[ONE:.+]] = ein.broadcast %[[C1]] dims []
// CHECK-NEXT: %[[NX:.+]] = ein.neg %arg0
// CHECK-NEXT: %[[E:.+]] = ein.exp %[[NX]]
// CHECK-NEXT: %[[D:.+]] = ein.add %[[ONE]], %[[E]]
// CHECK-NEXT: %[[S:.+]] = ein.div %[[ONE]], %[[D]]
// CHECK-NEXT: %[[DX:.+]] = ein.mul %[[DY]], %[[S]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// sin: dY · cos(x).
func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.sin %x {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[C:.+]] = ein.cos %arg0 {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[DX:.+]] = ein.mul %[[DY]], %[[C]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// cos: -(dY · sin(x)).
func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.cos %x {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[S:.+]] = ein.sin %arg0 {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[M:.+]] = ein.mul %[[DY]], %[[S]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[DX:.+]] = ein.neg %[[M]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// erf: dY · (2/√π · exp(−x²)).
func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.erf %x {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[SQ:.+]] = ein.mul %arg0, %arg0 {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[N:.+]] = ein.neg %[[SQ]]
// CHECK-NEXT: %[[G:.+]] = ein.exp %[[N]]
// CHECK-NEXT: %[[K:.+]] = ein.constant {{.*}}dense<1.12837{{[0-9]+}}>
// CHECK-NEXT: %[[KB:.+]] = ein.broadcast %[[K]]
// CHECK-NEXT: %[[S:.+]] = ein.mul %[[KB]], %[[G]]
// CHECK-NEXT: %[[DX:.+]] = ein.mul %[[DY]], %[[S]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// abs: dY · sign(x), sign built with cmp + select (0 at 0).
func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.abs %x {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[C0:.+]] = ein.constant {axes = []{{.*}}} dense<0.000000e+00>
// CHECK-NEXT: %[[ZERO:.+]] = ein.broadcast %[[C0]] dims []
// CHECK-NEXT: %[[CM1:.+]] = ein.constant {axes = []{{.*}}} dense<-1.000000e+00>
// CHECK-NEXT: %[[M1:.+]] = ein.broadcast %[[CM1]] dims []
// CHECK-NEXT: %[[LT:.+]] = ein.cmp lt, %arg0, %[[ZERO]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[NEG:.+]] = ein.select %[[LT]], %[[M1]], %[[ZERO]]
// CHECK-NEXT: %[[CP1:.+]] = ein.constant {axes = []{{.*}}} dense<1.000000e+00>
// CHECK-NEXT: %[[P1:.+]] = ein.broadcast %[[CP1]] dims []
// CHECK-NEXT: %[[GT:.+]] = ein.cmp gt, %arg0, %[[ZERO]]
// CHECK-NEXT: %[[SIGN:.+]] = ein.select %[[GT]], %[[P1]], %[[NEG]]
// CHECK-NEXT: %[[DX:.+]] = ein.mul %[[DY]], %[[SIGN]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// add: dY to both, no op.
func.func @forward(%a: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "a"},
                   %b: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "b"}) -> tensor<f32> {
  %y = ein.add %a, %b {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: return %{{.+}}, %[[DY]], %[[DY]] :

// -----

func.func @forward(%a: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "a"},
                   %b: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "b"}) -> tensor<f32> {
  %y = ein.sub %a, %b {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[DB:.+]] = ein.neg %[[DY]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DY]], %[[DB]] :

// -----

func.func @forward(%a: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "a"},
                   %b: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "b"}) -> tensor<f32> {
  %y = ein.mul %a, %b {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[DA:.+]] = ein.mul %[[DY]], %arg1 {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[DB:.+]] = ein.mul %[[DY]], %arg0 {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DA]], %[[DB]] :

// -----

// div: da = dY / b, db = -(da · y) = -dY · a / b².
func.func @forward(%a: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "a"},
                   %b: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "b"}) -> tensor<f32> {
  %y = ein.div %a, %b {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[Y:.+]] = ein.div %arg0, %arg1
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[DA:.+]] = ein.div %[[DY]], %arg1 {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[T:.+]] = ein.mul %[[DA]], %[[Y]]
// CHECK-NEXT: %[[DB:.+]] = ein.neg %[[T]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DA]], %[[DB]] :

// -----

// max (torch.maximum): dY to the larger operand, half to each on a tie.
func.func @forward(%a: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "a"},
                   %b: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "b"}) -> tensor<f32> {
  %y = ein.max %a, %b {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[TIE:.+]] = ein.cmp eq, %arg0, %arg1
// CHECK-NEXT: %[[CH:.+]] = ein.constant {axes = []{{.*}}} dense<5.000000e-01>
// CHECK-NEXT: %[[H:.+]] = ein.broadcast %[[CH]] dims []
// CHECK-NEXT: %[[HALF:.+]] = ein.mul %[[DY]], %[[H]]
// CHECK-NEXT: %[[C0:.+]] = ein.constant {axes = []{{.*}}} dense<0.000000e+00>
// CHECK-NEXT: %[[Z:.+]] = ein.broadcast %[[C0]] dims []
// CHECK-NEXT: %[[SHARE:.+]] = ein.select %[[TIE]], %[[HALF]], %[[Z]]
// CHECK-NEXT: %[[AGT:.+]] = ein.cmp gt, %arg0, %arg1
// CHECK-NEXT: %[[DA:.+]] = ein.select %[[AGT]], %[[DY]], %[[SHARE]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[BGT:.+]] = ein.cmp gt, %arg1, %arg0
// CHECK-NEXT: %[[DB:.+]] = ein.select %[[BGT]], %[[DY]], %[[SHARE]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DA]], %[[DB]] :

// -----

// min: dY to the smaller operand, half to each on a tie.
func.func @forward(%a: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "a"},
                   %b: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "b"}) -> tensor<f32> {
  %y = ein.min %a, %b {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[TIE:.+]] = ein.cmp eq, %arg0, %arg1
// CHECK: %[[SHARE:.+]] = ein.select %[[TIE]]
// CHECK-NEXT: %[[ALT:.+]] = ein.cmp lt, %arg0, %arg1
// CHECK-NEXT: %[[DA:.+]] = ein.select %[[ALT]], %[[DY]], %[[SHARE]]
// CHECK-NEXT: %[[BLT:.+]] = ein.cmp lt, %arg1, %arg0
// CHECK-NEXT: %[[DB:.+]] = ein.select %[[BLT]], %[[DY]], %[[SHARE]]
// CHECK-NEXT: return %{{.+}}, %[[DA]], %[[DB]] :

// -----

// pow with both operands params: da = dY · b · a^(b-1), db = dY · y · log(a).
func.func @forward(%a: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "a"},
                   %b: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "b"}) -> tensor<f32> {
  %y = ein.pow %a, %b {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[Y:.+]] = ein.pow %arg0, %arg1
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[C1:.+]] = ein.constant {axes = []{{.*}}} dense<1.000000e+00>
// CHECK-NEXT: %[[ONE:.+]] = ein.broadcast %[[C1]] dims []
// CHECK-NEXT: %[[BM1:.+]] = ein.sub %arg1, %[[ONE]]
// CHECK-NEXT: %[[P:.+]] = ein.pow %arg0, %[[BM1]]
// CHECK-NEXT: %[[S:.+]] = ein.mul %arg1, %[[P]]
// CHECK-NEXT: %[[DA:.+]] = ein.mul %[[DY]], %[[S]]
// CHECK-NEXT: %[[LOG:.+]] = ein.log %arg0
// CHECK-NEXT: %[[T:.+]] = ein.mul %[[Y]], %[[LOG]]
// CHECK-NEXT: %[[DB:.+]] = ein.mul %[[DY]], %[[T]]
// CHECK-NEXT: return %{{.+}}, %[[DA]], %[[DB]] :

// -----

// pow with a constant exponent: no log (db is not needed).
func.func @forward(%a: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "a"}) -> tensor<f32> {
  %c = ein.constant {axes = []} dense<3.0> : tensor<f32>
  %b = ein.broadcast %c dims [] {axes = ["i", "j"]} : tensor<f32> -> tensor<3x4xf32>
  %y = ein.pow %a, %b {axes = ["i", "j"]} : tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: ein.reduce sum
// CHECK-NEXT: ein.constant {axes = []{{.*}}} dense<1.000000e+00>
// CHECK-NEXT: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NOT: ein.log
// CHECK: %[[DA:.+]] = ein.mul %[[DY]], %{{.+}}
// CHECK-NEXT: return %{{.+}}, %[[DA]] :

// -----

// transpose: the inverse permutation.
func.func @forward(%x: tensor<2x3x4xf32> {ein.axes = ["a", "b", "c"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.transpose %x [2, 0, 1] {axes = ["c", "a", "b"]} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %l = ein.reduce sum %y dims [0, 1, 2] {axes = []} : tensor<4x2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["c", "a", "b"]{{.*}}}
// CHECK-NEXT: %[[DX:.+]] = ein.transpose %[[DY]] [1, 2, 0] {axes = ["a", "b", "c"]{{.*}}} : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// reshape: reshape back.
func.func @forward(%x: tensor<2x6xf32> {ein.axes = ["a", "b"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.reshape %x {axes = ["a", "c", "d"]} : tensor<2x6xf32> -> tensor<2x2x3xf32>
  %l = ein.reduce sum %y dims [0, 1, 2] {axes = []} : tensor<2x2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[DX:.+]] = ein.reshape %[[DY]] {axes = ["a", "b"]{{.*}}} : tensor<2x2x3xf32> -> tensor<2x6xf32>
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// broadcast: sum over the new dims (0, 2) and the expanded size-1 dim (3),
// then a reshape restores the size-1 dim.
func.func @forward(%x: tensor<3x1xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.broadcast %x dims [1, 3] {axes = ["n", "i", "m", "j"]} : tensor<3x1xf32> -> tensor<2x3x5x4xf32>
  %l = ein.reduce sum %y dims [0, 1, 2, 3] {axes = []} : tensor<2x3x5x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["n", "i", "m", "j"]{{.*}}}
// CHECK-NEXT: %[[S:.+]] = ein.reduce sum %[[DY]] dims [0, 2, 3] {axes = ["i"]{{.*}}} : tensor<2x3x5x4xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[DX:.+]] = ein.reshape %[[S]] {axes = ["i", "j"]{{.*}}} : tensor<3xf32> -> tensor<3x1xf32>
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// broadcast of a narrow value (a bf16 gain): the sum accumulates in f32 and
// rounds once to the gradient's type (a bf16 sum would round after every
// addition: ir/EinOps.td).
func.func @forward(%g: tensor<4xbf16> {ein.axes = ["d"], ein.kind = "param", ein.name = "g"}) -> tensor<f32> {
  %y = ein.broadcast %g dims [1] {axes = ["r", "d"]} : tensor<4xbf16> -> tensor<3x4xbf16>
  %w = ein.cast %y {axes = ["r", "d"]} : tensor<3x4xbf16> -> tensor<3x4xf32>
  %l = ein.reduce sum %w dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DYH:.+]] = ein.cast %{{.+}} {axes = ["r", "d"]{{.*}}} : tensor<3x4xf32> -> tensor<3x4xbf16>
// CHECK-NEXT: %[[DYW:.+]] = ein.cast %[[DYH]] {axes = ["r", "d"]{{.*}}} : tensor<3x4xbf16> -> tensor<3x4xf32>
// CHECK-NEXT: %[[S:.+]] = ein.reduce sum %[[DYW]] dims [0] {axes = ["d"]{{.*}}} : tensor<3x4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[DG:.+]] = ein.cast %[[S]] {axes = ["d"]{{.*}}} : tensor<4xf32> -> tensor<4xbf16>
// CHECK-NEXT: return %{{.+}}, %[[DG]] : tensor<f32>, tensor<4xbf16>

// -----

// broadcast without size-1 dims: the reduce alone.
func.func @forward(%x: tensor<4xf32> {ein.axes = ["j"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.broadcast %x dims [1] {axes = ["i", "j"]} : tensor<4xf32> -> tensor<3x4xf32>
  %l = ein.reduce sum %y dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[DX:.+]] = ein.reduce sum %[[DY]] dims [0] {axes = ["j"]{{.*}}} : tensor<3x4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// reduce sum: broadcast back over the reduced dim.
func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.reduce sum %x dims [1] {axes = ["i"]} : tensor<3x4xf32> -> tensor<3xf32>
  %l = ein.reduce sum %y dims [0] {axes = []} : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["i"]{{.*}}} : tensor<f32> -> tensor<3xf32>
// CHECK-NEXT: %[[DX:.+]] = ein.broadcast %[[DY]] dims [0] {axes = ["i", "j"]{{.*}}} : tensor<3xf32> -> tensor<3x4xf32>
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// reduce max: dY to the positions equal to the max, split evenly among ties
// (torch.amax): mask = x == broadcast(y), count = sum(mask), dX = mask ? dY / count : 0.
func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.reduce max %x dims [1] {axes = ["i"]} : tensor<3x4xf32> -> tensor<3xf32>
  %l = ein.reduce sum %y dims [0] {axes = []} : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[Y:.+]] = ein.reduce max %arg0 dims [1]
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["i"]{{.*}}}
// CHECK-NEXT: %[[YB:.+]] = ein.broadcast %[[Y]] dims [0] {axes = ["i", "j"]{{.*}}} : tensor<3xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[MASK:.+]] = ein.cmp eq, %arg0, %[[YB]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[C0:.+]] = ein.constant {axes = []{{.*}}} dense<0.000000e+00>
// CHECK-NEXT: %[[ZERO:.+]] = ein.broadcast %[[C0]] dims [] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[C1:.+]] = ein.constant {axes = []{{.*}}} dense<1.000000e+00>
// CHECK-NEXT: %[[ONE:.+]] = ein.broadcast %[[C1]] dims [] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[HITS:.+]] = ein.select %[[MASK]], %[[ONE]], %[[ZERO]]
// CHECK-NEXT: %[[COUNT:.+]] = ein.reduce sum %[[HITS]] dims [1] {axes = ["i"]{{.*}}} : tensor<3x4xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[SHARE:.+]] = ein.div %[[DY]], %[[COUNT]] {axes = ["i"]{{.*}}}
// CHECK-NEXT: %[[SB:.+]] = ein.broadcast %[[SHARE]] dims [0] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[DX:.+]] = ein.select %[[MASK]], %[[SB]], %[[ZERO]] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// reduce min: the same mask with the min.
func.func @forward(%x: tensor<3x4xf32> {ein.axes = ["i", "j"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.reduce min %x dims [0, 1] {axes = []} : tensor<3x4xf32> -> tensor<f32>
  return %y : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[Y:.+]] = ein.reduce min %arg0 dims [0, 1]
// CHECK-NEXT: %[[DY:.+]] = ein.constant {axes = []{{.*}}} dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[YB:.+]] = ein.broadcast %[[Y]] dims [] {axes = ["i", "j"]{{.*}}}
// CHECK-NEXT: %[[MASK:.+]] = ein.cmp eq, %arg0, %[[YB]]
// CHECK: %[[COUNT:.+]] = ein.reduce sum %{{.+}} dims [0, 1] {axes = []{{.*}}} : tensor<3x4xf32> -> tensor<f32>
// CHECK-NEXT: %[[SHARE:.+]] = ein.div %[[DY]], %[[COUNT]] {axes = []{{.*}}} : tensor<f32>
// CHECK-NEXT: %[[SB:.+]] = ein.broadcast %[[SHARE]] dims []
// CHECK-NEXT: %[[DX:.+]] = ein.select %[[MASK]], %[[SB]], %{{.+}}
// CHECK-NEXT: return %[[Y]], %[[DX]] :

// -----

// select: to on_true where cond, to on_false elsewhere; nothing to cond, and
// nothing through cmp (its operand %b gets only the on_false path).
func.func @forward(%a: tensor<4xf32> {ein.axes = ["i"], ein.kind = "param", ein.name = "a"},
                   %b: tensor<4xf32> {ein.axes = ["i"], ein.kind = "param", ein.name = "b"}) -> tensor<f32> {
  %m = ein.cmp lt, %a, %b {axes = ["i"]} : tensor<4xf32> -> tensor<4xi1>
  %y = ein.select %m, %a, %b {axes = ["i"]} : tensor<4xi1>, tensor<4xf32>
  %l = ein.reduce sum %y dims [0] {axes = []} : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[M:.+]] = ein.cmp lt, %arg0, %arg1
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["i"]{{.*}}}
// CHECK-NEXT: %[[C0:.+]] = ein.constant {axes = []{{.*}}} dense<0.000000e+00>
// CHECK-NEXT: %[[Z:.+]] = ein.broadcast %[[C0]] dims []
// CHECK-NEXT: %[[DA:.+]] = ein.select %[[M]], %[[DY]], %[[Z]] {axes = ["i"]{{.*}}}
// CHECK-NEXT: %[[DB:.+]] = ein.select %[[M]], %[[Z]], %[[DY]] {axes = ["i"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DA]], %[[DB]] :

// -----

// cast: cast back.
func.func @forward(%x: tensor<4xbf16> {ein.axes = ["i"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %y = ein.cast %x {axes = ["i"]} : tensor<4xbf16> -> tensor<4xf32>
  %l = ein.reduce sum %y dims [0] {axes = []} : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["i"]{{.*}}} : tensor<f32> -> tensor<4xf32>
// CHECK-NEXT: %[[DX:.+]] = ein.cast %[[DY]] {axes = ["i"]{{.*}}} : tensor<4xf32> -> tensor<4xbf16>
// CHECK-NEXT: return %{{.+}}, %[[DX]] : tensor<f32>, tensor<4xbf16>

// -----

// iota, constant: sources without gradient; the loss still reaches x.
func.func @forward(%x: tensor<4xf32> {ein.axes = ["i"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %i = ein.iota dim 0 {axes = ["i"]} : tensor<4xf32>
  %y = ein.mul %x, %i {axes = ["i"]} : tensor<4xf32>
  %l = ein.reduce sum %y dims [0] {axes = []} : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[I:.+]] = ein.iota dim 0
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims []
// CHECK-NEXT: %[[DX:.+]] = ein.mul %[[DY]], %[[I]] {axes = ["i"]{{.*}}}
// CHECK-NEXT: return %{{.+}}, %[[DX]] :

// -----

// gather: scatter_add into the table (repeated ids accumulate); none to ids.
func.func @forward(%ids: tensor<2x3xi32> {ein.axes = ["b", "t"], ein.kind = "input", ein.name = "ids"},
                   %wte: tensor<10x4xf32> {ein.axes = ["v", "d"], ein.kind = "param", ein.name = "wte"}) -> tensor<f32> {
  %e = ein.gather %wte, %ids {axes = ["b", "t", "d"]} : tensor<10x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %l = ein.reduce sum %e dims [0, 1, 2] {axes = []} : tensor<2x3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["b", "t", "d"]{{.*}}}
// CHECK-NEXT: %[[DW:.+]] = ein.scatter_add %[[DY]], %arg0 {axes = ["v", "d"]{{.*}}} : tensor<2x3x4xf32>, tensor<2x3xi32> -> tensor<10x4xf32>
// CHECK-NEXT: return %{{.+}}, %[[DW]] :

// -----

// gather from a narrow table: the scatter_add accumulates in f32 and rounds
// once to the table's type.
func.func @forward(%ids: tensor<2x3xi32> {ein.axes = ["b", "t"], ein.kind = "input", ein.name = "ids"},
                   %wte: tensor<10x4xf16> {ein.axes = ["v", "d"], ein.kind = "param", ein.name = "wte"}) -> tensor<f32> {
  %e = ein.gather %wte, %ids {axes = ["b", "t", "d"]} : tensor<10x4xf16>, tensor<2x3xi32> -> tensor<2x3x4xf16>
  %w = ein.cast %e {axes = ["b", "t", "d"]} : tensor<2x3x4xf16> -> tensor<2x3x4xf32>
  %l = ein.reduce sum %w dims [0, 1, 2] {axes = []} : tensor<2x3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DYH:.+]] = ein.cast %{{.+}} : tensor<2x3x4xf32> -> tensor<2x3x4xf16>
// CHECK-NEXT: %[[DYW:.+]] = ein.cast %[[DYH]] {axes = ["b", "t", "d"]{{.*}}} : tensor<2x3x4xf16> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[S:.+]] = ein.scatter_add %[[DYW]], %arg0 {axes = ["v", "d"]{{.*}}} : tensor<2x3x4xf32>, tensor<2x3xi32> -> tensor<10x4xf32>
// CHECK-NEXT: %[[DW:.+]] = ein.cast %[[S]] {axes = ["v", "d"]{{.*}}} : tensor<10x4xf32> -> tensor<10x4xf16>
// CHECK-NEXT: return %{{.+}}, %[[DW]] :

// -----

// scatter_add: gather of dY at the indices.
func.func @forward(%ids: tensor<6xi32> {ein.axes = ["n"], ein.kind = "input", ein.name = "ids"},
                   %u: tensor<6x4xf32> {ein.axes = ["n", "d"], ein.kind = "param", ein.name = "u"}) -> tensor<f32> {
  %t = ein.scatter_add %u, %ids {axes = ["v", "d"]} : tensor<6x4xf32>, tensor<6xi32> -> tensor<10x4xf32>
  %l = ein.reduce sum %t dims [0, 1] {axes = []} : tensor<10x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[DY:.+]] = ein.broadcast %{{.+}} dims [] {axes = ["v", "d"]{{.*}}}
// CHECK-NEXT: %[[DU:.+]] = ein.gather %[[DY]], %arg0 {axes = ["n", "d"]{{.*}}} : tensor<10x4xf32>, tensor<6xi32> -> tensor<6x4xf32>
// CHECK-NEXT: return %{{.+}}, %[[DU]] :

// -----

// max against a constant (relu) is a clamp: the gradient is read from the
// result (dY where y > 0), not from the input; no tie handling.
func.func @forward(%x: tensor<4xf32> {ein.axes = ["i"], ein.kind = "param", ein.name = "x"}) -> tensor<f32> {
  %z = ein.constant dense<0.0> : tensor<f32>
  %zb = ein.broadcast %z dims [] : tensor<f32> -> tensor<4xf32>
  %y = ein.max %x, %zb : tensor<4xf32>
  %s = ein.mul %y, %y : tensor<4xf32>
  %l = ein.reduce sum %s dims [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @grad(
// CHECK: %[[ZB:.+]] = ein.broadcast %{{.+}} dims []
// CHECK: %[[Y:.+]] = ein.max %arg0, %[[ZB]]
// CHECK-NOT: ein.cmp eq
// CHECK: %[[M:.+]] = ein.cmp gt, %[[Y]], %[[ZB]]
// CHECK-NOT: ein.cmp eq
// CHECK: ein.select %[[M]]
// CHECK: return
