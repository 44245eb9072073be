//===- Frontend.h - Read, parse and elaborate one model file ----*- C++ -*-===//
#ifndef EINC_TOOLS_DRIVER_FRONTEND_H
#define EINC_TOOLS_DRIVER_FRONTEND_H

#include "CompileRequest.h"

#include "dsl/AST.h"
#include "dsl/Diagnostics.h"
#include "runtime/base/TrainSettings.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/Support/raw_ostream.h"

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
  /// Checks and lowers to `ein` IR with `overrides` (`--set`) for `use`
  /// (what the settings must support); null when there were errors.
  mlir::OwningOpRef<mlir::ModuleOp> lower(mlir::MLIRContext &context, const Overrides &overrides,
                                          einrt::SettingsUse use);
  /// The parsed model elaborated again, with other overrides (other dims),
  /// without reading or parsing it again: its settings into `settings`, its
  /// diagnostics printed to `diagnostics` (null: dropped); this front end's
  /// own untouched. Null when there were errors.
  mlir::OwningOpRef<mlir::ModuleOp> elaborate(mlir::MLIRContext &context,
                                              const Overrides &overrides, einrt::SettingsUse use,
                                              einrt::TrainSettings &settings,
                                              llvm::raw_ostream *diagnostics) const;
  /// Prints collected diagnostics to stderr.
  void printDiagnostics();
};

} // namespace einc

#endif // EINC_TOOLS_DRIVER_FRONTEND_H
