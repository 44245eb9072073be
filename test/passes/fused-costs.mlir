// RUN: ein-opt %s --pass-pipeline='builtin.module(func.func(ein-fuse-elementwise), ein-print-costs{func=f ops=true fused=true})' -o /dev/null | FileCheck %s --check-prefix=FUSED
// RUN: ein-opt %s --ein-print-costs="func=f ops=true" -o /dev/null | FileCheck %s --check-prefix=UNFUSED
//
// The byte and memory ledgers after fusion (applyFusionToCosts,
// fusedValues). One group {sub, tanh, add}; both broadcasts are read in place
// (rows: a leading block, bias: a trailing block).
//
// Unfused bytes: broadcast row 16 + 128, broadcast bias 32 + 128, sub 256 +
// 128, tanh 128 + 128, add 256 + 128: 1328. Fused: one kernel reading x
// (128), row (16) and bias (32) and writing the result (128): 304, shared
// among sub / tanh / add by their unfused bytes 384 / 256 / 384 (reads 66 /
// 44 / 66, writes 48 / 32 / 48); the broadcasts move nothing.
// FUSED: fusion 1 kernels 3 ops 2 broadcasts in place, 0 epilogues reading 0 bytes from cache, bytes 1328 -> 304
// FUSED: op 0 ein.broadcast {{.*}} read 0 write 0 live 304
// FUSED: op 1 ein.broadcast {{.*}} read 0 write 0 live 304
// FUSED: op 2 ein.sub {{.*}} read 66 write 48 live 304
// FUSED: op 3 ein.tanh {{.*}} read 44 write 32 live 304
// FUSED: op 4 ein.add {{.*}} read 66 write 48 live 304
// FUSED: bytes read 176
// FUSED: bytes written 128
//
// Memory: x, row, bias and the result (304 bytes) are live throughout; the
// broadcasts are views of row and bias, and a and t stay in registers, so
// nothing else is ever live. Unfused, the two broadcasts and a, t are
// materialised: 304 + 3 × 128 at the sub and at the tanh.
// FUSED: peak bytes 304 at op 0 ein.broadcast
// UNFUSED: bytes read 688
// UNFUSED: bytes written 640
// UNFUSED: peak bytes 688 at op 2 ein.sub
func.func @f(%x: tensor<4x8xf32>, %row: tensor<4xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf32> {
  %rb = ein.broadcast %row dims [0] : tensor<4xf32> -> tensor<4x8xf32>
  %bb = ein.broadcast %bias dims [1] : tensor<8xf32> -> tensor<4x8xf32>
  %a = ein.sub %x, %rb : tensor<4x8xf32>
  %t = ein.tanh %a : tensor<4x8xf32>
  %b = ein.add %t, %bb : tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}
