//===- GemmThroughputTest.cpp - In-step GEMMs at the library's speed ------===//
//
// The cpu device cuts a Matmul step into chunks by shape alone (for
// bit-identity across thread counts, runtime/cpu/ParallelChunks.h). The cut
// must leave each call compute-bound: a step's GEMM at one thread runs at
// no less than 80% of the throughput of one library call over the whole
// matrix. Both are timed in this thread's CPU time, interleaved, medians:
// a ratio, so it holds on a loaded machine and on any CPU.
//
//===----------------------------------------------------------------------===//
#include "ProgramBuilder.h"
#include "test/unit/StatusTesting.h"

#include "runtime/core/Executor.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/GemmLibrary.h"
#include "runtime/cpu/GemmTable.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>

using namespace einrt;
using einrt::test::ProgramBuilder;

namespace {

double threadSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Shape {
  const char *what;
  bool transA, transB;
  int64_t m, n, k;
};

/// Isolated seconds over in-step seconds for one GEMM of `s` at one thread.
double inStepOverIsolated(const Shape &s) {
  Expected<const GemmLibrary *> found = gemmLibrary("openblas");
  EINC_EXPECT_OK(found);
  if (!found.ok())
    return 0;
  const GemmLibrary *openblas = *found;
  const int64_t lda = s.transA ? s.m : s.k, ldb = s.transB ? s.k : s.n;
  ProgramBuilder pb;
  int32_t a = pb.arg(DType::F32, {s.m * s.k});
  int32_t b = pb.arg(DType::F32, {s.k * s.n});
  pb.result(pb.step(StepKind::Matmul, {a, b}, DType::F32, {s.m, s.n},
                    {{1, s.m, s.n, s.k, s.transA, s.transB, lda, ldb, s.n, 0, 0, 0}}));
  auto device = std::make_shared<CpuDevice>(std::vector<KernelEntry>{}, 1);
  device->setGemmChooser(std::make_shared<GemmChooser>(openblas));
  auto ex = Executor::create(pb.p, device);
  EINC_EXPECT_OK(ex);
  if (!ex.ok())
    return 0;
  std::vector<double> av(size_t(s.m * s.k), 0.5), bv(size_t(s.k * s.n), 0.25);
  EINC_EXPECT_OK(ex->setArgument(0, av.data(), av.size()));
  EINC_EXPECT_OK(ex->setArgument(1, bv.data(), bv.size()));
  std::vector<float> af(av.begin(), av.end()), bf(bv.begin(), bv.end()), c(size_t(s.m * s.n));
  std::vector<double> inStep, isolated;
  for (int rep = 0; rep < 7; ++rep) {
    double t0 = threadSeconds();
    EINC_EXPECT_OK(ex->run());
    double t1 = threadSeconds();
    openblas->sgemm(s.transA, s.transB, s.m, s.n, s.k, 1.0f, af.data(), lda, bf.data(), ldb, 0.0f,
                    c.data(), s.n);
    double t2 = threadSeconds();
    if (rep > 0) { // the first of each warms caches and the library
      inStep.push_back(t1 - t0);
      isolated.push_back(t2 - t1);
    }
  }
  return median(isolated) / median(inStep);
}

// gpt's GEMMs (d = 256, ff = 1024, 2048 tokens): the weight gradient whose
// 16-row blocks once ran at half the library's speed, a tall activation
// product and its gradient.
TEST(GemmThroughput, InStepGemmsRunAtTheLibrarysSpeed) {
  for (const Shape &s : {Shape{"weight gradient", true, false, 256, 1024, 2048},
                         Shape{"activations", false, false, 2048, 256, 1024},
                         Shape{"input gradient", false, true, 2048, 1024, 256}}) {
    double ratio = inStepOverIsolated(s);
    EXPECT_GE(ratio, 0.8) << s.what << " " << s.m << "x" << s.n << "x" << s.k
                          << ": in-step throughput over one whole call";
    std::printf("%s %c%c %lldx%lldx%lld: in-step at %.0f%% of one call\n", s.what,
                s.transA ? 'T' : 'N', s.transB ? 'T' : 'N', (long long)s.m, (long long)s.n,
                (long long)s.k, 100 * ratio);
  }
}

} // namespace
