//===- DeviceCollectivesTest.cpp - The gradient sum on the device ---------===//
//
// runtime/DeviceOrderedSum.h and the trainer's device path (what
// `--distributed nccl` runs on GPUs) on host collectives whose ranks are
// threads: the sum against one process's left-to-right sum bit for bit,
// and the Trainer on N ranks, one included, against one process with
// accumulate = N·k.
//
//===----------------------------------------------------------------------===//
#include "DistributedTestUtil.h"
#include "HostCollectives.h"
#include "ThreadGroup.h"
#include "runtime/DeviceOrderedSum.h"

#include <gtest/gtest.h>
#include <thread>

using namespace einrt;
using namespace einrt::test;

namespace {

TEST(DeviceOrderedSum, EqualsOneProcessSumBitForBit) {
  for (int n : {1, 2, 3, 5})
    for (int64_t rounds : {1, 4})
      for (int64_t count : {1, 37, 40}) { // 37: slices padded past the count
        auto x = contributions(n * rounds, count, uint32_t(n * 1000 + rounds * 100 + count));
        std::vector<float> want(size_t(count), 0.0f);
        for (const auto &v : x) // one process: micro-batch 0, 1, 2, ...
          for (int64_t i = 0; i < count; ++i)
            want[size_t(i)] = want[size_t(i)] + v[size_t(i)];
        ThreadGroup group(n);
        std::vector<std::vector<float>> got(static_cast<size_t>(n));
        std::vector<std::string> errors(static_cast<size_t>(n));
        std::vector<std::thread> threads;
        for (int r = 0; r < n; ++r)
          threads.emplace_back([&, r] {
            auto comm = group.rank(r);
            HostCollectives coll(*comm, std::make_shared<HostDevice>());
            std::string &error = errors[size_t(r)];
            auto sum = DeviceOrderedSum::create(coll, count, error);
            if (!sum)
              return;
            EXPECT_EQ(sum->sliceElements(), (count + n - 1) / n);
            for (int64_t j = 0; j < rounds; ++j) { // round j: micro-batch j·n + r
              std::memcpy(sum->contribution(), x[size_t(j * n + r)].data(), size_t(count) * 4);
              if (!sum->addRound(j, error))
                return;
            }
            if (sum->finish(error))
              got[size_t(r)].assign(sum->sum(), sum->sum() + count);
          });
        for (auto &t : threads)
          t.join();
        for (int r = 0; r < n; ++r) {
          ASSERT_TRUE(errors[size_t(r)].empty()) << errors[size_t(r)];
          ASSERT_EQ(got[size_t(r)].size(), size_t(count));
          for (int64_t i = 0; i < count; ++i)
            ASSERT_EQ(bits(got[size_t(r)][size_t(i)]), bits(want[size_t(i)]))
                << "n " << n << " rounds " << rounds << " count " << count << " rank " << r
                << " element " << i;
        }
      }
}

TEST(DeviceOrderedSum, TheF64ReferenceDeviceSaysItCannot) {
  ThreadGroup group(1);
  auto comm = group.rank(0);
  HostCollectives coll(*comm, std::make_shared<HostDevice>(Precision::F64));
  std::string error;
  auto sum = DeviceOrderedSum::create(coll, 8, error);
  ASSERT_TRUE(sum) << error;
  EXPECT_FALSE(sum->addRound(0, error));
  EXPECT_NE(error.find("stores floats as doubles"), std::string::npos) << error;
}

struct DeviceOutcome : RankOutcome {
  int64_t collectiveCalls = 0;
};

/// N ranks (threads) with `k` micro-batches each, the gradients summed by
/// the device path.
std::vector<DeviceOutcome> trainOnDeviceRanks(const TinyModel &model, Data &data, int n, int64_t k,
                                              TrainConfig c, bool fast = false) {
  ThreadGroup group(n);
  std::vector<DeviceOutcome> out(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      auto comm = group.rank(r);
      auto device = std::make_shared<HostDevice>();
      HostCollectives coll(*comm, device);
      Rig rig(model, n * k, device);
      TrainConfig rc = c;
      rc.accumulate = k;
      rc.comm = comm.get();
      rc.collectives = &coll;
      rc.fastSum = fast;
      DeviceOutcome &o = out[size_t(r)];
      auto t = Trainer::create(rc, rig.programs(), *data.train, &*data.val, o.error);
      if (!t)
        return;
      if (t->run(o.result, o.error))
        t->stateTensors(o.state, o.error);
      o.collectiveCalls = coll.calls;
    });
  for (auto &t : threads)
    t.join();
  return out;
}

TEST(DeviceCollectives, RanksEqualOneProcessWithNTimesTheMicroBatches) {
  Data data;
  TinyModel model;
  model.batch = 2;
  TrainConfig c = config(25, 1);
  c.evalEvery = 10;
  RankOutcome alone = trainAlone(model, data, 6, c);
  ASSERT_TRUE(alone.error.empty()) << alone.error;
  for (int n : {1, 2, 3}) { // one rank too: the device path, not the compiled sum
    auto ranks = trainOnDeviceRanks(model, data, n, 6 / n, c);
    for (int r = 0; r < n; ++r) {
      const DeviceOutcome &o = ranks[size_t(r)];
      ASSERT_TRUE(o.error.empty()) << n << " ranks, rank " << r << ": " << o.error;
      EXPECT_TRUE(sameBits(o.state, alone.state)) << n << " ranks, rank " << r;
      EXPECT_EQ(o.result.lastLoss, alone.result.lastLoss);
      // Per step: an all-to-all per round and the all-gather.
      EXPECT_EQ(o.collectiveCalls, 25 * (6 / n + 1)) << n << " ranks";
    }
    EXPECT_EQ(ranks[0].result.lastValLoss, alone.result.lastValLoss);
  }
}

TEST(DeviceCollectives, FastSumIsCloseAndTheSameOnEveryRank) {
  Data data;
  TinyModel model;
  model.batch = 2;
  TrainConfig c = config(20, 1);
  RankOutcome alone = trainAlone(model, data, 4, c);
  auto ranks = trainOnDeviceRanks(model, data, 2, 2, c, /*fast=*/true);
  ASSERT_TRUE(ranks[0].error.empty() && ranks[1].error.empty()) << ranks[0].error << ranks[1].error;
  EXPECT_TRUE(sameBits(ranks[0].state, ranks[1].state));
  EXPECT_EQ(ranks[0].collectiveCalls, 20); // one all-reduce per step
  auto x = ranks[0].state[0].toDoubles(), y = alone.state[0].toDoubles();
  ASSERT_EQ(x.size(), y.size());
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, std::abs(x[i] - y[i]) / std::max(std::abs(y[i]), 1e-3));
  EXPECT_LT(worst, 1e-4);
}

// ZeRO-1 on the device path: rank 0 owns the one param (runtime/ShardPlan.h)
// and broadcasts it after each update, buffer to buffer; rank 1's program
// has no update and no state. Both end with one process's param.
TEST(DeviceCollectives, ShardedOptimizerBroadcastsParamsOnTheDevice) {
  Data data;
  TinyModel model;
  model.batch = 2;
  TrainConfig c = config(12, 1);
  RankOutcome alone = trainAlone(model, data, 6, c);
  ASSERT_TRUE(alone.error.empty()) << alone.error;
  ThreadGroup group(2);
  std::vector<DeviceOutcome> out(2);
  std::vector<std::vector<double>> table(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      auto comm = group.rank(r);
      auto device = std::make_shared<HostDevice>();
      HostCollectives coll(*comm, device);
      Rig rig(model, 6, device);
      DeviceOutcome &o = out[size_t(r)];
      if (r == 1)
        rig.apply = Executor::create(model.applyOwningNothing(), device, o.error);
      TrainConfig rc = c;
      rc.accumulate = 3;
      rc.comm = comm.get();
      rc.collectives = &coll;
      rc.shardOptimizer = true;
      auto t = Trainer::create(rc, rig.programs(), *data.train, &*data.val, o.error);
      if (!t || !t->run(o.result, o.error))
        return;
      t->stateTensors(o.state, o.error);
      rig.apply->read(size_t(rig.apply->program().arguments[0]), table[size_t(r)], o.error);
      o.collectiveCalls = coll.calls;
    });
  for (auto &t : threads)
    t.join();
  ASSERT_TRUE(out[0].error.empty() && out[1].error.empty()) << out[0].error << out[1].error;
  auto want = alone.state[0].toDoubles(); // table, then table.m
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(table[size_t(r)], want) << "rank " << r;
    // Per step: 3 all-to-alls, the all-gather, the param's broadcast.
    EXPECT_EQ(out[size_t(r)].collectiveCalls, 12 * 5) << "rank " << r;
  }
  EXPECT_TRUE(sameBits(out[0].state, alone.state)); // rank 0 holds all the state
}

TEST(DeviceCollectives, RefusesCollectivesOfAnotherDeviceOrOtherRanks) {
  Data data;
  TinyModel model;
  model.batch = 2;
  ThreadGroup group(1);
  auto comm = group.rank(0);
  HostCollectives elsewhere(*comm, std::make_shared<HostDevice>());
  Rig rig(model, 2, std::make_shared<HostDevice>());
  TrainConfig c = config(2, 2);
  c.comm = comm.get();
  c.collectives = &elsewhere;
  std::string error;
  EXPECT_FALSE(Trainer::create(c, rig.programs(), *data.train, &*data.val, error));
  EXPECT_NE(error.find("move another device's memory"), std::string::npos) << error;

  ThreadGroup two(2);
  auto other = two.rank(1);
  HostCollectives wrongRanks(*other, rig.accumulate->sharedDevice());
  c.collectives = &wrongRanks;
  EXPECT_FALSE(Trainer::create(c, rig.programs(), *data.train, &*data.val, error));
  EXPECT_NE(error.find("are not the ranks of the run"), std::string::npos) << error;
}

} // namespace
