//===- CpuLayoutFoldsTest.cpp - Transposes folded into GEMM layouts -------===//
//
// codegen/CpuLayoutFolds.h's rule on small functions: gpt's attention
// (q, k, v a transpose of the qkv GEMM's output, y transposed back) lowers
// to Matmul steps alone, reading q, k and v where the qkv GEMM wrote them
// and writing y in the layout its reader wants; a transpose also read by a
// kernel, returned, or in strides no GEMM takes stays a step. Each program
// runs against the reference lowering.
//
//===----------------------------------------------------------------------===//
#include "../pipeline/Compile.h"
#include "CpuTestSupport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <gtest/gtest.h>

using namespace mlir;
using einrt::StepKind;
using namespace einc::cputest;

namespace {

Lowered lowered(const char *text) {
  auto compiled = einc::testing::parseMLIR(text);
  EXPECT_TRUE(compiled.module) << compiled.errors;
  if (!compiled.module)
    return {};
  return lowerBoth(compiled.module->lookupSymbol<func::FuncOp>("f"));
}

std::vector<const einrt::Step *> stepsOf(const einrt::Program &p, StepKind kind) {
  std::vector<const einrt::Step *> out;
  for (const einrt::Step &s : p.steps)
    if (s.kind == kind)
      out.push_back(&s);
  return out;
}

void expectLikeReference(Lowered &l) {
  std::string error;
  for (unsigned seed : {11u, 12u})
    EXPECT_LT(compareRuns(
                  l, [&](einrt::Executor &ex) { fillRandom(ex, seed); }, error),
              1e-5)
        << error;
}

/// batch 2, ctx 6, d 8, heads 2, hd 4: qkv is [2, 6, (3 2 4)].
TEST(CpuLayoutFolds, AttentionTransposesAreGemmStrides) {
  Lowered l = lowered(R"(
func.func @f(%x: tensor<2x6x8xf32>, %w: tensor<8x24xf32>, %wo: tensor<8x5xf32>) -> tensor<2x6x5xf32> {
  %qkv = ein.contract %x, %w batch [], [] contract [2], [0] : tensor<2x6x8xf32>, tensor<8x24xf32> -> tensor<2x6x24xf32>
  %r = ein.reshape %qkv : tensor<2x6x24xf32> -> tensor<2x6x3x2x4xf32>
  %t = ein.transpose %r [2, 0, 3, 1, 4] : tensor<2x6x3x2x4xf32> -> tensor<3x2x2x6x4xf32>
  %q1 = ein.slice %t offset 0 : tensor<3x2x2x6x4xf32> -> tensor<1x2x2x6x4xf32>
  %q = ein.reshape %q1 : tensor<1x2x2x6x4xf32> -> tensor<2x2x6x4xf32>
  %k1 = ein.slice %t offset 1 : tensor<3x2x2x6x4xf32> -> tensor<1x2x2x6x4xf32>
  %k = ein.reshape %k1 : tensor<1x2x2x6x4xf32> -> tensor<2x2x6x4xf32>
  %v1 = ein.slice %t offset 2 : tensor<3x2x2x6x4xf32> -> tensor<1x2x2x6x4xf32>
  %v = ein.reshape %v1 : tensor<1x2x2x6x4xf32> -> tensor<2x2x6x4xf32>
  %s = ein.contract %q, %k batch [0, 1], [0, 1] contract [3], [3] : tensor<2x2x6x4xf32>, tensor<2x2x6x4xf32> -> tensor<2x2x6x6xf32>
  %y = ein.contract %s, %v batch [0, 1], [0, 1] contract [3], [2] : tensor<2x2x6x6xf32>, tensor<2x2x6x4xf32> -> tensor<2x2x6x4xf32>
  %yt = ein.transpose %y [0, 2, 1, 3] : tensor<2x2x6x4xf32> -> tensor<2x6x2x4xf32>
  %yr = ein.reshape %yt : tensor<2x6x2x4xf32> -> tensor<2x6x8xf32>
  %o = ein.contract %yr, %wo batch [], [] contract [2], [0] : tensor<2x6x8xf32>, tensor<8x5xf32> -> tensor<2x6x5xf32>
  return %o : tensor<2x6x5xf32>
}
)");
  ASSERT_TRUE(l.cpu && l.reference) << l.errors;
  EXPECT_TRUE(stepsOf(*l.cpu, StepKind::Kernel).empty()) << "a transpose kernel was lowered";
  auto mm = stepsOf(*l.cpu, StepKind::Matmul);
  ASSERT_EQ(mm.size(), 4u);
  const int32_t qkv = mm[0]->output;
  // q·kᵀ: q at the start of qkv's rows, k hd·heads = 8 elements in, each
  // row 24 apart; heads the batch (stride 4), batch an outer loop.
  const einrt::GemmDesc &s = mm[1]->as<einrt::GemmDesc>();
  EXPECT_EQ(mm[1]->inputs[0], qkv);
  const einrt::Buffer &k = l.cpu->buffers[mm[1]->inputs[1]];
  EXPECT_EQ(k.viewOf, qkv);
  EXPECT_EQ(k.viewOffset, 8);
  EXPECT_EQ(s.lda, 24);
  EXPECT_EQ(s.ldb, 24);
  EXPECT_TRUE(s.transB);
  EXPECT_EQ(s.batch, 2);
  EXPECT_EQ(s.strideA, 4);
  ASSERT_EQ(s.outer.size(), 1u);
  EXPECT_EQ(s.outer[0].strideA, 6 * 24);
  // att·v writes y as [batch ctx (heads hd)]: rows 8 apart, heads 4 apart,
  // straight into the buffer the last GEMM reads.
  const einrt::GemmDesc &y = mm[2]->as<einrt::GemmDesc>();
  EXPECT_EQ(l.cpu->buffers[mm[2]->inputs[1]].viewOffset, 16);
  EXPECT_EQ(y.ldc, 8);
  EXPECT_EQ(y.strideC, 4);
  ASSERT_EQ(y.outer.size(), 1u);
  EXPECT_EQ(y.outer[0].strideC, 6 * 8);
  EXPECT_EQ(mm[3]->inputs[0], mm[2]->output);
  expectLikeReference(l);
}

/// A contraction's result transposed and read by two contractions in
/// place (gpt's dY): no step between them.
TEST(CpuLayoutFolds, TransposeReadByTwoContractions) {
  Lowered l = lowered(R"(
func.func @f(%d: tensor<2x6x8xf32>, %w: tensor<8x8xf32>, %a: tensor<2x2x6x6xf32>, %v: tensor<2x2x6x4xf32>) -> (tensor<2x2x6x4xf32>, tensor<2x2x6x6xf32>) {
  %dy = ein.contract %d, %w batch [], [] contract [2], [1] : tensor<2x6x8xf32>, tensor<8x8xf32> -> tensor<2x6x8xf32>
  %r = ein.reshape %dy : tensor<2x6x8xf32> -> tensor<2x6x2x4xf32>
  %t = ein.transpose %r [0, 2, 1, 3] : tensor<2x6x2x4xf32> -> tensor<2x2x6x4xf32>
  %dv = ein.contract %a, %t batch [0, 1], [0, 1] contract [2], [2] : tensor<2x2x6x6xf32>, tensor<2x2x6x4xf32> -> tensor<2x2x6x4xf32>
  %da = ein.contract %t, %v batch [0, 1], [0, 1] contract [3], [3] : tensor<2x2x6x4xf32>, tensor<2x2x6x4xf32> -> tensor<2x2x6x6xf32>
  return %dv, %da : tensor<2x2x6x4xf32>, tensor<2x2x6x6xf32>
}
)");
  ASSERT_TRUE(l.cpu && l.reference) << l.errors;
  EXPECT_TRUE(stepsOf(*l.cpu, StepKind::Kernel).empty());
  auto mm = stepsOf(*l.cpu, StepKind::Matmul);
  ASSERT_EQ(mm.size(), 3u);
  EXPECT_EQ(mm[1]->inputs[1], mm[0]->output);
  EXPECT_EQ(mm[2]->inputs[0], mm[0]->output);
  EXPECT_EQ(mm[2]->as<einrt::GemmDesc>().lda, 8);
  expectLikeReference(l);
}

/// Transposes the rule keeps: one also read by a kernel, one of a
/// contraction that is also returned, one whose reshape no strides
/// express, one whose contracted dims do not collapse.
TEST(CpuLayoutFolds, OtherTransposesStaySteps) {
  Lowered l = lowered(R"(
func.func @f(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>, %c: tensor<2x3x4xf32>, %d: tensor<8x5xf32>, %e: tensor<4x3x5xf32>, %g: tensor<4x5x6xf32>) -> (tensor<3x5xf32>, tensor<3x4xf32>, tensor<5x3xf32>, tensor<3x5xf32>, tensor<3x6xf32>) {
  %at = ein.transpose %a [1, 0] : tensor<4x3xf32> -> tensor<3x4xf32>
  %ex = ein.exp %at : tensor<3x4xf32>
  %p = ein.contract %at, %b batch [], [] contract [1], [0] : tensor<3x4xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
  %pt = ein.transpose %p [1, 0] : tensor<3x5xf32> -> tensor<5x3xf32>
  %ct = ein.transpose %c [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %cr = ein.reshape %ct : tensor<3x2x4xf32> -> tensor<3x8xf32>
  %q = ein.contract %cr, %d batch [], [] contract [1], [0] : tensor<3x8xf32>, tensor<8x5xf32> -> tensor<3x5xf32>
  %et = ein.transpose %e [1, 0, 2] : tensor<4x3x5xf32> -> tensor<3x4x5xf32>
  %s = ein.contract %et, %g batch [], [] contract [1, 2], [0, 1] : tensor<3x4x5xf32>, tensor<4x5x6xf32> -> tensor<3x6xf32>
  return %p, %ex, %pt, %q, %s : tensor<3x5xf32>, tensor<3x4xf32>, tensor<5x3xf32>, tensor<3x5xf32>, tensor<3x6xf32>
}
)");
  ASSERT_TRUE(l.cpu && l.reference) << l.errors;
  int transposes = 0;
  for (const einrt::Step *s : stepsOf(*l.cpu, StepKind::Kernel))
    transposes += s->note.rfind("ein.transpose", 0) == 0;
  EXPECT_EQ(transposes, 4);
  EXPECT_EQ(stepsOf(*l.cpu, StepKind::Matmul).size(), 3u);
  expectLikeReference(l);
}

/// bf16 GEMMs keep their transposes (codegen/CpuLayoutFolds.h: narrow
/// operands are read dense).
TEST(CpuLayoutFolds, NarrowGemmsKeepTheirTransposes) {
  Lowered l = lowered(R"(
func.func @f(%d: tensor<2x6x8xbf16>, %w: tensor<8x8xbf16>, %a: tensor<2x2x6x6xbf16>) -> tensor<2x2x6x4xbf16> {
  %dy = ein.contract %d, %w batch [], [] contract [2], [1] : tensor<2x6x8xbf16>, tensor<8x8xbf16> -> tensor<2x6x8xbf16>
  %r = ein.reshape %dy : tensor<2x6x8xbf16> -> tensor<2x6x2x4xbf16>
  %t = ein.transpose %r [0, 2, 1, 3] : tensor<2x6x2x4xbf16> -> tensor<2x2x6x4xbf16>
  %dv = ein.contract %a, %t batch [0, 1], [0, 1] contract [2], [2] : tensor<2x2x6x6xbf16>, tensor<2x2x6x4xbf16> -> tensor<2x2x6x4xbf16>
  %o = ein.contract %a, %dv batch [0, 1], [0, 1] contract [3], [2] : tensor<2x2x6x6xbf16>, tensor<2x2x6x4xbf16> -> tensor<2x2x6x4xbf16>
  %ot = ein.transpose %o [0, 2, 1, 3] : tensor<2x2x6x4xbf16> -> tensor<2x6x2x4xbf16>
  %back = ein.transpose %ot [0, 2, 1, 3] : tensor<2x6x2x4xbf16> -> tensor<2x2x6x4xbf16>
  return %back : tensor<2x2x6x4xbf16>
}
)");
  ASSERT_TRUE(l.cpu && l.reference) << l.errors;
  EXPECT_EQ(stepsOf(*l.cpu, StepKind::Kernel).size(), 3u);
  EXPECT_EQ(stepsOf(*l.cpu, StepKind::Matmul).size(), 3u);
}

} // namespace
