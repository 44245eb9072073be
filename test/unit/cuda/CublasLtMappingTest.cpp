//===- CublasLtMappingTest.cpp - GemmDesc -> cuBLASLt calls, evaluated -----===//
//
// mapGemmToCublasLt (runtime/cuda/CublasLtMapping.h) on hand-made and random
// GemmDescs: the calls, evaluated column-major as cuBLASLt would, equal the
// row-major evaluation of the GemmDesc (test/unit/cuda/GemmReference.h);
// the fields of one call checked by hand; element types, compute types,
// alignments and descriptor keys; what cuBLASLt cannot run.
//
//===----------------------------------------------------------------------===//
#include "GemmReference.h"
#include "test/unit/StatusTesting.h"

#include "runtime/cuda/CublasLtMapping.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace einrt {
namespace {

using test::columnMajorCalls;
using test::rowMajorGemm;
using test::smallIntegers;
using test::spansOf;

/// Maps `g` and holds both evaluations equal on random small integers
/// (C starts random too: Accumulate reads it, untouched elements keep it).
void expectSameProduct(const GemmDesc &g, uint64_t seed, CublasLtPlan *planOut = nullptr) {
  CublasLtPlan plan;
  EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(g, {}));
  std::mt19937_64 rng(seed);
  test::GemmSpans s = spansOf(g);
  std::vector<double> a = smallIntegers(s.a, rng), b = smallIntegers(s.b, rng),
                      c = smallIntegers(s.c + 3, rng);
  std::vector<double> want = c, got = c;
  rowMajorGemm(g, a, b, want);
  ASSERT_TRUE(columnMajorCalls(g, plan, a, b, got)) << "a call reaches outside an operand";
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << "C element " << i;
  if (planOut)
    *planOut = plan;
}

GemmDesc plain(int64_t m, int64_t n, int64_t k, bool ta = false, bool tb = false) {
  GemmDesc g;
  g.m = m, g.n = n, g.k = k, g.transA = ta, g.transB = tb;
  g.lda = ta ? m : k;
  g.ldb = tb ? k : n;
  g.ldc = n;
  return g;
}

TEST(CublasLtMapping, OneMatrixSwapsOperandsAndSizes) {
  // Row-major C (4x5) = A^T (A stored 3x4) · B (3x5), ldc 7.
  GemmDesc g = plain(4, 5, 3, true, false);
  g.ldc = 7;
  CublasLtPlan plan;
  expectSameProduct(g, 1, &plan);
  ASSERT_EQ(plan.calls.size(), 1u);
  const CublasLtCall &c = plan.calls[0];
  // Column-major C^T (5x4) = B^T (B as column-major 5x3, no op) · A^T ...
  EXPECT_EQ(c.m, 5);
  EXPECT_EQ(c.n, 4);
  EXPECT_EQ(c.k, 3);
  EXPECT_FALSE(c.transA); // the step's B, not transposed
  EXPECT_TRUE(c.transB);  // the step's A, transposed
  EXPECT_EQ(c.lda, 5);    // the step's ldb
  EXPECT_EQ(c.ldb, 4);    // the step's lda
  EXPECT_EQ(c.ldc, 7);
  EXPECT_EQ(c.rowsA, 5);
  EXPECT_EQ(c.colsA, 3);
  EXPECT_EQ(c.rowsB, 4); // stored 4 x 3 column-major: op T gives 3 x 4
  EXPECT_EQ(c.colsB, 3);
  EXPECT_EQ(c.rowsC, 5);
  EXPECT_EQ(c.colsC, 4);
  EXPECT_EQ(c.batch, 1);
  EXPECT_EQ(c.beta, 0.0f);
  EXPECT_EQ(c.alpha, 1.0f);
}

TEST(CublasLtMapping, EveryTransposeAndLeadingDimension) {
  uint64_t seed = 0;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int64_t pad : {0, 3}) {
        GemmDesc g = plain(6, 7, 5, ta, tb);
        g.lda += pad, g.ldb += 2 * pad, g.ldc += pad;
        SCOPED_TRACE(std::to_string(ta) + std::to_string(tb) + " pad " + std::to_string(pad));
        expectSameProduct(g, ++seed);
      }
}

TEST(CublasLtMapping, StridedBatchTravelsWithItsOperands) {
  GemmDesc g = plain(3, 4, 5);
  g.batch = 6;
  g.strideA = 3 * 5 + 1;
  g.strideB = 0; // one B for every matrix
  g.strideC = 3 * 4 + 2;
  CublasLtPlan plan;
  expectSameProduct(g, 7, &plan);
  ASSERT_EQ(plan.calls.size(), 1u);
  EXPECT_EQ(plan.calls[0].batch, 6);
  EXPECT_EQ(plan.calls[0].strideA, 0);         // the step's B
  EXPECT_EQ(plan.calls[0].strideB, 3 * 5 + 1); // the step's A
  EXPECT_EQ(plan.calls[0].strideC, 3 * 4 + 2);
}

TEST(CublasLtMapping, OuterLoopsFoldIntoTheBatchWhenTheyContinueIt) {
  // Heads and batch of an attention product: batch 4 (heads) inside a loop
  // of 3 that continues it (each stride = 4 x the batch stride).
  GemmDesc g = plain(8, 8, 16, false, true);
  g.batch = 4;
  g.strideA = 8 * 16, g.strideB = 8 * 16, g.strideC = 64;
  g.outer.push_back({3, 4 * g.strideA, 4 * g.strideB, 4 * g.strideC});
  CublasLtPlan plan;
  expectSameProduct(g, 11, &plan);
  ASSERT_EQ(plan.calls.size(), 1u);
  EXPECT_EQ(plan.calls[0].batch, 12);
  // Batch 1 takes any loop's strides.
  GemmDesc h = plain(5, 6, 7);
  h.outer.push_back({4, 100, 0, 40});
  expectSameProduct(h, 12, &plan);
  ASSERT_EQ(plan.calls.size(), 1u);
  EXPECT_EQ(plan.calls[0].batch, 4);
  EXPECT_EQ(plan.calls[0].strideA, 0);
  EXPECT_EQ(plan.calls[0].strideB, 100);
}

TEST(CublasLtMapping, LoopsThatDoNotContinueTheBatchAreCalls) {
  GemmDesc g = plain(3, 4, 2);
  g.batch = 2;
  g.strideA = 6, g.strideB = 8, g.strideC = 12;
  // An outer loop of 3 with a gap after each batch, inside a loop of 2.
  g.outer.push_back({2, 200, 90, 150});
  g.outer.push_back({3, 30, 20, 40});
  CublasLtPlan plan;
  expectSameProduct(g, 21, &plan);
  ASSERT_EQ(plan.calls.size(), 6u);
  for (const CublasLtCall &c : plan.calls)
    EXPECT_EQ(c.batch, 2);
  // Outermost first: call 1 is the inner loop's second iteration.
  EXPECT_EQ(plan.calls[1].offsetC, 40);
  EXPECT_EQ(plan.calls[1].offsetA, 20); // cuBLASLt's A: the step's B
  EXPECT_EQ(plan.calls[3].offsetC, 150);
}

TEST(CublasLtMapping, AccumulateIsBetaOne) {
  GemmDesc g = plain(4, 3, 6, false, true);
  g.epilogue = GemmEpilogue::Accumulate;
  CublasLtPlan plan;
  expectSameProduct(g, 31, &plan);
  EXPECT_EQ(plan.calls[0].beta, 1.0f);
}

TEST(CublasLtMapping, EmptySums) {
  GemmDesc g = plain(3, 4, 0);
  g.batch = 2;
  g.strideC = 20;
  g.ldc = 5;
  CublasLtPlan plan;
  expectSameProduct(g, 41, &plan); // Store: C := 0, padding untouched
  EXPECT_TRUE(plan.emptySum);
  g.epilogue = GemmEpilogue::Accumulate;
  expectSameProduct(g, 42, &plan); // C unchanged
  // No matrices, or no rows: no call at all.
  EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(plain(0, 4, 3), {}));
  EXPECT_TRUE(plan.calls.empty());
}

/// A random valid GemmDesc: C matrices disjoint, A and B read anywhere.
GemmDesc randomGemm(std::mt19937_64 &rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  GemmDesc g = plain(pick(1, 6), pick(1, 6), pick(0, 5), pick(0, 1), pick(0, 1));
  g.lda += pick(0, 2), g.ldb += pick(0, 2), g.ldc += pick(0, 2);
  g.epilogue = pick(0, 1) ? GemmEpilogue::Accumulate : GemmEpilogue::Store;
  g.batch = pick(1, 3);
  int64_t extentA = (g.transA ? g.k : g.m) * g.lda, extentB = (g.transB ? g.n : g.k) * g.ldb;
  int64_t extentC = g.m * g.ldc;
  g.strideA = pick(0, 1) ? 0 : extentA + pick(0, 3);
  g.strideB = pick(0, 1) ? 0 : extentB + pick(0, 3);
  g.strideC = extentC + pick(0, 3);
  // Loops, innermost generated first: each C stride clears the span inside.
  int64_t spanC = g.batch * g.strideC, innerA = g.batch * g.strideA, innerB = g.batch * g.strideB;
  std::vector<GemmLoop> loops;
  for (int64_t d = pick(0, 2); d > 0; --d) {
    GemmLoop l;
    l.count = pick(1, 3);
    bool continues = pick(0, 1);
    l.strideC = continues ? spanC : spanC + pick(1, 5);
    l.strideA = continues ? innerA : pick(0, 40);
    l.strideB = continues ? innerB : pick(0, 40);
    loops.insert(loops.begin(), l);
    spanC = l.count * l.strideC;
    innerA = l.count * l.strideA;
    innerB = l.count * l.strideB;
  }
  g.outer = loops;
  return g;
}

TEST(CublasLtMapping, RandomGemmsMatchTheRowMajorProduct) {
  std::mt19937_64 rng(2026);
  for (int i = 0; i < 3000; ++i) {
    GemmDesc g = randomGemm(rng);
    SCOPED_TRACE("case " + std::to_string(i) + ": m " + std::to_string(g.m) + " n " +
                 std::to_string(g.n) + " k " + std::to_string(g.k) + " batch " +
                 std::to_string(g.batch) + " loops " + std::to_string(g.outer.size()));
    expectSameProduct(g, uint64_t(i));
    if (testing::Test::HasFatalFailure())
      return;
  }
}

TEST(CublasLtMapping, ElementAndComputeTypes) {
  CublasLtPlan plan;
  GemmDesc g = plain(4, 4, 4);
  EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(g, {}));
  EXPECT_EQ(plan.calls[0].compute, LtCompute::F32);
  EXPECT_EQ(plan.calls[0].typeC, LtType::F32);
  CublasLtOptions tf32;
  tf32.tf32 = true;
  EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(g, tf32));
  EXPECT_EQ(plan.calls[0].compute, LtCompute::F32FastTF32);
  // bf16 operands (f32 sums), into f32 or bf16; tf32 leaves them alone.
  g.a = g.b = DType::BF16;
  EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(g, tf32));
  EXPECT_EQ(plan.calls[0].typeA, LtType::BF16);
  EXPECT_EQ(plan.calls[0].typeB, LtType::BF16);
  EXPECT_EQ(plan.calls[0].typeC, LtType::F32);
  EXPECT_EQ(plan.calls[0].compute, LtCompute::F32);
  g.c = DType::BF16;
  EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(g, {}));
  EXPECT_EQ(plan.calls[0].typeC, LtType::BF16);
  g.a = g.b = g.c = DType::F16;
  EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(g, {}));
  EXPECT_EQ(plan.calls[0].typeA, LtType::F16);
  EXPECT_STREQ(ltTypeName(plan.calls[0].typeC), "f16");
}

TEST(CublasLtMapping, WhatCublasLtCannotRun) {
  CublasLtPlan plan;
  GemmDesc g = plain(4, 4, 4);
  g.a = DType::BF16; // B stays f32
  EINC_EXPECT_STATUS(mapGemmToCublasLt(g, {}), StatusCode::Invalid, "A and B of one type");
  g = plain(4, 4, 4);
  g.a = g.b = DType::F32;
  g.c = DType::BF16; // f32 operands into bf16
  EINC_EXPECT_STATUS(mapGemmToCublasLt(g, {}), StatusCode::Invalid, "");
  g = plain(4, 4, 4);
  g.accumulate = DType::F64;
  EINC_EXPECT_STATUS(mapGemmToCublasLt(g, {}), StatusCode::Invalid, "reference backend");
  g = plain(4, 4, 4);
  g.a = g.b = DType::I32;
  EINC_EXPECT_STATUS(mapGemmToCublasLt(g, {}), StatusCode::Invalid, "f32, bf16 and f16");
  g = plain(4, 4, 4);
  g.m = -1;
  EINC_EXPECT_STATUS(mapGemmToCublasLt(g, {}), StatusCode::Invalid, "");
}

TEST(CublasLtMapping, LeadingDimensionsCublasLtAccepts) {
  // A one-row A (a vector times a matrix) may state lda 1; as cuBLASLt's B
  // (k x 1 column-major) its ld becomes k. The product is unchanged.
  GemmDesc g = plain(1, 6, 5);
  g.lda = 1;
  CublasLtPlan plan;
  expectSameProduct(g, 51, &plan);
  EXPECT_EQ(plan.calls[0].ldb, 5);
  EXPECT_GE(plan.calls[0].lda, plan.calls[0].rowsA);
  // Rows that overlap cannot be described to cuBLASLt.
  GemmDesc h = plain(4, 6, 5);
  h.ldb = 3; // B's rows of 6, 3 apart
  EINC_EXPECT_STATUS(mapGemmToCublasLt(h, {}), StatusCode::Invalid,
                     "the step's B rows apart by at least their 6 elements (leading dimension 3)");
}

TEST(CublasLtMapping, AlignmentsFollowOffsetsAndStrides) {
  GemmDesc g = plain(8, 8, 8);
  g.batch = 2;
  g.strideA = 64, g.strideB = 64 + 1, g.strideC = 64;
  CublasLtPlan plan;
  EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(g, {}));
  EXPECT_EQ(plan.calls[0].alignA, 4);   // the step's B: 65 floats apart
  EXPECT_EQ(plan.calls[0].alignB, 256); // the step's A: 256 bytes apart
  EXPECT_EQ(plan.calls[0].alignC, 256);
  // A call at an offset of 2 bf16 elements: 4-byte aligned.
  GemmDesc h = plain(2, 2, 2);
  h.a = h.b = DType::BF16;
  h.outer.push_back({2, 2, 2, 100});
  h.batch = 1;
  h.outer.push_back({2, 6, 6, 4}); // does not continue {2, 2, 2, 100}: calls
  EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(h, {}));
  ASSERT_EQ(plan.calls.size(), 2u);
  EXPECT_EQ(plan.calls[1].offsetB, 2); // the step's A, 2 bf16
  EXPECT_EQ(plan.calls[1].alignB, 4);
}

TEST(CublasLtMapping, BufferAlignmentsLimitTheCalls) {
  // A view sits at its root's address plus offset × size (runtime/core/Arena.h):
  // a bf16 view 3 elements into a 256-byte-aligned root starts 2-byte
  // aligned, an f32 one 3 elements in 4-byte aligned.
  const uintptr_t root = uintptr_t(1) << 32;
  EXPECT_EQ(addressAlignment(reinterpret_cast<void *>(root + 3 * 2)), 2);
  EXPECT_EQ(addressAlignment(reinterpret_cast<void *>(root + 3 * 4)), 4);
  EXPECT_EQ(addressAlignment(reinterpret_cast<void *>(root + 64)), 64);
  EXPECT_EQ(addressAlignment(reinterpret_cast<void *>(root + 512)), 256);
  EXPECT_EQ(addressAlignment(nullptr), 256);

  GemmDesc g = plain(8, 8, 8);
  g.a = g.b = DType::BF16;
  LtAlignments bases{2, 8, 64, {}}; // A, B, C
  CublasLtPlan plan;
  EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(g, {}, nullptr, &bases));
  EXPECT_EQ(plan.calls[0].alignA, 8); // the step's B
  EXPECT_EQ(plan.calls[0].alignB, 2); // the step's A
  EXPECT_EQ(plan.calls[0].alignC, 64);
  std::string key = plan.calls[0].key();
  EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(g, {}));
  EXPECT_EQ(plan.calls[0].alignB, 256);
  EXPECT_NE(plan.calls[0].key(), key); // another algorithm may be picked

  // A fused epilogue: C and D (the residual and the result), the bias and
  // the aux at their own buffers' alignments; the offsets still count.
  GemmDesc f = plain(4, 8, 8);
  f.batch = 2, f.strideA = 32, f.strideB = 64, f.strideC = 32;
  f.outer.push_back({2, 64, 128, 66}); // C 66 floats on, not 64: two calls
  f.post.kernel = 0;
  f.post.library = true;
  f.post.operands = {2, 3, 4}; // C, bias, residual
  f.post.outputs = {5, 6};     // result, aux
  f.post.bias = 3, f.post.residual = 4, f.post.result = 5, f.post.aux = 6;
  f.post.activation = GemmActivation::Gelu;
  std::vector<DType> types(5, DType::F32);
  LtAlignments post{256, 256, 256, {256, 4, 32, 16, 32}};
  EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(f, {}, &types, &post));
  ASSERT_FALSE(plan.epilogueKernel) << plan.unfusedWhy;
  ASSERT_EQ(plan.calls.size(), 2u);
  EXPECT_EQ(plan.calls[0].alignC, 16); // the residual 32, the result 16
  EXPECT_EQ(plan.calls[0].alignBias, 4);
  EXPECT_EQ(plan.calls[0].alignAux, 32);
  EXPECT_EQ(plan.calls[1].alignC, 8); // 66 floats on: 8 bytes
  EXPECT_EQ(plan.calls[1].alignAux, 8);
}

TEST(CublasLtMapping, KeysNameDescriptors) {
  std::set<std::string> keys;
  CublasLtPlan plan;
  for (bool ta : {false, true})
    for (int64_t m : {4, 5}) {
      EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(plain(m, 4, 4, ta), {}));
      keys.insert(plan.calls[0].key());
    }
  EXPECT_EQ(keys.size(), 4u);
  GemmDesc g = plain(4, 4, 4);
  EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(g, {}));
  std::string key = plan.calls[0].key();
  g.epilogue = GemmEpilogue::Accumulate;
  EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(g, {}));
  EXPECT_NE(plan.calls[0].key(), key);
  g.epilogue = GemmEpilogue::Store;
  EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(g, {}));
  EXPECT_EQ(plan.calls[0].key(), key);
}

} // namespace
} // namespace einrt
