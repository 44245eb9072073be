//===- DeviceCollectivesTest.cpp - The gradient sum on the device ---------===//
//
// runtime/dist/DeviceOrderedSum.h and the trainer's device path (what
// `--distributed nccl` runs on GPUs) on host collectives whose ranks are
// threads: the sum against one process's left-to-right sum bit for bit,
// ZeRO-1's params broadcast on the device, and what the trainer refuses.
// (The device path against one process, ordered and fast, one rank
// included: DistributedTest.cpp.)
//
//===----------------------------------------------------------------------===//
#include "DistributedTestUtil.h"
#include "HostCollectives.h"
#include "ThreadGroup.h"
#include "runtime/dist/DeviceOrderedSum.h"
#include "runtime/train/TrainerImpl.h"
#include "test/unit/StatusOut.h"

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
        ThreadGroup group(n);
        auto rank = [&](Communicator &comm, int r, std::vector<float> &out, std::string &error) {
          HostCollectives coll(comm, std::make_shared<HostDevice>());
          auto created = DeviceOrderedSum::create(coll, count);
          if (!statusOut(created.status(), error))
            return false;
          std::unique_ptr<DeviceOrderedSum> sum = created.take();
          EXPECT_EQ(sum->sliceElements(), (count + n - 1) / n);
          for (int64_t j = 0; j < rounds; ++j) { // round j: micro-batch j·n + r
            std::memcpy(sum->contribution(), x[size_t(j * n + r)].data(), size_t(count) * 4);
            if (!statusOut(sum->addRound(j), error))
              return false;
          }
          if (!statusOut(sum->finish(), error))
            return false;
          out.assign(sum->sum(), sum->sum() + count);
          return true;
        };
        expectOneProcessSum(group, x, count, rank,
                            "n " + std::to_string(n) + " rounds " + std::to_string(rounds) +
                                " count " + std::to_string(count));
      }
}

TEST(DeviceOrderedSum, TheF64ReferenceDeviceSaysItCannot) {
  ThreadGroup group(1);
  auto comm = group.rank(0);
  HostCollectives coll(*comm, std::make_shared<HostDevice>(Precision::F64));
  auto sum = DeviceOrderedSum::create(coll, 8);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  Status added = (*sum)->addRound(0);
  EXPECT_FALSE(added.ok());
  EXPECT_NE(added.message().find("stores floats as doubles"), std::string::npos) << added.message();
}

// ZeRO-1 on the device path: rank 0 owns the one param (runtime/base/ShardPlan.h)
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
  std::vector<RankOutcome> out(2);
  std::vector<std::vector<double>> table(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      auto comm = group.rank(r);
      auto device = std::make_shared<HostDevice>();
      HostCollectives coll(*comm, device);
      Rig rig(model, 6, device);
      RankOutcome &o = out[size_t(r)];
      if (r == 1)
        rig.apply = statusOut(Executor::create(model.applyOwningNothing(), device), o.error);
      TrainConfig rc = c;
      rc.accumulate = 3;
      rc.comm = comm.get();
      rc.collectives = &coll;
      rc.shardOptimizer = true;
      if (!runInto(Trainer::create(rc, rig.programs(), *data.train, &*data.val), o))
        return;
      statusOut(rig.apply->read(size_t(rig.apply->program().arguments[0])), table[size_t(r)],
                o.error);
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
  std::string error =
      failureOf(Trainer::create(c, rig.programs(), *data.train, &*data.val), StatusCode::Invalid);
  EXPECT_NE(error.find("move another device's memory"), std::string::npos) << error;

  ThreadGroup two(2);
  auto other = two.rank(1);
  HostCollectives wrongRanks(*other, rig.accumulate->sharedDevice());
  c.collectives = &wrongRanks;
  error =
      failureOf(Trainer::create(c, rig.programs(), *data.train, &*data.val), StatusCode::Invalid);
  EXPECT_NE(error.find("are not the ranks of the run"), std::string::npos) << error;
}

} // namespace
