//===- Sample.h - `einc sample`: text from a trained model ------*- C++ -*-===//
#ifndef EINC_TOOLS_EINC_SAMPLE_H
#define EINC_TOOLS_EINC_SAMPLE_H

#include "Options.h"

#include "runtime/TrainSettings.h"

#include "mlir/IR/BuiltinOps.h"

namespace einc {

/// `einc sample`: @forward's logits on a sliding window, sampled with
/// temperature and top-k from a seeded generator, bytes to stdout. Returns
/// the exit status.
int sampleModel(const Options &o, const einrt::TrainSettings &settings, mlir::ModuleOp module);

} // namespace einc

#endif // EINC_TOOLS_EINC_SAMPLE_H
