// RUN: ein-opt %s -split-input-file --ein-decode-step -verify-diagnostics
// What ein-decode-step cannot decode, at the op that says so (the sampler
// then recomputes the window: never a wrong answer).

// Attention whose scores meet no causal mask: every position reads them all.
func.func @forward(%idx: tensor<1x4xi32> {ein.axes = ["batch", "ctx"], ein.kind = "input", ein.name = "idx"},
                   %wte: tensor<8x2xf32> {ein.kind = "param", ein.name = "wte"}) -> (tensor<1x4x8xf32> {ein.name = "logits"}) {
  %x = ein.gather %wte, %idx : tensor<8x2xf32>, tensor<1x4xi32> -> tensor<1x4x2xf32>
  // expected-error @+1 {{ein-decode-step: attention with no causal mask (causal(att, "t s")): ein.contract}}
  %att = ein.contract %x, %x batch [0], [0] contract [2], [2] : tensor<1x4x2xf32>, tensor<1x4x2xf32> -> tensor<1x4x4xf32>
  %e = ein.exp %att : tensor<1x4x4xf32>
  %y = ein.contract %e, %x batch [0], [0] contract [2], [1] : tensor<1x4x4xf32>, tensor<1x4x2xf32> -> tensor<1x4x2xf32>
  %logits = ein.contract %y, %wte batch [], [] contract [2], [1] : tensor<1x4x2xf32>, tensor<8x2xf32> -> tensor<1x4x8xf32>
  return %logits : tensor<1x4x8xf32>
}

// -----

// A mask the other way round (s < t masked: each position reads the later
// ones) is no causal mask either.
func.func @forward(%idx: tensor<1x4xi32> {ein.axes = ["batch", "ctx"], ein.kind = "input", ein.name = "idx"},
                   %wte: tensor<8x2xf32> {ein.kind = "param", ein.name = "wte"}) -> (tensor<1x4x8xf32> {ein.name = "logits"}) {
  %x = ein.gather %wte, %idx : tensor<8x2xf32>, tensor<1x4xi32> -> tensor<1x4x2xf32>
  %q = ein.exp %x : tensor<1x4x2xf32>
  %att = ein.contract %q, %x batch [0], [0] contract [2], [2] : tensor<1x4x2xf32>, tensor<1x4x2xf32> -> tensor<1x4x4xf32>
  %t = ein.iota dim 1 : tensor<1x4x4xi32>
  %s = ein.iota dim 2 : tensor<1x4x4xi32>
  %earlier = ein.cmp lt, %s, %t : tensor<1x4x4xi32> -> tensor<1x4x4xi1>
  %c = ein.constant dense<0xFF800000> : tensor<f32>
  %ninf = ein.broadcast %c dims [] : tensor<f32> -> tensor<1x4x4xf32>
  %masked = ein.select %earlier, %ninf, %att : tensor<1x4x4xi1>, tensor<1x4x4xf32>
  // expected-error @+1 {{ein-decode-step: a contraction over time that is not attention: ein.contract}}
  %y = ein.contract %masked, %x batch [0], [0] contract [2], [1] : tensor<1x4x4xf32>, tensor<1x4x2xf32> -> tensor<1x4x2xf32>
  %logits = ein.contract %y, %wte batch [], [] contract [2], [1] : tensor<1x4x2xf32>, tensor<8x2xf32> -> tensor<1x4x8xf32>
  return %logits : tensor<1x4x8xf32>
}

// -----

// A mean over the window: position t reads every position.
func.func @forward(%idx: tensor<1x4xi32> {ein.axes = ["batch", "ctx"], ein.kind = "input", ein.name = "idx"},
                   %wte: tensor<8x2xf32> {ein.kind = "param", ein.name = "wte"}) -> (tensor<1x4x8xf32> {ein.name = "logits"}) {
  %x = ein.gather %wte, %idx : tensor<8x2xf32>, tensor<1x4xi32> -> tensor<1x4x2xf32>
  // expected-error @+1 {{ein-decode-step: a reduction over time: ein.reduce}}
  %sum = ein.reduce sum %x dims [1] : tensor<1x4x2xf32> -> tensor<1x2xf32>
  %all = ein.broadcast %sum dims [0, 2] : tensor<1x2xf32> -> tensor<1x4x2xf32>
  %y = ein.add %x, %all : tensor<1x4x2xf32>
  %logits = ein.contract %y, %wte batch [], [] contract [2], [1] : tensor<1x4x2xf32>, tensor<8x2xf32> -> tensor<1x4x8xf32>
  return %logits : tensor<1x4x8xf32>
}

// -----

// expected-error @+1 {{ein-decode-step: @forward has no `logits` output}}
func.func @forward(%idx: tensor<1x4xi32> {ein.axes = ["batch", "ctx"], ein.kind = "input", ein.name = "idx"},
                   %wte: tensor<8x2xf32> {ein.kind = "param", ein.name = "wte"}) -> tensor<1x4x2xf32> {
  %x = ein.gather %wte, %idx : tensor<8x2xf32>, tensor<1x4xi32> -> tensor<1x4x2xf32>
  return %x : tensor<1x4x2xf32>
}
