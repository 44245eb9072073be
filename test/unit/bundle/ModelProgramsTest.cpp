//===- ModelProgramsTest.cpp - The examples' lowered programs in a file ---===//
//
// examples/mlp_lm.ein, examples/gpt.ein and examples/llama.ein through the front end (with
// --set overrides, so that the settings are not all defaults), @grad and
// @train_step, lowered for the reference backend and, fused, for the CPU
// backend: each bundle comes back from its file identical, and writing it
// again gives the same bytes.
//
//===----------------------------------------------------------------------===//
#include "codegen/CpuKernels.h"
#include "codegen/CpuLowering.h"
#include "codegen/ReferenceLowering.h"
#include "dsl/Elaborator.h"
#include "dsl/Parser.h"
#include "passes/Passes.h"
#include "runtime/io/ModelBundle.h"
#include "test/unit/pipeline/Compile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace {

std::string readExample(const std::string &name) {
  std::ifstream in(std::string(EINC_SOURCE_DIR) + "/examples/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The front end as einc runs it, keeping the settings.
einc::testing::Compiled compile(const std::string &name, const std::string &source,
                                const std::vector<std::pair<std::string, std::string>> &overrides,
                                einrt::TrainSettings &settings) {
  einc::testing::Compiled c;
  c.context = std::make_unique<mlir::MLIRContext>();
  ein::dsl::registerElaboratorDialects(*c.context);
  ein::dsl::SourceFile file(name, source);
  ein::dsl::DiagnosticEngine diags(file);
  auto program = ein::dsl::parseProgram(file, diags);
  ein::dsl::ElaborateOptions options;
  options.overrides = overrides;
  options.use = einrt::SettingsUse::Execute;
  options.settings = &settings;
  if (!diags.hasErrors())
    c.module = ein::dsl::elaborate(*program, file, diags, *c.context, options);
  if (diags.hasErrors()) {
    llvm::raw_string_ostream os(c.errors);
    diags.print(os);
  }
  return c;
}

std::map<std::string, int64_t> dimsOf(mlir::ModuleOp module) {
  std::map<std::string, int64_t> dims;
  if (auto attr = module->getAttrOfType<mlir::DictionaryAttr>("ein.dims"))
    for (mlir::NamedAttribute d : attr)
      if (auto v = mlir::dyn_cast<mlir::IntegerAttr>(d.getValue()))
        dims[d.getName().str()] = v.getInt();
  return dims;
}

/// The bundle's bytes after a round trip, checking it came back identical.
void expectRoundTrip(const einrt::ModelBundle &b) {
  auto bytes = einrt::serializeModelBundle(b);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto back = einrt::parseModelBundle(bytes->data(), bytes->size(), "model.einprog");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(*back == b) << einrt::firstDifference(*back, b);
  for (const einrt::BundledProgram &bp : b.programs) {
    const einrt::BundledProgram *got = back->find(bp.program.name);
    ASSERT_NE(got, nullptr) << bp.program.name;
    EXPECT_EQ(got->program, bp.program) << bp.program.name;
  }
  auto again = einrt::serializeModelBundle(*back);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again, *bytes);
}

struct ModelCase {
  const char *file;
  std::vector<std::pair<std::string, std::string>> overrides;
};

} // namespace

TEST(ModelPrograms, ExamplesRoundTripOnBothBackends) {
  const ModelCase models[] = {
      {"mlp_lm.ein", {{"lr", "0.003"}, {"warmup", "5"}, {"seed", "11"}}},
      {"gpt.ein", {{"optimizer", "adam"}, {"clip", "0.5"}, {"data", "shifted"}}},
      {"llama.ein", {{"schedule", "wsd"}, {"weight_decay", "0.1"}, {"warmup", "20"}}},
  };
  for (const ModelCase &m : models) {
    SCOPED_TRACE(m.file);
    einrt::TrainSettings settings;
    std::string source = readExample(m.file);
    auto c = compile(m.file, source, m.overrides, settings);
    ASSERT_TRUE(c.module) << c.errors;
    ASSERT_EQ(settings.given.size(), 3u);
    ASSERT_TRUE(einc::testing::addTrainStep(c, "optimizer=" + settings.optimizer +
                                                   " clip=" + einrt::formatShortest(settings.clip)))
        << c.errors;

    einrt::ModelBundle b;
    b.writtenBy = "einc test";
    b.modelName = std::string(m.file).substr(0, std::string(m.file).find('.'));
    b.sourceName = std::string("examples/") + m.file;
    b.source = source;
    b.dims = dimsOf(*c.module);
    EXPECT_GT(b.vocab(), 0);
    b.settings = settings;
    const char *functions[] = {"forward", "grad", "train_step"};
    for (const char *name : functions) {
      auto fn = c.module->lookupSymbol<mlir::func::FuncOp>(name);
      ASSERT_TRUE(fn) << name;
      auto program = ein::codegen::lowerToProgram(fn);
      ASSERT_TRUE(mlir::succeeded(program)) << name;
      b.programs.push_back({"reference", std::move(*program)});
    }
    auto window = einrt::inferWindowMapping(b.find("train_step")->program);
    ASSERT_TRUE(window.ok()) << window.status().message();
    b.window = *window;
    b.reportJson = R"({"model": ")" + b.modelName + R"("})";
    expectRoundTrip(b);

    // The CPU backend: fused kernels, BLAS steps, one kernel table.
    mlir::PassManager pm(c.context.get());
    pm.addNestedPass<mlir::func::FuncOp>(mlir::ein::createEinFuseElementwise());
    pm.addNestedPass<mlir::func::FuncOp>(mlir::ein::createEinFuseEpilogues());
    ASSERT_TRUE(mlir::succeeded(pm.run(*c.module)));
    auto kernels = ein::codegen::KernelCompiler::create();
    b.programs.clear();
    int launches = 0, matmuls = 0;
    for (const char *name : functions) {
      auto program = ein::codegen::lowerToCpuProgram(
          c.module->lookupSymbol<mlir::func::FuncOp>(name), *kernels);
      ASSERT_TRUE(mlir::succeeded(program)) << name;
      for (const einrt::Step &s : program->steps) {
        launches += s.kind == einrt::StepKind::Kernel;
        matmuls += s.kind == einrt::StepKind::Matmul;
      }
      b.programs.push_back({"cpu", std::move(*program)});
    }
    EXPECT_GT(launches, 0);
    EXPECT_GT(matmuls, 0);
    // The table's size, as an object for it would state it (the kernel
    // indices are checked against it).
    einrt::KernelObject table;
    table.name = "cpu/x86-64-v3";
    table.kernelCount = kernels->kernelCount();
    b.kernelObjects.push_back(table);
    expectRoundTrip(b);
    b.kernelObjects[0].kernelCount -= 1;
    std::string error = einrt::serializeModelBundle(b).status().message();
    EXPECT_NE(error.find("launches kernel " + std::to_string(kernels->kernelCount() - 1)),
              std::string::npos)
        << error;
  }
}
