// Diagnostics of ein-train-step: bad options, an unknown optimizer, a
// missing or malformed @grad. Each case is its own file (split-file), run
// with its own options.
// RUN: rm -rf %t && split-file %s %t
// RUN: not ein-opt %t/ok.mlir --ein-train-step=beta1=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BETA1-TEXT
// RUN: ein-opt %t/beta1.mlir --ein-train-step=beta1=1 -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/beta2.mlir --ein-train-step=beta2=-0.1 -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/eps.mlir --ein-train-step=eps=-1e-08 -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/wd.mlir --ein-train-step=weight-decay=-0.5 -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/clip.mlir --ein-train-step=clip=-1 -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/decay.mlir --ein-train-step=decay=vectors -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/momentum.mlir --ein-train-step="optimizer=sgd momentum=-0.9" -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/optimizer.mlir --ein-train-step=optimizer=lion -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/nograd.mlir --ein-train-step -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/othername.mlir --ein-train-step=grad=g2 -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/results.mlir --ein-train-step -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/types.mlir --ein-train-step -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/exists.mlir --ein-train-step -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/apply-exists.mlir --ein-train-step -verify-diagnostics -o /dev/null
// RUN: ein-opt %t/apply-same.mlir --ein-train-step="apply=train_step" -verify-diagnostics -o /dev/null

// A bad option fails the pass (and ein-opt) with the message, not a crash.
// BETA1-TEXT: error: ein-train-step: beta1 must be in [0, 1), got 1

//--- ok.mlir
module {
  func.func @grad(%w: tensor<4xf32> {ein.kind = "param", ein.name = "w"})
      -> (tensor<f32> {ein.name = "loss"}, tensor<4xf32> {ein.kind = "grad", ein.name = "w"}) {
    %l = ein.reduce sum %w dims [0] : tensor<4xf32> -> tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

//--- beta1.mlir
// expected-error @+1 {{ein-train-step: beta1 must be in [0, 1), got 1}}
module {
}

//--- beta2.mlir
// expected-error @+1 {{ein-train-step: beta2 must be in [0, 1), got -0.1}}
module {
}

//--- eps.mlir
// expected-error @+1 {{ein-train-step: eps must be >= 0, got -1e-08}}
module {
}

//--- wd.mlir
// expected-error @+1 {{ein-train-step: weight-decay must be >= 0, got -0.5}}
module {
}

//--- clip.mlir
// expected-error @+1 {{ein-train-step: clip must be a finite number >= 0, got -1}}
module {
}

//--- decay.mlir
// expected-error @+1 {{ein-train-step: decay must be 'matrices' or 'all', got 'vectors'}}
module {
}

//--- momentum.mlir
// expected-error @+1 {{ein-train-step: momentum must be >= 0, got -0.9}}
module {
}

//--- optimizer.mlir
// expected-error @+1 {{ein-train-step: unknown optimizer 'lion' (valid: adamw, adam, sgd, adagrad)}}
module {
}

//--- nograd.mlir
// expected-error @+1 {{ein-train-step: no function @grad to build @train_step from}}
module {
  func.func @forward(%w: tensor<4xf32> {ein.kind = "param", ein.name = "w"}) -> tensor<4xf32> {
    return %w : tensor<4xf32>
  }
}

//--- othername.mlir
// The `grad` option names the function to read.
// expected-error @+1 {{ein-train-step: no function @g2 to build @train_step from}}
module {
  func.func @grad(%w: tensor<4xf32> {ein.kind = "param", ein.name = "w"})
      -> (tensor<f32> {ein.name = "loss"}, tensor<4xf32> {ein.kind = "grad", ein.name = "w"}) {
    %l = ein.reduce sum %w dims [0] : tensor<4xf32> -> tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

//--- results.mlir
module {
  // expected-error @+1 {{ein-train-step: @grad returns 1 values, expected 2 (the loss and one gradient per param)}}
  func.func @grad(%w: tensor<4xf32> {ein.kind = "param", ein.name = "w"})
      -> (tensor<f32> {ein.name = "loss"}) {
    %l = ein.reduce sum %w dims [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

//--- types.mlir
module {
  // expected-error @+1 {{ein-train-step: the gradient of 'w' has type 'tensor<2x2xf32>', expected the param's type 'tensor<4xf32>'}}
  func.func @grad(%w: tensor<4xf32> {ein.kind = "param", ein.name = "w"})
      -> (tensor<f32> {ein.name = "loss"}, tensor<2x2xf32> {ein.kind = "grad", ein.name = "w"}) {
    %l = ein.reduce sum %w dims [0] : tensor<4xf32> -> tensor<f32>
    %g = ein.reshape %w : tensor<4xf32> -> tensor<2x2xf32>
    return %l, %g : tensor<f32>, tensor<2x2xf32>
  }
}

//--- exists.mlir
module {
  // expected-error @+1 {{ein-train-step: a symbol @train_step already exists}}
  func.func @grad(%w: tensor<4xf32> {ein.kind = "param", ein.name = "w"})
      -> (tensor<f32> {ein.name = "loss"}, tensor<4xf32> {ein.kind = "grad", ein.name = "w"}) {
    %l = ein.reduce sum %w dims [0] : tensor<4xf32> -> tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
  func.func @train_step() {
    return
  }
}

//--- apply-exists.mlir
module {
  // expected-error @+1 {{ein-train-step: a symbol @apply_update already exists}}
  func.func @grad(%w: tensor<4xf32> {ein.kind = "param", ein.name = "w"})
      -> (tensor<f32> {ein.name = "loss"}, tensor<4xf32> {ein.kind = "grad", ein.name = "w"}) {
    %l = ein.reduce sum %w dims [0] : tensor<4xf32> -> tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
  func.func @apply_update() {
    return
  }
}

//--- apply-same.mlir
module {
  // expected-error @+1 {{ein-train-step: a symbol @train_step already exists}}
  func.func @grad(%w: tensor<4xf32> {ein.kind = "param", ein.name = "w"})
      -> (tensor<f32> {ein.name = "loss"}, tensor<4xf32> {ein.kind = "grad", ein.name = "w"}) {
    %l = ein.reduce sum %w dims [0] : tensor<4xf32> -> tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}
