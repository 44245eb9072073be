// RUN: ein-opt %s | ein-opt | FileCheck %s
// ein.quantize parses, verifies and prints back in its custom form: the
// format, the gradient's format when there is one, block and axis.

// CHECK-LABEL: func.func @quantize
func.func @quantize(%x: tensor<4x64xf32>, %h: tensor<64x8xbf16>, %s: tensor<f32>)
    -> (tensor<4x64xf32>, tensor<4x64xf32>, tensor<64x8xbf16>, tensor<f32>, tensor<4x64xf32>) {
  // CHECK: ein.quantize e4m3 %{{.*}} block 32 axis 1 : tensor<4x64xf32>
  %0 = ein.quantize e4m3 %x block 32 axis 1 : tensor<4x64xf32>
  // CHECK: ein.quantize none %{{.*}} grad e5m2 block 32 axis 1 {axes = ["b", "k"]} : tensor<4x64xf32>
  %1 = ein.quantize none %x grad e5m2 block 32 axis 1 {axes = ["b", "k"]} : tensor<4x64xf32>
  // CHECK: ein.quantize e5m2 %{{.*}} block 0 axis 0 : tensor<64x8xbf16>
  %2 = ein.quantize e5m2 %h block 0 axis 0 : tensor<64x8xbf16>
  // CHECK: ein.quantize e4m3 %{{.*}} grad e5m2 block 0 axis 0 : tensor<f32>
  %3 = ein.quantize e4m3 %s grad e5m2 block 0 axis 0 : tensor<f32>
  // A block that does not divide the axis: the last block is shorter.
  // CHECK: ein.quantize e4m3 %{{.*}} block 24 axis 1 : tensor<4x64xf32>
  %4 = ein.quantize e4m3 %x block 24 axis 1 : tensor<4x64xf32>
  return %0, %1, %2, %3, %4 : tensor<4x64xf32>, tensor<4x64xf32>, tensor<64x8xbf16>, tensor<f32>, tensor<4x64xf32>
}
