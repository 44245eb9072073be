//===- GradCheckBoundTest.cpp - The gradient check's bound and bf16 -------===//
//
// runtime/core/GradCheck.h: the floor of the relative error grows with the loss,
// so a true zero beside a large loss passes on finite-difference noise while
// a wrong gradient still fails; bf16/f16 models are checked in float64
// without rounding.
//
//===----------------------------------------------------------------------===//
#include "Compile.h"
#include "test/unit/StatusTesting.h"

#include "runtime/core/GradCheck.h"
#include "runtime/core/Init.h"

#include <cfloat>
#include <gtest/gtest.h>

using namespace einc::testing;

namespace {

struct Checked {
  bool ok = false;
  std::string error;
  einrt::GradCheckReport report;
};

/// Random params and inputs on `grad`, copied to `forward`, and the check
/// with `options`.
einrt::Expected<einrt::GradCheckReport> runCheck(einrt::Executor &forward, einrt::Executor &grad,
                                                 const einrt::GradCheckOptions &options,
                                                 uint64_t seed) {
  EINRT_TRY(einrt::initParams(grad, seed));
  EINRT_TRY(einrt::fillRandomInputs(grad, seed + 7, 8));
  for (size_t i = 0; i < grad.argumentCount(); ++i) {
    einrt::Expected<std::vector<double>> values = grad.read(size_t(grad.program().arguments[i]));
    if (!values.ok())
      return values.takeStatus();
    EINRT_TRY(forward.setArgument(i, values->data(), values->size()));
  }
  return einrt::gradCheck(forward, grad, options);
}

/// Compiles `m`'s @forward and @grad (which `m` must hold) in float64, sets
/// random params and inputs, and runs the check with `options`.
Checked check(Compiled &m, const einrt::GradCheckOptions &options, uint64_t seed = 1) {
  Checked c;
  auto forward = executorFor(m, "forward", einrt::Precision::F64, c.error);
  auto grad = executorFor(m, "grad", einrt::Precision::F64, c.error);
  if (!forward || !grad)
    return c;
  einrt::Expected<einrt::GradCheckReport> report = runCheck(*forward, *grad, options, seed);
  if (!report.ok()) {
    c.error = ::testing::PrintToString(report.status());
    return c;
  }
  c.ok = true;
  c.report = report.take();
  // The executors round bf16/f16 again after the check.
  EXPECT_TRUE(forward->roundsLowPrecision() && grad->roundsLowPrecision());
  return c;
}

Checked checkModel(const std::string &source, const einrt::GradCheckOptions &options,
                   uint64_t seed = 1) {
  Compiled m = compileModel(source, {});
  if (!m.module || !addGrad(m)) {
    Checked c;
    c.error = m.errors;
    return c;
  }
  return check(m, options, seed);
}

// Large losses, each with gradients that are (or nearly are) zero: a bias a
// softmax is invariant to, probabilities that vanish, a relu that is off, a
// bias a layer norm removes.
struct Model {
  const char *name;
  const char *source;
};
const Model kLargeLosses[] = {
    {"cross_entropy_x100", R"(
dim b = 64
dim v = 32
input t: i32[b]
param w: [b, v] ~ normal(std=3)
param s: [b] ~ normal(std=1)
minimize cross_entropy(w * 10 + s, t) * 100
)"},
    {"sum_of_squares", R"(
dim n = 64
dim m = 32
input x: f32[n, m]
param w: [n, m] ~ normal(std=3)
param b: [m] ~ normal(std=1)
minimize reduce((x * w + b) ** 2, "n m -> ", sum)
)"},
    {"scaled_mean_dead_relu", R"(
dim n = 16
dim m = 8
input x: f32[n, m]
param w: [m] ~ normal(std=1)
param z: [n] ~ zeros
minimize reduce(tanh(x * w) + relu(z - 1), "n m -> ", mean) * 10000
)"},
    {"layernorm_shift_x100", R"(
dim b = 8
dim d = 64
input x: f32[b, d]
param g: [d] ~ ones
param s: [d] ~ normal(std=1)
fn layernorm(x: [..., d], g: [d], b: [d]) -> [..., d] {
  mu = reduce(x, "... d -> ...", mean)
  xc = x - mu
  var = reduce(xc * xc, "... d -> ...", mean)
  return xc / sqrt(var + 1e-5) * g + b
}
minimize reduce(layernorm(x * 30 + s, g, s) ** 2, "b d -> ", sum) * 100
)"},
};

TEST(GradCheckBound, LargeLossesPass) {
  bool oldBoundFails = false;
  for (const Model &model : kLargeLosses) {
    for (uint64_t seed : {1, 2, 3}) {
      einrt::GradCheckOptions options;
      options.samplesPerParam = 64;
      options.seed = seed;
      Checked c = checkModel(model.source, options, seed);
      ASSERT_TRUE(c.ok) << model.name << ": " << c.error;
      const einrt::GradCheckEntry &w = c.report.worst;
      EXPECT_TRUE(c.report.passed)
          << model.name << " seed " << seed << ": " << w.param << "[" << w.index << "] analytic "
          << w.analytic << " numeric " << w.numeric << " |loss| " << w.loss;
      EXPECT_GT(w.loss, 100) << model.name;
      // The floor used is the one GradCheck.h derives.
      EXPECT_DOUBLE_EQ(w.floor, std::max(1e-4, options.noiseFactor * DBL_EPSILON * w.loss / 1e-4 /
                                                   options.tolerance));
      // The previous bound (a floor of 1e-4, whatever the loss).
      options.noiseFactor = 0;
      Checked old = checkModel(model.source, options, seed);
      ASSERT_TRUE(old.ok) << old.error;
      oldBoundFails |= !old.report.passed;
    }
  }
  EXPECT_TRUE(oldBoundFails) << "none of the models needs the loss-scaled floor";
}

// The noise the floor allows for, measured: a floor far above every gradient
// makes the relative error |analytic − numeric| / floor, so the worst entry
// is the largest absolute difference (noise, and the small relative errors
// of large gradients). It was 8.4 ε|L|/h at most (the layer norm; 0.8 for
// cross entropy, 3.3 for the sums): a third of noiseFactor, 32.
TEST(GradCheckBound, MeasuredNoiseIsWellBelowTheAllowance) {
  double worstRatio = 0;
  for (const Model &model : kLargeLosses) {
    for (uint64_t seed : {1, 2, 3}) {
      einrt::GradCheckOptions options;
      options.samplesPerParam = 64;
      options.seed = seed;
      options.noiseFactor = 0;
      options.floor = 1e30;
      Checked c = checkModel(model.source, options, seed);
      ASSERT_TRUE(c.ok) << c.error;
      double difference = c.report.worst.relativeError * 1e30;
      double ratio = difference / (DBL_EPSILON * c.report.worst.loss / options.step);
      worstRatio = std::max(worstRatio, ratio);
    }
  }
  EXPECT_LT(worstRatio, einrt::GradCheckOptions().noiseFactor / 3)
      << "measured |analytic - numeric| up to " << worstRatio << " eps |loss| / h";
  std::printf("largest measured |analytic - numeric| = %.3g eps |loss| / h\n", worstRatio);
}

// A large loss, L = 1000 · Σ w² + Σ z · 0 (|L| ≈ 2.6e5 at n = 256), with a
// @grad written by hand: `scale` multiplies dL/dw (1 is right) and `dz` is
// what it returns for z (0 is right).
std::string handWritten(const char *scale, const char *dz) {
  return std::string(R"(
module {
  func.func @forward(%w: tensor<256xf32> {ein.kind = "param", ein.name = "w", ein.init = {kind = "normal", std = 1.0 : f64}},
                     %z: tensor<4xf32> {ein.kind = "param", ein.name = "z", ein.init = {kind = "normal", std = 1.0 : f64}}) -> tensor<f32> {
    %k = ein.constant dense<1000.0> : tensor<256xf32>
    %sq = ein.mul %w, %w : tensor<256xf32>
    %t = ein.mul %sq, %k : tensor<256xf32>
    %zero = ein.constant dense<0.0> : tensor<4xf32>
    %zz = ein.mul %z, %zero : tensor<4xf32>
    %a = ein.reduce sum %t dims [0] : tensor<256xf32> -> tensor<f32>
    %b = ein.reduce sum %zz dims [0] : tensor<4xf32> -> tensor<f32>
    %l = ein.add %a, %b : tensor<f32>
    return %l : tensor<f32>
  }
  func.func @grad(%w: tensor<256xf32> {ein.kind = "param", ein.name = "w", ein.init = {kind = "normal", std = 1.0 : f64}},
                  %z: tensor<4xf32> {ein.kind = "param", ein.name = "z", ein.init = {kind = "normal", std = 1.0 : f64}}) -> (tensor<f32>, tensor<256xf32>, tensor<4xf32>) {
    %k = ein.constant dense<1000.0> : tensor<256xf32>
    %sq = ein.mul %w, %w : tensor<256xf32>
    %t = ein.mul %sq, %k : tensor<256xf32>
    %zero = ein.constant dense<0.0> : tensor<4xf32>
    %zz = ein.mul %z, %zero : tensor<4xf32>
    %a = ein.reduce sum %t dims [0] : tensor<256xf32> -> tensor<f32>
    %b = ein.reduce sum %zz dims [0] : tensor<4xf32> -> tensor<f32>
    %l = ein.add %a, %b : tensor<f32>
    %c = ein.constant dense<)") +
         scale + R"(> : tensor<256xf32>
    %w2 = ein.mul %w, %c : tensor<256xf32>
    %dw = ein.mul %w2, %k : tensor<256xf32>
    %dz = ein.constant dense<)" +
         dz + R"(> : tensor<4xf32>
    return %l, %dw, %dz : tensor<f32>, tensor<256xf32>, tensor<4xf32>
  }
}
)";
}

Checked checkHandWritten(const char *scale, const char *dz) {
  Compiled m = parseMLIR(handWritten(scale, dz));
  if (!m.module) {
    Checked c;
    c.error = m.errors;
    return c;
  }
  einrt::GradCheckOptions options;
  options.samplesPerParam = 32;
  return check(m, options);
}

TEST(GradCheckBound, WrongGradientsBesideALargeLossFail) {
  Checked right = checkHandWritten("2.0", "0.0");
  ASSERT_TRUE(right.ok) << right.error;
  EXPECT_GT(right.report.worst.loss, 1e5);
  EXPECT_TRUE(right.report.passed)
      << right.report.worst.param << " " << right.report.worst.relativeError;
  // dL/dw off by one part in 10^5: far above the noise of a loss of 2.6e5.
  Checked scaled = checkHandWritten("2.00002", "0.0");
  ASSERT_TRUE(scaled.ok) << scaled.error;
  EXPECT_FALSE(scaled.report.passed);
  EXPECT_EQ(scaled.report.worst.param, "w");
  EXPECT_GT(scaled.report.worst.relativeError, 5e-6);
  // A true zero reported as 1e-3: the floor (about 20 here: 32 ε |L| / h /
  // 1e-6) does not hide it.
  Checked nonzero = checkHandWritten("2.0", "1.0e-3");
  ASSERT_TRUE(nonzero.ok) << nonzero.error;
  EXPECT_FALSE(nonzero.report.passed);
  EXPECT_EQ(nonzero.report.worst.param, "z");
  EXPECT_GT(nonzero.report.worst.relativeError, 2e-5);
  EXPECT_NEAR(nonzero.report.worst.numeric, 0, 1e-6);
}

// bf16 params and inputs: computed in float64 without rounding, the check
// passes; rounded to bf16 the five-point quotient measured the rounding
// (relative error 1.4 on this model before).
TEST(GradCheckBound, Bf16ModelsAreCheckedInFloat64) {
  const char *source = R"(
dim n = 8
dim m = 4
input x: bf16[n, m]
param w: bf16[m] ~ normal(std=1)
param v: bf16[n, m] ~ normal(std=1)
minimize reduce(tanh(x * w) * v, "n m -> ", sum)
)";
  for (uint64_t seed : {1, 2, 3}) {
    Checked c = checkModel(source, {}, seed);
    ASSERT_TRUE(c.ok) << c.error;
    EXPECT_TRUE(c.report.passed) << c.report.worst.param << "[" << c.report.worst.index
                                 << "] analytic " << c.report.worst.analytic << " numeric "
                                 << c.report.worst.numeric;
    EXPECT_EQ(c.report.checked, 4 + 8);
    EXPECT_GT(c.report.unroundedBuffers, 0);
    // The program has no cast; the backward's sum of w's gradient over n
    // accumulates in f32 and is rounded once to bf16 (docs/autodiff.md).
    EXPECT_EQ(c.report.identityCasts, 1);
  }
}

// A cast to bf16 inside the program is the identity in the check (and
// counted): d/dp Σ bf16(p)·p·q is 2pq in float64.
TEST(GradCheckBound, CastsToBf16AreTheIdentity) {
  Compiled m = parseMLIR(R"(
module {
  func.func @forward(%p: tensor<6xf32> {ein.kind = "param", ein.name = "p", ein.init = {kind = "normal", std = 1.0 : f64}},
                     %q: tensor<6xf32> {ein.kind = "param", ein.name = "q", ein.init = {kind = "normal", std = 1.0 : f64}}) -> tensor<f32> {
    %h = ein.cast %p : tensor<6xf32> -> tensor<6xbf16>
    %b = ein.cast %h : tensor<6xbf16> -> tensor<6xf32>
    %m = ein.mul %b, %p : tensor<6xf32>
    %k = ein.mul %m, %q : tensor<6xf32>
    %l = ein.reduce sum %k dims [0] : tensor<6xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
)");
  ASSERT_TRUE(m.module) << m.errors;
  ASSERT_TRUE(addGrad(m)) << m.errors;
  Checked c = check(m, {});
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_TRUE(c.report.passed) << c.report.worst.param << " " << c.report.worst.relativeError;
  EXPECT_EQ(c.report.checked, 12);
  EXPECT_GE(c.report.identityCasts, 2); // forward's cast, and the backward's
  EXPECT_GE(c.report.unroundedBuffers, 2);
}

TEST(GradCheckBound, NeedsFloat64) {
  Compiled m = compileModel("dim n = 3\nparam w: [n] ~ ones\nminimize reduce(w * w, \"n -> \", "
                            "sum)\n",
                            {});
  ASSERT_TRUE(m.module && addGrad(m)) << m.errors;
  std::string error;
  auto forward = executorFor(m, "forward", einrt::Precision::F32, error);
  auto grad = executorFor(m, "grad", einrt::Precision::F32, error);
  ASSERT_TRUE(forward && grad) << error;
  EINC_EXPECT_STATUS(einrt::gradCheck(*forward, *grad, {}), einrt::StatusCode::Invalid,
                     "Precision::F64");
}

} // namespace
