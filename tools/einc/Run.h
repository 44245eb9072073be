//===- Run.h - `einc run`: the reference backend on one batch ---*- C++ -*-===//
#ifndef EINC_TOOLS_EINC_RUN_H
#define EINC_TOOLS_EINC_RUN_H

#include "Options.h"

#include "runtime/base/TrainSettings.h"

#include "mlir/IR/BuiltinOps.h"

namespace einc {

/// Runs the model as `o` says; returns the process exit status.
int runModel(const Options &o, const einrt::TrainSettings &settings, mlir::ModuleOp module);

} // namespace einc

#endif // EINC_TOOLS_EINC_RUN_H
