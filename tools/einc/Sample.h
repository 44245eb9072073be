//===- Sample.h - `einc sample`: text from a trained model ------*- C++ -*-===//
#ifndef EINC_TOOLS_EINC_SAMPLE_H
#define EINC_TOOLS_EINC_SAMPLE_H

#include "Options.h"

#include "tools/driver/Frontend.h"

#include "runtime/base/TrainSettings.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace einc {

/// `einc sample`: @forward lowered with batch 1 (sampleModule), compiled
/// (Compile.h), and sampled by the runner (tools/runner/Runner.h, the code
/// a compiled executable runs): the logits on a sliding window, temperature
/// and top-k, a seeded generator, bytes to stdout. `source` is the model
/// file's text. Returns the exit status.
int sampleModel(const Options &o, const Frontend &fe, mlir::ModuleOp module);

/// The module to sample with: `module` itself when it has no `batch` dim or
/// batch 1, else the model file lowered again into `context` with
/// `--set batch=1` (one row per generated token); null after printing the
/// front end's diagnostics.
} // namespace einc

#endif // EINC_TOOLS_EINC_SAMPLE_H
