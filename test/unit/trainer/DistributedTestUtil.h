//===- DistributedTestUtil.h - Shared pieces of the data-parallel tests ---===//
#ifndef EINC_TEST_UNIT_TRAINER_DISTRIBUTEDTESTUTIL_H
#define EINC_TEST_UNIT_TRAINER_DISTRIBUTEDTESTUTIL_H

#include "TestModel.h"
#include "TrainerTestUtil.h"
#include "runtime/HostDevice.h"
#include "runtime/Trainer.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace einrt::test {

/// Contributions of `micro` micro-batches: magnitudes over many binades
/// and both signs, so that any other order of the adds rounds differently.
inline std::vector<std::vector<float>> contributions(int64_t micro, int64_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> mant(-1, 1);
  std::uniform_int_distribution<int> exp(-12, 12);
  std::vector<std::vector<float>> x(static_cast<size_t>(micro),
                                    std::vector<float>(static_cast<size_t>(count)));
  for (auto &v : x)
    for (float &f : v)
      f = std::ldexp(mant(gen), exp(gen));
  return x;
}

inline uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

struct Data {
  TempDir dir;
  std::optional<TokenFile> train, val;
  Data() {
    writeBytes(dir.file("train.bin"), tokenBytes(patternTokens(20000, 7, 1)));
    writeBytes(dir.file("val.bin"), tokenBytes(patternTokens(4000, 7, 2)));
    std::string error;
    train = TokenFile::open(dir.file("train.bin"), error);
    val = TokenFile::open(dir.file("val.bin"), error);
  }
};

/// One rank's executors: the programs compiled for `global` micro-batches,
/// each on a reference device of its own, or all on `device`.
struct Rig {
  std::optional<Executor> accumulate, apply, forward;
  Rig(const TinyModel &model, int64_t global, std::shared_ptr<Device> device = nullptr) {
    std::string error;
    auto make = [&](const Program &p) {
      return device ? Executor::create(p, device, error)
                    : Executor::create(p, Precision::F32, error);
    };
    accumulate = make(model.accumulate(global));
    apply = make(model.apply());
    forward = make(model.forward());
  }
  TrainPrograms programs() {
    TrainPrograms p;
    p.accumulate = &*accumulate;
    p.apply = &*apply;
    p.forward = &*forward;
    return p;
  }
};

inline TrainConfig config(int64_t steps, int64_t accumulate) {
  TrainConfig c;
  c.steps = steps;
  c.accumulate = accumulate;
  c.seed = 11;
  c.vocab = 7;
  c.schedule.lr = 0.05;
  c.progress.style = ProgressStyle::Quiet;
  return c;
}

struct RankOutcome {
  std::string error;
  std::vector<TensorData> state;
  TrainResult result;
};

inline RankOutcome trainAlone(const TinyModel &model, Data &data, int64_t global, TrainConfig c) {
  Rig rig(model, global);
  c.accumulate = global;
  RankOutcome o;
  auto t = Trainer::create(c, rig.programs(), *data.train, &*data.val, o.error);
  if (t && t->run(o.result, o.error))
    t->stateTensors(o.state, o.error);
  return o;
}

inline bool sameBits(const std::vector<TensorData> &a, const std::vector<TensorData> &b) {
  if (a.size() != b.size() || a.empty())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].bytes != b[i].bytes)
      return false;
  return true;
}

} // namespace einrt::test

#endif // EINC_TEST_UNIT_TRAINER_DISTRIBUTEDTESTUTIL_H
