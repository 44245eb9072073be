//===- CublasLtModelsTest.cpp - The examples' GEMMs as cuBLASLt calls -----===//
//
// Every Matmul step of the examples' @train_step, lowered for the CPU
// backend (the Programs the cuda device runs), unfused and fused, under
// fp32 and bf16-mixed: mapGemmToCublasLt's calls, evaluated column-major
// as cuBLASLt reads them, equal the row-major evaluation of the GemmDesc
// on small integers (exact), every call's layouts are valid for cuBLASLt
// (ld at least the stored rows), and the distinct descriptors (the
// algorithm cache's keys) are counted.
//
//===----------------------------------------------------------------------===//
#include "GemmReference.h"
#include "test/unit/StatusTesting.h"

#include "../pipeline/Compile.h"
#include "../pipeline/SmallExamples.h"

#include "codegen/CpuKernels.h"
#include "codegen/CpuLowering.h"
#include "passes/Passes.h"
#include "runtime/cuda/CublasLtMapping.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

namespace einrt {
namespace {

using einc::testing::readExample;
using einc::testing::SmallExample;
using einc::testing::smallExamples;

bool fuse(mlir::ModuleOp module) {
  mlir::PassManager pm(module.getContext());
  pm.addNestedPass<mlir::func::FuncOp>(mlir::ein::createEinFuseElementwise());
  pm.addNestedPass<mlir::func::FuncOp>(mlir::ein::createEinFuseEpilogues());
  return mlir::succeeded(pm.run(module));
}

TEST(CublasLtModels, EveryTrainStepGemmMapsExactly) {
  for (const char *precision : {"fp32", "bf16-mixed"})
    for (bool fused : {false, true})
      for (const SmallExample &m : smallExamples()) {
        SCOPED_TRACE(std::string(m.file) + " " + precision + (fused ? " fused" : ""));
        auto compiled = einc::testing::compileModel(readExample(m.file), m.overrides);
        ASSERT_TRUE(compiled.module) << compiled.errors;
        ASSERT_TRUE(einc::testing::addTrainStep(compiled, std::string("precision=") + precision))
            << compiled.errors;
        if (fused) {
          ASSERT_TRUE(fuse(*compiled.module));
        }
        auto fn = compiled.module->lookupSymbol<mlir::func::FuncOp>("train_step");
        ASSERT_TRUE(fn);
        std::string diagnostics;
        mlir::ScopedDiagnosticHandler handler(fn.getContext(), [&](mlir::Diagnostic &d) {
          diagnostics += d.str() + "\n";
          return mlir::success();
        });
        auto kernels = ein::codegen::KernelCompiler::create();
        ASSERT_TRUE(kernels);
        auto program = ein::codegen::lowerToCpuProgram(fn, *kernels);
        ASSERT_TRUE(mlir::succeeded(program)) << diagnostics;

        std::set<std::string> keys;
        int gemms = 0, narrow = 0, epilogues = 0;
        std::map<std::string, int> asLibrary, asKernel;
        std::mt19937_64 rng(5);
        for (const Step &s : program->steps) {
          const auto *g = std::get_if<GemmDesc>(&s.payload);
          if (!g)
            continue;
          SCOPED_TRACE(s.note);
          ++gemms;
          narrow += g->a == DType::BF16;
          CublasLtPlan plan;
          EINC_ASSERT_OK_AND_ASSIGN(plan, mapGemmToCublasLt(*g, {}));
          for (const CublasLtCall &c : plan.calls) {
            keys.insert(c.key());
            EXPECT_GE(c.lda, std::max<int64_t>(1, c.rowsA));
            EXPECT_GE(c.ldb, std::max<int64_t>(1, c.rowsB));
            EXPECT_GE(c.ldc, std::max<int64_t>(1, c.rowsC));
            EXPECT_EQ(c.rowsC, c.m);
            EXPECT_EQ(c.colsC, c.n);
          }
          test::GemmSpans spans = test::spansOf(*g);
          std::vector<double> a = test::smallIntegers(spans.a, rng),
                              b = test::smallIntegers(spans.b, rng),
                              c = test::smallIntegers(spans.c, rng);
          std::vector<double> want = c, got = c;
          test::rowMajorGemm(*g, a, b, want);
          ASSERT_TRUE(test::columnMajorCalls(*g, plan, a, b, got));
          ASSERT_EQ(got, want);
          // An epilogue: fused by cuBLASLt where its typed reading maps,
          // else its kernel (named by the plan's reason).
          if (!g->post.present())
            continue;
          ++epilogues;
          std::vector<DType> types;
          for (int32_t buffer : g->post.operands)
            types.push_back(program->buffers[size_t(buffer)].dtype);
          for (int32_t buffer : g->post.outputs)
            types.push_back(program->buffers[size_t(buffer)].dtype);
          CublasLtPlan fusedPlan;
          EINC_ASSERT_OK_AND_ASSIGN(fusedPlan, mapGemmToCublasLt(*g, {}, &types));
          if (fusedPlan.epilogueKernel) {
            EXPECT_FALSE(fusedPlan.unfusedWhy.empty());
            ++asKernel[fusedPlan.unfusedWhy];
          } else {
            ++asLibrary[ltEpilogueName(fusedPlan.calls[0].epilogue)];
          }
        }
        EXPECT_GT(gemms, 0);
        if (std::string(precision) == "bf16-mixed") {
          EXPECT_GT(narrow, 0);
        }
        std::cout << "[ cublaslt ] " << m.file << " " << precision << (fused ? " fused" : "")
                  << ": " << gemms << " GEMM steps, " << keys.size()
                  << " distinct cuBLASLt descriptors; " << epilogues << " epilogues:";
        for (const auto &[name, count] : asLibrary)
          std::cout << " " << count << " " << name;
        for (const auto &[why, count] : asKernel)
          std::cout << " " << count << " as kernels (" << why << ")";
        std::cout << "\n";
      }
}

} // namespace
} // namespace einrt
