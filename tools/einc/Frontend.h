//===- Frontend.h - Read, parse and elaborate one model file ----*- C++ -*-===//
#ifndef EINC_TOOLS_EINC_FRONTEND_H
#define EINC_TOOLS_EINC_FRONTEND_H

#include "Options.h"

#include "dsl/AST.h"
#include "dsl/Diagnostics.h"
#include "runtime/TrainSettings.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>

namespace einc {

/// One model file on its way through the front end. Diagnostics collect in
/// `diags` and are printed by the caller.
struct Frontend {
  std::unique_ptr<ein::dsl::SourceFile> file;
  std::unique_ptr<ein::dsl::DiagnosticEngine> diags;
  std::unique_ptr<ein::dsl::Program> program;
  /// The model's train settings with `--set` applied, filled by lower().
  einrt::TrainSettings settings;

  /// Reads the file; false (with a message printed) when it cannot be read.
  bool load(const std::string &path);
  /// Parses; false when there were syntax errors.
  bool parse();
  /// Checks and lowers to `ein` IR; null when there were errors.
  mlir::OwningOpRef<mlir::ModuleOp> lower(mlir::MLIRContext &context, const Options &options);
  /// Prints collected diagnostics to stderr.
  void printDiagnostics();
};

} // namespace einc

#endif // EINC_TOOLS_EINC_FRONTEND_H
