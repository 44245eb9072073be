//===- TrainStepTest.cpp - The training step, numerically -----------------===//
//
// The lecture's optimizer facts, run on the reference backend: AdamW's first
// step without weight decay moves every param by lr·sign(g); SGD moves by
// lr·g; clipping scales by max_norm / (norm + 1e-6); decoupled weight decay
// touches matrices and not biases.
//
//===----------------------------------------------------------------------===//
#include "Compile.h"
#include "test/unit/StatusTesting.h"

#include "runtime/core/Init.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace einc::testing;

namespace {

const char *kModel = R"(
dim batch = 8
dim d = 6
dim k = 5
input x: f32[batch, d]
input y: i32[batch]
param w: [d, k] ~ normal(std=0.5)
param b: [k] ~ normal(std=0.5)
minimize cross_entropy(einsum(x, w, "batch d, d k -> batch k") + b, y)
)";

/// A buffer's values (none, with a test failure, where it cannot be read).
std::vector<double> values(const einrt::Executor &ex, size_t buffer) {
  einrt::Expected<std::vector<double>> v = ex.read(buffer);
  EINC_EXPECT_OK(v);
  return v.ok() ? v.take() : std::vector<double>{};
}

struct StepRun {
  std::vector<std::vector<double>> before, after, grads; // per param
  double gradNorm = 0;
};

/// Runs @grad and one @train_step (step 1) on the same params and inputs.
StepRun runOneStep(const std::string &options, double lr) {
  StepRun out;
  Compiled m = compileModel(kModel, {});
  EXPECT_TRUE(m.module) << m.errors;
  EXPECT_TRUE(addTrainStep(m, options)) << m.errors;
  std::string error;
  auto grad = executorFor(m, "grad", einrt::Precision::F64, error);
  auto step = executorFor(m, "train_step", einrt::Precision::F64, error);
  EXPECT_TRUE(grad && step) << error;
  if (!grad || !step)
    return out;
  EINC_EXPECT_OK(einrt::initParams(*step, 5));
  EINC_EXPECT_OK(einrt::fillRandomInputs(*step, 9, 5));
  const einrt::Program &sp = step->program();
  // @grad takes (inputs, params), the first arguments of @train_step.
  for (size_t a = 0; a < grad->argumentCount(); ++a) {
    std::vector<double> v = values(*step, size_t(sp.arguments[a]));
    EINC_EXPECT_OK(grad->setArgument(a, v.data(), v.size()));
  }
  for (size_t a = 0; a < sp.arguments.size(); ++a) {
    const einrt::Buffer &buf = sp.buffers[sp.arguments[a]];
    double one = 1;
    if (buf.name == "step")
      EINC_EXPECT_OK(step->setArgument(a, &one, 1));
    if (buf.name == "lr")
      EINC_EXPECT_OK(step->setArgument(a, &lr, 1));
    if (buf.role == einrt::BufferRole::Param)
      out.before.push_back(values(*step, size_t(sp.arguments[a])));
  }
  EINC_EXPECT_OK(grad->run());
  EINC_EXPECT_OK(step->run());
  for (size_t r = 1; r < grad->resultCount(); ++r)
    out.grads.push_back(values(*grad, size_t(grad->program().results[r])));
  einrt::Expected<double> gradNorm = step->readScalar(1);
  EINC_EXPECT_OK(gradNorm);
  if (gradNorm.ok())
    out.gradNorm = *gradNorm;
  for (size_t r = 2; r < 2 + out.before.size(); ++r)
    out.after.push_back(values(*step, size_t(step->program().results[r])));
  return out;
}

TEST(TrainStep, AdamWFirstStepIsLrTimesSignOfGradient) {
  double lr = 0.01;
  StepRun s = runOneStep("optimizer=adamw weight-decay=0 clip=0", lr);
  ASSERT_EQ(s.after.size(), 2u);
  for (size_t p = 0; p < s.after.size(); ++p)
    for (size_t i = 0; i < s.after[p].size(); ++i) {
      double g = s.grads[p][i];
      double moved = s.after[p][i] - s.before[p][i];
      // m̂ / (sqrt(v̂) + eps) = g / (|g| + eps) on the first step.
      double expected = -lr * g / (std::fabs(g) + 1e-8);
      // Hyper-parameters are f32 constants (as torch passes them to its f32
      // kernels): agreement to f32 rounding.
      EXPECT_NEAR(moved, expected, lr * 1e-6) << "param " << p << " entry " << i;
      if (std::fabs(g) > 1e-3) // eps / |g| negligible
        EXPECT_NEAR(std::fabs(moved), lr, lr * 1e-4);
    }
}

TEST(TrainStep, SgdMovesByLrTimesGradient) {
  double lr = 0.1;
  StepRun s = runOneStep("optimizer=sgd momentum=0 weight-decay=0 clip=0", lr);
  for (size_t p = 0; p < s.after.size(); ++p)
    for (size_t i = 0; i < s.after[p].size(); ++i)
      EXPECT_NEAR(s.after[p][i], s.before[p][i] - lr * s.grads[p][i], 1e-12);
}

TEST(TrainStep, ClippingScalesToMaxNorm) {
  double lr = 1, clip = 0.01;
  StepRun s = runOneStep("optimizer=sgd momentum=0 weight-decay=0 clip=0.01", lr);
  double norm = 0;
  for (auto &g : s.grads)
    for (double v : g)
      norm += v * v;
  norm = std::sqrt(norm);
  EXPECT_NEAR(s.gradNorm, norm, 1e-12); // reported before clipping
  ASSERT_GT(norm, clip);
  double scale = clip / (norm + 1e-6);
  for (size_t p = 0; p < s.after.size(); ++p)
    for (size_t i = 0; i < s.after[p].size(); ++i)
      EXPECT_NEAR(s.after[p][i], s.before[p][i] - lr * scale * s.grads[p][i],
                  1e-9); // f32 constants
}

TEST(TrainStep, DecoupledWeightDecayTouchesMatricesOnly) {
  double lr = 0.01, wd = 0.5;
  StepRun plain = runOneStep("optimizer=adamw weight-decay=0 clip=0", lr);
  StepRun decayed = runOneStep("optimizer=adamw weight-decay=0.5 clip=0", lr);
  // w (a matrix): p·(1 − lr·wd) first, then the same Adam step.
  for (size_t i = 0; i < decayed.after[0].size(); ++i) {
    double adam = plain.after[0][i] - plain.before[0][i];
    EXPECT_NEAR(decayed.after[0][i], decayed.before[0][i] * (1 - lr * wd) + adam, 1e-12);
  }
  // b (a bias): untouched by decay.
  for (size_t i = 0; i < decayed.after[1].size(); ++i)
    EXPECT_NEAR(decayed.after[1][i], plain.after[1][i], 1e-15);
}

TEST(TrainStep, AdagradFirstStepIsLrTimesSignOfGradient) {
  double lr = 0.05;
  StepRun s = runOneStep("optimizer=adagrad weight-decay=0 clip=0 eps=1e-10", lr);
  for (size_t p = 0; p < s.after.size(); ++p)
    for (size_t i = 0; i < s.after[p].size(); ++i) {
      double g = s.grads[p][i];
      EXPECT_NEAR(s.after[p][i] - s.before[p][i], -lr * g / (std::fabs(g) + 1e-10), 1e-12);
    }
}

} // namespace
