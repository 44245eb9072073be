//===- CheckCompareTest.cpp - The bounds of `NAME check` ------------------===//
//
// tools/runner/CheckCompare.h: which bound each step gets on which device,
// and that each bound lets through what the contract allows and not more.
//
//===----------------------------------------------------------------------===//
#include "tools/runner/CheckCompare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace {

using namespace einc::runner;

einrt::TensorData f32(std::vector<int64_t> shape, std::vector<double> values) {
  return einrt::TensorData::fromDoubles("t", einrt::DType::F32, std::move(shape), values.data());
}

einrt::TensorData bf16(std::vector<int64_t> shape, std::vector<double> values) {
  return einrt::TensorData::fromDoubles("t", einrt::DType::BF16, std::move(shape), values.data());
}

/// A program with one f32 buffer of `shape` per entry.
einrt::Program buffers(std::vector<std::vector<int64_t>> shapes) {
  einrt::Program p;
  for (auto &s : shapes) {
    einrt::Buffer b;
    b.shape = s;
    p.buffers.push_back(b);
  }
  return p;
}

einrt::Step kernel(const std::string &note) {
  einrt::Step s(einrt::StepKind::Kernel, {0}, 1, einrt::KernelLaunch{0, {}}, note);
  return s;
}

TEST(CheckCompare, RulesByDeviceAndKernel) {
  einrt::Program p = buffers({{4, 8}, {4}});
  einrt::CudaKernelInfo rows;
  rows.entry = "k3_reduce_sum";
  rows.kind = einrt::CudaLaunchKind::WarpRows;
  einrt::CudaKernelInfo maxRows = rows;
  maxRows.entry = "k4_reduce_max";
  einrt::CudaKernelInfo columns = rows;
  columns.kind = einrt::CudaLaunchKind::Elements;

  // The cpu device at another thread count: bit for bit, whatever the step.
  EXPECT_EQ(ruleFor(kernel("ein.exp at m.ein:1:1"), p, nullptr, true).kind, BoundKind::Exact);
  // cuda: transcendentals anywhere in a fused body; reassociated f32 row sums.
  EXPECT_EQ(
      ruleFor(kernel("fused 3 ops (ein.sub ein.exp ein.mul) at m.ein:2:3"), p, nullptr, false).kind,
      BoundKind::Transcendental);
  EXPECT_EQ(ruleFor(kernel("ein.reduce at m.ein:4:4"), p, &rows, false).kind, BoundKind::RowSum);
  EXPECT_EQ(ruleFor(kernel("ein.reduce at m.ein:4:4"), p, &maxRows, false).kind, BoundKind::Exact);
  EXPECT_EQ(ruleFor(kernel("ein.reduce at m.ein:4:4"), p, &columns, false).kind, BoundKind::Exact);
  EXPECT_EQ(ruleFor(kernel("fused 2 ops (ein.add ein.max) at m.ein:1:1"), p, nullptr, false).kind,
            BoundKind::Exact);
  // A row's chain fused whole (softmax): one bound of the result's scale.
  einrt::Step chain =
      kernel("rows 5 ops (ein.reduce ein.sub ein.exp ein.reduce ein.div) at m.ein:6:1");
  EXPECT_EQ(ruleFor(chain, p, nullptr, false).kind, BoundKind::Rows);
  EXPECT_EQ(ruleFor(chain, p, nullptr, true).kind, BoundKind::Exact);

  einrt::GemmDesc g;
  g.m = 4, g.n = 4, g.k = 300, g.lda = 300, g.ldb = 4, g.ldc = 4;
  einrt::Step mm(einrt::StepKind::Matmul, {0, 0}, 1, g, "ein.contract at m.ein:5:5");
  StepRule r = ruleFor(mm, p, nullptr, false);
  EXPECT_EQ(r.kind, BoundKind::Gemm);
  EXPECT_EQ(r.k, 300);
  EXPECT_EQ(ruleFor(mm, p, nullptr, true).kind, BoundKind::Exact);
}

TEST(CheckCompare, ExactMeansTheSameBits) {
  StepRule exact;
  einrt::TensorData a = f32({3}, {1.0, -0.0, NAN}), b = f32({3}, {1.0, 0.0, NAN});
  Comparison c = compareResults(a, b, exact, {});
  EXPECT_EQ(c.outside, 0); // -0 = +0, NaN = NaN
  b = f32({3}, {std::nextafter(1.0f, 2.0f), 0.0, NAN});
  c = compareResults(a, b, exact, {});
  EXPECT_EQ(c.outside, 1);
  EXPECT_EQ(c.differing, 1);
  EXPECT_TRUE(std::isinf(c.worstRatio));
  EXPECT_NE(c.problem.find("element 0"), std::string::npos) << c.problem;
  // NaN against a number is never within a bound.
  StepRule loose;
  loose.kind = BoundKind::Transcendental;
  c = compareResults(f32({1}, {NAN}), f32({1}, {1.0}), loose, {});
  EXPECT_EQ(c.outside, 1);
}

TEST(CheckCompare, TranscendentalBound) {
  StepRule r;
  r.kind = BoundKind::Transcendental;
  // 2e-6 of the largest magnitude (here 10): 1.9e-5 passes, 2.1e-5 does not.
  einrt::TensorData ref = f32({2}, {10.0, 0.5});
  EXPECT_EQ(compareResults(ref, f32({2}, {10.0, 0.5 + 1.9e-5}), r, {}).outside, 0);
  EXPECT_EQ(compareResults(ref, f32({2}, {10.0, 0.5 + 2.1e-5}), r, {}).outside, 1);
  // A bf16 result: one bf16 ulp (2^-7 relative), not two.
  einrt::TensorData n = bf16({1}, {1.0});
  EXPECT_EQ(compareResults(n, bf16({1}, {1.0078125}), r, {}).outside, 0);
  EXPECT_EQ(compareResults(n, bf16({1}, {1.0234375}), r, {}).outside, 1);
}

TEST(CheckCompare, RowChainBound) {
  StepRule r;
  r.kind = BoundKind::Rows;
  // (2^-18 + 2e-6) of max(1, max |y|): about 5.8e-6 here.
  einrt::TensorData ref = f32({2}, {0.25, 0.75});
  EXPECT_EQ(compareResults(ref, f32({2}, {0.25 + 5e-6, 0.75}), r, {}).outside, 0);
  EXPECT_EQ(compareResults(ref, f32({2}, {0.25 + 7e-6, 0.75}), r, {}).outside, 1);
}

TEST(CheckCompare, RowSumBoundScalesWithTheRowsMagnitude) {
  // Rows over the trailing dim: out[i] folds in[i, :].
  einrt::TensorData in = f32({2, 3}, {1, -2, 3, 100, 200, -300});
  std::vector<double> m = rowMagnitudes(in, f32({2}, {2, 0}));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0], 6);
  EXPECT_EQ(m[1], 600);
  // Over the leading dim: out[j] folds in[:, j].
  m = rowMagnitudes(in, f32({3}, {0, 0, 0}));
  EXPECT_EQ(m[0], 101);
  EXPECT_EQ(m[2], 303);
  StepRule r;
  r.kind = BoundKind::RowSum;
  std::vector<double> mag = {6, 600};
  einrt::TensorData ref = f32({2}, {2, 0});
  EXPECT_EQ(compareResults(ref, f32({2}, {2, 600 * 0x1p-21}), r, mag).outside, 0);
  EXPECT_EQ(compareResults(ref, f32({2}, {2, 600 * 0x1p-19}), r, mag).outside, 1);
}

TEST(CheckCompare, GemmBoundIsTwoKUlpsOfTheAbsoluteProduct) {
  StepRule r;
  r.kind = BoundKind::Gemm;
  r.k = 1024;
  std::vector<double> s = {1000.0};
  double bound = 2.0 * 1024 * 0x1p-24 * 1000.0; // about 1.2e-4
  einrt::TensorData ref = f32({1}, {3.0});
  EXPECT_EQ(compareResults(ref, f32({1}, {3.0 + 0.9 * bound}), r, s).outside, 0);
  EXPECT_EQ(compareResults(ref, f32({1}, {3.0 + 1.2 * bound}), r, s).outside, 1);
}

TEST(CheckCompare, AbsoluteClearsSignBitsOfFloatsOnly) {
  einrt::TensorData a = absolute(f32({3}, {-1.5, 2.0, -0.0}));
  std::vector<double> v = a.toDoubles();
  EXPECT_EQ(v[0], 1.5);
  EXPECT_EQ(v[1], 2.0);
  EXPECT_FALSE(std::signbit(v[2]));
  EXPECT_EQ(absolute(bf16({1}, {-3.0})).toDoubles()[0], 3.0);
  std::vector<double> ints = {-4, 5};
  einrt::TensorData i = einrt::TensorData::fromDoubles("i", einrt::DType::I32, {2}, ints.data());
  EXPECT_EQ(absolute(i).toDoubles()[0], -4);
}

} // namespace
