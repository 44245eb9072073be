//===- TrainEntryLoc.h - Where the model file sets a train setting -*- C++ -*-===//
//
// The front end records where the `train { }` section sets each setting as
// the module's location: fused[FILE:1:1, "clip"(FILE:L:C), ...]. Ops a
// setting creates (the clipping, the optimizer's scalars) are placed there,
// and an error about a setting points at it.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_PASSES_TRAINENTRYLOC_H
#define EINC_PASSES_TRAINENTRYLOC_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"

namespace mlir::ein {

/// The place of `train { key = ... }`'s value in the model file, or
/// `fallback` when the file does not set it (a default, or --set).
Location trainEntryLoc(ModuleOp module, StringRef key, Location fallback);

} // namespace mlir::ein

#endif // EINC_PASSES_TRAINENTRYLOC_H
