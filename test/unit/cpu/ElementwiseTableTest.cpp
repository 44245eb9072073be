//===- ElementwiseTableTest.cpp - runtime/base/ElementwiseOps.def against the ODS -===//
//
// The elementwise table and the dialect are two lists of one set of ops: the
// ODS entries (ir/EinOps.td, which cannot include the table) and the rows
// every other layer is generated from. These tests hold them together: an
// op in one and not the other, or of other element types, fails here.
//
//===----------------------------------------------------------------------===//
#include "codegen/CpuKernelGen.h"
#include "codegen/CudaRenderer.h"
#include "ir/EinOps.h"
#include "runtime/core/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace mlir;

namespace {

struct Row {
  std::string name;
  int arity;
  bool numeric; // takes i32 too
};

const std::vector<Row> &rows() {
  static const std::vector<Row> all = {
#define EIN_UNARY_OP(Kind, name, Types, Rounding, Dsl, Ref, CudaF32, CudaI32, CpuF32, CpuI32)      \
  {name, 1, std::string(#Types) == "Numeric"},
#define EIN_BINARY_OP(Kind, name, Types, Rounding, Ref, CudaF32, CudaI32, CpuF32, CpuI32)          \
  {name, 2, std::string(#Types) == "Numeric"},
#include "runtime/base/ElementwiseOps.def"
  };
  return all;
}

std::unique_ptr<MLIRContext> newContext() {
  auto ctx = std::make_unique<MLIRContext>();
  ctx->loadDialect<mlir::ein::EinDialect, func::FuncDialect>();
  return ctx;
}

/// Whether `ein.<name>` on `type` operands parses and verifies.
bool verifies(MLIRContext &ctx, const Row &r, const std::string &type) {
  std::string operands = r.arity == 1 ? "%x" : "%x, %x";
  std::string text = "func.func @f(%x: " + type + ") -> " + type + " {\n  %y = ein." + r.name +
                     " " + operands + " : " + type + "\n  return %y : " + type + "\n}\n";
  ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });
  return static_cast<bool>(parseSourceString<ModuleOp>(text, &ctx));
}

TEST(ElementwiseTable, EveryUnaryAndBinaryOdsOpHasARow) {
  auto ctx = newContext();
  std::set<std::string> tabled;
  for (const Row &r : rows())
    tabled.insert("ein." + r.name);
  std::set<std::string> ods;
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    if (op.getDialectNamespace() == "ein" && op.hasTrait<OpTrait::Elementwise>() &&
        op.hasTrait<OpTrait::SameOperandsAndResultType>())
      ods.insert(op.getStringRef().str());
  EXPECT_EQ(ods, tabled);
}

TEST(ElementwiseTable, RowsAgreeWithTheirOdsOps) {
  auto ctx = newContext();
  for (const Row &r : rows()) {
    std::string op = "ein." + r.name;
    EXPECT_EQ(::ein::codegen::isUnary(op), r.arity == 1) << op;
    EXPECT_EQ(::ein::codegen::isBinary(op), r.arity == 2) << op;
    EXPECT_TRUE(verifies(*ctx, r, "tensor<4xf32>")) << op;
    EXPECT_EQ(verifies(*ctx, r, "tensor<4xi32>"), r.numeric) << op << ": the row's Types column";
    einrt::StepKind kind;
    EXPECT_TRUE(einrt::stepKindByName(r.name.c_str(), kind)) << op;
  }
  EXPECT_FALSE(::ein::codegen::isUnary("ein.softmax"));
  EXPECT_FALSE(::ein::codegen::isBinary("ein.cmp"));
}

TEST(ElementwiseTable, EveryRowHasItsCudaHelpers) {
  std::string prelude = ::ein::codegen::cudaPrelude(false, false);
  for (const Row &r : rows()) {
    std::string params = r.arity == 1 ? "(float x)" : "(float x, float y)";
    EXPECT_NE(prelude.find("EIN_DEVICE float ein_" + r.name + params), std::string::npos) << r.name;
    std::string ints = r.arity == 1 ? "(int x)" : "(int x, int y)";
    EXPECT_EQ(prelude.find("EIN_DEVICE int ein_" + r.name + ints) != std::string::npos, r.numeric)
        << r.name;
  }
}

} // namespace
