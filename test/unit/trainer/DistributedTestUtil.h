//===- DistributedTestUtil.h - Shared pieces of the data-parallel tests ---===//
#ifndef EINC_TEST_UNIT_TRAINER_DISTRIBUTEDTESTUTIL_H
#define EINC_TEST_UNIT_TRAINER_DISTRIBUTEDTESTUTIL_H

#include "HostCollectives.h"
#include "TestModel.h"
#include "ThreadGroup.h"
#include "TrainerTestUtil.h"
#include "runtime/core/HostDevice.h"
#include "runtime/train/Trainer.h"
#include "test/unit/StatusOut.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
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

/// Runs `rank(comm, r, sum, error)` on the `group`'s ranks (threads), each
/// leaving its result in `sum`, and checks every rank's against one
/// process's left-to-right sum of `x`, bit for bit.
inline void expectOneProcessSum(
    ThreadGroup &group, const std::vector<std::vector<float>> &x, int64_t count,
    const std::function<bool(Communicator &, int, std::vector<float> &, std::string &)> &rank,
    const std::string &what) {
  std::vector<float> want(static_cast<size_t>(count), 0.0f);
  for (const auto &v : x) // one process: micro-batch 0, 1, 2, ...
    for (int64_t i = 0; i < count; ++i)
      want[size_t(i)] = want[size_t(i)] + v[size_t(i)];
  const int n = group.size();
  std::vector<std::vector<float>> got(static_cast<size_t>(n));
  std::vector<std::string> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      auto comm = group.rank(r);
      if (!rank(*comm, r, got[size_t(r)], errors[size_t(r)]) && errors[size_t(r)].empty())
        errors[size_t(r)] = "failed";
    });
  for (auto &t : threads)
    t.join();
  for (int r = 0; r < n; ++r) {
    ASSERT_TRUE(errors[size_t(r)].empty()) << what << ", rank " << r << ": " << errors[size_t(r)];
    ASSERT_EQ(got[size_t(r)].size(), size_t(count)) << what;
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(bits(got[size_t(r)][size_t(i)]), bits(want[size_t(i)]))
          << what << ", rank " << r << ", element " << i;
  }
}

struct Data {
  TempDir dir;
  std::optional<TokenFile> train, val;
  Data() {
    writeBytes(dir.file("train.bin"), tokenBytes(patternTokens(20000, 7, 1)));
    writeBytes(dir.file("val.bin"), tokenBytes(patternTokens(4000, 7, 2)));
    std::string error;
    train = valueOf(TokenFile::open(dir.file("train.bin")));
    val = valueOf(TokenFile::open(dir.file("val.bin")));
  }
};

/// One rank's executors: the programs compiled for `global` micro-batches,
/// each on a reference device of its own, or all on `device`.
struct Rig {
  std::optional<Executor> accumulate, apply, forward;
  Rig(const TinyModel &model, int64_t global, std::shared_ptr<Device> device = nullptr) {
    std::string error;
    auto make = [&](const Program &p) {
      return device ? statusOut(Executor::create(p, device), error)
                    : statusOut(Executor::create(p, Precision::F32), error);
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
  int64_t collectiveCalls = 0; // the device path's (HostCollectives::calls)
};

/// Runs the trainer `created` and takes its state into `o`; the first
/// failure's message into o.error. Whether it got the state.
inline bool runInto(Expected<std::unique_ptr<Trainer>> created, RankOutcome &o) {
  if (!created.ok()) {
    o.error = created.status().message();
    return false;
  }
  std::unique_ptr<Trainer> t = created.take();
  if (Status ran = t->run(o.result); !ran.ok()) {
    o.error = ran.message();
    return false;
  }
  Expected<std::vector<TensorData>> state = t->stateTensors();
  if (!state.ok()) {
    o.error = state.status().message();
    return false;
  }
  o.state = state.take();
  return true;
}

struct RankOptions {
  bool fast = false;   // --allreduce fast
  bool device = false; // the device path: HostCollectives in NCCL's place
};

/// N ranks (threads) training with `k` micro-batches each.
inline std::vector<RankOutcome> trainOnRanks(const TinyModel &model, Data &data, int n, int64_t k,
                                             TrainConfig c, RankOptions options = {}) {
  ThreadGroup group(n);
  std::vector<RankOutcome> out(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      auto comm = group.rank(r);
      auto device = options.device ? std::make_shared<HostDevice>() : nullptr;
      std::optional<HostCollectives> coll;
      if (device)
        coll.emplace(*comm, device);
      Rig rig(model, n * k, device);
      TrainConfig rc = c;
      rc.accumulate = k;
      rc.comm = comm.get();
      rc.collectives = coll ? &*coll : nullptr;
      rc.fastSum = options.fast;
      rc.bucketBytes = 64; // many buckets: the pipeline, not one message
      RankOutcome &o = out[size_t(r)];
      runInto(Trainer::create(rc, rig.programs(), *data.train, &*data.val), o);
      o.collectiveCalls = coll ? coll->calls : 0;
    });
  for (auto &t : threads)
    t.join();
  return out;
}

inline RankOutcome trainAlone(const TinyModel &model, Data &data, int64_t global, TrainConfig c) {
  Rig rig(model, global);
  c.accumulate = global;
  RankOutcome o;
  runInto(Trainer::create(c, rig.programs(), *data.train, &*data.val), o);
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
