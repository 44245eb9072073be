//===- DistributedTest.cpp - Data parallelism on ranks that are threads ---===//
//
// The ordered sum against one process's left-to-right sum, bit for bit, and
// the Trainer on N ranks against one process with accumulate = N·k.
//
//===----------------------------------------------------------------------===//
#include "DistributedTestUtil.h"
#include "ThreadGroup.h"
#include "runtime/base/ShardPlan.h"
#include "runtime/dist/MpiCommunicator.h"
#include "runtime/dist/OrderedSum.h"
#include "runtime/train/Trainer.h"
#include "runtime/train/TrainerImpl.h"
#include "test/unit/StatusOut.h"

#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>
#include <mutex>
#include <random>
#include <thread>

using namespace einrt;
using namespace einrt::test;

namespace {

TEST(OrderedSum, EqualsOneProcessSumBitForBit) {
  const int64_t count = 37;
  for (int n : {1, 2, 3, 5})
    for (int64_t rounds : {1, 4})
      for (int64_t bucket : {1, 5, 1000}) {
        auto x = contributions(n * rounds, count, uint32_t(n * 100 + rounds * 10 + bucket));
        ThreadGroup group(n);
        auto rank = [&](Communicator &comm, int r, std::vector<float> &out, std::string &error) {
          OrderedSum sum(comm, count, bucket);
          for (int64_t j = 0; j < rounds; ++j) // round j: micro-batch j·n + r
            if (!statusOut(sum.addRound(x[size_t(j * n + r)].data(), j, rounds), error))
              return false;
          if (!statusOut(sum.finish(), error))
            return false;
          out = sum.sum();
          return true;
        };
        expectOneProcessSum(group, x, count, rank,
                            "n " + std::to_string(n) + " rounds " + std::to_string(rounds) +
                                " bucket " + std::to_string(bucket));
        // Buckets: one message per bucket per hop of the ring, then the
        // broadcast's; none with one rank.
        int64_t buckets = (count + bucket - 1) / bucket;
        EXPECT_EQ(group.messages(), n == 1 ? 0 : (n * rounds - 1) * buckets + (n - 1));
      }
}

// With a readiness gate (the contribution still being computed, released
// by another thread a few elements at a time): every bucket waits for its
// part, the gate is asked for bucket ends in order, and the sum is the same.
TEST(OrderedSum, WaitsForEachBucketsPartOfTheContribution) {
  const int64_t count = 37, bucket = 5, rounds = 2;
  for (int n : {1, 2, 3}) {
    auto x = contributions(n * rounds, count, uint32_t(n));
    ThreadGroup group(n);
    auto rank = [&](Communicator &comm, int r, std::vector<float> &out, std::string &error) {
      OrderedSum sum(comm, count, bucket);
      for (int64_t j = 0; j < rounds; ++j) {
        std::vector<float> part(size_t(count), std::nanf(""));
        std::mutex m;
        std::condition_variable changed;
        int64_t released = 0;
        std::vector<int64_t> asked;
        std::thread producer([&] { // 3 elements at a time
          for (int64_t at = 0; at < count; at += 3) {
            std::lock_guard<std::mutex> lock(m);
            for (int64_t i = at; i < std::min(count, at + 3); ++i)
              part[size_t(i)] = x[size_t(j * n + r)][size_t(i)];
            released = std::min(count, at + 3);
            changed.notify_all();
          }
        });
        auto ready = [&](int64_t end) {
          std::unique_lock<std::mutex> lock(m);
          asked.push_back(end);
          changed.wait(lock, [&] { return released >= end; });
          return true;
        };
        bool ok = statusOut(sum.addRound(part.data(), j, rounds, ready), error);
        producer.join();
        if (!ok)
          return false;
        EXPECT_EQ(asked, (std::vector<int64_t>{5, 10, 15, 20, 25, 30, 35, 37}));
      }
      if (!statusOut(sum.finish(), error))
        return false;
      out = sum.sum();
      return true;
    };
    expectOneProcessSum(group, x, count, rank, std::to_string(n) + " ranks, gated");
  }
  // A gate that gives up ends the round with a message.
  ThreadGroup one(1);
  auto comm = one.rank(0);
  OrderedSum sum(*comm, count, bucket);
  std::vector<float> zeros(size_t(count), 0.0f);
  Status added = sum.addRound(zeros.data(), 0, 1, [](int64_t end) { return end < 20; });
  EXPECT_EQ(added.code(), StatusCode::Invalid);
  EXPECT_EQ(added.message(), "the contribution of round 0 was never complete");
}

// The flat sum lies in the order @accumulate_grad finishes its results, so
// the ring's first buckets are ready first: here the table's gradient is
// final after step 0 and the loss after step 1.
TEST(OrderedSum, LaidOutInTheOrderTheStepsFinishTheResults) {
  ProgramBuilder b;
  int32_t loss = b.buffer(DType::F32, {}, BufferRole::Accumulator, "loss");
  int32_t table = b.buffer(DType::F32, {4}, BufferRole::Accumulator, "table");
  b.p.arguments = {loss, table};
  int32_t x = b.arg(DType::F32, {4}, "x");
  int32_t l = b.arg(DType::F32, {}, "l");
  int32_t table2 = b.step(StepKind::Add, {table, x}, DType::F32, {4});
  int32_t loss2 = b.step(StepKind::Add, {loss, l}, DType::F32, {});
  b.result(loss2, "loss");
  b.result(table2, "table");
  std::string error;
  auto g = statusOut(Executor::create(b.p, Precision::F32), error);
  ASSERT_TRUE(g) << error;
  Trainer::Impl I;
  I.accumulators = {{0, 0}, {1, 1}}; // (result, argument): the loss first
  trainer_detail::layOutByReadiness(I, *g);
  EXPECT_EQ(I.accOffsets, (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(I.accCount, 5);
  EXPECT_EQ(I.finishedBy, (std::vector<std::vector<size_t>>{{1}, {0}}));
  EXPECT_EQ(I.finalPrefix, (std::vector<int64_t>{4, 5}));
}

// The same sum in another order is not the same bits: what the test above
// would catch if the ring added out of turn.
TEST(OrderedSum, AnotherOrderDiffers) {
  auto x = contributions(6, 200, 7);
  int64_t differ = 0;
  for (size_t i = 0; i < 200; ++i) {
    float forward = 0, pairs = 0;
    for (int m = 0; m < 6; ++m)
      forward = forward + x[size_t(m)][i];
    pairs = (x[0][i] + x[1][i] + x[2][i]) + (x[3][i] + x[4][i] + x[5][i]);
    differ += bits(forward) != bits(pairs);
  }
  EXPECT_GT(differ, 0);
}

TEST(Distributed, RanksEqualOneProcessWithNTimesTheMicroBatches) {
  Data data;
  TinyModel model;
  model.batch = 2;
  TrainConfig c = config(25, 1);
  c.evalEvery = 10;
  RankOutcome alone = trainAlone(model, data, 6, c);
  ASSERT_TRUE(alone.error.empty()) << alone.error;
  // The ring on the host; the device path (HostCollectives in NCCL's place,
  // DeviceOrderedSum), one rank included: there it is not the compiled sum.
  for (bool device : {false, true})
    for (int n : {1, 2, 3, 6}) {
      if (n == 1 && !device)
        continue;
      auto ranks = trainOnRanks(model, data, n, 6 / n, c, {.device = device});
      const std::string what = std::to_string(n) + (device ? " device" : "") + " ranks, rank ";
      for (int r = 0; r < n; ++r) {
        const RankOutcome &o = ranks[size_t(r)];
        ASSERT_TRUE(o.error.empty()) << what << r << ": " << o.error;
        EXPECT_TRUE(sameBits(o.state, alone.state)) << what << r;
        EXPECT_EQ(o.result.lastLoss, alone.result.lastLoss) << what << r;
        // Per step on the device: an all-to-all per round, the all-gather.
        EXPECT_EQ(o.collectiveCalls, device ? 25 * (6 / n + 1) : 0) << what << r;
      }
      // Rank 0 alone evaluates.
      EXPECT_EQ(ranks[0].result.lastValLoss, alone.result.lastValLoss);
      if (n > 1) {
        EXPECT_FALSE(ranks[1].result.lastValLoss.has_value());
      }
    }
}

// A different order of the data (contiguous shares instead of the
// interleaved ones) or of the adds would not give these bits: the same run
// on other data does not.
TEST(Distributed, OtherMicroBatchesDiffer) {
  Data data;
  TinyModel model;
  model.batch = 2;
  TrainConfig c = config(10, 1);
  RankOutcome alone = trainAlone(model, data, 4, c);
  c.seed = 12;
  auto ranks = trainOnRanks(model, data, 2, 2, c);
  ASSERT_TRUE(ranks[0].error.empty()) << ranks[0].error;
  EXPECT_FALSE(sameBits(ranks[0].state, alone.state));
}

TEST(Distributed, FastSumIsCloseAndConsistentAcrossRanks) {
  Data data;
  TinyModel model;
  model.batch = 2;
  TrainConfig c = config(20, 1);
  RankOutcome alone = trainAlone(model, data, 4, c);
  for (bool device : {false, true}) { // the engine's all-reduce; NCCL's on the device path
    auto ranks = trainOnRanks(model, data, 2, 2, c, {.fast = true, .device = device});
    ASSERT_TRUE(ranks[0].error.empty() && ranks[1].error.empty())
        << ranks[0].error << ranks[1].error;
    EXPECT_TRUE(sameBits(ranks[0].state, ranks[1].state)); // every rank the same update
    EXPECT_EQ(ranks[0].collectiveCalls, device ? 20 : 0);  // one all-reduce per step
    auto x = ranks[0].state[0].toDoubles(), y = alone.state[0].toDoubles();
    ASSERT_EQ(x.size(), y.size());
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i)
      worst = std::max(worst, std::abs(x[i] - y[i]) / std::max(std::abs(y[i]), 1e-3));
    EXPECT_LT(worst, 1e-4) << (device ? "device" : "host");
  }
}

TEST(Distributed, RankZeroAloneWritesAndAnyRankCountResumes) {
  Data data;
  TinyModel model;
  model.batch = 2;
  TempDir one, many;
  TrainConfig c = config(30, 1);
  c.schedule.total = 30;
  c.checkpointDir = one.path;
  RankOutcome alone = trainAlone(model, data, 6, c);
  ASSERT_TRUE(alone.error.empty()) << alone.error;

  c.checkpointDir = many.path;
  c.steps = 12;
  auto first = trainOnRanks(model, data, 3, 2, c);
  for (const auto &o : first)
    ASSERT_TRUE(o.error.empty()) << o.error;
  size_t files = 0;
  for (auto &e : std::filesystem::directory_iterator(many.path))
    files += e.is_regular_file();
  EXPECT_EQ(files, 1u); // last.safetensors, once
  c.steps = 30;
  c.resume = true;
  auto rest = trainOnRanks(model, data, 2, 3, c); // another rank count
  for (const auto &o : rest)
    ASSERT_TRUE(o.error.empty()) << o.error;
  EXPECT_TRUE(sameBits(rest[0].state, alone.state));
  EXPECT_TRUE(sameBits(rest[1].state, alone.state));
}

// ZeRO-1's plan: largest first to the least-loaded rank, ties to the lower.
TEST(ShardPlan, BalancesBySizeDeterministically) {
  EXPECT_EQ(shardOwners({12, 4}, 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(shardOwners({4, 12}, 2), (std::vector<int>{1, 0}));
  EXPECT_EQ(shardOwners({5, 5, 5, 5}, 2), (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(shardOwners({7, 3, 9}, 1), (std::vector<int>{0, 0, 0}));
  // gpt-like: one big embedding, many equal layers; every rank within the
  // largest param of the mean.
  std::vector<int64_t> sizes{65536, 32768};
  for (int l = 0; l < 8; ++l)
    for (int64_t e : {256, 256, 196608, 65536, 256, 256, 262144, 262144})
      sizes.push_back(e);
  for (int n : {2, 3, 4}) {
    std::vector<int> owner = shardOwners(sizes, n);
    std::vector<int64_t> load(size_t(n), 0);
    int64_t total = 0;
    for (size_t k = 0; k < sizes.size(); ++k) {
      ASSERT_GE(owner[k], 0);
      ASSERT_LT(owner[k], n);
      load[size_t(owner[k])] += sizes[k];
      total += sizes[k];
    }
    for (int64_t l : load)
      EXPECT_LE(std::abs(l - total / n), 262144) << n;
  }
}

// The GPU of a rank: its local rank as the launcher says, Open MPI's word
// first; a word that is not a rank is passed over.
TEST(Launcher, LocalRankFromTheLaunchersVariables) {
  const char *names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
                         "LOCAL_RANK"};
  std::vector<std::pair<std::string, std::string>> saved;
  for (const char *n : names)
    if (const char *v = std::getenv(n))
      saved.emplace_back(n, v);
  for (const char *n : names)
    unsetenv(n);
  EXPECT_EQ(launcherLocalRank(), 0);
  setenv("LOCAL_RANK", "3", 1);
  EXPECT_EQ(launcherLocalRank(), 3);
  setenv("SLURM_LOCALID", "2", 1);
  EXPECT_EQ(launcherLocalRank(), 2);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  EXPECT_EQ(launcherLocalRank(), 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "one", 1);
  EXPECT_EQ(launcherLocalRank(), 2);
  for (const char *n : names)
    unsetenv(n);
  for (const auto &[n, v] : saved)
    setenv(n.c_str(), v.c_str(), 1);
}

} // namespace
