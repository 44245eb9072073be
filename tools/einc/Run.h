//===- Run.h - `einc run`: one batch on a backend ---*- C++ -*-===//
#ifndef EINC_TOOLS_EINC_RUN_H
#define EINC_TOOLS_EINC_RUN_H

#include "Options.h"

#include "tools/driver/Frontend.h"

#include "runtime/base/TrainSettings.h"

#include "mlir/IR/BuiltinOps.h"

namespace einc {

/// Runs the model as `o` says; returns the process exit status.
int runModel(const Options &o, const Frontend &fe, mlir::ModuleOp module);

} // namespace einc

#endif // EINC_TOOLS_EINC_RUN_H
