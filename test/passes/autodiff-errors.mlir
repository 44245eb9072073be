// RUN: ein-opt %s -split-input-file --ein-autodiff -verify-diagnostics
// The diagnostics of ein-autodiff.

// expected-error @+1 {{ein-autodiff: no function @forward to differentiate}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{ein-autodiff: result 0 of @forward must be the loss, a scalar float tensor, got 'tensor<4xf32>'}}
func.func @forward(%w: tensor<4xf32> {ein.kind = "param", ein.name = "w"}) -> tensor<4xf32> {
  %y = ein.exp %w : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{ein-autodiff: result 0 of @forward must be the loss, a scalar float tensor, got 'tensor<i32>'}}
func.func @forward(%w: tensor<i32> {ein.kind = "param", ein.name = "w"}) -> tensor<i32> {
  return %w : tensor<i32>
}

// -----

// expected-error @+1 {{ein-autodiff: result 0 of @forward must be the loss, a scalar float tensor, but it has no results}}
func.func @forward(%w: tensor<f32> {ein.kind = "param", ein.name = "w"}) {
  return
}

// -----

// expected-error @+1 {{ein-autodiff: a symbol @grad already exists}}
func.func @forward(%w: tensor<f32> {ein.kind = "param", ein.name = "w"}) -> tensor<f32> {
  return %w : tensor<f32>
}
func.func @grad() {
  return
}
