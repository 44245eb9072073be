// RUN: ein-opt %s --ein-print-costs="func=matmul ops=true" -o /dev/null | FileCheck %s --check-prefix=MATMUL
// RUN: ein-opt %s --ein-print-costs="func=mix ops=true" -o /dev/null | FileCheck %s --check-prefix=MIX
// RUN: ein-opt %s --ein-print-costs="func=softplus ops=true" -o /dev/null | FileCheck %s --check-prefix=SOFTPLUS
// RUN: ein-opt %s --ein-print-costs="func=trig ops=true" -o /dev/null | FileCheck %s --check-prefix=TRIG
// RUN: ein-opt %s --ein-print-costs="func=erf ops=true" -o /dev/null | FileCheck %s --check-prefix=ERF
// RUN: ein-opt %s --ein-print-costs="func=dropout ops=true" -o /dev/null | FileCheck %s --check-prefix=DROPOUT
// RUN: not ein-opt %s --ein-print-costs -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
//
// The lecture's facts about FLOPs, from einc-generated @grad functions
// (test/passes/Inputs): B = batch = 4 rows, D = d = 8, one [D, D] matmul per
// layer, no bias, loss = sum of the output. One forward matmul costs
// 2·B·D·D = 512 FLOPs.
//
// Two layers, x an input: forward 2 matmuls; backward 3 (dW2 = h1ᵀ·dY,
// dh1 = dY·W2ᵀ, dW1 = xᵀ·dh1; x gets no gradient): backward/forward = 1.5.
// RUN: einc emit --stage=grad %S/Inputs/linear.ein --set layers=2 | ein-opt --ein-print-costs=func=grad -o /dev/null | FileCheck %s --check-prefix=L2
// L2:      model flops 2560
// L2-NEXT: model flops forward 1024
// L2-NEXT: model flops backward 1536
//
// Two layers, x a param: backward 4 matmuls (dx too): backward/forward = 2.0.
// RUN: einc emit --stage=grad %S/Inputs/linear-param-x.ein --set layers=2 | ein-opt --ein-print-costs=func=grad -o /dev/null | FileCheck %s --check-prefix=L2X
// L2X:      model flops 3072
// L2X-NEXT: model flops forward 1024
// L2X-NEXT: model flops backward 2048
//
// L = 3 layers, x an input: backward/forward = (2L − 1)/L = 5/3 = 2560/1536.
// RUN: einc emit --stage=grad %S/Inputs/linear.ein --set layers=3 | ein-opt --ein-print-costs=func=grad -o /dev/null | FileCheck %s --check-prefix=L3
// L3:      model flops 4096
// L3-NEXT: model flops forward 1536
// L3-NEXT: model flops backward 2560
//
// L = 8 layers: N = 8·D·D = 512 params, D_tokens = B = 4 rows;
// model flops / (N·B) = 11776 / 2048 = 5.75 = 2·(3L − 1)/L (not 6: the first
// layer's input gradient is never computed).
// RUN: einc emit --stage=grad %S/Inputs/linear.ein --set layers=8 | ein-opt --ein-print-costs=func=grad -o /dev/null | FileCheck %s --check-prefix=L8
// L8:      model flops 11776
// L8-NEXT: model flops forward 4096
// L8-NEXT: model flops backward 7680
// L8:      params 512
//
// The phases and layers of @grad's ops, per op (L = 2): the forward's two
// matmuls tagged by layer, then the backward's three, layer 1's first.
// RUN: einc emit --stage=grad %S/Inputs/linear.ein --set layers=2 | ein-opt --ein-print-costs="func=grad ops=true" -o /dev/null | FileCheck %s --check-prefix=L2OPS
// L2OPS: op [[#]] ein.contract contraction forward layer.0 flops 512 trans 0 read 384 write 128
// L2OPS: op [[#]] ein.contract contraction forward layer.1 flops 512 trans 0 read 384 write 128
// L2OPS: op [[#]] ein.reduce reduction forward - flops 32 trans 0 read 128 write 4
// L2OPS: op [[#]] ein.contract contraction backward layer.1 flops 512
// L2OPS: op [[#]] ein.contract contraction backward layer.1 flops 512
// L2OPS: op [[#]] ein.contract contraction backward layer.0 flops 512
// L2OPS-NOT: ein.contract
// L2OPS: flops forward 1056

// MISSING: error: ein-print-costs: no function @train_step

// One (4096×8192)·(8192×1024) matmul: 2·4096·8192·1024 = 68719476736 FLOPs;
// reads (4096·8192 + 8192·1024)·4 bytes, writes 4096·1024·4.
func.func @matmul(%a: tensor<4096x8192xf32> {ein.kind = "input", ein.name = "a"},
                  %b: tensor<8192x1024xf32> {ein.kind = "param", ein.name = "b"}) -> tensor<4096x1024xf32> {
  %c = ein.contract %a, %b batch [], [] contract [1], [0] : tensor<4096x8192xf32>, tensor<8192x1024xf32> -> tensor<4096x1024xf32> loc("model.ein":7:9)
  return %c : tensor<4096x1024xf32>
}
// MATMUL:      costs of @matmul
// MATMUL-NEXT: op 0 ein.contract contraction forward - flops 68719476736 trans 0 read 167772160 write 16777216
// MATMUL-NEXT: ops 1
// MATMUL-NEXT: flops forward 68719476736
// MATMUL-NEXT: flops backward 0
// MATMUL-NEXT: flops optimizer 0
// MATMUL-NEXT: model flops 68719476736
// MATMUL-NEXT: model flops forward 68719476736
// MATMUL-NEXT: model flops backward 0
// MATMUL-NEXT: transcendentals 0
// MATMUL-NEXT: bytes read 167772160
// MATMUL-NEXT: bytes written 16777216
// MATMUL-NEXT: params 8388608
// MATMUL-NEXT: param bytes 33554432
// MATMUL-NEXT: grad bytes 0
// MATMUL-NEXT: optimizer bytes 0
// MATMUL-NEXT: input bytes 134217728
// MATMUL:      peak bytes 184549376 at op 0 ein.contract at model.ein:7:9

// Kinds, transcendentals, views, element widths, phases and layers. Each
// transcendental op counts 1 FLOP and 1 transcendental per element; cast
// counts 0 FLOPs; reshape is a view (0 bytes); bf16 is 2 bytes, i1 1; only
// forward/backward contractions are model FLOPs.
// softplus: 1 FLOP and 1 transcendental per element (EinTranscendental);
// neg: 1 FLOP, no transcendental.
func.func @softplus(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>) {
  %s = ein.softplus %x : tensor<2x3xf32>
  %n = ein.neg %s : tensor<2x3xf32>
  return %n : tensor<2x3xf32>
}
// SOFTPLUS:      op 0 ein.softplus elementwise forward - flops 6 trans 6 read 24 write 24
// SOFTPLUS-NEXT: op 1 ein.neg elementwise forward - flops 6 trans 0 read 24 write 24

// sin, cos: 1 FLOP and 1 transcendental per element, as exp.
func.func @trig(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>) {
  %s = ein.sin %x : tensor<2x3xf32>
  %c = ein.cos %s : tensor<2x3xf32>
  return %c : tensor<2x3xf32>
}
// TRIG:      op 0 ein.sin elementwise forward - flops 6 trans 6 read 24 write 24
// TRIG-NEXT: op 1 ein.cos elementwise forward - flops 6 trans 6 read 24 write 24

// erf: 1 FLOP and 1 transcendental per element, as exp.
func.func @erf(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>) {
  %e = ein.erf %x : tensor<2x3xf32>
  return %e : tensor<2x3xf32>
}
// ERF: op 0 ein.erf elementwise forward - flops 6 trans 6 read 24 write 24

func.func @mix(%x: tensor<2x3xf32>, %h: tensor<2x3xbf16>, %w: tensor<3x3xf32>) -> (tensor<f32>) {
  %e = ein.exp %x : tensor<2x3xf32>
  %l = ein.log %e {ein.phase = "backward", ein.layer = "layer.1"} : tensor<2x3xf32>
  %t = ein.tanh %l : tensor<2x3xf32>
  %s = ein.sqrt %t : tensor<2x3xf32>
  %r = ein.rsqrt %s : tensor<2x3xf32>
  %c = ein.cast %h : tensor<2x3xbf16> -> tensor<2x3xf32>
  %p = ein.pow %r, %c : tensor<2x3xf32>
  %m = ein.cmp lt, %p, %x : tensor<2x3xf32> -> tensor<2x3xi1>
  %q = ein.select %m, %p, %x : tensor<2x3xi1>, tensor<2x3xf32>
  %v = ein.reshape %q : tensor<2x3xf32> -> tensor<6xf32>
  %b = ein.contract %q, %w batch [], [] contract [1], [0] : tensor<2x3xf32>, tensor<3x3xf32> -> tensor<2x3xf32>
  %o = ein.contract %b, %w batch [], [] contract [1], [0] {ein.phase = "optimizer"} : tensor<2x3xf32>, tensor<3x3xf32> -> tensor<2x3xf32>
  %n = ein.reduce max %v dims [0] : tensor<6xf32> -> tensor<f32>
  return %n : tensor<f32>
}
// MIX:      op 0 ein.exp elementwise forward - flops 6 trans 6 read 24 write 24
// MIX-NEXT: op 1 ein.log elementwise backward layer.1 flops 6 trans 6 read 24 write 24
// MIX-NEXT: op 2 ein.tanh elementwise forward - flops 6 trans 6 read 24 write 24
// MIX-NEXT: op 3 ein.sqrt elementwise forward - flops 6 trans 6 read 24 write 24
// MIX-NEXT: op 4 ein.rsqrt elementwise forward - flops 6 trans 6 read 24 write 24
// MIX-NEXT: op 5 ein.cast elementwise forward - flops 0 trans 0 read 12 write 24
// MIX-NEXT: op 6 ein.pow elementwise forward - flops 6 trans 6 read 48 write 24
// MIX-NEXT: op 7 ein.cmp elementwise forward - flops 6 trans 0 read 48 write 6
// MIX-NEXT: op 8 ein.select elementwise forward - flops 6 trans 0 read 54 write 24
// MIX-NEXT: op 9 ein.reshape data forward - flops 0 trans 0 read 0 write 0
// MIX-NEXT: op 10 ein.contract contraction forward - flops 36 trans 0 read 60 write 24
// MIX-NEXT: op 11 ein.contract contraction optimizer - flops 36 trans 0 read 60 write 24
// MIX-NEXT: op 12 ein.reduce reduction forward - flops 6 trans 0 read 24 write 4
// MIX-NEXT: ops 13
// MIX-NEXT: flops forward 84
// MIX-NEXT: flops backward 6
// MIX-NEXT: flops optimizer 36
// MIX-NEXT: model flops 36
// MIX-NEXT: model flops forward 36
// MIX-NEXT: model flops backward 0
// MIX-NEXT: transcendentals 36

// dropout: 4 FLOPs per element, its expansion's in @train_step
// (passes/Dropout.cpp: the stochastic round, the keep factor's sub and mul,
// x times the factor); the integer hash inside the round counts as 1. Its
// kind reads "data" (it has no Elementwise trait: it is expanded or erased
// before fusion).
func.func @dropout(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>) {
  %d = ein.dropout %x {p = 1.000000e-01 : f64, site = 0 : i64} : tensor<2x3xf32>
  return %d : tensor<2x3xf32>
}
// DROPOUT: op 0 ein.dropout data forward - flops 24 trans 0 read 24 write 24
