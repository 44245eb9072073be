// RUN: ein-opt %s --pass-pipeline='builtin.module(func.func(ein-fuse-elementwise,ein-fuse-rows))' | FileCheck %s
// RUN: ein-opt %s --pass-pipeline='builtin.module(func.func(ein-fuse-elementwise,ein-fuse-rows{max-inputs=1}))' | FileCheck %s --check-prefix=BUDGET
// RUN: ein-opt %s --pass-pipeline='builtin.module(func.func(ein-fuse-elementwise))' | FileCheck %s --check-prefix=ELEMENTWISE
// RUN: ein-opt %s --pass-pipeline='builtin.module(func.func(ein-fuse-rows))' | FileCheck %s --check-prefix=EPILOGUE

// Softmax: max, subtract, exp, sum, divide — one row group; no elementwise
// group is left (without the pass: two, and two reductions apart).
// CHECK-LABEL: func.func @softmax
// CHECK:      ein.reduce max {{.*}}ein.rows = 0 : i64
// CHECK-NEXT: ein.broadcast {{.*}}ein.rows = 0 : i64
// CHECK-NEXT: ein.sub {{.*}}ein.rows = 0 : i64
// CHECK-NEXT: ein.exp {{.*}}ein.rows = 0 : i64
// CHECK-NEXT: ein.reduce sum {{.*}}ein.rows = 0 : i64
// CHECK-NEXT: ein.broadcast {{.*}}ein.rows = 0 : i64
// CHECK-NEXT: ein.div {{.*}}ein.rows = 0 : i64
// CHECK-NEXT: return
// CHECK-NOT:  ein.fusion
// With one input the softmax still fuses whole (it reads only %x):
// BUDGET-LABEL: func.func @softmax
// BUDGET:      ein.reduce max {{.*}}ein.rows = 0 : i64
// BUDGET:      ein.div {{.*}}ein.rows = 0 : i64
// ELEMENTWISE-LABEL: func.func @softmax
// ELEMENTWISE:     ein.reduce max
// ELEMENTWISE-NOT: ein.rows
// ELEMENTWISE:     ein.exp {{.*}}ein.fusion = 0 : i64
// ELEMENTWISE:     ein.reduce sum
// ELEMENTWISE:     return
func.func @softmax(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %m = ein.reduce max %x dims [1] : tensor<8x64xf32> -> tensor<8xf32>
  %mb = ein.broadcast %m dims [0] : tensor<8xf32> -> tensor<8x64xf32>
  %d = ein.sub %x, %mb : tensor<8x64xf32>
  %e = ein.exp %d : tensor<8x64xf32>
  %s = ein.reduce sum %e dims [1] : tensor<8x64xf32> -> tensor<8xf32>
  %sb = ein.broadcast %s dims [0] : tensor<8xf32> -> tensor<8x64xf32>
  %p = ein.div %e, %sb : tensor<8x64xf32>
  return %p : tensor<8x64xf32>
}

// Layernorm: the mean's and the variance's reductions, the per-row ops
// between them (scale by 1/L, add eps, rsqrt) and the normalisation; the
// residual add producing its input joins too. The gain and bias (trailing
// dims) and the scalars are broadcasts read in place: not members.
// CHECK-LABEL: func.func @layernorm
// CHECK-DAG:  %[[G:.*]] = ein.broadcast %arg2 dims [1] :
// CHECK-DAG:  %[[B:.*]] = ein.broadcast %arg3 dims [1] :
// CHECK:      ein.add %arg0, %arg1 {{.*}}ein.rows = 0 : i64
// CHECK-NEXT: ein.reduce sum {{.*}}ein.rows = 0 : i64
// CHECK:      ein.rsqrt {{.*}}ein.rows = 0 : i64
// CHECK:      ein.mul {{.*}}%[[G]] {{.*}}ein.rows = 0 : i64
// CHECK-NEXT: ein.add {{.*}}%[[B]] {{.*}}ein.rows = 0 : i64
// CHECK-NEXT: return
// BUDGET-LABEL: func.func @layernorm
// BUDGET-NOT: ein.rows
// BUDGET:     return
func.func @layernorm(%a: tensor<4x32xf32>, %r: tensor<4x32xf32>, %g: tensor<32xf32>,
                     %b: tensor<32xf32>) -> tensor<4x32xf32> {
  %inv = ein.constant dense<3.125e-02> : tensor<f32>
  %eps = ein.constant dense<1.0e-05> : tensor<f32>
  %x = ein.add %a, %r : tensor<4x32xf32>
  %s1 = ein.reduce sum %x dims [1] : tensor<4x32xf32> -> tensor<4xf32>
  %invb = ein.broadcast %inv dims [] : tensor<f32> -> tensor<4xf32>
  %mu = ein.mul %s1, %invb : tensor<4xf32>
  %mub = ein.broadcast %mu dims [0] : tensor<4xf32> -> tensor<4x32xf32>
  %xc = ein.sub %x, %mub : tensor<4x32xf32>
  %sq = ein.mul %xc, %xc : tensor<4x32xf32>
  %s2 = ein.reduce sum %sq dims [1] : tensor<4x32xf32> -> tensor<4xf32>
  %var = ein.mul %s2, %invb : tensor<4xf32>
  %epsb = ein.broadcast %eps dims [] : tensor<f32> -> tensor<4xf32>
  %ve = ein.add %var, %epsb : tensor<4xf32>
  %rs = ein.rsqrt %ve : tensor<4xf32>
  %rsb = ein.broadcast %rs dims [0] : tensor<4xf32> -> tensor<4x32xf32>
  %gb = ein.broadcast %g dims [1] : tensor<32xf32> -> tensor<4x32xf32>
  %bb = ein.broadcast %b dims [1] : tensor<32xf32> -> tensor<4x32xf32>
  %n = ein.mul %xc, %rsb : tensor<4x32xf32>
  %ng = ein.mul %n, %gb : tensor<4x32xf32>
  %y = ein.add %ng, %bb : tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// Cross-entropy: log-sum-exp and the target's logit (a sibling reading the
// same logits, the targets a per-row broadcast read in place) in one row
// group with the per-row loss; the mean over all rows is no row reduction
// and stays outside.
// CHECK-LABEL: func.func @cross_entropy
// CHECK:      ein.reduce max {{.*}}ein.rows = 0 : i64
// CHECK:      ein.select {{.*}}ein.rows = 0 : i64
// CHECK:      ein.log {{.*}}ein.rows = 0 : i64
// CHECK:      ein.sub {{.*}}ein.rows = 0 : i64
// CHECK-NEXT: ein.reduce sum {{.*}} dims [0] : tensor<6xf32> -> tensor<f32>
// CHECK-NOT:  ein.fusion
// CHECK:      return
func.func @cross_entropy(%logits: tensor<6x16xf32>, %t: tensor<6xi32>) -> tensor<f32> {
  %zero = ein.constant dense<0.0> : tensor<f32>
  %m = ein.reduce max %logits dims [1] : tensor<6x16xf32> -> tensor<6xf32>
  %mb = ein.broadcast %m dims [0] : tensor<6xf32> -> tensor<6x16xf32>
  %d = ein.sub %logits, %mb : tensor<6x16xf32>
  %e = ein.exp %d : tensor<6x16xf32>
  %s = ein.reduce sum %e dims [1] : tensor<6x16xf32> -> tensor<6xf32>
  %io = ein.iota dim 1 : tensor<6x16xi32>
  %tb = ein.broadcast %t dims [0] : tensor<6xi32> -> tensor<6x16xi32>
  %zb = ein.broadcast %zero dims [] : tensor<f32> -> tensor<6x16xf32>
  %hit = ein.cmp eq, %io, %tb : tensor<6x16xi32> -> tensor<6x16xi1>
  %pick = ein.select %hit, %logits, %zb : tensor<6x16xi1>, tensor<6x16xf32>
  %tl = ein.reduce sum %pick dims [1] : tensor<6x16xf32> -> tensor<6xf32>
  %ls = ein.log %s : tensor<6xf32>
  %lse = ein.add %m, %ls : tensor<6xf32>
  %loss = ein.sub %lse, %tl : tensor<6xf32>
  %total = ein.reduce sum %loss dims [0] : tensor<6xf32> -> tensor<f32>
  return %total : tensor<f32>
}

// Phases stay apart: the backward's use of a forward reduction is another
// kernel.
// CHECK-LABEL: func.func @phases
// CHECK:      ein.reduce sum {{.*}}ein.phase = "forward", ein.rows = 0 : i64
// CHECK:      ein.mul {{.*}}ein.phase = "forward", ein.rows = 0 : i64
// CHECK-NOT:  ein.rows
// CHECK:      return
func.func @phases(%x: tensor<4x32xf32>, %g: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %s = ein.reduce sum %x dims [1] {ein.phase = "forward"} : tensor<4x32xf32> -> tensor<4xf32>
  %sb = ein.broadcast %s dims [0] {ein.phase = "forward"} : tensor<4xf32> -> tensor<4x32xf32>
  %f = ein.mul %x, %sb {ein.phase = "forward"} : tensor<4x32xf32>
  %sb2 = ein.broadcast %s dims [0] {ein.phase = "backward"} : tensor<4xf32> -> tensor<4x32xf32>
  %b = ein.mul %g, %sb2 {ein.phase = "backward"} : tensor<4x32xf32>
  return %f, %b : tensor<4x32xf32>, tensor<4x32xf32>
}

// No cycle: %y reads the contraction of the group's own output, so it cannot
// join the group that the contraction reads.
// CHECK-LABEL: func.func @no_cycle
// CHECK:      ein.reduce max {{.*}}ein.rows = 0 : i64
// CHECK:      ein.sub {{.*}}ein.rows = 0 : i64
// CHECK:      ein.contract
// CHECK-NOT:  ein.rows
// CHECK:      return
func.func @no_cycle(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %m = ein.reduce max %x dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %mb = ein.broadcast %m dims [0] : tensor<4xf32> -> tensor<4x8xf32>
  %d = ein.sub %x, %mb : tensor<4x8xf32>
  %c = ein.contract %d, %w batch [], [] contract [1], [0] : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %y = ein.mul %c, %mb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// A contraction's epilogue (as ein-fuse-epilogues marks it) stays with it:
// the row group reads its result.
// EPILOGUE-LABEL: func.func @epilogue
// EPILOGUE:      ein.contract {{.*}}ein.epilogue = 0 : i64
// EPILOGUE-NEXT: ein.tanh {{.*}}ein.fusion = 0 : i64
// EPILOGUE-NEXT: ein.reduce max {{.*}}ein.rows = 0 : i64
// EPILOGUE-NEXT: ein.broadcast {{.*}}ein.rows = 0 : i64
// EPILOGUE-NEXT: ein.sub {{.*}}ein.rows = 0 : i64
func.func @epilogue(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %c = ein.contract %x, %w batch [], [] contract [1], [0] {ein.epilogue = 0 : i64} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %t = ein.tanh %c {ein.fusion = 0 : i64} : tensor<4x8xf32>
  %m = ein.reduce max %t dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %mb = ein.broadcast %m dims [0] : tensor<4xf32> -> tensor<4x8xf32>
  %d = ein.sub %t, %mb : tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// A member broadcast read after the group (here by another phase) stays a
// member: the backend writes its input (a per-row value) for such readers,
// which read it in place (or materialise it after the kernel).
// CHECK-LABEL: func.func @shared_broadcast
// CHECK:      %[[S:.*]] = ein.reduce sum {{.*}}ein.rows = 0 : i64
// CHECK-NEXT: %[[B:.*]] = ein.broadcast %[[S]] {{.*}}ein.rows = 0 : i64
// CHECK-NEXT: ein.div {{.*}}ein.rows = 0 : i64
// CHECK-NEXT: ein.mul %arg1, %[[B]] {ein.phase = "backward"}
func.func @shared_broadcast(%x: tensor<4x32xf32>, %g: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %s = ein.reduce sum %x dims [1] {ein.phase = "forward"} : tensor<4x32xf32> -> tensor<4xf32>
  %sb = ein.broadcast %s dims [0] {ein.phase = "forward"} : tensor<4xf32> -> tensor<4x32xf32>
  %p = ein.div %x, %sb {ein.phase = "forward"} : tensor<4x32xf32>
  %b = ein.mul %g, %sb {ein.phase = "backward"} : tensor<4x32xf32>
  return %p, %b : tensor<4x32xf32>, tensor<4x32xf32>
}

// A gradient's part of the global norm (passes/TrainStep.cpp): the square
// joins its sum to a scalar, a row kernel of one row (the whole tensor);
// the scalars after the sum do not (such a kernel takes only producers the
// reduction alone reads), nor does a square read elsewhere too.
// CHECK-LABEL: func.func @grad_norm
// CHECK:      ein.mul %arg0, %arg0 {{.*}}ein.rows = [[G:[0-9]+]] : i64
// CHECK-NEXT: ein.reduce sum {{.*}}ein.rows = [[G]] : i64
// CHECK-NOT:  ein.rows
// CHECK:      return
func.func @grad_norm(%g: tensor<64x32xf32>, %h: tensor<16xf32>) -> (tensor<f32>, tensor<16xf32>) {
  %sq = ein.mul %g, %g : tensor<64x32xf32>
  %s = ein.reduce sum %sq dims [0, 1] : tensor<64x32xf32> -> tensor<f32>
  %hq = ein.mul %h, %h : tensor<16xf32>
  %t = ein.reduce sum %hq dims [0] : tensor<16xf32> -> tensor<f32>
  %sum = ein.add %s, %t : tensor<f32>
  %n = ein.sqrt %sum : tensor<f32>
  return %n, %hq : tensor<f32>, tensor<16xf32>
}
