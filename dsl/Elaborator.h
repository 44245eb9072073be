//===- Elaborator.h - From a parsed program to `ein` IR ----------*- C++ -*-===//
//
// elaborate() checks a Program (dims, named axes, einops patterns, dtypes) and
// emits a module holding `func.func @forward(inputs..., params...) -> (loss,
// outputs...)` in the `ein` dialect. Loops are unrolled (one param copy per
// iteration, named `layer.3.w_qkv`), user functions are inlined, composites
// (softmax, gelu, cross_entropy, ...) are decomposed into primitive ops.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_DSL_ELABORATOR_H
#define EINC_DSL_ELABORATOR_H

#include "dsl/AST.h"
#include "dsl/Diagnostics.h"

#include "runtime/base/TrainSettings.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <utility>
#include <vector>

namespace ein::dsl {

struct ElaborateOptions {
  /// `--set name=value`: a `dim` (integer) or a `train { }` setting.
  std::vector<std::pair<std::string, std::string>> overrides;
  /// What the settings are for: values nothing implements for this use yet
  /// (remat = layer; precision = bf16 outside the report) are errors.
  einrt::SettingsUse use = einrt::SettingsUse::Check;
  /// Receives the `train { }` settings with the overrides applied.
  einrt::TrainSettings *settings = nullptr;
};

/// Registers the dialects the elaborator emits (ein, func) in `context`.
void registerElaboratorDialects(mlir::MLIRContext &context);

/// Where the module and its functions are: the whole file (`file:1:1`; ops
/// are at their expression). A diagnostic there points at no line.
mlir::Location wholeFileLocation(mlir::MLIRContext &context, const SourceFile &file);

/// Returns the module, or null when `diags` holds errors.
mlir::OwningOpRef<mlir::ModuleOp> elaborate(const Program &program, const SourceFile &file,
                                            DiagnosticEngine &diags, mlir::MLIRContext &context,
                                            const ElaborateOptions &options);

} // namespace ein::dsl

#endif // EINC_DSL_ELABORATOR_H
