// RUN: ein-opt %s --ein-print-costs="func=live ops=true" -o /dev/null | FileCheck %s --check-prefix=LIVE
// RUN: ein-opt %s --ein-print-costs="func=saved" -o /dev/null | FileCheck %s --check-prefix=SAVED
//
// Activations saved for backward in an L-layer linear+ReLU net (B = 4 rows,
// D = 8, no bias; test/passes/Inputs/linear-relu.ein). relu(z) = max(z, 0)
// against a constant: its gradient reads the output h_l (dY where h_l > 0),
// which layer l + 1's weight gradient reads too; the broadcast zero is a
// constant, not an activation. So L values of B·D·4 = 128 bytes, the
// lecture's count. The input x (read by layer 0's weight gradient) is an
// argument: it is ledgered under inputs and reported as "saved input bytes",
// not in the activations.
// RUN: einc emit --stage=grad %S/Inputs/linear-relu.ein --set layers=1 | ein-opt --ein-print-costs=func=grad -o /dev/null | FileCheck %s --check-prefix=RELU1
// RELU1: input bytes 128
// RELU1-NEXT: activation bytes 128 in 1 values
// RELU1-NEXT: saved input bytes 128
// RUN: einc emit --stage=grad %S/Inputs/linear-relu.ein --set layers=3 | ein-opt --ein-print-costs=func=grad -o /dev/null | FileCheck %s --check-prefix=RELU3
// RELU3: activation bytes 384 in 3 values
// RELU3-NEXT: saved input bytes 128
// RUN: einc emit --stage=grad %S/Inputs/linear-relu.ein --set layers=8 | ein-opt --ein-print-costs=func=grad -o /dev/null | FileCheck %s --check-prefix=RELU8
// RELU8: activation bytes 1024 in 8 values
//
// Without ReLU only h_1 … h_{L−1} are saved: L = 2 saves h_1, one B×D.
// RUN: einc emit --stage=grad %S/Inputs/linear.ein --set layers=2 | ein-opt --ein-print-costs=func=grad -o /dev/null | FileCheck %s --check-prefix=LIN2
// LIN2: params 128
// LIN2-NEXT: param bytes 512
// LIN2-NEXT: grad bytes 512
// LIN2-NEXT: optimizer bytes 0
// LIN2-NEXT: input bytes 128
// LIN2-NEXT: activation bytes 128 in 1 values
// LIN2-NEXT: saved input bytes 128
//
// The training step (AdamW, the default): optimizer state = m and v, 2 ×
// param bytes; @train_step returns new params, so grad bytes = one
// gradient per param = param bytes. The phases survive canonicalize and CSE,
// so the activations are the same as @grad's.
// RUN: einc emit --stage=step %S/Inputs/linear.ein --set layers=2 | ein-opt --ein-print-costs -o /dev/null | FileCheck %s --check-prefix=ADAMW
// ADAMW: param bytes 512
// ADAMW-NEXT: grad bytes 512
// ADAMW-NEXT: optimizer bytes 1024
// ADAMW-NEXT: input bytes 128
// ADAMW-NEXT: activation bytes 128 in 1 values
// ADAMW: peak bytes {{[0-9]+}} at op {{[0-9]+}} ein.
//
// Plain SGD keeps no state.
// RUN: einc emit --stage=step %S/Inputs/linear.ein --set optimizer=sgd --set momentum=0 | ein-opt --ein-print-costs -o /dev/null | FileCheck %s --check-prefix=SGD
// SGD: param bytes 512
// SGD-NEXT: grad bytes 512
// SGD-NEXT: optimizer bytes 0

// Liveness: the arguments (16 + 16) and the returned values (%s: 4, and %a
// through its reshape %r: 16) are live throughout: 52 bytes. Every other
// value lives from its defining op to its last use, both included; a rank-0
// constant counts; a reshape is a view that extends its operand's life; an
// unused result lives at its op only.
func.func @live(%x: tensor<4xf32> {ein.kind = "input", ein.name = "x"},
                %w: tensor<4xf32> {ein.kind = "param", ein.name = "w"}) -> (tensor<f32>, tensor<2x2xf32>) {
  %c = ein.constant dense<2.0> : tensor<f32>
  %b = ein.broadcast %c dims [] : tensor<f32> -> tensor<4xf32> loc("m.ein":3:7)
  %a = ein.mul %x, %b : tensor<4xf32>
  %r = ein.reshape %a : tensor<4xf32> -> tensor<2x2xf32>
  %d = ein.add %a, %w : tensor<4xf32>
  %s = ein.reduce sum %x dims [0] : tensor<4xf32> -> tensor<f32>
  return %s, %r : tensor<f32>, tensor<2x2xf32>
}
// LIVE:      op 0 ein.constant data forward - flops 0 trans 0 read 0 write 4 live 56
// LIVE-NEXT: op 1 ein.broadcast data forward - flops 0 trans 0 read 4 write 16 live 72
// LIVE-NEXT: op 2 ein.mul elementwise forward - flops 4 trans 0 read 32 write 16 live 68
// LIVE-NEXT: op 3 ein.reshape data forward - flops 0 trans 0 read 0 write 0 live 52
// LIVE-NEXT: op 4 ein.add elementwise forward - flops 4 trans 0 read 32 write 16 live 68
// LIVE-NEXT: op 5 ein.reduce reduction forward - flops 4 trans 0 read 16 write 4 live 52
// LIVE:      params 4
// LIVE-NEXT: param bytes 16
// LIVE-NEXT: grad bytes 0
// LIVE-NEXT: optimizer bytes 0
// LIVE-NEXT: input bytes 16
// LIVE-NEXT: activation bytes 0 in 0 values
// LIVE-NEXT: saved input bytes 0
// LIVE-NEXT: peak bytes 72 at op 1 ein.broadcast at m.ein:3:7

// Saved for backward: the distinct forward values (constants and arguments
// aside) a backward op reads; a reshape counts as its operand (%z once).
func.func @saved(%x: tensor<4xf32> {ein.kind = "input", ein.name = "x"},
                 %w: tensor<4xf32> {ein.kind = "param", ein.name = "w"},
                 %m: tensor<4xf32> {ein.kind = "opt_state", ein.name = "w.m"})
    -> (tensor<f32> {ein.name = "loss"}, tensor<4xf32> {ein.kind = "grad", ein.name = "w"}) {
  %c = ein.constant {ein.phase = "forward"} dense<1.0> : tensor<f32>
  %y = ein.mul %x, %w {ein.phase = "forward"} : tensor<4xf32>
  %z = ein.exp %y {ein.phase = "forward"} : tensor<4xf32>
  %v = ein.reshape %z {ein.phase = "forward"} : tensor<4xf32> -> tensor<2x2xf32>
  %u = ein.reshape %v {ein.phase = "forward"} : tensor<2x2xf32> -> tensor<4xf32>
  %l = ein.reduce sum %z dims [0] {ein.phase = "forward"} : tensor<4xf32> -> tensor<f32>
  %one = ein.broadcast %c dims [] {ein.phase = "backward"} : tensor<f32> -> tensor<4xf32>
  %g1 = ein.mul %one, %u {ein.phase = "backward"} : tensor<4xf32>
  %g2 = ein.mul %g1, %z {ein.phase = "backward"} : tensor<4xf32>
  %g3 = ein.mul %g2, %y {ein.phase = "backward"} : tensor<4xf32>
  %g = ein.mul %g3, %x {ein.phase = "backward"} : tensor<4xf32>
  return %l, %g : tensor<f32>, tensor<4xf32>
}
// SAVED:      params 4
// SAVED-NEXT: param bytes 16
// SAVED-NEXT: grad bytes 16
// SAVED-NEXT: optimizer bytes 16
// SAVED-NEXT: input bytes 16
// SAVED-NEXT: activation bytes 32 in 2 values
// SAVED-NEXT: saved input bytes 16
