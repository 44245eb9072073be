//===- LossScalingTest.cpp - Loss scaling and narrow updates, numerically -===//
//
// The compiled step's loss scaler, run on the reference backend in f32: a
// gradient that overflows once scaled skips the update (params and
// optimizer state kept), halves the scale and counts the skip; N finite
// steps double it. And the update of a bf16 param: computed in f32 from the
// param cast up, stored back rounded (docs/train-step.md).
//
//===----------------------------------------------------------------------===//
#include "Compile.h"
#include "test/unit/StatusOut.h"
#include "trainer/TrainerTestUtil.h"

#include "runtime/base/LossScaleState.h"
#include "runtime/base/StrictJson.h"
#include "runtime/core/Init.h"
#include "runtime/io/Checkpoint.h"
#include "runtime/train/Trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>

using namespace einc::testing;

namespace {

/// loss = Σ x·w: d loss / d w = x, so the scaled gradient is scale·x.
const char *kLinear = R"(
func.func @forward(%x: tensor<4xf32> {ein.axes = ["d"], ein.kind = "input", ein.name = "x"},
                   %w: tensor<4xf32> {ein.axes = ["d"], ein.kind = "param", ein.name = "w"})
    -> (tensor<f32> {ein.name = "loss"}) {
  %p = ein.mul %x, %w {axes = ["d"]} : tensor<4xf32>
  %loss = ein.reduce sum %p dims [0] {axes = []} : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
)";

/// @train_step run as the trainer runs it: each result fed back into the
/// argument of its name, `step` the count of updates taken + 1.
class StepLoop {
public:
  StepLoop(const char *source, const std::string &options) {
    m = parseMLIR(source);
    EXPECT_TRUE(m.module) << m.errors;
    EXPECT_TRUE(addTrainStep(m, options)) << m.errors;
    std::string error;
    ex = executorFor(m, "train_step", einrt::Precision::F32, error);
    EXPECT_TRUE(ex) << error;
    if (!ex)
      return;
    const einrt::Program &p = ex->program();
    for (size_t a = 0; a < p.arguments.size(); ++a)
      args[p.buffers[size_t(p.arguments[a])].name] = a;
  }

  bool ok() const { return bool(ex); }

  void set(const std::string &name, std::vector<double> v) {
    std::string error;
    EXPECT_TRUE(statusOut(ex->setArgument(args.at(name), v.data(), v.size()), error)) << error;
  }
  /// The argument `name` (after a step: its new value).
  std::vector<double> get(const std::string &name) const {
    std::vector<double> v;
    std::string error;
    EXPECT_TRUE(statusOut(ex->read(size_t(ex->program().arguments[args.at(name)])), v, error))
        << error;
    return v;
  }
  double scalar(const std::string &name) const { return get(name).at(0); }

  /// One step at update count `t`; returns grad_norm.
  double step(double t, double lr) {
    set("step", {t});
    set("lr", {lr});
    std::string error;
    EXPECT_TRUE(statusOut(ex->run(), error)) << error;
    const einrt::Program &p = ex->program();
    for (size_t r = 2; r < p.results.size(); ++r) {
      size_t a = args.at(p.resultNames[r]);
      EXPECT_TRUE(statusOut(ex->copyFrom(size_t(p.arguments[a]), *ex, size_t(p.results[r])), error))
          << error;
    }
    double norm = 0;
    EXPECT_TRUE(statusOut(ex->readScalar(1), norm, error)) << error;
    return norm;
  }

private:
  Compiled m;
  std::optional<einrt::Executor> ex;
  std::map<std::string, size_t> args;
};

const double kHuge = std::ldexp(1.0, 127); // 4·2^127 and 4·2^126 overflow f32

TEST(LossScaling, OverflowSkipsHalvesAndGrowsAfterInterval) {
  StepLoop loop(kLinear, "optimizer=sgd momentum=0 weight-decay=0 clip=0 loss-scaling=dynamic "
                         "loss-scale-init=1.7014118346046923e38 loss-scale-interval=3");
  ASSERT_TRUE(loop.ok());
  const std::vector<double> x = {1, 2, 3, 4};
  loop.set("x", x);
  loop.set("w", {0.5, 0.5, 0.5, 0.5});
  const double lr = 0.25;
  // The state starts at zero, as the runtime leaves it: the initial scale.
  struct Expect {
    bool skipped;
    double scaleAfter;
    int good, skippedTotal;
  };
  const Expect expected[] = {
      {true, kHuge / 2, 0, 1},                            // 4·2^127 = inf: skipped, halved
      {true, kHuge / 4, 0, 2},                            // 4·2^126 = 2^128 = inf again
      {false, kHuge / 4, 1, 2},                           // 4·2^125 is finite: the update is taken
      {false, kHuge / 4, 2, 2}, {false, kHuge / 2, 0, 2}, // 3 good steps: doubled
      {true, kHuge / 4, 0, 3},                            // which overflows again
      {false, kHuge / 4, 1, 3},
  };
  std::vector<double> w = loop.get("w");
  int updates = 0;
  for (const Expect &e : expected) {
    SCOPED_TRACE("after " + std::to_string(updates) + " updates");
    double norm = loop.step(updates + 1, lr);
    EXPECT_EQ(loop.scalar("loss_scale"), e.scaleAfter);
    EXPECT_EQ(loop.scalar("good_steps"), e.good);
    EXPECT_EQ(loop.scalar("skipped_steps"), e.skippedTotal);
    std::vector<double> now = loop.get("w");
    if (e.skipped) {
      EXPECT_FALSE(std::isfinite(norm));
      EXPECT_EQ(now, w); // the params as they were
    } else {
      // The unscaled gradient, exactly: SGD moves w by lr·x.
      EXPECT_FLOAT_EQ(norm, std::sqrt(30.0));
      for (size_t i = 0; i < w.size(); ++i)
        EXPECT_EQ(now[i], float(w[i] - lr * x[i]));
      ++updates;
    }
    w = now;
  }
}

TEST(LossScaling, SkippedStepKeepsOptimizerState) {
  StepLoop loop(kLinear, "optimizer=adamw weight-decay=0 clip=0 loss-scaling=dynamic "
                         "loss-scale-init=1.7014118346046923e38");
  ASSERT_TRUE(loop.ok());
  loop.set("x", {1, 2, 3, 4});
  loop.set("w", {0.5, 0.5, 0.5, 0.5});
  loop.step(1, 0.01);
  EXPECT_EQ(loop.get("w"), std::vector<double>(4, 0.5));
  EXPECT_EQ(loop.get("w.m"), std::vector<double>(4, 0.0));
  EXPECT_EQ(loop.get("w.v"), std::vector<double>(4, 0.0));
  loop.step(1, 0.01); // skipped again (2^128)
  loop.step(1, 0.01); // taken: AdamW's first step moves by lr·sign(g)
  std::vector<double> m = loop.get("w.m"), w = loop.get("w");
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(m[i], 0.1 * double(i + 1)); // (1 − β1)·g, g unscaled
    EXPECT_NEAR(w[i], 0.5 - 0.01, 1e-7);
  }
}

TEST(LossScaling, StaticScaleSkipsAndStays) {
  StepLoop loop(kLinear, "optimizer=sgd momentum=0 weight-decay=0 clip=0 loss-scaling=static "
                         "loss-scale-init=1.7014118346046923e38");
  ASSERT_TRUE(loop.ok());
  loop.set("x", {1, 2, 3, 4});
  for (int s = 1; s <= 2; ++s) {
    loop.step(1, 0.1);
    EXPECT_EQ(loop.scalar("loss_scale"), kHuge);
    EXPECT_EQ(loop.scalar("skipped_steps"), s);
  }
}

TEST(LossScaling, FiniteStepsAtTheDefaultsTrainAsUnscaled) {
  // 2^16 · x is exact, and unscaling by 2^-16 too: the same update as with
  // no loss scaling, bit for bit.
  StepLoop scaled(kLinear, "optimizer=adamw loss-scaling=dynamic");
  StepLoop plain(kLinear, "optimizer=adamw");
  ASSERT_TRUE(scaled.ok() && plain.ok());
  for (StepLoop *l : {&scaled, &plain}) {
    l->set("x", {0.3, -1.5, 2.25, 7});
    l->set("w", {0.1, 0.2, 0.3, 0.4});
    for (int t = 1; t <= 3; ++t)
      l->step(t, 0.01);
  }
  EXPECT_EQ(scaled.get("w"), plain.get("w"));
  EXPECT_EQ(scaled.get("w.v"), plain.get("w.v"));
  EXPECT_EQ(scaled.scalar("loss_scale"), 65536);
  EXPECT_EQ(scaled.scalar("good_steps"), 3);
  EXPECT_EQ(scaled.scalar("skipped_steps"), 0);
}

/// loss = Σ w over a bf16 param: its gradient is 1 everywhere.
const char *kNarrow = R"(
func.func @forward(%w: tensor<4096xbf16> {ein.axes = ["d"], ein.kind = "param", ein.name = "w"})
    -> (tensor<f32> {ein.name = "loss"}) {
  %w32 = ein.cast %w {axes = ["d"]} : tensor<4096xbf16> -> tensor<4096xf32>
  %loss = ein.reduce sum %w32 dims [0] {axes = []} : tensor<4096xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
)";

/// The mean of w after `steps` SGD steps of lr·g = 1e-4 from w = 1.
double meanAfterSmallUpdates(const std::string &rounding, int steps) {
  StepLoop loop(kNarrow,
                "optimizer=sgd momentum=0 weight-decay=0 clip=0 narrow-update=" + rounding);
  EXPECT_TRUE(loop.ok());
  if (!loop.ok())
    return NAN;
  loop.set("w", std::vector<double>(4096, 1.0));
  for (int t = 1; t <= steps; ++t)
    loop.step(t, 1e-4);
  double sum = 0;
  for (double v : loop.get("w"))
    sum += v;
  return sum / 4096;
}

TEST(NarrowUpdate, NearestLosesASmallUpdateOfOne) {
  // 1 − 1e-4 is within half a bf16 ulp (2^-9 below 1) of 1: rounded back
  // to 1 at every step, the update is lost however long one trains.
  EXPECT_EQ(meanAfterSmallUpdates("nearest", 10), 1.0);
}

//===----------------------------------------------------------------------===//
// The trainer with a loss-scaled step
//===----------------------------------------------------------------------===//

/// A tiny token LM whose loss is multiplied by 1e12, so that the seed of
/// the backward times 1e12 overflows f32 at an initial scale of 2^90.
const char *kTokenModel = R"ein(
dim batch = 4
dim vocab = 16
dim window = 2
dim embed = 8
input tokens : i32[batch, window]
input targets: i32[batch]
param wte: [vocab, embed] ~ normal(std=1)
param w  : [(window embed), vocab] ~ normal(std=0.1)
x      = rearrange(wte[tokens], "batch window embed -> batch (window embed)")
logits = einsum(x, w, "batch k, k vocab -> batch vocab")
minimize cross_entropy(logits, targets) * 1000000000000
)ein";

const char *kScaled = "loss-scaling=dynamic loss-scale-init=1.2379400392853803e27 "
                      "loss-scale-interval=2";

struct ScaledRun {
  Compiled m;
  std::optional<einrt::Executor> step, accumulate, apply;
  einrt::test::TempDir dir;
  std::optional<einrt::TokenFile> data;

  explicit ScaledRun(int64_t microBatches) {
    m = compileModel(kTokenModel, {});
    EXPECT_TRUE(m.module) << m.errors;
    std::string options = std::string(kScaled) + " micro-batches=" + std::to_string(microBatches);
    EXPECT_TRUE(addTrainStep(m, options)) << m.errors;
    std::string error;
    if (microBatches == 1) {
      step = executorFor(m, "train_step", einrt::Precision::F32, error);
      EXPECT_TRUE(step) << error;
    } else {
      accumulate = executorFor(m, "accumulate_grad", einrt::Precision::F32, error);
      apply = executorFor(m, "apply_update", einrt::Precision::F32, error);
      EXPECT_TRUE(accumulate && apply) << error;
    }
    einrt::test::writeBytes(dir.file("train.bin"),
                            einrt::test::tokenBytes(einrt::test::patternTokens(4000, 16)));
    data = einrt::test::valueOf(einrt::TokenFile::open(dir.file("train.bin")));
    EXPECT_TRUE(data) << error;
  }
  einrt::TrainConfig config(int64_t steps, int64_t microBatches) const {
    einrt::TrainConfig c;
    c.steps = steps;
    c.accumulate = microBatches;
    c.seed = 3;
    c.vocab = 16;
    c.schedule.lr = 0.01;
    c.schedule.warmup = 0;
    c.progress.style = einrt::ProgressStyle::Quiet;
    c.checkpointDir = dir.file("ck");
    c.logPath = dir.file("log.jsonl");
    return c;
  }
  std::unique_ptr<einrt::Trainer> trainer(const einrt::TrainConfig &c) {
    einrt::TrainPrograms p;
    p.trainStep = step ? &*step : nullptr;
    p.accumulate = accumulate ? &*accumulate : nullptr;
    p.apply = apply ? &*apply : nullptr;
    auto t = einrt::test::valueOf(einrt::Trainer::create(c, p, *data, nullptr));
    return t ? std::move(*t) : nullptr;
  }
  std::vector<nlohmann::json> log() const {
    std::vector<nlohmann::json> lines;
    std::ifstream in(dir.file("log.jsonl"));
    for (std::string line; std::getline(in, line);) {
      einrt::Expected<nlohmann::json> parsed = einrt::parseStrictJson(line.data(), line.size());
      EXPECT_TRUE(parsed.ok()) << parsed.status().message();
      nlohmann::json j = parsed.ok() ? parsed.take() : nlohmann::json();
      j.erase("tokens_per_second"); // a measurement
      lines.push_back(j);
    }
    return lines;
  }
};

/// Each logged step follows GradScaler's rule from the one before (the
/// first from the initial scale, 2^90); returns the skipped steps.
int64_t checkScalerLog(const std::vector<nlohmann::json> &log, int64_t interval) {
  double scale = std::ldexp(1.0, 90);
  int64_t good = 0, skipped = 0;
  for (const nlohmann::json &j : log) {
    SCOPED_TRACE("step " + j.dump());
    bool skip = j.at("skipped_steps").get<int64_t>() == skipped + 1;
    if (skip) {
      EXPECT_TRUE(j.at("grad_norm").is_null());
      scale /= 2, good = 0, ++skipped;
    } else {
      EXPECT_EQ(j.at("skipped_steps").get<int64_t>(), skipped);
      EXPECT_TRUE(j.at("grad_norm").is_number());
      if (++good == interval)
        scale *= 2, good = 0;
    }
    EXPECT_EQ(float(j.at("loss_scale").get<double>()), float(scale)); // 9 digits: the f32
    EXPECT_EQ(j.at("good_steps").get<int64_t>(), good);
  }
  return skipped;
}

TEST(LossScalingTrainer, SkipsOverflowingStepsAndLogsTheScaler) {
  for (int64_t k : {1, 2}) {
    SCOPED_TRACE("micro-batches " + std::to_string(k));
    ScaledRun run(k);
    auto t = run.trainer(run.config(10, k));
    ASSERT_TRUE(t);
    // The first step overflows (2^90 · 1e12 > 3.4e38): the params are kept.
    auto before = einrt::test::valueOf(t->stateTensors());
    ASSERT_TRUE(before);
    double loss, norm;
    ASSERT_EQ(t->trainStep(loss, norm).message(), "");
    auto after = einrt::test::valueOf(t->stateTensors());
    ASSERT_TRUE(after);
    EXPECT_FALSE(std::isfinite(norm));
    EXPECT_EQ(t->optimizerStep(), 0);
    ASSERT_TRUE(t->lossScaler());
    EXPECT_EQ(t->lossScaler()->scale, std::ldexp(1.0, 89));
    EXPECT_EQ(t->lossScaler()->skippedSteps, 1);
    for (size_t i = 0; i < before->size(); ++i)
      if (!einrt::isLossScaleState((*before)[i].name)) {
        EXPECT_EQ((*before)[i].bytes, (*after)[i].bytes) << (*before)[i].name;
      }

    // A whole run: the skips it needs, then training; the log says so.
    t = run.trainer(run.config(10, k));
    einrt::TrainResult result;
    ASSERT_EQ(t->run(result).message(), "");
    std::vector<nlohmann::json> log = run.log();
    ASSERT_EQ(log.size(), 10u);
    int64_t skipped = checkScalerLog(log, 2);
    EXPECT_GE(skipped, 2);  // 2^90 and 2^89 overflow at the first multiply
    EXPECT_LT(skipped, 10); // and the scale comes down to where it trains
    EXPECT_EQ(result.skippedSteps, skipped);
    EXPECT_EQ(t->optimizerStep(), 10 - skipped);
    EXPECT_LT(log.back()["loss"].get<double>(), log[size_t(skipped)]["loss"].get<double>());
  }
}

TEST(LossScalingTrainer, CheckpointRoundTripsTheScaler) {
  ScaledRun straight(1), resumed(1);
  einrt::TrainResult r;
  ASSERT_EQ(straight.trainer(straight.config(8, 1))->run(r).message(), "");
  ASSERT_EQ(resumed.trainer(resumed.config(4, 1))->run(r).message(), "");
  // The checkpoint holds the scaler's state.
  auto ck = einrt::test::valueOf(einrt::readCheckpoint(resumed.dir.file("ck/last.safetensors")));
  ASSERT_TRUE(ck);
  for (const char *name : {einrt::kLossScaleName, einrt::kGoodStepsName, einrt::kSkippedStepsName})
    ASSERT_TRUE(ck->find(name)) << name;
  EXPECT_EQ(ck->find(einrt::kLossScaleName)->bytes.size(), 4u); // one f32
  einrt::TrainConfig c = resumed.config(8, 1);
  c.resume = true;
  auto t = resumed.trainer(c);
  ASSERT_EQ(t->run(r).message(), "");
  // Bit for bit the run that did not stop: params, moments and scaler.
  auto s = straight.trainer(straight.config(8, 1));
  ASSERT_EQ(s->resumeFrom(straight.dir.file("ck/last.safetensors")).message(), "");
  auto a = einrt::test::valueOf(s->stateTensors());
  auto b = einrt::test::valueOf(t->stateTensors());
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i)
    EXPECT_EQ((*a)[i].bytes, (*b)[i].bytes) << (*a)[i].name;
  EXPECT_EQ(straight.log(), resumed.log());
  EXPECT_EQ(s->optimizerStep(), t->optimizerStep());
}

TEST(NarrowUpdate, StochasticRoundingKeepsItOnAverage) {
  // Each element goes down one bf16 ulp (2^-8) with probability
  // 1e-4 / 2^-8 per step: the mean moves by 1e-4 a step, as in f32.
  // Over 4096 elements and 10 steps its spread is ~3e-5.
  double mean = meanAfterSmallUpdates("stochastic", 10);
  EXPECT_NEAR(mean, 1.0 - 10 * 1e-4, 2e-4);
}

} // namespace
