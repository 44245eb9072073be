//===- Compile.h - Model or MLIR text to runnable Programs, for tests -*- C++ -*-===//
#ifndef EINC_TEST_UNIT_PIPELINE_COMPILE_H
#define EINC_TEST_UNIT_PIPELINE_COMPILE_H

#include "runtime/core/Executor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace einc::testing {

/// A compiled model: the module and a context that outlives it.
struct Compiled {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string errors; // diagnostics when compilation failed
};

/// Front end on `source` (a .ein program) with `--set` overrides.
Compiled compileModel(const std::string &source,
                      const std::vector<std::pair<std::string, std::string>> &overrides);
/// Parses `source` as ein-dialect MLIR text.
Compiled parseMLIR(const std::string &source);

/// Runs ein-autodiff (adds @grad); false with `errors` on failure.
bool addGrad(Compiled &c);
/// Runs ein-build-train-step with its options given as "key=value ..." text.
bool addTrainStep(Compiled &c, const std::string &pipelineOptions);

/// Lowers @name and creates an executor for it.
std::optional<einrt::Executor> executorFor(Compiled &c, const std::string &name,
                                           einrt::Precision precision, std::string &error);

} // namespace einc::testing

#endif
