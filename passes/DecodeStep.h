//===- DecodeStep.h - @decode from a causal @forward ------------*- C++ -*-===//
#ifndef EINC_PASSES_DECODESTEP_H
#define EINC_PASSES_DECODESTEP_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::ein {

/// Adds `@decode(inputs at one position, params..., pos, caches...) ->
/// (logits at pos, caches updated...)` to `module`, derived from @forward
/// (ein-decode-step, passes/DecodeStep.cpp). Failure: the module is
/// unchanged and `whyNot` says what in @forward cannot decode.
LogicalResult buildDecodeStep(ModuleOp module, std::string &whyNot);

} // namespace mlir::ein

#endif // EINC_PASSES_DECODESTEP_H
