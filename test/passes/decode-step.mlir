// RUN: ein-opt %s --ein-decode-step | FileCheck %s
// ein-decode-step: @decode computes the logits of one position `pos` from the
// token there and a cache of the attended values, updated at row pos.

// One causal attention head whose keys and values are one value `x`: one
// cache, read by both contractions; the position table wpe read at row pos;
// the mask becomes s > pos; the cache written at row pos is returned.
// CHECK-LABEL: func.func @decode(
// CHECK-SAME: %[[IDX:.*]]: tensor<1x1xi32> {{{.*}}ein.name = "idx"}
// CHECK-SAME: %[[WTE:.*]]: tensor<8x2xf32> {{{.*}}ein.name = "wte"}
// CHECK-SAME: %[[WPE:.*]]: tensor<4x2xf32> {{{.*}}ein.name = "wpe"}
// CHECK-SAME: %[[POS:.*]]: tensor<1xi32> {{{.*}}ein.name = "pos"}
// CHECK-SAME: %[[CACHE:.*]]: tensor<1x4x2xf32> {{{.*}}ein.kind = "cache", ein.name = "cache.0"}
// CHECK-SAME: -> (tensor<1x1x8xf32> {{{.*}}ein.name = "logits"}, tensor<1x4x2xf32> {ein.name = "cache.0"})
// CHECK: %[[TOK:.*]] = ein.gather %[[WTE]], %[[IDX]] {{.*}} -> tensor<1x1x2xf32>
// CHECK: %[[ROW:.*]] = ein.gather %[[WPE]], %[[POS]] {{.*}} -> tensor<1x2xf32>
// CHECK: %[[X:.*]] = ein.add
// CHECK: %[[AT:.*]] = ein.broadcast %[[POS]] dims [1] {{.*}} -> tensor<1x4x2xi32>
// CHECK: %[[ROWS:.*]] = ein.iota dim 1 {{.*}} : tensor<1x4x2xi32>
// CHECK: %[[HERE:.*]] = ein.cmp eq, %[[ROWS]], %[[AT]]
// CHECK: %[[NEW:.*]] = ein.broadcast %[[X]] dims [0, 1, 2] {{.*}} -> tensor<1x4x2xf32>
// CHECK: %[[KV:.*]] = ein.select %[[HERE]], %[[NEW]], %[[CACHE]]
// CHECK: ein.contract %[[X]], %[[KV]] batch [0], [0] contract [2], [2] {{.*}} -> tensor<1x1x4xf32>
// CHECK: %[[S:.*]] = ein.iota dim 2 : tensor<1x1x4xi32>
// CHECK: %[[P:.*]] = ein.broadcast %[[POS]] dims [1] {{.*}} -> tensor<1x1x4xi32>
// CHECK: ein.cmp gt, %[[S]], %[[P]]
// CHECK: ein.contract %{{.*}}, %[[KV]] batch [0], [0] contract [2], [1] {{.*}} -> tensor<1x1x2xf32>
// CHECK: return %{{.*}}, %[[KV]] : tensor<1x1x8xf32>, tensor<1x4x2xf32>
// Nothing of the whole window but the cache: no [t, s] scores.
// RUN: ein-opt %s --ein-decode-step | FileCheck %s --check-prefix=WINDOW
// WINDOW-LABEL: func.func @decode(
// WINDOW-NOT: 1x4x4
// WINDOW: return

func.func @forward(%idx: tensor<1x4xi32> {ein.axes = ["batch", "ctx"], ein.kind = "input", ein.name = "idx"},
                     %wte: tensor<8x2xf32> {ein.kind = "param", ein.name = "wte"},
                     %wpe: tensor<4x2xf32> {ein.kind = "param", ein.name = "wpe"}) -> (tensor<1x4x8xf32> {ein.name = "logits"}) {
    %0 = ein.gather %wte, %idx : tensor<8x2xf32>, tensor<1x4xi32> -> tensor<1x4x2xf32>
    %1 = ein.broadcast %wpe dims [1, 2] : tensor<4x2xf32> -> tensor<1x4x2xf32>
    %x = ein.add %0, %1 : tensor<1x4x2xf32>
    %att = ein.contract %x, %x batch [0], [0] contract [2], [2] : tensor<1x4x2xf32>, tensor<1x4x2xf32> -> tensor<1x4x4xf32>
    %t = ein.iota dim 1 : tensor<1x4x4xi32>
    %s = ein.iota dim 2 : tensor<1x4x4xi32>
    %later = ein.cmp gt, %s, %t : tensor<1x4x4xi32> -> tensor<1x4x4xi1>
    %c = ein.constant dense<0xFF800000> : tensor<f32>
    %ninf = ein.broadcast %c dims [] : tensor<f32> -> tensor<1x4x4xf32>
    %masked = ein.select %later, %ninf, %att : tensor<1x4x4xi1>, tensor<1x4x4xf32>
    %e = ein.exp %masked : tensor<1x4x4xf32>
    %y = ein.contract %e, %x batch [0], [0] contract [2], [1] : tensor<1x4x4xf32>, tensor<1x4x2xf32> -> tensor<1x4x2xf32>
    %logits = ein.contract %y, %wte batch [], [] contract [2], [1] : tensor<1x4x2xf32>, tensor<8x2xf32> -> tensor<1x4x8xf32>
    return %logits : tensor<1x4x8xf32>
}
