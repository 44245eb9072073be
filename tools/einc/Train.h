//===- Train.h - `einc train`: compile, then run the trainer ----*- C++ -*-===//
#ifndef EINC_TOOLS_EINC_TRAIN_H
#define EINC_TOOLS_EINC_TRAIN_H

#include "Options.h"

#include "tools/driver/Frontend.h"

#include "runtime/base/TrainSettings.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace einc {

/// `einc train`: the runner checks the data and the schedule, compileModel
/// (Compile.h) builds and lowers the training step with the model's settings
/// for --backend (JIT-compiling the CPU kernels), and the runner trains with
/// the result (tools/runner/Runner.h, the code a compiled executable runs).
/// `source` is the model file's text. Returns the exit status.
int trainModel(const Options &o, const Frontend &fe, mlir::ModuleOp module);

} // namespace einc

#endif // EINC_TOOLS_EINC_TRAIN_H
