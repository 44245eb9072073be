// RUN: ein-opt %s -canonicalize -cse | FileCheck %s
// ein ops are Pure and ein.constant is ConstantLike: duplicates fold together
// and unused ops disappear.

// CHECK-LABEL: func.func @dedup
func.func @dedup(%x: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK-NEXT: %[[C:.*]] = ein.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  // CHECK-NEXT: %[[E:.*]] = ein.exp %{{.*}} : tensor<2xf32>
  // CHECK-NEXT: %[[S:.*]] = ein.add %[[C]], %[[C]] : tensor<2xf32>
  // CHECK-NEXT: %[[T:.*]] = ein.add %[[E]], %[[E]] : tensor<2xf32>
  // CHECK-NEXT: %[[R:.*]] = ein.add %[[S]], %[[T]] : tensor<2xf32>
  // CHECK-NEXT: return %[[R]]
  %a = ein.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = ein.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %e1 = ein.exp %x : tensor<2xf32>
  %e2 = ein.exp %x : tensor<2xf32>
  %unused = ein.neg %x : tensor<2xf32>
  %s = ein.add %a, %b : tensor<2xf32>
  %t = ein.add %e1, %e2 : tensor<2xf32>
  %r = ein.add %s, %t : tensor<2xf32>
  return %r : tensor<2xf32>
}
