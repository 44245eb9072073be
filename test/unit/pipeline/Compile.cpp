//===- Compile.cpp - Model or MLIR text to runnable Programs, for tests ---===//
#include "Compile.h"

#include "codegen/ReferenceLowering.h"
#include "dsl/Elaborator.h"
#include "dsl/Parser.h"
#include "passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/raw_ostream.h"

namespace einc::testing {

namespace {
std::unique_ptr<mlir::MLIRContext> newContext() {
  auto context = std::make_unique<mlir::MLIRContext>();
  ein::dsl::registerElaboratorDialects(*context);
  return context;
}

/// Collects MLIR diagnostics into `out` while alive.
struct Capture {
  Capture(mlir::MLIRContext &ctx, std::string &out)
      : handler(&ctx, [&out](mlir::Diagnostic &d) {
          out += d.str() + "\n";
          return mlir::success();
        }) {}
  mlir::ScopedDiagnosticHandler handler;
};
} // namespace

Compiled compileModel(const std::string &source,
                      const std::vector<std::pair<std::string, std::string>> &overrides) {
  Compiled c;
  c.context = newContext();
  ein::dsl::SourceFile file("test.ein", source);
  ein::dsl::DiagnosticEngine diags(file);
  auto program = ein::dsl::parseProgram(file, diags);
  ein::dsl::ElaborateOptions options;
  options.overrides = overrides;
  if (!diags.hasErrors())
    c.module = ein::dsl::elaborate(*program, file, diags, *c.context, options);
  if (diags.hasErrors()) {
    llvm::raw_string_ostream os(c.errors);
    diags.print(os);
  }
  return c;
}

Compiled parseMLIR(const std::string &source) {
  Compiled c;
  c.context = newContext();
  Capture capture(*c.context, c.errors);
  c.module = mlir::parseSourceString<mlir::ModuleOp>(source, c.context.get());
  return c;
}

bool addGrad(Compiled &c) {
  Capture capture(*c.context, c.errors);
  mlir::PassManager pm(c.context.get());
  pm.addPass(mlir::ein::createEinAutodiff());
  return succeeded(pm.run(*c.module));
}

bool addTrainStep(Compiled &c, const std::string &pipelineOptions) {
  Capture capture(*c.context, c.errors);
  mlir::ein::registerEinPassesAndPipelines();
  mlir::PassManager pm(c.context.get());
  std::string text = "ein-build-train-step{" + pipelineOptions + "}";
  if (failed(mlir::parsePassPipeline(text, pm))) {
    c.errors += "bad pipeline: " + text;
    return false;
  }
  return succeeded(pm.run(*c.module));
}

std::optional<einrt::Executor> executorFor(Compiled &c, const std::string &name,
                                           einrt::Precision precision, std::string &error) {
  Capture capture(*c.context, error);
  auto fn = c.module->lookupSymbol<mlir::func::FuncOp>(name);
  if (!fn) {
    error = "no @" + name;
    return std::nullopt;
  }
  auto program = ein::codegen::lowerToProgram(fn);
  if (failed(program))
    return std::nullopt;
  einrt::Expected<einrt::Executor> ex = einrt::Executor::create(*program, precision);
  if (!ex.ok()) {
    error = ex.status().message();
    return std::nullopt;
  }
  return ex.take();
}

} // namespace einc::testing
