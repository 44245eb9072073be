// RUN: ein-opt %s --ein-train-step="optimizer=sgd momentum=0 loss-scaling=dynamic loss-scale-interval=3" | FileCheck %s
// RUN: ein-opt %s --ein-train-step="optimizer=sgd momentum=0 loss-scaling=static loss-scale-init=1024" | FileCheck %s --check-prefix=STATIC
// RUN: not ein-opt %s --ein-train-step="optimizer=sgd momentum=0" 2>&1 | FileCheck %s --check-prefix=UNSCALED

// Dynamic loss scaling (torch's GradScaler) inside the step: @grad (from
// ein-autodiff loss-scale) is seeded with the scale in use, the gradients
// are unscaled in f32 before the norm and the clipping, one check of the
// sum of squares decides whether the update is taken, and the scaler's
// three state values are updated with selects.

func.func @grad(%x: tensor<2x4xf32> {ein.axes = ["b", "d"], ein.kind = "input", ein.name = "x"},
                %w: tensor<4xf32> {ein.axes = ["d"], ein.kind = "param", ein.name = "w"},
                %s: tensor<f32> {ein.kind = "loss_scale", ein.name = "loss_scale"})
    -> (tensor<f32> {ein.name = "loss"},
        tensor<4xf32> {ein.kind = "grad", ein.name = "w"}) {
  %loss = ein.reduce sum %x dims [0, 1] {axes = []} : tensor<2x4xf32> -> tensor<f32>
  %sb = ein.broadcast %s dims [] {axes = ["d"]} : tensor<f32> -> tensor<4xf32>
  %gw = ein.mul %w, %sb {axes = ["d"]} : tensor<4xf32>
  return %loss, %gw : tensor<f32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x4xf32> {ein.axes = ["b", "d"], ein.kind = "input", ein.name = "x"}
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4xf32> {ein.axes = ["d"], ein.kind = "param", ein.name = "w"}
// CHECK-SAME: %[[RAW:[a-z0-9]+]]: tensor<f32> {ein.axes = [], ein.kind = "opt_state", ein.name = "loss_scale"}
// CHECK-SAME: %[[GOOD:[a-z0-9]+]]: tensor<f32> {ein.axes = [], ein.kind = "opt_state", ein.name = "good_steps"}
// CHECK-SAME: %[[SKIP:[a-z0-9]+]]: tensor<f32> {ein.axes = [], ein.kind = "opt_state", ein.name = "skipped_steps"}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<f32> {ein.kind = "step", ein.name = "step"}
// CHECK-SAME: %[[LR:[a-z0-9]+]]: tensor<f32> {ein.kind = "lr", ein.name = "lr"})
// CHECK-SAME: -> (tensor<f32> {ein.name = "loss"}, tensor<f32> {ein.name = "grad_norm"}, tensor<4xf32> {ein.kind = "param", ein.name = "w"}, tensor<f32> {ein.kind = "opt_state", ein.name = "loss_scale"}, tensor<f32> {ein.kind = "opt_state", ein.name = "good_steps"}, tensor<f32> {ein.kind = "opt_state", ein.name = "skipped_steps"})
// The scale in use: the state, or the initial scale while the state is 0.
// CHECK-NEXT: %[[ZERO:.+]] = ein.constant {{.*}}dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[STARTED:.+]] = ein.cmp gt, %[[RAW]], %[[ZERO]] {axes = []{{.*}}ein.phase = "optimizer"{{.*}}} : tensor<f32> -> tensor<i1>
// CHECK-NEXT: %[[INIT:.+]] = ein.constant {{.*}}dense<6.553600e+04> : tensor<f32>
// CHECK-NEXT: %[[SCALE:.+]] = ein.select %[[STARTED]], %[[RAW]], %[[INIT]] {{.*}}: tensor<i1>, tensor<f32>
// @grad's body, seeded with it.
// CHECK-NEXT: ein.reduce sum %[[X]]
// CHECK-NEXT: %[[SB:.+]] = ein.broadcast %[[SCALE]]
// CHECK-NEXT: %[[GW:.+]] = ein.mul %[[W]], %[[SB]]
// Unscaled in f32 by the reciprocal, before the norm.
// CHECK-NEXT: %[[ONE:.+]] = ein.constant {{.*}}dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[INV:.+]] = ein.div %[[ONE]], %[[SCALE]]
// CHECK-NEXT: %[[INVB:.+]] = ein.broadcast %[[INV]] dims [] {axes = ["d"]{{.*}}}
// CHECK-NEXT: %[[U:.+]] = ein.mul %[[GW]], %[[INVB]]
// CHECK-NEXT: %[[SQ:.+]] = ein.mul %[[U]], %[[U]]
// CHECK-NEXT: %[[SS:.+]] = ein.reduce sum %[[SQ]]
// CHECK-NEXT: ein.sqrt %[[SS]]
// One finiteness check over every gradient: their sum of squares < inf.
// CHECK-NEXT: %[[INF:.+]] = ein.constant {{.*}}dense<0x7F800000> : tensor<f32>
// CHECK-NEXT: %[[FINITE:.+]] = ein.cmp lt, %[[SS]], %[[INF]]
// Clipping, then SGD, on the unscaled gradient.
// CHECK: %[[CL:.+]] = ein.min
// CHECK-NEXT: %[[CLB:.+]] = ein.broadcast %[[CL]]
// CHECK-NEXT: %[[G:.+]] = ein.mul %[[U]], %[[CLB]]
// CHECK-NEXT: %[[LRB:.+]] = ein.broadcast %[[LR]]
// CHECK-NEXT: %[[STEP:.+]] = ein.mul %[[LRB]], %[[G]]
// CHECK-NEXT: %[[NEW:.+]] = ein.sub %[[W]], %[[STEP]]
// A skipped step keeps the param.
// CHECK-NEXT: %[[KEEP:.+]] = ein.broadcast %[[FINITE]] dims [] {axes = ["d"]{{.*}}} : tensor<i1> -> tensor<4xi1>
// CHECK-NEXT: %[[NW:.+]] = ein.select %[[KEEP]], %[[NEW]], %[[W]] {axes = ["d"]{{.*}}} : tensor<4xi1>, tensor<4xf32>
// The scaler: good + 1; at the interval (3) the scale doubles if that stays
// finite and good restarts; a non-finite step halves it, restarts good and
// counts a skip.
// CHECK-NEXT: %[[Z:.+]] = ein.constant {{.*}}dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[GOOD1:.+]] = ein.add %[[GOOD]], %[[ONE]]
// CHECK-NEXT: %[[TWO:.+]] = ein.constant {{.*}}dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[GROWN:.+]] = ein.mul %[[SCALE]], %[[TWO]]
// CHECK-NEXT: %[[GROWNOK:.+]] = ein.cmp lt, %[[GROWN]], %[[INF]]
// CHECK-NEXT: %[[GROWN2:.+]] = ein.select %[[GROWNOK]], %[[GROWN]], %[[SCALE]]
// CHECK-NEXT: %[[THREE:.+]] = ein.constant {{.*}}dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DUE:.+]] = ein.cmp ge, %[[GOOD1]], %[[THREE]]
// CHECK-NEXT: %[[SIFF:.+]] = ein.select %[[DUE]], %[[GROWN2]], %[[SCALE]]
// CHECK-NEXT: %[[GIFF:.+]] = ein.select %[[DUE]], %[[Z]], %[[GOOD1]]
// CHECK-NEXT: %[[HALF:.+]] = ein.constant {{.*}}dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[BACK:.+]] = ein.mul %[[SCALE]], %[[HALF]]
// CHECK-NEXT: %[[NS:.+]] = ein.select %[[FINITE]], %[[SIFF]], %[[BACK]]
// CHECK-NEXT: %[[NG:.+]] = ein.select %[[FINITE]], %[[GIFF]], %[[Z]]
// CHECK-NEXT: %[[SKIP1:.+]] = ein.add %[[SKIP]], %[[ONE]]
// CHECK-NEXT: %[[NK:.+]] = ein.select %[[FINITE]], %[[SKIP]], %[[SKIP1]]
// CHECK-NEXT: return %{{.+}}, %{{.+}}, %[[NW]], %[[NS]], %[[NG]], %[[NK]] :

// @apply_update: the same on gradients given (sums of scaled micro-batch
// gradients), its own scale in use from its state.
// CHECK-LABEL: func.func @apply_update(
// CHECK-SAME: ein.name = "loss_scale"
// CHECK-SAME: ein.name = "good_steps"
// CHECK-SAME: ein.name = "skipped_steps"
// CHECK-SAME: ein.name = "step"
// CHECK: ein.cmp gt
// CHECK: ein.select
// CHECK: ein.div
// CHECK: ein.cmp lt
// CHECK: ein.select {{.*}} : tensor<4xi1>, tensor<4xf32>
// CHECK: return

// A static scale: the same check and skip, the scale stays.
// STATIC-LABEL: func.func @train_step(
// STATIC: %[[INIT:.+]] = ein.constant {{.*}}dense<1.024000e+03> : tensor<f32>
// STATIC-NEXT: %[[SCALE:.+]] = ein.select %{{.+}}, %{{.+}}, %[[INIT]]
// STATIC: %[[FINITE:.+]] = ein.cmp lt
// STATIC-NOT: dense<2.000000e+00>
// STATIC-NOT: dense<5.000000e-01>
// STATIC: return %{{.+}}, %{{.+}}, %{{.+}}, %[[SCALE]], %{{.+}}, %{{.+}} :

// UNSCALED: error: ein-train-step: @grad takes a loss_scale argument: give loss-scaling=dynamic or static
