// RUN: ein-opt %s --allow-unregistered-dialect --pass-pipeline='builtin.module(func.func(ein-fuse-elementwise))' -split-input-file -verify-diagnostics

// The pass groups straight-line code: a function of several blocks is an
// error, not a silent skip.
// expected-error @+1 {{ein-fuse-elementwise: expected a function with one block}}
func.func @two_blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  "test.br"()[^bb1] : () -> ()
^bb1:
  return %x : tensor<4xf32>
}

// -----

// A declaration has no body: nothing to do, no error.
func.func private @declared(%x: tensor<4xf32>) -> tensor<4xf32>
