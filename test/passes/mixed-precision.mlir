// RUN: ein-opt %s --ein-mixed-precision=policy=bf16-mixed | FileCheck %s --check-prefixes=MIXED,BF16M
// RUN: ein-opt %s --ein-mixed-precision=policy=mixed | FileCheck %s --check-prefixes=MIXED,BF16M
// RUN: ein-opt %s --ein-mixed-precision=policy=fp16-mixed | FileCheck %s --check-prefixes=MIXED,F16M
// RUN: ein-opt %s --ein-mixed-precision=policy=bf16 | FileCheck %s --check-prefix=PURE
// RUN: ein-opt %s --ein-mixed-precision=policy=fp32 | FileCheck %s --check-prefix=FP32
// RUN: ein-opt %s --ein-mixed-precision | FileCheck %s --check-prefix=FP32
//
// Casts once and CSE-clean: CSE finds nothing to merge, and a second run
// (the function records its policy) changes nothing.
// RUN: ein-opt %s --ein-mixed-precision=policy=bf16-mixed -o %t.once
// RUN: ein-opt %s --ein-mixed-precision=policy=bf16-mixed --cse -o %t.cse
// RUN: ein-opt %s --ein-mixed-precision=policy=bf16-mixed --ein-mixed-precision=policy=bf16-mixed -o %t.twice
// RUN: diff %t.once %t.cse
// RUN: diff %t.once %t.twice
//
// The policy's types flow through autodiff and the optimizer: fp32 master
// params and fp32 gradients of params, the backward in bf16.
// RUN: ein-opt %s --ein-build-train-step=precision=bf16-mixed | FileCheck %s --check-prefix=STEP

// A softmax-like forward: two contractions reading one param, a scale, a
// max and a sum reduction per row, and the loss, a mean over the rows.
func.func @forward(%x: tensor<2x4xf32> {ein.axes = ["b", "k"], ein.kind = "input", ein.name = "x"},
                   %w: tensor<4x3xf32> {ein.axes = ["k", "n"], ein.kind = "param", ein.name = "w"},
                   %g: tensor<3xf32> {ein.axes = ["n"], ein.kind = "param", ein.name = "g"})
    -> (tensor<f32> {ein.name = "loss"}, tensor<2x3xf32> {ein.axes = ["b", "n"], ein.name = "z"}) {
  %y = ein.contract %x, %w batch [], [] contract [1], [0] {axes = ["b", "n"]} : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %gb = ein.broadcast %g dims [1] {axes = ["b", "n"]} : tensor<3xf32> -> tensor<2x3xf32>
  %z = ein.mul %y, %gb {axes = ["b", "n"]} : tensor<2x3xf32>
  %v = ein.contract %z, %w batch [], [] contract [1], [1] {axes = ["b", "k"]} : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  %e = ein.exp %v {axes = ["b", "k"]} : tensor<2x4xf32>
  %m = ein.reduce max %v dims [1] {axes = ["b"]} : tensor<2x4xf32> -> tensor<2xf32>
  %s = ein.reduce sum %e dims [1] {axes = ["b"]} : tensor<2x4xf32> -> tensor<2xf32>
  %l = ein.log %s {axes = ["b"]} : tensor<2xf32>
  %d = ein.add %l, %m {axes = ["b"]} : tensor<2xf32>
  %t = ein.reduce sum %d dims [0] {axes = []} : tensor<2xf32> -> tensor<f32>
  %c = ein.constant {axes = []} dense<5.000000e-01> : tensor<f32>
  %loss = ein.mul %t, %c {axes = []} : tensor<f32>
  return %loss, %z : tensor<f32>, tensor<2x3xf32>
}

// A second function is left alone (funcs= names the ones to rewrite).
func.func @other(%a: tensor<3xf32>) -> tensor<3xf32> {
  %b = ein.exp %a {axes = ["n"]} : tensor<3xf32>
  return %b : tensor<3xf32>
}

// The working copies: each float argument cast once, at the top; the
// signature keeps fp32 (the master params).
// MIXED-LABEL: func.func @forward
// BF16M-SAME: tensor<4x3xf32>
// BF16M-SAME: attributes {ein.precision = "bf16-mixed"}
// F16M-SAME: attributes {ein.precision = "fp16-mixed"}
// BF16M-NEXT: %[[X:.*]] = ein.cast %arg0 {axes = ["b", "k"]} : tensor<2x4xf32> -> tensor<2x4xbf16>
// BF16M-NEXT: %[[W:.*]] = ein.cast %arg1 {axes = ["k", "n"]} : tensor<4x3xf32> -> tensor<4x3xbf16>
// BF16M-NEXT: %[[G:.*]] = ein.cast %arg2 {axes = ["n"]} : tensor<3xf32> -> tensor<3xbf16>
// F16M-NEXT: ein.cast %arg0 {{.*}} -> tensor<2x4xf16>
// F16M-NEXT: ein.cast %arg1 {{.*}} -> tensor<4x3xf16>
// F16M-NEXT: ein.cast %arg2 {{.*}} -> tensor<3xf16>
// MIXED-NOT: ein.cast %arg
// Contractions: narrow operands, a narrow result; the second one reads the
// same working copy of w.
// BF16M: %[[Y:.*]] = ein.contract %[[X]], %[[W]] {{.*}} : tensor<2x4xbf16>, tensor<4x3xbf16> -> tensor<2x3xbf16>
// BF16M: ein.broadcast %[[G]] {{.*}} -> tensor<2x3xbf16>
// BF16M: %[[Z:.*]] = ein.mul {{.*}} : tensor<2x3xbf16>
// The other result keeps its declared type (the cast sits after the value).
// BF16M-NEXT: %[[ZOUT:.*]] = ein.cast %[[Z]] {{.*}} : tensor<2x3xbf16> -> tensor<2x3xf32>
// BF16M: %[[V:.*]] = ein.contract %[[Z]], %[[W]] {{.*}} -> tensor<2x4xbf16>
// F16M: ein.contract {{.*}} : tensor<2x4xf16>, tensor<4x3xf16> -> tensor<2x3xf16>
// Elementwise in the narrow type; max is exact in it.
// BF16M: %[[E:.*]] = ein.exp %[[V]] {{.*}} : tensor<2x4xbf16>
// The sum reduction takes an f32 input (its cast right after the value)
// and gives f32; the statistic stays f32 through the ops that read only it
// and constants (the log), and is rounded to bf16 where it meets bf16 values.
// BF16M-NEXT: %[[E32:.*]] = ein.cast %[[E]] {{.*}} : tensor<2x4xbf16> -> tensor<2x4xf32>
// BF16M: %[[M:.*]] = ein.reduce max %[[V]] {{.*}} : tensor<2x4xbf16> -> tensor<2xbf16>
// BF16M: %[[S:.*]] = ein.reduce sum %[[E32]] {{.*}} : tensor<2x4xf32> -> tensor<2xf32>
// BF16M-NEXT: %[[L:.*]] = ein.log %[[S]] {{.*}} : tensor<2xf32>
// BF16M-NEXT: %[[L16:.*]] = ein.cast %[[L]] {{.*}} : tensor<2xf32> -> tensor<2xbf16>
// BF16M-NEXT: %[[D:.*]] = ein.add %[[L16]], %[[M]] {{.*}} : tensor<2xbf16>
// The loss path (the last reduction, the mean) in f32.
// BF16M-NEXT: %[[D32:.*]] = ein.cast %[[D]] {{.*}} : tensor<2xbf16> -> tensor<2xf32>
// BF16M-NEXT: %[[T:.*]] = ein.reduce sum %[[D32]] {{.*}} : tensor<2xf32> -> tensor<f32>
// BF16M: %[[LOSS:.*]] = ein.mul %[[T]], {{.*}} : tensor<f32>
// BF16M-NEXT: return %[[LOSS]], %[[ZOUT]] : tensor<f32>, tensor<2x3xf32>
// MIXED-LABEL: func.func @other
// MIXED-NOT: ein.cast
// MIXED: return

// bf16: the params themselves bf16 (no master copy), the input cast.
// PURE-LABEL: func.func @forward
// PURE-SAME: %arg1: tensor<4x3xbf16>
// PURE-SAME: %arg2: tensor<3xbf16>
// PURE-SAME: attributes {ein.precision = "bf16"}
// PURE-NEXT: ein.cast %arg0 {{.*}} : tensor<2x4xf32> -> tensor<2x4xbf16>
// PURE-NOT: ein.cast %arg
// PURE: ein.contract {{.*}}, %arg1 {{.*}} : tensor<2x4xbf16>, tensor<4x3xbf16> -> tensor<2x3xbf16>
// PURE: ein.reduce sum {{.*}} : tensor<2x4xf32> -> tensor<2xf32>

// FP32-LABEL: func.func @forward
// FP32-NOT: ein.cast
// FP32-NOT: bf16
// FP32-NOT: ein.precision

// STEP-LABEL: func.func @grad
// STEP: ein.contract {{.*}} : tensor<2x4xbf16>, tensor<4x3xbf16> -> tensor<2x3xbf16>
// The param's gradient is the reverse cast of its working copy's: f32.
// STEP: ein.cast {{.*}} : tensor<4x3xbf16> -> tensor<4x3xf32>
// STEP: return {{.*}} : tensor<f32>, tensor<4x3xf32>, tensor<3xf32>
// STEP-LABEL: func.func @train_step
// STEP-SAME: tensor<4x3xf32> {{{.*}}ein.kind = "param"
