//===- Fp8QuantizeTest.cpp - ein.quantize through the backends ------------===//
//
// The kernel's scale rules (runtime/core/Fp8Quantize.h); the lecture's outlier
// experiment through ein.quantize lowered for the reference and the CPU
// backends; the straight-through gradient of a contraction between
// quantisers (ir/EinOps.td), built by ein-autodiff and run.
//
//===----------------------------------------------------------------------===//
#include "../pipeline/Compile.h"
#include "test/unit/StatusTesting.h"
// After Compile.h, which brings ModuleOp.
#include "../cpu/CpuTestSupport.h"
#include "../runtime/ProgramBuilder.h"

#include "runtime/core/Fp8.h"
#include "runtime/core/Fp8Quantize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace einrt;
using namespace einc::testing;

namespace {

// Half an ulp relative: the largest relative error of rounding a normal
// value to a format with `mantissaBits` bits after the point.
double halfUlp(Fp8Format f) { return std::ldexp(1.0, -(fp8Info(f).mantissaBits + 1)); }

// A block's scale maps its amax into [2^emax, 2^(emax+1)) = [256, 512) for
// e4m3, whose largest value is 448: the top of that range saturates, and
// the block's largest values lose up to 1 - 448/512 = 12.5% (the OCP MX
// rule; ir/EinOps.td).
constexpr double kBlockSaturation = 1 - 448.0 / 512.0;

TEST(Fp8Quantize, BlockScaleIsAPowerOfTwoFromTheBlocksMaximum) {
  // amax 1e-3: floor(log2) = -10, e4m3's emax 8: 2^-18; e5m2's 15: 2^-25.
  EXPECT_EQ(fp8Scale(1e-3, Fp8Format::E4M3, true), std::ldexp(1.0, -18));
  EXPECT_EQ(fp8Scale(1e-3, Fp8Format::E5M2, true), std::ldexp(1.0, -25));
  EXPECT_EQ(fp8Scale(256, Fp8Format::E4M3, true), 1.0);
  // Clamped to E8M0's range; no nonzero finite element: 1.
  EXPECT_EQ(fp8Scale(1e-300, Fp8Format::E4M3, true), std::ldexp(1.0, -127));
  EXPECT_EQ(fp8Scale(0, Fp8Format::E4M3, true), 1.0);
  EXPECT_EQ(fp8Scale(INFINITY, Fp8Format::E4M3, true), 1.0);
  // Per tensor: amax / max in f32.
  EXPECT_EQ(fp8Scale(1000, Fp8Format::E4M3, false), double(float(1000.0 / 448.0)));
}

TEST(Fp8Quantize, BlocksRunAlongTheAxisAndTheLastOneMayBeShorter) {
  // [2, 40] with blocks of 32 along axis 1: per row a block of 32 and one of
  // 8. A large value in each row's first block leaves the last 8 alone.
  std::vector<int64_t> shape = {2, 40};
  std::vector<double> x(80), y(80);
  for (int i = 0; i < 80; ++i)
    x[i] = 0.001 * (1 + (i % 5) * 0.03);
  x[3] = x[40 + 7] = 1000; // 1000 / 2^(9 - 8) = 500: saturates to 448 (896)
  fakeQuantize(x.data(), y.data(), shape, Fp8Format::E4M3, 32, 1);
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 40; ++j) {
      double in = x[r * 40 + j], out = y[r * 40 + j];
      if (in > 1)
        EXPECT_EQ(out, 896);
      else if (j < 32)
        EXPECT_EQ(out, 0) << r << "," << j; // in the outlier's block
      else
        EXPECT_LE(std::fabs(out - in), halfUlp(Fp8Format::E4M3) * std::fabs(in)) << r << "," << j;
    }
  // Along axis 0 of the transpose [40, 2]: the same values.
  std::vector<double> xt(80), yt(80);
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 40; ++j)
      xt[j * 2 + r] = x[r * 40 + j];
  fakeQuantize(xt.data(), yt.data(), {40, 2}, Fp8Format::E4M3, 32, 0);
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 40; ++j)
      EXPECT_EQ(yt[j * 2 + r], y[r * 40 + j]);
}

TEST(Fp8Quantize, NonFiniteValuesStayNonFinite) {
  std::vector<double> x = {1.0, NAN, INFINITY, -2.0}, y(4);
  for (Fp8Format f : {Fp8Format::E4M3, Fp8Format::E5M2}) {
    for (int64_t block : {0, 32}) {
      fakeQuantize(x.data(), y.data(), {4}, f, block, 0);
      // The finite ones scaled by amax = 2 (not by the infinity).
      EXPECT_NEAR(y[0], 1.0, halfUlp(f));
      EXPECT_TRUE(std::isnan(y[1]));
      EXPECT_FALSE(std::isfinite(y[2]));
      EXPECT_NEAR(y[3], -2.0, 2 * halfUlp(f));
    }
  }
}

TEST(Fp8Quantize, TheStepIsValidated) {
  // A quantize step reads its input with the result's shape (a reshape's
  // input may stand in for it); the payload is checked.
  auto problem = [](DType in, std::vector<int64_t> inShape, QuantizeSpec spec) {
    test::ProgramBuilder pb;
    int32_t x = pb.arg(in, std::move(inShape));
    pb.op(StepKind::Quantize, {x}, DType::F32, {4, 8}, spec);
    return pb.p.validate().message();
  };
  EXPECT_EQ(problem(DType::F32, {4, 8}, {"e4m3", 32, 1}), "");
  EXPECT_EQ(problem(DType::F32, {2, 2, 8}, {"e5m2", 0, 0}), "");
  EXPECT_NE(problem(DType::F32, {4, 4}, {"e4m3", 32, 1}).find("is no view of the result"),
            std::string::npos);
  EXPECT_NE(problem(DType::I32, {4, 8}, {"e4m3", 32, 1}).find("is no view of the result"),
            std::string::npos);
  EXPECT_NE(problem(DType::F32, {4, 8}, {"e3m4", 32, 1}).find("format must be none, e4m3 or e5m2"),
            std::string::npos);
  EXPECT_NE(problem(DType::F32, {4, 8}, {"e4m3", -1, 1}).find("block must be >= 0"),
            std::string::npos);
  EXPECT_NE(problem(DType::F32, {4, 8}, {"e4m3", 32, 2}).find("axis 2 is out of range"),
            std::string::npos);
}

/// Results of @f run on the reference and on the CPU backend (x its one
/// argument).
struct BothRuns {
  std::vector<std::vector<double>> reference, cpu;
};

BothRuns runBoth(const std::string &mlir, const std::vector<double> &x) {
  BothRuns out;
  Compiled c = parseMLIR(mlir);
  EXPECT_TRUE(c.module) << c.errors;
  if (!c.module)
    return out;
  auto fn = c.module->lookupSymbol<mlir::func::FuncOp>("f");
  einc::cputest::Lowered l = einc::cputest::lowerBoth(fn);
  EXPECT_TRUE(l.cpu && l.reference) << l.errors;
  if (!l.cpu || !l.reference)
    return out;
  // The CPU program runs the quantisers as reference steps.
  int quantizeSteps = 0;
  for (const Step &s : l.cpu->steps)
    quantizeSteps += s.kind == StepKind::Quantize;
  EXPECT_EQ(quantizeSteps, 2);
  Expected<Executor> ref = Executor::create(*l.reference, Precision::F32);
  Expected<Executor> cpu = Executor::create(*l.cpu, einc::cputest::cpuDevice(l));
  EINC_EXPECT_OK(ref);
  EINC_EXPECT_OK(cpu);
  if (!ref.ok() || !cpu.ok())
    return out;
  for (auto [ex, results] : {std::pair{&*ref, &out.reference}, std::pair{&*cpu, &out.cpu}}) {
    EINC_EXPECT_OK(ex->setArgument(0, x.data(), x.size()));
    EINC_EXPECT_OK(ex->run());
    for (size_t r = 0; r < ex->resultCount(); ++r)
      results->push_back(ex->getResult(r).values);
  }
  return out;
}

// The lecture's experiment (number formats, "per-block scaling"): small
// values (~1e-3) and one outlier (1e3). One scale for the tensor is set by
// the outlier and flushes every small value to zero; a scale per block of
// 32 keeps every block without the outlier within fp8's rounding error, and
// only the outlier's block loses its small values.
TEST(Fp8Quantize, OutlierFlushesSmallValuesPerTensorNotPerBlock) {
  const char *mlir = R"(
func.func @f(%x: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %t = ein.quantize e4m3 %x block 0 axis 0 : tensor<4x64xf32>
  %b = ein.quantize e4m3 %x block 32 axis 1 : tensor<4x64xf32>
  return %t, %b : tensor<4x64xf32>, tensor<4x64xf32>
}
)";
  const int rows = 4, cols = 64, outlierRow = 1, outlierCol = 40;
  std::vector<double> x(rows * cols);
  for (int i = 0; i < rows * cols; ++i)
    x[i] = double(float((i % 2 ? -1 : 1) * 1e-3 * (1 + 0.17 * ((i * 7) % 11) / 11.0)));
  x[outlierRow * cols + outlierCol] = 1000;
  BothRuns runs = runBoth(mlir, x);
  ASSERT_EQ(runs.reference.size(), 2u);
  ASSERT_EQ(runs.cpu.size(), 2u);
  // One kernel on both devices: the same bits.
  EXPECT_EQ(runs.reference, runs.cpu);

  const double bound = halfUlp(Fp8Format::E4M3);
  for (const auto *results : {&runs.reference, &runs.cpu}) {
    const std::vector<double> &perTensor = (*results)[0], &perBlock = (*results)[1];
    int smallFlushedTensor = 0, small = 0, smallFlushedOutlierBlock = 0, outlierBlockSmall = 0;
    int otherBlocksWithin = 0, otherBlocks = 0;
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < cols; ++j) {
        int i = r * cols + j;
        bool outlier = r == outlierRow && j == outlierCol;
        bool outlierBlock = r == outlierRow && j / 32 == outlierCol / 32;
        if (outlier) {
          EXPECT_LE(std::fabs(perTensor[i] - x[i]), bound * x[i]); // amax / scale = 448
          EXPECT_LE(std::fabs(perBlock[i] - x[i]), kBlockSaturation * x[i]);
          continue;
        }
        ++small;
        smallFlushedTensor += perTensor[i] == 0;
        if (outlierBlock) {
          ++outlierBlockSmall;
          smallFlushedOutlierBlock += perBlock[i] == 0;
        } else {
          ++otherBlocks;
          otherBlocksWithin +=
              perBlock[i] != 0 && std::fabs(perBlock[i] - x[i]) <= bound * std::fabs(x[i]);
        }
      }
    EXPECT_EQ(small, rows * cols - 1);
    EXPECT_EQ(smallFlushedTensor, small) << "per tensor: every small value is zero";
    EXPECT_EQ(otherBlocksWithin, otherBlocks) << "per block: the other blocks within 2^-4";
    EXPECT_EQ(otherBlocks, small - 31);
    EXPECT_EQ(smallFlushedOutlierBlock, outlierBlockSmall) << "the outlier's block loses them";
    EXPECT_EQ(outlierBlockSmall, 31);
  }
}

// y = contract(q4(x), q4(w)), g = quantize none y grad e5m2, loss =
// sum(g * c): straight through, dL/dw = q4(x)^T . q5(c) with q5 the E5M2
// quantiser in blocks of 8 along the result's axis 1 (the rows of c).
TEST(Fp8Quantize, ContractionGradientIsStraightThroughWithAnE5M2IncomingGradient) {
  const char *mlir = R"(
func.func @forward(%x: tensor<4x64xf32> {ein.kind = "input", ein.name = "x"},
                   %c: tensor<4x8xf32> {ein.kind = "input", ein.name = "c"},
                   %w: tensor<64x8xf32> {ein.kind = "param", ein.name = "w"}) -> tensor<f32> {
  %qx = ein.quantize e4m3 %x block 32 axis 1 : tensor<4x64xf32>
  %qw = ein.quantize e4m3 %w block 32 axis 0 : tensor<64x8xf32>
  %y = ein.contract %qx, %qw batch [], [] contract [1], [0] : tensor<4x64xf32>, tensor<64x8xf32> -> tensor<4x8xf32>
  %g = ein.quantize none %y grad e5m2 block 32 axis 1 : tensor<4x8xf32>
  %p = ein.mul %g, %c : tensor<4x8xf32>
  %l = ein.reduce sum %p dims [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}
)";
  Compiled c = parseMLIR(mlir);
  ASSERT_TRUE(c.module) << c.errors;
  ASSERT_TRUE(addGrad(c)) << c.errors;
  std::string error;
  auto grad = executorFor(c, "grad", Precision::F64, error);
  ASSERT_TRUE(grad) << error;
  std::vector<double> x(4 * 64), cv(4 * 8), w(64 * 8);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(0.37 * double(i)) * (i % 9 == 0 ? 40 : 1);
  for (size_t i = 0; i < cv.size(); ++i)
    cv[i] = 0.1 + 0.0123 * double(i); // few are E5M2 values
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = std::cos(0.11 * double(i));
  EINC_ASSERT_OK(grad->setArgument(0, x.data(), x.size()));
  EINC_ASSERT_OK(grad->setArgument(1, cv.data(), cv.size()));
  EINC_ASSERT_OK(grad->setArgument(2, w.data(), w.size()));
  EINC_ASSERT_OK(grad->run());
  ASSERT_EQ(grad->resultCount(), 2u);
  std::vector<double> dw = grad->getResult(1).values;

  std::vector<double> qx(x.size()), qc(cv.size());
  fakeQuantize(x.data(), qx.data(), {4, 64}, Fp8Format::E4M3, 32, 1);
  fakeQuantize(cv.data(), qc.data(), {4, 8}, Fp8Format::E5M2, 32, 1);
  double differs = 0;
  for (int k = 0; k < 64; ++k)
    for (int n = 0; n < 8; ++n) {
      double ste = 0, unquantisedGrad = 0;
      for (int b = 0; b < 4; ++b) {
        ste += qx[b * 64 + k] * qc[b * 8 + n];
        unquantisedGrad += qx[b * 64 + k] * cv[b * 8 + n];
      }
      EXPECT_NEAR(dw[k * 8 + n], ste, 1e-12 * (1 + std::fabs(ste))) << k << "," << n;
      differs = std::max(differs, std::fabs(unquantisedGrad - ste));
    }
  // The incoming gradient was quantised: E5M2 moved it visibly.
  EXPECT_GT(differs, 1e-3);
}

} // namespace
