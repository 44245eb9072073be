//===- CpuLoweringTest.cpp - CPU-backend Programs vs the reference --------===//
//
// Each contraction layout class (plain, transposed lhs / rhs, batch dims,
// several contracted dims, layouts that need a transpose kernel, vector ·
// matrix, ...) is lowered with lowerToCpuProgram and with the reference
// lowering, both run on the same random inputs, and the results compared
// (relative error under 1e-5); the Matmul plan is checked too (in place where
// BLAS can read the layout, a transpose kernel only where it cannot). Then
// whole models: the forward, the gradient and training steps of
// the examples of pipeline/SmallExamples.h at reduced sizes, unfused and
// after ein-fuse-elementwise (fused kernels: several outputs, broadcasts
// read in place, mixed element types).
//
//===----------------------------------------------------------------------===//
#include "../pipeline/Compile.h"
#include "../pipeline/SmallExamples.h"
#include "CpuTestSupport.h"
#include "test/unit/StatusTesting.h"

#include "codegen/CpuKernels.h"
#include "codegen/CpuLowering.h"
#include "codegen/ReferenceLowering.h"
#include "passes/Passes.h"
#include "runtime/core/Executor.h"
#include "runtime/core/Init.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

using namespace mlir;
using ::ein::codegen::KernelCompiler;
using einrt::StepKind;
using namespace einc::cputest;
using einc::testing::readExample;

namespace {

struct Counts {
  int matmuls = 0, kernels = 0;
};
Counts count(const einrt::Program &p) {
  Counts c;
  for (const einrt::Step &s : p.steps) {
    c.matmuls += s.kind == StepKind::Matmul;
    c.kernels += s.kind == StepKind::Kernel;
  }
  return c;
}

const einrt::Step *firstMatmul(const einrt::Program &p) {
  for (const einrt::Step &s : p.steps)
    if (s.kind == StepKind::Matmul)
      return &s;
  return nullptr;
}

struct ContractCase {
  const char *name;
  const char *lhs, *rhs, *result; // tensor types
  const char *dims;               // "batch [..], [..] contract [..], [..]"
  int transposes;                 // transpose kernels expected
  int transA = -1, transB = -1;   // expected flags (-1: not checked)
  int64_t batch = -1;             // expected batch count (-1: not checked)
  int outerLoops = 0;             // expected outer batch loops
};

const ContractCase kCases[] = {
    {"plain", "3x4", "4x5", "3x5", "batch [], [] contract [1], [0]", 0, 0, 0, 1},
    {"transposed_lhs", "4x3", "4x5", "3x5", "batch [], [] contract [0], [0]", 0, 1, 0, 1},
    {"transposed_rhs", "3x4", "5x4", "3x5", "batch [], [] contract [1], [1]", 0, 0, 1, 1},
    {"both_transposed", "4x3", "5x4", "3x5", "batch [], [] contract [0], [1]", 0, 1, 1, 1},
    {"batch", "2x3x4", "2x4x5", "2x3x5", "batch [0], [0] contract [2], [1]", 0, 0, 0, 2},
    {"batch_transposed", "2x4x3", "2x5x4", "2x3x5", "batch [0], [0] contract [1], [2]", 0, 1, 1, 2},
    // A batch dim in the middle: read with a batch stride and a wider lda.
    {"batch_strided", "3x2x4", "2x4x5", "2x3x5", "batch [1], [0] contract [2], [1]", 0, 0, 0, 2},
    {"batch_last_rhs", "2x3x4", "4x5x2", "2x3x5", "batch [0], [2] contract [2], [0]", 1},
    {"two_batch_dims", "2x3x4x5", "2x3x5x6", "2x3x4x6", "batch [0, 1], [0, 1] contract [3], [2]", 0,
     0, 0, 6},
    // Batch dims that do not collapse: an outer loop, no copy.
    {"two_batch_dims_swapped", "2x3x4x5", "3x2x5x6", "2x3x4x6",
     "batch [0, 1], [1, 0] contract [3], [2]", 0, 0, 0, 3, 1},
    {"two_contracted", "3x4x5", "4x5x6", "3x6", "batch [], [] contract [1, 2], [0, 1]", 0, 0, 0, 1},
    {"two_contracted_rhs_order", "3x4x5", "4x5x6", "3x6", "batch [], [] contract [2, 1], [1, 0]", 0,
     0, 0, 1},
    {"two_contracted_transposed", "4x5x3", "6x4x5", "3x6", "batch [], [] contract [0, 1], [1, 2]",
     0, 1, 1, 1},
    // K dims in opposite orders on the two sides: one side is transposed.
    {"contracted_crossed", "3x4x5", "5x4x6", "3x6", "batch [], [] contract [1, 2], [1, 0]", 1},
    // The lhs free dims are split by a contracted dim: M is not one dim.
    {"split_free_dims", "3x4x5", "4x6", "3x5x6", "batch [], [] contract [1], [0]", 1},
    {"vector_matrix", "4", "4x5", "5", "batch [], [] contract [0], [0]", 0, -1, 0, 1},
    {"matrix_vector", "3x4", "4", "3", "batch [], [] contract [1], [0]", 0, 0, -1, 1},
    {"dot", "7", "7", "", "batch [], [] contract [0], [0]", 0, -1, -1, 1},
    {"outer", "3", "5", "3x5", "batch [], [] contract [], []", 0, -1, -1, 1},
    // q·k over (batch, seq, heads, hd): heads inner batch, batch an outer loop.
    {"attention_scores", "2x6x3x4", "2x6x3x4", "2x3x6x6", "batch [0, 2], [0, 2] contract [3], [3]",
     0, 0, 1, 3, 1},
    {"attention_values", "2x3x6x6", "2x6x3x4", "2x3x6x4", "batch [0, 1], [0, 2] contract [3], [1]",
     0, 0, 0, 3, 1},
    {"three_batch_dims", "2x3x4x5x6", "4x2x3x6x7", "2x3x4x5x7",
     "batch [0, 1, 2], [1, 2, 0] contract [4], [3]", 0, 0, 0, 4, 1},
};

std::string tensor(const char *shape) {
  return *shape ? std::string("tensor<") + shape + "xf32>" : "tensor<f32>";
}

TEST(CpuLowering, ContractionLayouts) {
  for (const ContractCase &c : kCases) {
    SCOPED_TRACE(c.name);
    std::string text = "func.func @f(%a: " + tensor(c.lhs) + ", %b: " + tensor(c.rhs) + ") -> " +
                       tensor(c.result) + " {\n  %c = ein.contract %a, %b " + c.dims + " : " +
                       tensor(c.lhs) + ", " + tensor(c.rhs) + " -> " + tensor(c.result) +
                       "\n  return %c : " + tensor(c.result) + "\n}\n";
    auto compiled = einc::testing::parseMLIR(text);
    ASSERT_TRUE(compiled.module) << compiled.errors << text;
    auto fn = compiled.module->lookupSymbol<func::FuncOp>("f");
    Lowered l = lowerBoth(fn);
    ASSERT_TRUE(l.cpu && l.reference) << l.errors;
    Counts n = count(*l.cpu);
    EXPECT_EQ(n.matmuls, 1);
    EXPECT_EQ(n.kernels, c.transposes) << "transpose kernels";
    const einrt::Step *mm = firstMatmul(*l.cpu);
    ASSERT_TRUE(mm);
    const einrt::GemmDesc &plan = mm->as<einrt::GemmDesc>();
    if (c.batch >= 0) {
      EXPECT_EQ(plan.batch, c.batch);
    }
    EXPECT_EQ(plan.outer.size(), size_t(c.outerLoops));
    if (c.transA >= 0) {
      EXPECT_EQ(plan.transA, c.transA != 0);
    }
    if (c.transB >= 0) {
      EXPECT_EQ(plan.transB, c.transB != 0);
    }
    // Same buffers as the reference, plus the transposed temporaries.
    EXPECT_EQ(l.cpu->buffers.size(), l.reference->buffers.size() + c.transposes);
    EXPECT_EQ(l.cpu->arguments, l.reference->arguments);
    EXPECT_EQ(l.cpu->results, l.reference->results);
    for (unsigned seed : {1u, 2u}) {
      EINC_ASSERT_OK_AND_ASSIGN(double e,
                                compareRuns(l, [&](einrt::Executor &ex) { fillRandom(ex, seed); }));
      EXPECT_LT(e, 1e-5);
    }
  }
}

/// Every op of a small function besides the contraction: kernels in order.
TEST(CpuLowering, OtherOpsBecomeKernels) {
  const char *text = R"(
func.func @f(%x: tensor<4x3xf32>, %w: tensor<3x5xf32>) -> (tensor<4x5xf32>, tensor<4xf32>) {
  %c = ein.constant dense<0.5> : tensor<4x5xf32>
  %y = ein.contract %x, %w batch [], [] contract [1], [0] : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %z = ein.mul %y, %c : tensor<4x5xf32>
  %t = ein.tanh %z : tensor<4x5xf32>
  %s = ein.reduce sum %t dims [1] : tensor<4x5xf32> -> tensor<4xf32>
  return %t, %s : tensor<4x5xf32>, tensor<4xf32>
}
)";
  auto compiled = einc::testing::parseMLIR(text);
  ASSERT_TRUE(compiled.module) << compiled.errors;
  Lowered l = lowerBoth(compiled.module->lookupSymbol<func::FuncOp>("f"));
  ASSERT_TRUE(l.cpu && l.reference) << l.errors;
  ASSERT_EQ(l.cpu->steps.size(), 4u);
  EXPECT_EQ(l.cpu->steps[0].kind, StepKind::Matmul);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(l.cpu->steps[i].kind, StepKind::Kernel);
    EXPECT_LT(size_t(l.cpu->steps[i].as<einrt::KernelLaunch>().kernel), l.kernels->table().size());
  }
  int constants = 0;
  for (const einrt::Buffer &b : l.cpu->buffers)
    constants += b.role == einrt::BufferRole::Constant;
  EXPECT_EQ(constants, 1);
  EINC_ASSERT_OK_AND_ASSIGN(double e,
                            compareRuns(l, [](einrt::Executor &ex) { fillRandom(ex, 3); }));
  EXPECT_LT(e, 1e-5);
}

/// A fusion group: one Kernel step reading the broadcasts' inputs in place
/// (a scalar, rows, a bias), writing the two values read after it, with a
/// cmp / select / cast (f32 → i32 → f32) inside; and a leading-dim read
/// whose block size does not fit the group's split, read materialised.
TEST(CpuLowering, FusedKernels) {
  const char *text = R"(
func.func @f(%x: tensor<2x4x8xf32>, %row: tensor<2x4xf32>, %bias: tensor<8xf32>,
             %s: tensor<f32>, %p2: tensor<2xf32>) -> (tensor<2x4x8xf32>, tensor<2x4xf32>, tensor<2x4x8xf32>) {
  %rb = ein.broadcast %row dims [0, 1] : tensor<2x4xf32> -> tensor<2x4x8xf32>
  %bb = ein.broadcast %bias dims [2] : tensor<8xf32> -> tensor<2x4x8xf32>
  %sb = ein.broadcast %s dims [] : tensor<f32> -> tensor<2x4x8xf32>
  %pb = ein.broadcast %p2 dims [0] : tensor<2xf32> -> tensor<2x4x8xf32>
  %a = ein.sub %x, %rb : tensor<2x4x8xf32>
  %b = ein.mul %a, %sb : tensor<2x4x8xf32>
  %c = ein.add %b, %bb : tensor<2x4x8xf32>
  %pos = ein.cmp gt, %c, %sb : tensor<2x4x8xf32> -> tensor<2x4x8xi1>
  %t = ein.tanh %c : tensor<2x4x8xf32>
  %sel = ein.select %pos, %c, %t : tensor<2x4x8xi1>, tensor<2x4x8xf32>
  %i = ein.cast %sel : tensor<2x4x8xf32> -> tensor<2x4x8xi32>
  %f = ein.cast %i : tensor<2x4x8xi32> -> tensor<2x4x8xf32>
  %g = ein.mul %f, %pb : tensor<2x4x8xf32>
  %r = ein.reduce sum %t dims [2] : tensor<2x4x8xf32> -> tensor<2x4xf32>
  return %g, %r, %a : tensor<2x4x8xf32>, tensor<2x4xf32>, tensor<2x4x8xf32>
}
)";
  auto compiled = einc::testing::parseMLIR(text);
  ASSERT_TRUE(compiled.module) << compiled.errors;
  ASSERT_TRUE(fuse(*compiled.module));
  Lowered l = lowerBoth(compiled.module->lookupSymbol<func::FuncOp>("f"));
  ASSERT_TRUE(l.cpu && l.reference) << l.errors;
  // The broadcast of %p2 (its block size 2 is not the group's 8 rows), the
  // fused kernel, the reduction.
  ASSERT_EQ(l.cpu->steps.size(), 3u);
  const einrt::Step &fused = l.cpu->steps[1];
  EXPECT_EQ(fused.kind, StepKind::Kernel);
  EXPECT_EQ(fused.note, "fused 9 ops (ein.sub ein.mul ein.add ein.cmp ein.tanh ein.select "
                        "ein.cast ein.cast ein.mul) at -:8:8");
  // Outputs: %a (a result), %t (the reduction's input), %g (a result).
  EXPECT_EQ(fused.as<einrt::KernelLaunch>().extraOutputs.size(), 2u);
  // Inputs: x, row, s, bias (in place), the materialised broadcast of p2.
  EXPECT_EQ(fused.inputs.size(), 5u);
  EXPECT_EQ(l.cpu->buffers[fused.inputs[1]].shape, (std::vector<int64_t>{2, 4}));
  for (unsigned seed : {4u, 5u}) {
    EINC_ASSERT_OK_AND_ASSIGN(double e,
                              compareRuns(l, [&](einrt::Executor &ex) { fillRandom(ex, seed); }));
    EXPECT_LT(e, 1e-5);
  }
}

/// A reshape is the same row-major bytes: no step, its readers read the
/// input buffer; a reshape returned as a result keeps its own buffer.
TEST(CpuLowering, ReshapesAreAliases) {
  const char *text = R"(
func.func @f(%x: tensor<4x6xf32>, %w: tensor<3x5xf32>) -> (tensor<8x5xf32>, tensor<24xf32>) {
  %e = ein.exp %x : tensor<4x6xf32>
  %r = ein.reshape %e : tensor<4x6xf32> -> tensor<8x3xf32>
  %y = ein.contract %r, %w batch [], [] contract [1], [0] : tensor<8x3xf32>, tensor<3x5xf32> -> tensor<8x5xf32>
  %flat = ein.reshape %x : tensor<4x6xf32> -> tensor<24xf32>
  return %y, %flat : tensor<8x5xf32>, tensor<24xf32>
}
)";
  auto compiled = einc::testing::parseMLIR(text);
  ASSERT_TRUE(compiled.module) << compiled.errors;
  Lowered l = lowerBoth(compiled.module->lookupSymbol<func::FuncOp>("f"));
  ASSERT_TRUE(l.cpu && l.reference) << l.errors;
  // exp, the matmul reading exp's buffer, the returned reshape (a copy).
  ASSERT_EQ(l.cpu->steps.size(), 3u);
  EXPECT_EQ(l.cpu->steps[1].kind, StepKind::Matmul);
  EXPECT_EQ(l.cpu->steps[1].inputs[0], l.cpu->steps[0].output);
  EXPECT_EQ(l.cpu->steps[2].output, l.cpu->results[1]);
  EINC_ASSERT_OK_AND_ASSIGN(double e,
                            compareRuns(l, [](einrt::Executor &ex) { fillRandom(ex, 6); }));
  EXPECT_LT(e, 1e-5);
}

/// Hand-written `ein.fusion` marks the pass would never write: adjacent ops
/// of one group with different shapes are a diagnostic, not a bad kernel.
TEST(CpuLowering, InconsistentFusionGroupIsADiagnostic) {
  const char *text = R"(
func.func @f(%x: tensor<4xf32>, %y: tensor<2x2xf32>) -> (tensor<4xf32>, tensor<2x2xf32>) {
  %a = ein.neg %x {ein.fusion = 0 : i64} : tensor<4xf32>
  %b = ein.neg %y {ein.fusion = 0 : i64} : tensor<2x2xf32>
  return %a, %b : tensor<4xf32>, tensor<2x2xf32>
}
)";
  auto compiled = einc::testing::parseMLIR(text);
  ASSERT_TRUE(compiled.module) << compiled.errors;
  Lowered l = lowerBoth(compiled.module->lookupSymbol<func::FuncOp>("f"));
  EXPECT_FALSE(l.cpu);
  EXPECT_NE(l.errors.find("internal error: this op cannot join its fusion group"),
            std::string::npos)
      << l.errors;
}

TEST(CpuLowering, NarrowContractionIsAGemmOnItsTypes) {
  const char *text = R"(
func.func @f(%x: tensor<4x3xbf16>, %w: tensor<3x5xbf16>) -> tensor<4x5xf32> {
  %y = ein.contract %x, %w batch [], [] contract [1], [0] : tensor<4x3xbf16>, tensor<3x5xbf16> -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}
)";
  auto compiled = einc::testing::parseMLIR(text);
  ASSERT_TRUE(compiled.module) << compiled.errors;
  Lowered l = lowerBoth(compiled.module->lookupSymbol<func::FuncOp>("f"));
  ASSERT_TRUE(l.cpu) << l.errors;
  const einrt::Step *mm = firstMatmul(*l.cpu);
  ASSERT_TRUE(mm);
  const einrt::GemmDesc &g = mm->as<einrt::GemmDesc>();
  EXPECT_EQ(g.a, einrt::DType::BF16);
  EXPECT_EQ(g.b, einrt::DType::BF16);
  EXPECT_EQ(g.c, einrt::DType::F32);
  EXPECT_EQ(g.accumulate, einrt::DType::F32);
}

/// Params from their initialisers, inputs at random (token ids below 64).
void fillModel(einrt::Executor &ex) {
  EINC_EXPECT_OK(einrt::initParams(ex, 7));
  EINC_ASSERT_OK(einrt::fillRandomInputs(ex, 8, 64));
}

TEST(CpuLowering, ModelsForwardAndGrad) {
  for (bool fused : {false, true})
    for (const einc::testing::SmallExample &m : einc::testing::smallExamples()) {
      SCOPED_TRACE(std::string(m.file) + (fused ? " fused" : ""));
      auto compiled = einc::testing::compileModel(readExample(m.file), m.overrides);
      ASSERT_TRUE(compiled.module) << compiled.errors;
      ASSERT_TRUE(einc::testing::addGrad(compiled)) << compiled.errors;
      if (fused) {
        ASSERT_TRUE(fuse(*compiled.module));
      }
      for (const char *name : {"forward", "grad"}) {
        SCOPED_TRACE(name);
        Lowered l = lowerBoth(compiled.module->lookupSymbol<func::FuncOp>(name));
        ASSERT_TRUE(l.cpu && l.reference) << l.errors;
        EXPECT_GT(count(*l.cpu).matmuls, 0);
        EINC_ASSERT_OK_AND_ASSIGN(double e, compareRuns(l, fillModel));
        EXPECT_LT(e, 1e-5);
      }
    }
}

TEST(CpuLowering, ModelsTrainStep) {
  for (bool fused : {false, true})
    for (const einc::testing::SmallExample &m : einc::testing::smallExamples()) {
      SCOPED_TRACE(std::string(m.file) + (fused ? " fused" : ""));
      auto compiled = einc::testing::compileModel(readExample(m.file), m.overrides);
      ASSERT_TRUE(compiled.module) << compiled.errors;
      ASSERT_TRUE(einc::testing::addTrainStep(compiled, "")) << compiled.errors;
      if (fused) {
        ASSERT_TRUE(fuse(*compiled.module));
        int kernels = 0;
        compiled.module->walk([&](Operation *op) { kernels += op->hasAttr("ein.fusion"); });
        EXPECT_GT(kernels, 0);
      }
      Lowered l = lowerBoth(compiled.module->lookupSymbol<func::FuncOp>("train_step"));
      ASSERT_TRUE(l.cpu && l.reference) << l.errors;
      EINC_ASSERT_OK_AND_ASSIGN(
          double e, compareRuns(l, [](einrt::Executor &ex) {
            fillModel(ex);
            // step 1, lr 1e-3 (the Scalar arguments)
            for (size_t a = 0; a < ex.argumentCount(); ++a) {
              const einrt::Buffer &b = ex.program().buffers[ex.program().arguments[a]];
              double v = b.name == "lr" ? 1e-3 : 1.0;
              if (b.role == einrt::BufferRole::Scalar) {
                EINC_EXPECT_OK(ex.write(size_t(ex.program().arguments[a]), &v, 1));
              }
            }
          }));
      // One AdamW step: the updates are lr-sized, the comparison is on whole
      // tensors (max error over max magnitude). The second moment squares a
      // gradient (twice its relative error; the gradients are within 1e-5,
      // ModelsGrad), whose f32 row sums combine in 32 partials
      // (codegen/RowOrder.h) where the reference folds in order. Where a
      // gradient is near zero, AdamW's m / sqrt(v) is ill-conditioned, so the
      // bound depends on the BLAS kernel's summation order: 3.6e-5 with
      // OpenBLAS's AVX-512 sgemm on an AMD EPYC (Zen 4), below 3e-5 with its
      // Haswell one. 1e-4 is a tenth of one lr-sized step on a unit-sized
      // param: a wrong update of any element still fails.
      EXPECT_LT(e, 1e-4);
    }
}

} // namespace
