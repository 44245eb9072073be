// RUN: ein-opt %s --pass-pipeline='builtin.module(func.func(ein-fuse-elementwise), ein-print-costs{func=g ops=true fused=true})' -o /dev/null > %t.g
// RUN: ein-opt %s --pass-pipeline='builtin.module(func.func(ein-fuse-elementwise), ein-print-costs{func=f ops=true fused=true})' -o /dev/null > %t.f
// RUN: cat %t.g %t.f | FileCheck %s
//
// An iota read by a fused kernel is computed there from the element's index
// (passes/FuseElementwise.h, classifyIndexRead): no kernel writes it and no
// kernel reads it. @f builds a causal-style mask from two iotas of 4x8 i32;
// @g is the same computation reading the two index tensors as arguments.
// Unfused, @f costs the iotas' writes more than @g (2 x 4·8·4 bytes); fused,
// @g's kernel reads the two tensors and @f's reads nothing for them: @f
// moves 2 x 4·8·4 bytes less.
// CHECK: fusion 1 kernels 3 ops {{.*}} bytes [[#UNFUSED_G:]] -> [[#FUSED_G:]]
// CHECK: costs of @g
// CHECK: fusion 1 kernels 3 ops {{.*}} bytes [[#UNFUSED_G + mul(2, mul(mul(4, 8), 4))]] -> [[#FUSED_G - mul(2, mul(mul(4, 8), 4))]]
// CHECK: costs of @f
// CHECK: op 0 ein.iota {{.*}} read 0 write 0
// CHECK: op 1 ein.iota {{.*}} read 0 write 0
//
// The memory ledger: the iotas are never live (fused), and neither is -x
// (its kernel is the select's), so the peak is x and the result.
// CHECK: peak bytes [[#mul(2, mul(mul(4, 8), 4))]] at
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %i = ein.iota dim 0 : tensor<4x8xi32>
  %j = ein.iota dim 1 : tensor<4x8xi32>
  %m = ein.cmp gt, %j, %i : tensor<4x8xi32> -> tensor<4x8xi1>
  %n = ein.neg %x : tensor<4x8xf32>
  %s = ein.select %m, %n, %x : tensor<4x8xi1>, tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}
func.func @g(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>, %j: tensor<4x8xi32>) -> tensor<4x8xf32> {
  %m = ein.cmp gt, %j, %i : tensor<4x8xi32> -> tensor<4x8xi1>
  %n = ein.neg %x : tensor<4x8xf32>
  %s = ein.select %m, %n, %x : tensor<4x8xi1>, tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}
