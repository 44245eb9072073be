//===- CpuStepsTest.cpp - The CPU backend's Matmul and Kernel steps -------===//
//
// Matmul against a plain triple loop for each transpose / leading-dimension /
// batch-stride combination; validation of bad plans; Kernel steps through a
// hand-written table; Float64 executors refusing both kinds.
//
//===----------------------------------------------------------------------===//
#include "ProgramBuilder.h"
#include "test/unit/StatusTesting.h"

#include "runtime/core/Executor.h"
#include "runtime/core/StepProfile.h"
#include "runtime/cpu/CpuDevice.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace einrt;
using einrt::test::ProgramBuilder;

namespace {

/// An executor of `p` on a CPU device with `kernels`.
Expected<Executor> onCpu(const Program &p, std::vector<KernelEntry> kernels = {}) {
  return Executor::create(p, std::make_shared<CpuDevice>(std::move(kernels)));
}

std::vector<double> randoms(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (double &x : v)
    x = float(u(gen));
  return v;
}

struct MatmulCase {
  int64_t batch, m, n, k;
  bool ta, tb;
  int64_t padA, padB; // extra elements per row (ld = cols + pad)
};

/// C[b] = op(A[b]) · op(B[b]) by loops over the stored layout.
std::vector<double> expected(const MatmulCase &c, const std::vector<double> &a, int64_t lda,
                             int64_t sa, const std::vector<double> &b, int64_t ldb, int64_t sb) {
  std::vector<double> out(c.batch * c.m * c.n, 0.0);
  for (int64_t z = 0; z < c.batch; ++z)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < c.k; ++p) {
          double x = c.ta ? a[z * sa + p * lda + i] : a[z * sa + i * lda + p];
          double y = c.tb ? b[z * sb + j * ldb + p] : b[z * sb + p * ldb + j];
          s += x * y;
        }
        out[(z * c.m + i) * c.n + j] = s;
      }
  return out;
}

TEST(CpuSteps, MatmulLayouts) {
  const MatmulCase cases[] = {
      {1, 3, 5, 4, false, false, 0, 0}, {1, 3, 5, 4, true, false, 0, 0},
      {1, 3, 5, 4, false, true, 0, 0},  {1, 3, 5, 4, true, true, 0, 0},
      {3, 2, 6, 5, false, false, 0, 0}, {3, 2, 6, 5, true, true, 2, 3},
      {2, 1, 7, 3, false, false, 1, 0}, {1, 4, 1, 1, false, false, 0, 0},
      {2, 3, 4, 0, false, false, 0, 0},
  };
  for (const MatmulCase &c : cases) {
    int64_t aRows = c.ta ? c.k : c.m, aCols = c.ta ? c.m : c.k;
    int64_t bRows = c.tb ? c.n : c.k, bCols = c.tb ? c.k : c.n;
    int64_t lda = std::max<int64_t>(1, aCols + c.padA), ldb = std::max<int64_t>(1, bCols + c.padB);
    int64_t sa = aRows * lda, sb = bRows * ldb;
    ProgramBuilder pb;
    int32_t a = pb.arg(DType::F32, {std::max<int64_t>(1, c.batch * sa)});
    int32_t b = pb.arg(DType::F32, {std::max<int64_t>(1, c.batch * sb)});
    pb.result(pb.step(StepKind::Matmul, {a, b}, DType::F32, {c.batch, c.m, c.n},
                      {{c.batch, c.m, c.n, c.k, c.ta, c.tb, lda, ldb, std::max<int64_t>(1, c.n), sa,
                        sb, c.m * c.n}}));
    EINC_ASSERT_OK_AND_ASSIGN(auto ex, onCpu(pb.p));
    auto av = randoms(ex.elementCount(a), 1), bv = randoms(ex.elementCount(b), 2);
    EINC_ASSERT_OK(ex.setArgument(0, av.data(), av.size()));
    EINC_ASSERT_OK(ex.setArgument(1, bv.data(), bv.size()));
    // A stale result must be overwritten (K = 0 included).
    size_t result = size_t(pb.p.results[0]);
    std::vector<double> stale(size_t(ex.elementCount(result)), 42.0);
    EINC_ASSERT_OK(ex.write(result, stale.data(), stale.size()));
    EINC_ASSERT_OK(ex.run());
    auto want = expected(c, av, lda, sa, bv, ldb, sb);
    auto got = ex.getResult(0).values;
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-5)
          << "case batch " << c.batch << " ta " << c.ta << " tb " << c.tb << " element " << i;
  }
}

// The Accumulate epilogue: C += op(A) · op(B) on a C that holds a value
// (an argument here; a temporary must be written by an earlier step).
TEST(CpuSteps, MatmulAccumulates) {
  for (int64_t k : {4, 0}) {
    ProgramBuilder pb;
    int32_t a = pb.arg(DType::F32, {3, std::max<int64_t>(1, k)});
    int32_t b = pb.arg(DType::F32, {std::max<int64_t>(1, k), 5});
    int32_t c = pb.buffer(DType::F32, {3, 5}, BufferRole::Param, "c");
    pb.p.arguments.push_back(c);
    GemmDesc g = ProgramBuilder::gemmOf({1, 3, 5, k, 0, 0, std::max<int64_t>(1, k), 5, 5, 0, 0, 0});
    g.epilogue = GemmEpilogue::Accumulate;
    pb.p.steps.emplace_back(StepKind::Matmul, std::vector<int32_t>{a, b}, c, g, "test");
    pb.result(c);
    ASSERT_EQ(pb.p.validate().message(), "");
    EINC_ASSERT_OK_AND_ASSIGN(auto ex, onCpu(pb.p));
    auto av = randoms(ex.elementCount(a), 3), bv = randoms(ex.elementCount(b), 4);
    auto cv = randoms(15, 5);
    EINC_ASSERT_OK(ex.setArgument(0, av.data(), av.size()));
    EINC_ASSERT_OK(ex.setArgument(1, bv.data(), bv.size()));
    EINC_ASSERT_OK(ex.setArgument(2, cv.data(), cv.size()));
    EINC_ASSERT_OK(ex.run());
    auto got = ex.getResult(0).values;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        double want = cv[i * 5 + j];
        for (int64_t p = 0; p < k; ++p)
          want += av[i * k + p] * bv[p * 5 + j];
        EXPECT_NEAR(got[i * 5 + j], want, 1e-5) << "k " << k << " at " << i << ", " << j;
      }
  }
  // Accumulating into a temporary nothing wrote is an error.
  ProgramBuilder pb;
  int32_t a = pb.arg(DType::F32, {3, 4}), b = pb.arg(DType::F32, {4, 5});
  int32_t c =
      pb.step(StepKind::Matmul, {a, b}, DType::F32, {3, 5}, {{1, 3, 5, 4, 0, 0, 4, 5, 5, 0, 0, 0}});
  pb.p.steps.back().as<GemmDesc>().epilogue = GemmEpilogue::Accumulate;
  pb.result(c);
  EXPECT_NE(pb.p.validate().message().find("accumulates into temporary"), std::string::npos)
      << pb.p.validate().message();
}

Program matmulProgram(std::vector<int64_t> plan, std::vector<int64_t> aShape = {3, 4},
                      std::vector<int64_t> bShape = {4, 5}, std::vector<int64_t> cShape = {3, 5}) {
  ProgramBuilder pb;
  int32_t a = pb.arg(DType::F32, aShape);
  int32_t b = pb.arg(DType::F32, bShape);
  pb.result(pb.step(StepKind::Matmul, {a, b}, DType::F32, cShape, {plan}));
  return pb.p;
}

TEST(CpuSteps, MatmulValidation) {
  // {batch, M, N, K, transA, transB, lda, ldb, ldc, strideA, strideB, strideC}
  EXPECT_EQ(matmulProgram({1, 3, 5, 4, 0, 0, 4, 5, 5, 0, 0, 0}).validate().message(), "");
  auto expectError = [](const Program &p, const std::string &part) {
    std::string e = p.validate().message();
    EXPECT_NE(e.find(part), std::string::npos) << e;
  };
  expectError(matmulProgram({1, 3, 5, 4, 0, 0, 3, 5, 5, 0, 0, 0}), "lda 3 must be at least 4");
  expectError(matmulProgram({1, 3, 5, 4, 0, 0, 5, 5, 5, 0, 0, 0}), "A: 1 x 3 x 4");
  expectError(matmulProgram({1, 3, 5, 5, 0, 0, 5, 5, 5, 0, 0, 0}), "reach beyond");
  expectError(matmulProgram({2, 3, 5, 4, 0, 0, 4, 5, 5, 0, 0, 15}), "reach beyond");
  expectError(matmulProgram({1, 3, 4, 4, 0, 0, 4, 4, 4, 0, 0, 0}), "writes 12 elements");
  expectError(matmulProgram({-1, 3, 5, 4, 0, 0, 4, 5, 5, 0, 0, 0}), "batch, M, N, K");
  expectError(matmulProgram({1, 3, 5, 4, 0, 0, 4, 5, 5, -1, 0, 0}), "strides must be >= 0");
  expectError(
      matmulProgram({2, 3, 5, 4, 0, 0, 4, 5, 5, 12, 20, 5}, {2, 3, 4}, {2, 4, 5}, {2, 3, 5}),
      "overlap");
  // Huge strides are an error, not an overflow.
  expectError(matmulProgram({2, 3, 5, 4, 0, 0, 4, 5, 5, int64_t(1) << 62, 0, 15}, {2, 3, 4},
                            {2, 4, 5}, {2, 3, 5}),
              "reach beyond");
  // Outer loops: {count, strideA, strideB, strideC} each; C dense.
  auto withLoops = [](std::vector<int64_t> loops) {
    Program p = matmulProgram({3, 3, 5, 4, 0, 0, 4, 5, 5, 12, 20, 15}, {2, 3, 3, 4}, {2, 3, 4, 5},
                              {2, 3, 3, 5});
    p.steps[0].as<GemmDesc>() =
        ProgramBuilder::gemmOf({3, 3, 5, 4, 0, 0, 4, 5, 5, 12, 20, 15}, loops);
    return p;
  };
  EXPECT_EQ(withLoops({2, 36, 60, 45}).validate().message(), "");
  expectError(withLoops({-2, 36, 60, 45}), "counts and strides must be >= 0");
  expectError(withLoops({2, 36, 60, 40}), "not the dense stride 45");
  expectError(withLoops({2, 37, 60, 45}), "reach beyond");
  expectError(withLoops({3, 36, 60, 45}), "reach beyond");
  // f32, bf16, f16 only (no f64), operands of one type, f32 sums.
  ProgramBuilder pb;
  int32_t a = pb.arg(DType::F64, {3, 4}), b = pb.arg(DType::F64, {4, 5});
  pb.result(pb.step(StepKind::Matmul, {a, b}, DType::F64, {3, 5},
                    {{1, 3, 5, 4, 0, 0, 4, 5, 5, 0, 0, 0}}));
  expectError(pb.p, "operands must share one of 'f32', 'bf16', 'f16'");
  // The descriptor's element types are the buffers'.
  Program mismatch = matmulProgram({1, 3, 5, 4, 0, 0, 4, 5, 5, 0, 0, 0});
  mismatch.steps[0].as<GemmDesc>().b = DType::BF16;
  expectError(mismatch, "descriptor types 'f32', 'bf16' -> 'f32' differ from the buffers'");
}

// A hand-written "compiled kernel": out = in0 * 2 (f32), counting calls.
int calls = 0;
void doubleIt(void **args) {
  const float *in = *static_cast<float **>(args[0]);
  float *out = *static_cast<float **>(args[1]);
  for (int i = 0; i < 3; ++i)
    out[i] = 2 * in[i];
  ++calls;
}
// in0 (i32), in1 (i1) → out (f32) = in0 where in1 else -1.
void pick(void **args) {
  const int32_t *x = *static_cast<int32_t **>(args[0]);
  const uint8_t *c = *static_cast<uint8_t **>(args[1]);
  float *out = *static_cast<float **>(args[2]);
  for (int i = 0; i < 3; ++i)
    out[i] = c[i] ? float(x[i]) : -1.0f;
}

TEST(CpuSteps, MatmulOuterLoops) {
  // C[i][j] = A[j][i] · B[i][j]: A's batch dims swapped, so (i, j) is an
  // outer loop over i and a batch over j.
  const int64_t I = 2, J = 3, M = 2, K = 3, N = 2;
  ProgramBuilder pb;
  int32_t a = pb.arg(DType::F32, {J, I, M, K});
  int32_t b = pb.arg(DType::F32, {I, J, K, N});
  int32_t c = pb.step(
      StepKind::Matmul, {a, b}, DType::F32, {I, J, M, N},
      {{J, M, N, K, 0, 0, K, N, N, I * M * K, K * N, M * N}, {I, M * K, J * K * N, J * M * N}});
  pb.result(c);
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, onCpu(pb.p));
  auto av = randoms(J * I * M * K, 3), bv = randoms(I * J * K * N, 4);
  EINC_ASSERT_OK(ex.setArgument(0, av.data(), av.size()));
  EINC_ASSERT_OK(ex.setArgument(1, bv.data(), bv.size()));
  EINC_ASSERT_OK(ex.run());
  auto got = ex.getResult(0).values;
  for (int64_t i = 0; i < I; ++i)
    for (int64_t j = 0; j < J; ++j)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          double s = 0;
          for (int64_t k = 0; k < K; ++k)
            s += av[((j * I + i) * M + m) * K + k] * bv[((i * J + j) * K + k) * N + n];
          EXPECT_NEAR(got[((i * J + j) * M + m) * N + n], s, 1e-5);
        }
}

TEST(CpuSteps, KernelTable) {
  ProgramBuilder pb;
  int32_t x = pb.arg(DType::F32, {3});
  int32_t ids = pb.arg(DType::I32, {3});
  int32_t mask = pb.constant(DType::I1, {3}, {1, 0, 1});
  int32_t y = pb.step(StepKind::Kernel, {x}, DType::F32, {3}, {}, 0);
  int32_t z = pb.step(StepKind::Kernel, {ids, mask}, DType::F32, {3}, {}, 1);
  pb.result(y);
  pb.result(z);
  // No table, too small a table, a null entry: the device refuses the
  // program before anything is allocated, naming the step.
  EINC_EXPECT_STATUS(onCpu(pb.p), StatusCode::Invalid,
                     "step 0 (test kernel) launches kernel 0, but the cpu device was given no "
                     "kernels");
  EINC_EXPECT_STATUS(onCpu(pb.p, {&doubleIt}), StatusCode::Invalid,
                     "launches kernel 1, which is not in the cpu device's table of 1 kernels");
  EINC_EXPECT_STATUS(onCpu(pb.p, {&doubleIt, nullptr}), StatusCode::Invalid, "");
  // Nor does a device whose table shrinks later run it.
  auto device = std::make_shared<CpuDevice>(std::vector<KernelEntry>{&doubleIt, &pick});
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(pb.p, device));
  double xv[] = {1, 2, 3};
  int32_t iv[] = {7, 8, 9};
  EINC_ASSERT_OK(ex.setArgument(0, xv, 3));
  EINC_ASSERT_OK(ex.setArgument(1, iv, 3));
  device->setKernels({&doubleIt});
  EINC_EXPECT_STATUS(ex.run(), StatusCode::Internal,
                     "step 1 (kernel, test kernel): kernel 1 is not in the cpu device's table");

  calls = 0;
  device->setKernels({&doubleIt, &pick});
  EINC_ASSERT_OK(ex.run());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(ex.getResult(0).values, (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(ex.getResult(1).values, (std::vector<double>{7, -1, 9}));
}

TEST(CpuSteps, KernelValidation) {
  ProgramBuilder pb;
  int32_t x = pb.arg(DType::F64, {3});
  pb.result(pb.step(StepKind::Kernel, {x}, DType::F32, {3}, {}, 0));
  EXPECT_NE(pb.p.validate().message().find("compiled kernels take f32, bf16, f16, i32 and i1"),
            std::string::npos);
  ProgramBuilder neg;
  int32_t y = neg.arg(DType::F32, {3});
  neg.result(neg.step(StepKind::Kernel, {y}, DType::F32, {3}, {}, -2));
  EXPECT_NE(neg.p.validate().message().find("kernel index -2 is negative"), std::string::npos);
}

// A "fused kernel" with two outputs: out0 = x + 1, out1 = x * x.
void plusOneAndSquare(void **args) {
  const float *x = *static_cast<float **>(args[0]);
  float *a = *static_cast<float **>(args[1]);
  float *b = *static_cast<float **>(args[2]);
  for (int i = 0; i < 3; ++i) {
    a[i] = x[i] + 1;
    b[i] = x[i] * x[i];
  }
}

TEST(CpuSteps, KernelWithExtraOutputs) {
  ProgramBuilder pb;
  int32_t x = pb.arg(DType::F32, {3});
  int32_t a = pb.step(StepKind::Kernel, {x}, DType::F32, {3}, {}, 0);
  int32_t b = pb.buffer(DType::F32, {3}, BufferRole::Temp);
  pb.p.steps.back().as<KernelLaunch>().extraOutputs = {b};
  // Both outputs are read by a later step, so the arena must keep them apart.
  int32_t c = pb.step(StepKind::Sub, {b, a}, DType::F32, {3});
  pb.result(c);
  pb.result(a);
  ASSERT_EQ(pb.p.validate().message(), "");
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, onCpu(pb.p, {&plusOneAndSquare}));
  double xv[] = {1, 2, 3};
  EINC_ASSERT_OK(ex.setArgument(0, xv, 3));
  EINC_ASSERT_OK(ex.run());
  EXPECT_EQ(ex.getResult(0).values, (std::vector<double>{-1, 1, 5}));
  EXPECT_EQ(ex.getResult(1).values, (std::vector<double>{2, 3, 4}));

  // Validation: extra outputs only on kernels, in range, written once, not
  // inputs, not constants.
  auto problem = [&](auto edit) {
    Program q = pb.p;
    edit(q);
    return q.validate().message();
  };
  auto extra = [](Program &q) -> std::vector<int32_t> & {
    return q.steps[0].as<KernelLaunch>().extraOutputs;
  };
  EXPECT_NE(problem([&](Program &q) {
              extra(q) = {99};
            }).find("extra output 0: buffer index 99 out of range"),
            std::string::npos);
  EXPECT_NE(problem([&](Program &q) { extra(q) = {a}; }).find("is written twice"),
            std::string::npos);
  EXPECT_NE(problem([&](Program &q) { extra(q) = {x}; }).find("is also an input"),
            std::string::npos);
}

TEST(CpuSteps, Profile) {
  ProgramBuilder pb;
  int32_t x = pb.arg(DType::F32, {3});
  int32_t y = pb.step(StepKind::Kernel, {x}, DType::F32, {3}, {}, 0, "ein.mul at m.ein:4:2");
  int32_t z = pb.step(StepKind::Kernel, {y}, DType::F32, {3}, {}, 0,
                      "fused 2 ops (ein.mul ein.add) at m.ein:5:3");
  pb.result(pb.step(StepKind::Neg, {z}, DType::F32, {3}));
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, onCpu(pb.p, {&doubleIt}));
  EINC_ASSERT_OK(ex.run());
  EXPECT_EQ(ex.profiledRuns(), 0); // off by default
  ex.setProfiling(true);
  for (int r = 0; r < 3; ++r)
    EINC_ASSERT_OK(ex.run());
  EXPECT_EQ(ex.profiledRuns(), 3);
  ASSERT_EQ(ex.stepSeconds().size(), 3u);
  for (double s : ex.stepSeconds())
    EXPECT_GE(s, 0.0);
  EXPECT_EQ(stepGroup(pb.p.steps[0]), "ein.mul");
  EXPECT_EQ(stepGroup(pb.p.steps[1]), "fused");
  EXPECT_EQ(stepGroup(pb.p.steps[2]), "neg");
  std::string table = formatStepProfile(pb.p, ex.stepSeconds(), ex.profiledRuns());
  EXPECT_NE(table.find("3 steps"), std::string::npos) << table;
  EXPECT_NE(table.find("mean of 3 runs"), std::string::npos) << table;
  EXPECT_NE(table.find("fused 2 ops (ein.mul ein.add) at m.ein:5:3"), std::string::npos) << table;
  ex.resetProfile();
  EXPECT_EQ(ex.profiledRuns(), 0);
  EXPECT_EQ(formatStepProfile(pb.p, ex.stepSeconds(), 0), "no profile: no run was timed\n");

  // Matmul FLOPs: 2·M·N·K per matrix, times the batch and outer loops.
  Step mm(StepKind::Matmul, {}, -1, ProgramBuilder::gemmOf({2, 3, 5, 4}, {7, 0, 0, 0}));
  EXPECT_EQ(matmulFlops(mm), 2 * 2 * 3 * 5 * 4 * 7);
  EXPECT_EQ(matmulFlops(pb.p.steps[0]), 0);
}

TEST(CpuSteps, ReferenceDevicesRefuseThem) {
  for (Precision p : {Precision::F32, Precision::F64}) {
    Status refused =
        Executor::create(matmulProgram({1, 3, 5, 4, 0, 0, 4, 5, 5, 0, 0, 0}), p).takeStatus();
    EINC_EXPECT_STATUS(refused, StatusCode::Invalid,
                       "step 0 (matmul) does not run on the reference");
    EINC_EXPECT_STATUS(refused, StatusCode::Invalid, "runs f32, bf16 and f16");
  }
  EINC_EXPECT_OK(onCpu(matmulProgram({1, 3, 5, 4, 0, 0, 4, 5, 5, 0, 0, 0})));
}

} // namespace
