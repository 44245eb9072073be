// RUN: ein-opt %s | ein-opt | FileCheck %s
// Every ein op parses, verifies and prints back in its custom form.

// CHECK-LABEL: func.func @contract
func.func @contract(%a: tensor<2x3x4xbf16>, %b: tensor<2x4x5xbf16>,
                    %x: tensor<3x4xf32>, %y: tensor<4x5xf32>)
    -> (tensor<2x3x5xf32>, tensor<3x5xf32>) {
  // CHECK: ein.contract %{{.*}}, %{{.*}} batch [0], [0] contract [2], [1] {axes = ["b", "i", "j"]} : tensor<2x3x4xbf16>, tensor<2x4x5xbf16> -> tensor<2x3x5xf32>
  %0 = ein.contract %a, %b batch [0], [0] contract [2], [1] {axes = ["b", "i", "j"]}
         : tensor<2x3x4xbf16>, tensor<2x4x5xbf16> -> tensor<2x3x5xf32>
  // CHECK: ein.contract %{{.*}}, %{{.*}} batch [], [] contract [1], [0] : tensor<3x4xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
  %1 = ein.contract %x, %y batch [], [] contract [1], [0]
         : tensor<3x4xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
  return %0, %1 : tensor<2x3x5xf32>, tensor<3x5xf32>
}

// CHECK-LABEL: func.func @structural
func.func @structural(%x: tensor<3x4xf32>, %v: tensor<4xf32>, %s: tensor<1x4xi32>) {
  // CHECK: ein.transpose %{{.*}} [1, 0] {axes = ["j", "i"]} : tensor<3x4xf32> -> tensor<4x3xf32>
  %0 = ein.transpose %x [1, 0] {axes = ["j", "i"]} : tensor<3x4xf32> -> tensor<4x3xf32>
  // CHECK: ein.reshape %{{.*}} : tensor<3x4xf32> -> tensor<12xf32>
  %1 = ein.reshape %x : tensor<3x4xf32> -> tensor<12xf32>
  // CHECK: ein.broadcast %{{.*}} dims [1] : tensor<4xf32> -> tensor<3x4xf32>
  %2 = ein.broadcast %v dims [1] : tensor<4xf32> -> tensor<3x4xf32>
  // CHECK: ein.broadcast %{{.*}} dims [0, 2] : tensor<1x4xi32> -> tensor<5x2x4xi32>
  %3 = ein.broadcast %s dims [0, 2] : tensor<1x4xi32> -> tensor<5x2x4xi32>
  // CHECK: ein.reduce sum %{{.*}} dims [1] {axes = ["i"]} : tensor<3x4xf32> -> tensor<3xf32>
  %4 = ein.reduce sum %x dims [1] {axes = ["i"]} : tensor<3x4xf32> -> tensor<3xf32>
  // CHECK: ein.reduce max %{{.*}} dims [0, 1] : tensor<3x4xf32> -> tensor<f32>
  %5 = ein.reduce max %x dims [0, 1] : tensor<3x4xf32> -> tensor<f32>
  // CHECK: ein.reduce min %{{.*}} dims [0] : tensor<1x4xi32> -> tensor<4xi32>
  %6 = ein.reduce min %s dims [0] : tensor<1x4xi32> -> tensor<4xi32>
  return
}

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<4xf32>, %h: tensor<2x2xbf16>, %i: tensor<4xi32>) {
  // CHECK: ein.neg %{{.*}} : tensor<4xf32>
  %0 = ein.neg %x : tensor<4xf32>
  // CHECK: ein.neg %{{.*}} : tensor<4xi32>
  %1 = ein.neg %i : tensor<4xi32>
  // CHECK: ein.exp %{{.*}} {axes = ["a", "b"]} : tensor<2x2xbf16>
  %2 = ein.exp %h {axes = ["a", "b"]} : tensor<2x2xbf16>
  // CHECK: ein.log %{{.*}} : tensor<4xf32>
  %3 = ein.log %x : tensor<4xf32>
  // CHECK: ein.tanh %{{.*}} : tensor<4xf32>
  %4 = ein.tanh %x : tensor<4xf32>
  // CHECK: ein.sqrt %{{.*}} : tensor<4xf32>
  %5 = ein.sqrt %x : tensor<4xf32>
  // CHECK: ein.rsqrt %{{.*}} : tensor<4xf32>
  %6 = ein.rsqrt %x : tensor<4xf32>
  // CHECK: ein.abs %{{.*}} : tensor<4xi32>
  %7 = ein.abs %i : tensor<4xi32>
  // CHECK: ein.softplus %{{.*}} {axes = ["a", "b"]} : tensor<2x2xbf16>
  %8 = ein.softplus %h {axes = ["a", "b"]} : tensor<2x2xbf16>
  // CHECK: ein.sin %{{.*}} : tensor<4xf32>
  %9 = ein.sin %x : tensor<4xf32>
  // CHECK: ein.cos %{{.*}} {axes = ["a", "b"]} : tensor<2x2xbf16>
  %10 = ein.cos %h {axes = ["a", "b"]} : tensor<2x2xbf16>
  // CHECK: ein.erf %{{.*}} : tensor<4xf32>
  %11 = ein.erf %x : tensor<4xf32>
  return
}

// CHECK-LABEL: func.func @binary
func.func @binary(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi32>) {
  // CHECK: ein.add %{{.*}}, %{{.*}} {axes = ["n"]} : tensor<4xf32>
  %0 = ein.add %x, %y {axes = ["n"]} : tensor<4xf32>
  // CHECK: ein.sub %{{.*}}, %{{.*}} : tensor<4xf32>
  %1 = ein.sub %x, %y : tensor<4xf32>
  // CHECK: ein.mul %{{.*}}, %{{.*}} : tensor<4xi32>
  %2 = ein.mul %i, %i : tensor<4xi32>
  // CHECK: ein.div %{{.*}}, %{{.*}} : tensor<4xf32>
  %3 = ein.div %x, %y : tensor<4xf32>
  // CHECK: ein.max %{{.*}}, %{{.*}} : tensor<4xf32>
  %4 = ein.max %x, %y : tensor<4xf32>
  // CHECK: ein.min %{{.*}}, %{{.*}} : tensor<4xf32>
  %5 = ein.min %x, %y : tensor<4xf32>
  // CHECK: ein.pow %{{.*}}, %{{.*}} : tensor<4xf32>
  %6 = ein.pow %x, %y : tensor<4xf32>
  return
}

// CHECK-LABEL: func.func @cmp_select_cast
func.func @cmp_select_cast(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi32>)
    -> (tensor<4xf32>, tensor<4xbf16>, tensor<4xi1>) {
  // CHECK: %[[M:.*]] = ein.cmp lt, %{{.*}}, %{{.*}} : tensor<4xf32> -> tensor<4xi1>
  %m = ein.cmp lt, %a, %b : tensor<4xf32> -> tensor<4xi1>
  // CHECK: ein.cmp eq, %{{.*}}, %{{.*}} {axes = ["n"]} : tensor<4xi32> -> tensor<4xi1>
  %e = ein.cmp eq, %i, %i {axes = ["n"]} : tensor<4xi32> -> tensor<4xi1>
  // CHECK: ein.cmp ne
  %c1 = ein.cmp ne, %a, %b : tensor<4xf32> -> tensor<4xi1>
  // CHECK: ein.cmp le
  %c2 = ein.cmp le, %a, %b : tensor<4xf32> -> tensor<4xi1>
  // CHECK: ein.cmp gt
  %c3 = ein.cmp gt, %a, %b : tensor<4xf32> -> tensor<4xi1>
  // CHECK: ein.cmp ge
  %c4 = ein.cmp ge, %a, %b : tensor<4xf32> -> tensor<4xi1>
  // CHECK: ein.select %[[M]], %{{.*}}, %{{.*}} : tensor<4xi1>, tensor<4xf32>
  %s = ein.select %m, %a, %b : tensor<4xi1>, tensor<4xf32>
  // CHECK: ein.cast %{{.*}} : tensor<4xf32> -> tensor<4xbf16>
  %h = ein.cast %a : tensor<4xf32> -> tensor<4xbf16>
  return %s, %h, %e : tensor<4xf32>, tensor<4xbf16>, tensor<4xi1>
}

// CHECK-LABEL: func.func @sources
func.func @sources() -> (tensor<2xf32>, tensor<2x2xi32>, tensor<3x4xi32>, tensor<3x4xf32>) {
  // CHECK: ein.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %0 = ein.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: ein.constant {axes = ["a", "b"]} dense<7> : tensor<2x2xi32>
  %1 = ein.constant {axes = ["a", "b"]} dense<7> : tensor<2x2xi32>
  // CHECK: ein.iota dim 1 : tensor<3x4xi32>
  %2 = ein.iota dim 1 : tensor<3x4xi32>
  // CHECK: ein.iota dim 0 {axes = ["i", "j"]} : tensor<3x4xf32>
  %3 = ein.iota dim 0 {axes = ["i", "j"]} : tensor<3x4xf32>
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<2x2xi32>, tensor<3x4xi32>, tensor<3x4xf32>
}

// CHECK-LABEL: func.func @slices
func.func @slices(%qkv: tensor<3x8x16xf32>, %h: tensor<2x4xbf16>) -> tensor<3x8x16xf32> {
  // CHECK: ein.slice %{{.*}} offset 1 {axes = ["three", "t", "d"]} : tensor<3x8x16xf32> -> tensor<1x8x16xf32>
  %k = ein.slice %qkv offset 1 {axes = ["three", "t", "d"]} : tensor<3x8x16xf32> -> tensor<1x8x16xf32>
  // CHECK: ein.slice %{{.*}} offset 0 : tensor<3x8x16xf32> -> tensor<2x8x16xf32>
  %qk = ein.slice %qkv offset 0 : tensor<3x8x16xf32> -> tensor<2x8x16xf32>
  // CHECK: ein.slice %{{.*}} offset 1 : tensor<2x4xbf16> -> tensor<1x4xbf16>
  %r = ein.slice %h offset 1 : tensor<2x4xbf16> -> tensor<1x4xbf16>
  // CHECK: ein.concat %{{.*}}, %{{.*}} {axes = ["three", "t", "d"]} : tensor<2x8x16xf32>, tensor<1x8x16xf32> -> tensor<3x8x16xf32>
  %all = ein.concat %qk, %k {axes = ["three", "t", "d"]}
           : tensor<2x8x16xf32>, tensor<1x8x16xf32> -> tensor<3x8x16xf32>
  return %all : tensor<3x8x16xf32>
}

// CHECK-LABEL: func.func @indexing
func.func @indexing(%table: tensor<100x16xf32>, %ids: tensor<4x8xi32>)
    -> tensor<100x16xf32> {
  // CHECK: ein.gather %{{.*}}, %{{.*}} {axes = ["b", "t", "d"]} : tensor<100x16xf32>, tensor<4x8xi32> -> tensor<4x8x16xf32>
  %e = ein.gather %table, %ids {axes = ["b", "t", "d"]}
         : tensor<100x16xf32>, tensor<4x8xi32> -> tensor<4x8x16xf32>
  // CHECK: ein.scatter_add %{{.*}}, %{{.*}} : tensor<4x8x16xf32>, tensor<4x8xi32> -> tensor<100x16xf32>
  %g = ein.scatter_add %e, %ids
         : tensor<4x8x16xf32>, tensor<4x8xi32> -> tensor<100x16xf32>
  return %g : tensor<100x16xf32>
}

// CHECK-LABEL: func.func @stop_gradient
func.func @stop_gradient(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: ein.stop_gradient %{{.*}} {axes = ["b", "d"]} : tensor<4x8xf32>
  %s = ein.stop_gradient %x {axes = ["b", "d"]} : tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @dropout
func.func @dropout(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: ein.dropout %{{.*}} {axes = ["b", "d"], p = 1.000000e-01 : f64, site = 2 : i64} : tensor<4x8xf32>
  %d = ein.dropout %x {axes = ["b", "d"], p = 1.000000e-01 : f64, site = 2 : i64} : tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}
