// RUN: ein-opt %s --ein-accumulate-grad=micro-batches=4 | FileCheck %s
// RUN: ein-opt %s --ein-accumulate-grad | FileCheck %s --check-prefix=ONE
// RUN: rm -rf %t && split-file %s %t
// RUN: ein-opt %t/nograd.mlir --ein-accumulate-grad -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/exists.mlir --ein-accumulate-grad -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/ints.mlir --ein-accumulate-grad -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/zero.mlir --ein-accumulate-grad=micro-batches=0 -verify-diagnostics -o /dev/null

// Gradient accumulation in compiled code: @accumulate_grad takes @grad's
// arguments and one accumulator per result (named as the result), and
// returns each accumulator plus its value divided by the micro-batches.

func.func @grad(%x: tensor<2x3xf32> {ein.axes = ["b", "d"], ein.kind = "input", ein.name = "x"},
                %w: tensor<3xf32> {ein.axes = ["d"], ein.kind = "param", ein.name = "w"})
    -> (tensor<f32> {ein.name = "loss"},
        tensor<3xf32> {ein.kind = "grad", ein.name = "w"}) {
  %loss = ein.reduce sum %x dims [0, 1] {axes = []} : tensor<2x3xf32> -> tensor<f32>
  %gw = ein.neg %w {axes = ["d"]} : tensor<3xf32>
  return %loss, %gw : tensor<f32>, tensor<3xf32>
}

// @grad stays.
// CHECK-LABEL: func.func @grad(
// CHECK-LABEL: func.func @accumulate_grad(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3xf32> {ein.axes = ["b", "d"], ein.kind = "input", ein.name = "x"}
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<3xf32> {ein.axes = ["d"], ein.kind = "param", ein.name = "w"}
// CHECK-SAME: %[[LS:[a-z0-9]+]]: tensor<f32> {ein.kind = "accumulator", ein.name = "loss"}
// CHECK-SAME: %[[WS:[a-z0-9]+]]: tensor<3xf32> {ein.kind = "accumulator", ein.name = "w"})
// CHECK-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<3xf32> {ein.kind = "grad", ein.name = "w"})
// @grad's body, then each value times 1/4 added to its accumulator.
// CHECK: %[[L:.+]] = ein.reduce sum %[[X]]
// CHECK: %[[G:.+]] = ein.neg %[[W]]
// CHECK: ein.constant {{.*}}ein.phase = "backward"{{.*}} dense<2.500000e-01> : tensor<f32>
// CHECK: %[[LM:.+]] = ein.mul %[[L]], %{{.+}} {{.*}}ein.phase = "backward"
// CHECK: %[[L2:.+]] = ein.add %[[LS]], %[[LM]] {{.*}}ein.phase = "backward"
// CHECK: %[[H:.+]] = ein.broadcast
// CHECK: %[[GM:.+]] = ein.mul %[[G]], %[[H]]
// CHECK: %[[G2:.+]] = ein.add %[[WS]], %[[GM]]
// CHECK: return %[[L2]], %[[G2]] : tensor<f32>, tensor<3xf32>

// One micro-batch: no scaling, the sums only.
// ONE-LABEL: func.func @accumulate_grad(
// ONE-NOT: ein.mul
// ONE: ein.add
// ONE: ein.add
// ONE-NEXT: return

//--- nograd.mlir
// expected-error @+1 {{ein-accumulate-grad: no @grad to accumulate}}
module {
}

//--- exists.mlir
module {
  func.func @grad(%w: tensor<4xf32> {ein.kind = "param", ein.name = "w"})
      -> (tensor<f32> {ein.name = "loss"}, tensor<4xf32> {ein.kind = "grad", ein.name = "w"}) {
    %l = ein.reduce sum %w dims [0] : tensor<4xf32> -> tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
  // expected-error @-5 {{ein-accumulate-grad: a symbol @accumulate_grad already exists}}
  func.func @accumulate_grad() {
    return
  }
}

//--- ints.mlir
module {
  // expected-error @+1 {{result 0 of @grad is not a float tensor}}
  func.func @grad(%w: tensor<4xi32> {ein.kind = "param", ein.name = "w"})
      -> (tensor<i32> {ein.name = "loss"}) {
    %l = ein.reduce sum %w dims [0] : tensor<4xi32> -> tensor<i32>
    return %l : tensor<i32>
  }
}

//--- zero.mlir
module {
  // expected-error @+1 {{ein-accumulate-grad: micro-batches must be >= 1, got 0}}
  func.func @grad(%w: tensor<4xf32> {ein.kind = "param", ein.name = "w"})
      -> (tensor<f32> {ein.name = "loss"}, tensor<4xf32> {ein.kind = "grad", ein.name = "w"}) {
    %l = ein.reduce sum %w dims [0] : tensor<4xf32> -> tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}
