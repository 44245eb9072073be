//===- CublasLtEpilogueTest.cpp - GEMM epilogues as cuBLASLt's ------------===//
//
// mapGemmToCublasLt on GemmDescs with an epilogue (GemmPost): the fused
// calls, evaluated as cuBLASLt evaluates an epilogue on column-major D
// (pre = alpha·op(A)·op(B) + beta·C + bias[row of D]; D = act(pre); aux =
// pre), equal the row-major evaluation of the typed reading (pre = alpha ·
// product + residual + bias[column]; result = act(pre)) element for element
// on small integers: the row-major bias over C's rows is cuBLASLt's bias
// over the rows of column-major D (one value per row of D^T's m = the
// GemmDesc's n). The epilogue each typed reading maps to, and what cuBLASLt
// cannot fuse (the device then runs the epilogue's kernel); a fused
// epilogue that cuBLASLt's heuristic has no algorithm for (a heuristic made
// to answer so) falls back to the plain product and the epilogue's kernel,
// computing the same, asked once per call shape.
//
//===----------------------------------------------------------------------===//
#include "GemmReference.h"
#include "test/unit/StatusTesting.h"

#include "runtime/cuda/CublasLtMapping.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace einrt {
namespace {

using test::rowMajorGemm;
using test::smallIntegers;
using test::spansOf;

double activate(GemmActivation a, double x) {
  switch (a) {
  case GemmActivation::None:
    return x;
  case GemmActivation::Relu:
    return x > 0 ? x : 0;
  case GemmActivation::Gelu:
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  }
  return x;
}

/// The epilogue as cuBLASLt computes a plan's fused calls, on `spans`
/// (post.operands' then post.outputs' buffers).
bool columnMajorFused(const CublasLtPlan &plan, GemmActivation act,
                      const std::vector<double> &stepA, const std::vector<double> &stepB,
                      std::vector<std::vector<double>> &spans) {
  const std::vector<double> &A = stepB, &B = stepA;
  const LtPostPointers &at = plan.pointers;
  bool inside = true;
  auto in = [&](const std::vector<double> &v, int64_t i) {
    inside = inside && i >= 0 && size_t(i) < v.size();
    return inside ? v[size_t(i)] : 0.0;
  };
  for (const CublasLtCall &call : plan.calls)
    for (int64_t bt = 0; bt < call.batch; ++bt) {
      int64_t oa = call.offsetA + bt * call.strideA, ob = call.offsetB + bt * call.strideB,
              oc = call.offsetC + bt * call.strideC;
      for (int64_t i = 0; i < call.m; ++i)
        for (int64_t j = 0; j < call.n; ++j) {
          double sum = 0;
          for (int64_t p = 0; p < call.k; ++p)
            sum += (call.transA ? in(A, oa + p + i * call.lda) : in(A, oa + i + p * call.lda)) *
                   (call.transB ? in(B, ob + j + p * call.ldb) : in(B, ob + p + j * call.ldb));
          int64_t e = oc + i + j * call.ldc;
          double pre = double(call.alpha) * sum + double(call.beta) * in(spans[at.c], e);
          if (at.bias >= 0)
            pre += in(spans[at.bias], i); // one bias value per row of column-major D
          if (!inside)
            return false;
          spans[at.d][size_t(e)] = activate(act, pre);
          if (at.aux >= 0)
            spans[at.aux][size_t(e)] = pre;
        }
    }
  return inside;
}

/// What the epilogue's kernel computes over a product already in C.
void epilogueKernel(const GemmDesc &g, std::vector<std::vector<double>> &spans, int32_t cSpan,
                    const std::vector<int32_t> &buffers) {
  auto spanOf = [&](int32_t buffer) {
    for (size_t i = 0; i < buffers.size(); ++i)
      if (buffers[i] == buffer)
        return int32_t(i);
    return int32_t(-1);
  };
  const GemmPost &p = g.post;
  const std::vector<double> product = spans[cSpan];
  for (size_t e = 0; e < product.size(); ++e) {
    double pre = p.alpha * product[e];
    if (p.residual >= 0)
      pre += spans[spanOf(p.residual)][e];
    if (p.bias >= 0)
      pre += spans[spanOf(p.bias)][e % size_t(g.n)];
    spans[spanOf(p.result)][e] = activate(p.activation, pre);
    if (p.aux >= 0)
      spans[spanOf(p.aux)][e] = pre;
  }
}

/// The typed reading on row-major storage: C = the product, then the rest.
void rowMajorTyped(const GemmDesc &g, const std::vector<double> &a, const std::vector<double> &b,
                   std::vector<std::vector<double>> &spans, int32_t cSpan,
                   const std::vector<int32_t> &buffers) {
  std::vector<double> product(spans[cSpan].size(), 0.0);
  rowMajorGemm(g, a, b, product);
  spans[cSpan] = product;
  epilogueKernel(g, spans, cSpan, buffers);
}

/// A dense row-major GEMM of `matrices` (a batch) m x n x k.
GemmDesc dense(int64_t batch, int64_t m, int64_t n, int64_t k) {
  GemmDesc g;
  g.batch = batch, g.m = m, g.n = n, g.k = k;
  g.lda = k, g.ldb = n, g.ldc = n;
  g.strideA = m * k, g.strideB = k * n, g.strideC = m * n;
  return g;
}

// Buffer numbers of the step: 0 A, 1 B, 2 C, then the epilogue's.
constexpr int32_t kC = 2, kBias = 3, kResidual = 4, kOut = 5, kAux = 6;

/// Maps `g` (its post's buffers all f32 unless `types` says) and checks the
/// fused calls against the row-major typed reading.
CublasLtPlan expectFused(const GemmDesc &g, uint64_t seed, std::vector<DType> types = {}) {
  const GemmPost &p = g.post;
  std::vector<int32_t> buffers = p.operands;
  buffers.insert(buffers.end(), p.outputs.begin(), p.outputs.end());
  if (types.empty())
    types.assign(buffers.size(), DType::F32);
  Expected<CublasLtPlan> mapped = mapGemmToCublasLt(g, {}, &types);
  EINC_EXPECT_OK(mapped);
  CublasLtPlan plan = mapped.ok() ? mapped.take() : CublasLtPlan{};
  EXPECT_FALSE(plan.epilogueKernel) << plan.unfusedWhy;
  std::mt19937_64 rng(seed);
  test::GemmSpans s = spansOf(g);
  std::vector<double> a = smallIntegers(s.a, rng), b = smallIntegers(s.b, rng);
  std::vector<std::vector<double>> want;
  for (int32_t buffer : buffers)
    want.push_back(smallIntegers(buffer == kBias ? g.n : s.c, rng));
  std::vector<std::vector<double>> got = want;
  int32_t cSpan = 0; // C is the epilogue's first operand here
  rowMajorTyped(g, a, b, want, cSpan, buffers);
  // cuBLASLt does not write C unless it is the aux: the product there is
  // the reference's only where aux is C.
  if (p.aux != kC)
    got[cSpan] = want[cSpan];
  EXPECT_TRUE(columnMajorFused(plan, p.activation, a, b, got)) << "a call reaches outside";
  for (size_t i = 0; i < want.size(); ++i)
    for (size_t e = 0; e < want[i].size(); ++e)
      EXPECT_EQ(got[i][e], want[i][e]) << "buffer " << buffers[i] << " element " << e;
  return plan;
}

GemmPost library(std::vector<int32_t> operands, std::vector<int32_t> outputs) {
  GemmPost p;
  p.kernel = 0;
  p.operands = std::move(operands);
  p.outputs = std::move(outputs);
  p.library = true;
  p.result = p.outputs[0];
  return p;
}

TEST(CublasLtEpilogue, RowBiasIsTheColumnMajorRowBias) {
  GemmDesc g = dense(1, 5, 7, 3);
  g.post = library({kC, kBias}, {kOut});
  g.post.bias = kBias;
  CublasLtPlan plan = expectFused(g, 1);
  ASSERT_EQ(plan.calls.size(), 1u);
  EXPECT_EQ(plan.calls[0].epilogue, LtEpilogue::Bias);
  EXPECT_EQ(plan.calls[0].m, 7); // the bias's length: rows of column-major D
  EXPECT_TRUE(plan.calls[0].separateD);
  EXPECT_EQ(plan.pointers.d, 2);
  EXPECT_EQ(plan.pointers.bias, 1);
  EXPECT_EQ(plan.pointers.aux, -1);
  g.post.activation = GemmActivation::Relu;
  EXPECT_EQ(expectFused(g, 2).calls[0].epilogue, LtEpilogue::ReluBias);
  g.post.activation = GemmActivation::Gelu;
  EXPECT_EQ(expectFused(g, 3).calls[0].epilogue, LtEpilogue::GeluBias);
  g.post.bias = -1;
  g.post.operands = {kC};
  EXPECT_EQ(expectFused(g, 4).calls[0].epilogue, LtEpilogue::Gelu);
  g.post.activation = GemmActivation::Relu;
  EXPECT_EQ(expectFused(g, 5).calls[0].epilogue, LtEpilogue::Relu);
}

TEST(CublasLtEpilogue, GeluAuxKeepsThePreActivation) {
  // A batch of 3 folded with an outer loop of 2 into one strided call; the
  // aux is an output (the bias-add's value), or C itself without a bias.
  GemmDesc g = dense(3, 4, 8, 5);
  g.outer.push_back({2, 3 * 4 * 5, 3 * 5 * 8, 3 * 4 * 8});
  g.post = library({kC, kBias}, {kOut, kAux});
  g.post.bias = kBias;
  g.post.activation = GemmActivation::Gelu;
  g.post.aux = kAux;
  CublasLtPlan plan = expectFused(g, 6);
  ASSERT_EQ(plan.calls.size(), 1u);
  EXPECT_EQ(plan.calls[0].batch, 6);
  EXPECT_EQ(plan.calls[0].epilogue, LtEpilogue::GeluAuxBias);
  EXPECT_EQ(plan.calls[0].auxLd, 8);
  EXPECT_EQ(plan.calls[0].auxStride, 32);
  EXPECT_EQ(plan.pointers.aux, 3);
  g.post = library({kC}, {kOut});
  g.post.activation = GemmActivation::Gelu;
  g.post.aux = kC;
  plan = expectFused(g, 7);
  EXPECT_EQ(plan.calls[0].epilogue, LtEpilogue::GeluAux);
  EXPECT_EQ(plan.pointers.aux, 0);
}

TEST(CublasLtEpilogue, ResidualIsBetaOneAndScaleIsAlpha) {
  GemmDesc g = dense(2, 6, 5, 4);
  g.post = library({kC, kResidual}, {kOut});
  g.post.residual = kResidual;
  g.post.alpha = 0.5;
  CublasLtPlan plan = expectFused(g, 8);
  EXPECT_EQ(plan.calls[0].epilogue, LtEpilogue::Default);
  EXPECT_EQ(plan.calls[0].beta, 1.0f);
  EXPECT_EQ(plan.calls[0].alpha, 0.5f);
  EXPECT_EQ(plan.pointers.c, 1);
  EXPECT_EQ(plan.pointers.d, 2);
  // Bias, residual and GELU together: GELU_BIAS with beta 1.
  g.n = 8, g.ldb = 8, g.ldc = 8, g.strideB = 32, g.strideC = 48;
  g.post = library({kC, kBias, kResidual}, {kOut});
  g.post.residual = kResidual;
  g.post.bias = kBias;
  g.post.activation = GemmActivation::Gelu;
  EXPECT_EQ(expectFused(g, 9).calls[0].epilogue, LtEpilogue::GeluBias);
}

TEST(CublasLtEpilogue, WhatCublasLtDoesNotFuse) {
  auto why = [](const GemmDesc &g, std::vector<DType> types, bool withTypes = true) {
    Expected<CublasLtPlan> mapped = mapGemmToCublasLt(g, {}, withTypes ? &types : nullptr);
    EINC_EXPECT_OK(mapped);
    CublasLtPlan plan = mapped.ok() ? mapped.take() : CublasLtPlan{};
    EXPECT_TRUE(plan.epilogueKernel);
    EXPECT_EQ(plan.calls[0].epilogue, LtEpilogue::Default); // the plain product
    EXPECT_FALSE(plan.calls[0].separateD);
    return plan.unfusedWhy;
  };
  const std::vector<DType> f32x3(3, DType::F32);
  GemmDesc g = dense(1, 4, 8, 3);
  g.post = library({kC, kBias}, {kOut});
  g.post.bias = kBias;
  g.post.library = false; // ops that are no cuBLASLt epilogue (a select, ...)
  EXPECT_EQ(why(g, f32x3), "its ops are not one of cuBLASLt's epilogues");
  g.post.library = true;
  EXPECT_EQ(why(g, f32x3, false), "the types of its buffers are not known");
  EXPECT_EQ(why(g, {DType::F32, DType::BF16, DType::F32}), "its bias is not of the product's type");
  g.post.outputs = {kOut, kAux};
  g.post.activation = GemmActivation::Relu;
  g.post.aux = kAux;
  EXPECT_EQ(why(g, {DType::F32, DType::F32, DType::F32, DType::F32}),
            "it keeps ReLU's input (cuBLASLt's RELU_AUX keeps a bit mask)");
  GemmDesc odd = dense(1, 4, 6, 3); // GELU_AUX's ld must be a multiple of 8
  odd.post = g.post;
  odd.post.activation = GemmActivation::Gelu;
  EXPECT_NE(why(odd, {DType::F32, DType::F32, DType::F32, DType::F32}).find("multiples of 8"),
            std::string::npos);
  GemmDesc empty = dense(1, 4, 8, 0); // k = 0: nothing to fuse into
  empty.post = library({kC}, {kOut});
  CublasLtPlan plan;
  std::vector<DType> two(2, DType::F32);
  EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(empty, {}, &two));
  EXPECT_TRUE(plan.emptySum);
  EXPECT_TRUE(plan.epilogueKernel);
}

TEST(CublasLtEpilogue, KeysAndNames) {
  GemmDesc g = dense(1, 4, 8, 3);
  CublasLtPlan plain, fused;
  EINC_ASSERT_OK_AND_ASSIGN(plain, mapGemmToCublasLt(g, {}));
  g.post = library({kC, kBias}, {kOut});
  g.post.bias = kBias;
  std::vector<DType> types(3, DType::F32);
  EINC_ASSERT_OK_AND_ASSIGN(fused, mapGemmToCublasLt(g, {}, &types));
  EXPECT_NE(plain.calls[0].key(), fused.calls[0].key());
  EXPECT_STREQ(ltEpilogueName(LtEpilogue::GeluAuxBias), "GELU_AUX_BIAS");
  EXPECT_STREQ(ltEpilogueName(LtEpilogue::Default), "DEFAULT");
}

TEST(CublasLtEpilogue, NoAlgorithmForTheEpilogueFallsBackToItsKernel) {
  // A heuristic with algorithms for plain products only (as
  // EINC_CUBLASLT_NO_EPILOGUE_ALGORITHMS=1 makes cuBLASLt's answer).
  std::vector<std::string> asked;
  CublasLtPlanner planner([&](const CublasLtCall &call) -> Expected<LtHeuristic> {
    asked.push_back(call.key());
    return call.separateD ? LtHeuristic::None : LtHeuristic::Found;
  });
  GemmDesc g = dense(3, 4, 8, 5);
  g.post = library({kC, kBias}, {kOut, kAux});
  g.post.bias = kBias;
  g.post.activation = GemmActivation::Gelu;
  g.post.aux = kAux;
  std::vector<int32_t> buffers = {kC, kBias, kOut, kAux};
  std::vector<DType> types(buffers.size(), DType::F32);
  CublasLtPlan plan;
  EINC_ASSERT_OK_AND_ASSIGN(plan, planner.plan(g, {}, &types));
  EXPECT_TRUE(plan.epilogueKernel);
  EXPECT_EQ(plan.unfusedWhy,
            "cuBLASLt's heuristic has no algorithm for its GELU_AUX_BIAS epilogue on this call");
  ASSERT_EQ(plan.calls.size(), 1u);
  EXPECT_EQ(plan.calls[0].epilogue, LtEpilogue::Default);
  EXPECT_FALSE(plan.calls[0].separateD);
  EXPECT_EQ(asked.size(), 2u); // the fused call, then the plain one

  // The plain calls into C, then the epilogue's kernel over it: the typed
  // reading, as the fused plan computes it.
  std::mt19937_64 rng(11);
  test::GemmSpans s = spansOf(g);
  std::vector<double> a = smallIntegers(s.a, rng), b = smallIntegers(s.b, rng);
  std::vector<std::vector<double>> want;
  for (int32_t buffer : buffers)
    want.push_back(smallIntegers(buffer == kBias ? g.n : s.c, rng));
  std::vector<std::vector<double>> got = want;
  rowMajorTyped(g, a, b, want, 0, buffers);
  ASSERT_TRUE(test::columnMajorCalls(g, plan, a, b, got[0]));
  epilogueKernel(g, got, 0, buffers);
  EXPECT_EQ(got, want);

  // The same shape again (another step, a later run): the same plan, the
  // heuristic not asked again; another shape is asked about.
  CublasLtPlan again;
  EINC_ASSERT_OK_AND_ASSIGN(again, planner.plan(g, {}, &types));
  EXPECT_TRUE(again.epilogueKernel);
  EXPECT_EQ(asked.size(), 2u);
  EXPECT_EQ(planner.asked(), 2u);
  GemmDesc h = dense(1, 4, 16, 5);
  h.post = g.post;
  EINC_ASSERT_OK_AND_ASSIGN(again, planner.plan(h, {}, &types));
  EXPECT_EQ(asked.size(), 4u);

  // A heuristic that fuses: the fused plan; one with no algorithm at all:
  // the step's error names the call; one that fails: its error.
  CublasLtPlanner fusing(
      [](const CublasLtCall &) -> Expected<LtHeuristic> { return LtHeuristic::Found; });
  EINC_ASSERT_OK_AND_ASSIGN(plan, fusing.plan(g, {}, &types));
  EXPECT_FALSE(plan.epilogueKernel);
  EXPECT_EQ(plan.calls[0].epilogue, LtEpilogue::GeluAuxBias);
  CublasLtPlanner none(
      [](const CublasLtCall &) -> Expected<LtHeuristic> { return LtHeuristic::None; });
  Expected<CublasLtPlan> unplanned = none.plan(g, {}, &types);
  ASSERT_FALSE(unplanned.ok());
  EXPECT_EQ(unplanned.status().message(),
            "cuBLASLt's heuristic found no algorithm for cuBLASLt NN m=8 n=4 k=5 batch=3 "
            "f32·f32->f32");
  EXPECT_EQ(unplanned.status().code(), StatusCode::Unavailable);
  CublasLtPlanner failing([](const CublasLtCall &) -> Expected<LtHeuristic> {
    return Status::internal("cublasLtMatmulAlgoGetHeuristic failed");
  });
  Expected<CublasLtPlan> failed = failing.plan(g, {}, &types);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "cublasLtMatmulAlgoGetHeuristic failed");
  EXPECT_EQ(failed.status().code(), StatusCode::Internal);
}

} // namespace
} // namespace einrt
