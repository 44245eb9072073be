// RUN: rm -rf %t && split-file %s %t
// RUN: ein-opt %t/policy.mlir --ein-mixed-precision=policy=fp8 -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/missing.mlir --ein-mixed-precision="policy=bf16-mixed funcs=logits" -verify-diagnostics -o /dev/null

// ein-mixed-precision's diagnostics: one error naming what is valid.

//--- policy.mlir
// expected-error @+1 {{ein-mixed-precision: unknown policy 'fp8'; expected one of: fp32 bf16-mixed fp16-mixed bf16 (mixed: bf16-mixed)}}
module {
  func.func @forward(%w: tensor<3xf32> {ein.kind = "param", ein.name = "w"}) -> tensor<f32> {
    %l = ein.reduce sum %w dims [0] {axes = []} : tensor<3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

//--- missing.mlir
// expected-error @+1 {{ein-mixed-precision: no function @logits}}
module {
  func.func @forward(%w: tensor<3xf32> {ein.kind = "param", ein.name = "w"}) -> tensor<f32> {
    %l = ein.reduce sum %w dims [0] {axes = []} : tensor<3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
