//===- TrainerRig.h - A TinyModel's executors and a run of them -*- C++ -*-===//
//
// Shared by the trainer's tests (TrainerTest.cpp, TrainerInitTest.cpp): the
// executors of one TinyModel, token files, a base config and one run. In a
// namespace of their own: DistributedTestUtil.h has a Rig and Data too.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_UNIT_TRAINER_TRAINERRIG_H
#define EINC_TEST_UNIT_TRAINER_TRAINERRIG_H

#include "TestModel.h"
#include "TrainerTestUtil.h"
#include "runtime/train/Trainer.h"
#include "test/unit/StatusOut.h"

#include <gtest/gtest.h>
#include <optional>

namespace einrt::test::rig {

/// The executors of one TinyModel.
struct Rig {
  TinyModel model;
  std::optional<Executor> step, accumulate, apply, forward;

  explicit Rig(TinyModel m, int64_t accumulate = 1) : model(m) {
    std::string error;
    if (accumulate == 1) {
      step = statusOut(Executor::create(model.trainStep(), Precision::F32), error);
      EXPECT_TRUE(step) << error;
    } else {
      this->accumulate =
          statusOut(Executor::create(model.accumulate(accumulate), Precision::F32), error);
      EXPECT_TRUE(this->accumulate) << error;
      apply = statusOut(Executor::create(model.apply(), Precision::F32), error);
      EXPECT_TRUE(apply) << error;
    }
    forward = statusOut(Executor::create(model.forward(), Precision::F32), error);
    EXPECT_TRUE(forward) << error;
  }
  TrainPrograms programs() {
    TrainPrograms p;
    p.trainStep = step ? &*step : nullptr;
    p.accumulate = accumulate ? &*accumulate : nullptr;
    p.apply = apply ? &*apply : nullptr;
    p.forward = &*forward;
    return p;
  }
};

struct Data {
  TempDir dir;
  std::optional<TokenFile> train, val;
  explicit Data(int vocab = 7) {
    writeBytes(dir.file("train.bin"), tokenBytes(patternTokens(20000, vocab, 1)));
    writeBytes(dir.file("val.bin"), tokenBytes(patternTokens(4000, vocab, 2)));
    std::string error;
    train = valueOf(TokenFile::open(dir.file("train.bin")));
    val = valueOf(TokenFile::open(dir.file("val.bin")));
  }
};

inline TrainConfig baseConfig(int64_t steps) {
  TrainConfig c;
  c.steps = steps;
  c.seed = 11;
  c.vocab = 7;
  c.schedule.lr = 0.05;
  c.progress.style = ProgressStyle::Quiet;
  return c;
}

struct Outcome {
  bool ok = false;
  StatusCode code = StatusCode::Ok; // the first failure's
  std::string error;
  TrainResult result;
  std::vector<TensorData> state;
};

inline Outcome train(Rig &rig, Data &data, const TrainConfig &config, bool withVal = false) {
  Outcome o;
  auto t = Trainer::create(config, rig.programs(), *data.train, withVal ? &*data.val : nullptr);
  if (!t.ok()) {
    o.code = t.status().code();
    o.error = t.status().message();
    return o;
  }
  Status ran = (*t)->run(o.result);
  o.ok = ran.ok();
  o.code = ran.code();
  o.error = ran.message();
  Expected<std::vector<TensorData>> state = (*t)->stateTensors();
  if (state.ok())
    o.state = state.take();
  else if (o.ok)
    o.code = state.status().code(), o.error = state.status().message();
  return o;
}

inline bool sameBits(const std::vector<TensorData> &a, const std::vector<TensorData> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].bytes != b[i].bytes)
      return false;
  return true;
}

} // namespace einrt::test::rig

#endif
