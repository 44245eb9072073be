//===- ThreadPoolTest.cpp - The CPU backend's threads ---------------------===//
//
// Every chunk runs exactly once per run, on more than one thread when there
// are workers; many short runs in a row (the executor's pattern) neither lose
// nor repeat chunks; kernels split by range and matmuls split by matrices or
// rows give the single-threaded results bit for bit, because the executor
// makes the same calls at every thread count (docs/determinism.md).
//
//===----------------------------------------------------------------------===//
#include "ProgramBuilder.h"
#include "test/unit/StatusTesting.h"

#include "runtime/core/Executor.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/ParallelChunks.h"
#include "runtime/cpu/ThreadPool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

using namespace einrt;
using einrt::test::ProgramBuilder;

namespace {

TEST(ThreadPool, EveryChunkOnceAndOnSeveralThreads) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.threads(), 4);
  std::vector<std::atomic<int>> hits(1000);
  std::mutex m;
  std::set<std::thread::id> ids;
  pool.run(1000, [&](int c) {
    hits[c].fetch_add(1);
    std::lock_guard<std::mutex> lock(m);
    ids.insert(std::this_thread::get_id());
  });
  for (auto &h : hits)
    EXPECT_EQ(h.load(), 1);
  EXPECT_GE(ids.size(), 1u);

  // Many short runs back to back: totals exact.
  std::atomic<int64_t> sum{0};
  for (int r = 0; r < 2000; ++r)
    pool.run(1 + r % 7, [&](int c) { sum.fetch_add(c + 1); });
  int64_t want = 0;
  for (int r = 0; r < 2000; ++r)
    for (int c = 0; c < 1 + r % 7; ++c)
      want += c + 1;
  EXPECT_EQ(sum.load(), want);

  // No chunks, one chunk, and a pool of one thread (the caller only).
  pool.run(0, [&](int) { ADD_FAILURE(); });
  ThreadPool single(1);
  EXPECT_EQ(single.threads(), 1);
  int calls = 0;
  single.run(3, [&](int) { ++calls; });
  EXPECT_EQ(calls, 3);
}

TEST(ThreadPool, DefaultThreadCountReadsTheEnvironment) {
  setenv("EINC_NUM_THREADS", "3", 1);
  EXPECT_EQ(defaultThreadCount(), 3);
  setenv("EINC_NUM_THREADS", "zero", 1); // not a count: the next variable
  setenv("OMP_NUM_THREADS", "5", 1);
  EXPECT_EQ(defaultThreadCount(), 5);
  unsetenv("EINC_NUM_THREADS");
  unsetenv("OMP_NUM_THREADS");
  setenv("OPENBLAS_NUM_THREADS", "2", 1);
  EXPECT_EQ(defaultThreadCount(), 2);
  unsetenv("OPENBLAS_NUM_THREADS");
  EXPECT_GE(defaultThreadCount(), 1);
}

// A kernel over [begin, end) of its parallel loop: out[i] = 3 * in[i].
void triple(void **args) {
  const float *x = *static_cast<float **>(args[0]);
  float *y = *static_cast<float **>(args[1]);
  int64_t begin = *static_cast<int64_t *>(args[2]), end = *static_cast<int64_t *>(args[3]);
  for (int64_t i = begin; i < end; ++i)
    y[i] = 3 * x[i];
}

// The same, recording every range it is called with.
std::mutex rangesMutex;
std::vector<std::pair<int64_t, int64_t>> ranges;
void tripleRecording(void **args) {
  {
    std::lock_guard<std::mutex> lock(rangesMutex);
    ranges.emplace_back(*static_cast<int64_t *>(args[2]), *static_cast<int64_t *>(args[3]));
  }
  triple(args);
}

/// A program of one split kernel and Matmul steps of every split kind
/// (see the comments), with random inputs.
struct SplitProgram {
  ProgramBuilder pb;
  int32_t x = -1;
  int64_t n = 3 * kParallelElements + 17; // uneven ranges
  KernelFn kernel;
  std::vector<std::vector<double>> args; // random, one per argument
  std::optional<Executor> serial;        // on a one-thread device

  /// An executor on a CPU device of its own with `threads`, given `args`.
  std::optional<Executor> make(int threads) const {
    auto ex = Executor::create(
        pb.p,
        std::make_shared<CpuDevice>(std::vector<KernelEntry>{KernelEntry(kernel, n)}, threads));
    EINC_EXPECT_OK(ex);
    for (size_t a = 0; ex.ok() && a < args.size(); ++a)
      EINC_EXPECT_OK(ex->setArgument(a, args[a].data(), args[a].size()));
    if (!ex.ok())
      return std::nullopt;
    return ex.take();
  }

  explicit SplitProgram(KernelFn kernel) : kernel(kernel) {
    x = pb.arg(DType::F32, {n});
    pb.result(pb.step(StepKind::Kernel, {x}, DType::F32, {n}, {}, 0));
    // Matmuls above kParallelMatmulFlops: 6 matrices of 100x100·100x100;
    // one 300x50·50x600 with A stored transposed (2 x 2 tiles); two
    // 263x40·40x530 with B stored transposed (rows and columns not a
    // multiple of anything: two column tiles each); 40
    // matrices of 40x40·40x40 (split by whole matrices).
    int32_t a = pb.arg(DType::F32, {6, 100, 100});
    int32_t b = pb.arg(DType::F32, {6, 100, 100});
    pb.result(pb.step(StepKind::Matmul, {a, b}, DType::F32, {6, 100, 100},
                      {{6, 100, 100, 100, 0, 0, 100, 100, 100, 10000, 10000, 10000}}));
    int32_t at = pb.arg(DType::F32, {50, 300});
    int32_t bt = pb.arg(DType::F32, {50, 600});
    pb.result(pb.step(StepKind::Matmul, {at, bt}, DType::F32, {300, 600},
                      {{1, 300, 600, 50, 1, 0, 300, 600, 600, 0, 0, 0}}));
    int32_t a2 = pb.arg(DType::F32, {2, 263, 40});
    int32_t b2 = pb.arg(DType::F32, {2, 530, 40});
    pb.result(pb.step(StepKind::Matmul, {a2, b2}, DType::F32, {2, 263, 530},
                      {{2, 263, 530, 40, 0, 1, 40, 40, 530, 263 * 40, 530 * 40, 263 * 530}}));
    int32_t a3 = pb.arg(DType::F32, {40, 40, 40});
    int32_t b3 = pb.arg(DType::F32, {40, 40, 40});
    pb.result(pb.step(StepKind::Matmul, {a3, b3}, DType::F32, {40, 40, 40},
                      {{40, 40, 40, 40, 0, 0, 40, 40, 40, 1600, 1600, 1600}}));
    static_assert(6 * 2.0 * 100 * 100 * 100 > kParallelMatmulFlops &&
                      2.0 * 300 * 600 * 50 > kParallelMatmulFlops &&
                      2 * 2.0 * 263 * 530 * 40 > kParallelMatmulFlops &&
                      40 * 2.0 * 40 * 40 * 40 > kParallelMatmulFlops,
                  "the matmuls must be large enough to be split");
    EXPECT_EQ(pb.p.validate().message(), "");
    std::mt19937 gen(9);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int32_t a : pb.p.arguments) {
      args.emplace_back(size_t(pb.p.buffers[size_t(a)].elementCount()));
      for (double &v : args.back())
        v = u(gen);
    }
    serial = make(1);
  }
};

// The determinism contract (docs/determinism.md): every thread count gives
// the single-threaded results bit for bit, matmuls cut into row blocks
// included, whatever BLAS kernel (OPENBLAS_CORETYPE) runs them.
TEST(ThreadPool, ExecutorSplitsKernelsAndMatmuls) {
  SplitProgram sp(&triple);
  ASSERT_TRUE(sp.serial);
  Executor &serial = *sp.serial;
  auto &cpu = static_cast<CpuDevice &>(serial.device());
  EXPECT_EQ(cpu.threads(), 1);
  EINC_ASSERT_OK(serial.run());
  for (int threads : {2, 3, 4}) {
    std::optional<Executor> made = sp.make(threads);
    ASSERT_TRUE(made);
    Executor &threaded = *made;
    EXPECT_EQ(static_cast<CpuDevice &>(threaded.device()).threads(), threads);
    EINC_ASSERT_OK(threaded.run());
    for (size_t r = 0; r < serial.resultCount(); ++r)
      EXPECT_EQ(threaded.getResult(r).values, serial.getResult(r).values)
          << "result " << r << " at " << threads << " threads";
  }
  // A shared pool; one of one thread means none.
  std::optional<Executor> made = sp.make(1);
  ASSERT_TRUE(made);
  Executor &sharing = *made;
  auto &shared = static_cast<CpuDevice &>(sharing.device());
  shared.setThreadPool(std::make_shared<ThreadPool>(2));
  EXPECT_EQ(shared.threads(), 2);
  EINC_ASSERT_OK(sharing.run());
  for (size_t r = 0; r < serial.resultCount(); ++r)
    EXPECT_EQ(sharing.getResult(r).values, serial.getResult(r).values) << "result " << r;
  shared.setThreadPool(std::make_shared<ThreadPool>(1));
  EXPECT_EQ(shared.threads(), 1);
  std::vector<double> y = serial.getResult(0).values;
  EXPECT_EQ(y[sp.n - 1], 3 * float(sp.args[0][sp.n - 1]));
}

// Bit-identical by construction: a kernel is called over the same ranges
// at every thread count (threads only pick which range they run).
TEST(ThreadPool, KernelRangesDoNotDependOnTheThreadCount) {
  SplitProgram sp(&tripleRecording);
  ASSERT_TRUE(sp.serial);
  std::vector<std::pair<int64_t, int64_t>> first;
  for (int threads : {1, 2, 3, 4}) {
    std::optional<Executor> made = sp.make(threads);
    ASSERT_TRUE(made);
    Executor &ex = *made;
    ranges.clear();
    EINC_ASSERT_OK(ex.run());
    std::sort(ranges.begin(), ranges.end());
    if (threads == 1) {
      first = ranges;
      EXPECT_GT(first.size(), 1u) << "the kernel is large enough to be cut";
      continue;
    }
    EXPECT_EQ(ranges, first) << threads << " threads";
  }
}

} // namespace
