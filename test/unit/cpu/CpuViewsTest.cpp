//===- CpuViewsTest.cpp - Slices and concats as views on the CPU backend --===//
//
// ein.slice lowers to no step (its buffer a view of its input's rows) and
// ein.concat to no step for the inputs written in place (their buffers
// views of its rows: passes/ConcatInPlace.h), a Copy into a view for the
// others; every case runs against the reference backend, and the memory
// plan keeps a viewed buffer live as long as its views.
//
//===----------------------------------------------------------------------===//
#include "../pipeline/Compile.h"
#include "CpuTestSupport.h"

#include "runtime/core/Arena.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <gtest/gtest.h>

using namespace mlir;
using einrt::StepKind;
using namespace einc::cputest;

namespace {

int countKind(const einrt::Program &p, StepKind kind) {
  int n = 0;
  for (const einrt::Step &s : p.steps)
    n += s.kind == kind;
  return n;
}

double compare(Lowered &l) {
  double worst = 0;
  for (unsigned seed : {1u, 2u}) {
    einrt::Expected<double> e = compareRuns(l, [&](einrt::Executor &ex) { fillRandom(ex, seed); });
    EINC_EXPECT_OK(e);
    worst = std::max(worst, e.ok() ? *e : INFINITY);
  }
  return worst;
}

/// Slices of an exp (rows 1..2 and 0), then of a slice: views, no copy.
TEST(CpuViews, SlicesAreViews) {
  const char *text = R"(
func.func @f(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>) -> (tensor<2x5xf32>, tensor<1x4xf32>) {
  %e = ein.exp %x : tensor<3x4xf32>
  %a = ein.slice %e offset 1 : tensor<3x4xf32> -> tensor<2x4xf32>
  %b = ein.slice %a offset 1 : tensor<2x4xf32> -> tensor<1x4xf32>
  %y = ein.contract %a, %w batch [], [] contract [1], [0] : tensor<2x4xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  %t = ein.tanh %b : tensor<1x4xf32>
  return %y, %t : tensor<2x5xf32>, tensor<1x4xf32>
}
)";
  auto compiled = einc::testing::parseMLIR(text);
  ASSERT_TRUE(compiled.module) << compiled.errors;
  Lowered l = lowerBoth(compiled.module->lookupSymbol<func::FuncOp>("f"));
  ASSERT_TRUE(l.cpu && l.reference) << l.errors;
  // exp, the matmul, tanh: nothing for the slices.
  ASSERT_EQ(l.cpu->steps.size(), 3u);
  EXPECT_EQ(countKind(*l.cpu, StepKind::Copy), 0);
  EXPECT_EQ(countKind(*l.reference, StepKind::Slice), 2);
  const einrt::Step &mm = l.cpu->steps[1];
  ASSERT_EQ(mm.kind, StepKind::Matmul);
  const einrt::Buffer &a = l.cpu->buffers[mm.inputs[0]];
  EXPECT_EQ(a.viewOf, l.cpu->steps[0].output);
  EXPECT_EQ(a.viewOffset, 4); // row 1 of 4 elements
  const einrt::Buffer &b = l.cpu->buffers[l.cpu->steps[2].inputs[0]];
  EXPECT_EQ(b.viewOf, l.cpu->steps[0].output) << "a view of a view views the root";
  EXPECT_EQ(b.viewOffset, 8);
  // The exp's buffer lives until tanh reads its last row.
  einrt::MemoryPlan plan = einrt::planMemory(*l.cpu, einrt::StorageSizes{});
  int32_t e = l.cpu->steps[0].output;
  EXPECT_EQ(plan.arenaOffset[mm.inputs[0]], plan.arenaOffset[e] + 4 * 4);
  EXPECT_EQ(plan.liveAtStep[2], plan.liveAtStep[1]) << "exp's buffer is live at tanh";
  EXPECT_LT(compare(l), 1e-6);
}

/// A returned slice has storage of its own: one Copy from a view.
TEST(CpuViews, ReturnedSliceIsCopied) {
  const char *text = R"(
func.func @f(%x: tensor<3x4xf32>) -> tensor<1x4xf32> {
  %e = ein.exp %x : tensor<3x4xf32>
  %a = ein.slice %e offset 2 : tensor<3x4xf32> -> tensor<1x4xf32>
  return %a : tensor<1x4xf32>
}
)";
  auto compiled = einc::testing::parseMLIR(text);
  ASSERT_TRUE(compiled.module) << compiled.errors;
  Lowered l = lowerBoth(compiled.module->lookupSymbol<func::FuncOp>("f"));
  ASSERT_TRUE(l.cpu && l.reference) << l.errors;
  ASSERT_EQ(l.cpu->steps.size(), 2u);
  const einrt::Step &copy = l.cpu->steps[1];
  EXPECT_EQ(copy.kind, StepKind::Copy);
  EXPECT_EQ(copy.output, l.cpu->results[0]);
  EXPECT_EQ(l.cpu->buffers[copy.inputs[0]].viewOffset, 8);
  EXPECT_LT(compare(l), 1e-6);
}

/// The q/k/v case in the backward: producers write their rows of the
/// concat; a part that is an argument, one that is a constant and one read
/// twice are copied; one also read by a later op stays in place.
TEST(CpuViews, ConcatInputsWrittenInPlace) {
  const char *text = R"(
func.func @f(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %arg: tensor<1x4xf32>)
    -> (tensor<9x4xf32>, tensor<2x4xf32>) {
  %a = ein.exp %x {ein.phase = "backward"} : tensor<2x4xf32>
  %m = ein.contract %x, %w batch [], [] contract [1], [0] {ein.phase = "backward"} : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %r = ein.reshape %m {ein.phase = "backward"} : tensor<2x4xf32> -> tensor<1x8xf32>
  %r2 = ein.reshape %r {ein.phase = "backward"} : tensor<1x8xf32> -> tensor<2x4xf32>
  %t = ein.tanh %x {ein.phase = "backward"} : tensor<2x4xf32>
  %z = ein.constant {ein.phase = "backward"} dense<0.0> : tensor<f32>
  %zb = ein.broadcast %z dims [] {ein.phase = "backward"} : tensor<f32> -> tensor<2x4xf32>
  %c = ein.concat %a, %r2, %arg, %t, %t : tensor<2x4xf32>, tensor<2x4xf32>, tensor<1x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> -> tensor<9x4xf32>
  %later = ein.mul %a, %zb {ein.phase = "backward"} : tensor<2x4xf32>
  return %c, %later : tensor<9x4xf32>, tensor<2x4xf32>
}
)";
  auto compiled = einc::testing::parseMLIR(text);
  ASSERT_TRUE(compiled.module) << compiled.errors;
  // (The concat carries no phase: it is "forward" and nothing is in place.)
  compiled.module->walk([](Operation *op) {
    if (op->getName().getStringRef() == "ein.concat")
      op->setAttr("ein.phase", StringAttr::get(op->getContext(), "backward"));
  });
  Lowered l = lowerBoth(compiled.module->lookupSymbol<func::FuncOp>("f"));
  ASSERT_TRUE(l.cpu && l.reference) << l.errors;
  int32_t c = l.cpu->results[0];
  // exp and the matmul write in place (the matmul through two reshapes);
  // the argument and tanh (read twice) are copied, three Copy steps.
  EXPECT_EQ(countKind(*l.cpu, StepKind::Copy), 3);
  for (const einrt::Step &s : l.cpu->steps) {
    if (s.kind == StepKind::Matmul) {
      EXPECT_EQ(l.cpu->buffers[s.output].viewOf, c);
      EXPECT_EQ(l.cpu->buffers[s.output].viewOffset, 8);
    }
    if (s.kind == StepKind::Copy) {
      EXPECT_EQ(l.cpu->buffers[s.output].viewOf, c);
    }
  }
  EXPECT_EQ(l.cpu->buffers[l.cpu->steps[0].output].viewOf, c) << "exp writes rows 0..1";
  EXPECT_LT(compare(l), 1e-6);
}

/// A forward concat (remat prices forward values) copies every input, here
/// a slice (a view) and the exp it views.
TEST(CpuViews, ForwardConcatCopies) {
  const char *text = R"(
func.func @f(%x: tensor<2x4xf32>) -> tensor<3x4xf32> {
  %a = ein.exp %x : tensor<2x4xf32>
  %s = ein.slice %a offset 1 : tensor<2x4xf32> -> tensor<1x4xf32>
  %c = ein.concat %s, %a : tensor<1x4xf32>, tensor<2x4xf32> -> tensor<3x4xf32>
  %t = ein.tanh %c : tensor<3x4xf32>
  return %t : tensor<3x4xf32>
}
)";
  auto compiled = einc::testing::parseMLIR(text);
  ASSERT_TRUE(compiled.module) << compiled.errors;
  Lowered l = lowerBoth(compiled.module->lookupSymbol<func::FuncOp>("f"));
  ASSERT_TRUE(l.cpu && l.reference) << l.errors;
  EXPECT_EQ(countKind(*l.cpu, StepKind::Copy), 2);
  EXPECT_LT(compare(l), 1e-6);
}

} // namespace
