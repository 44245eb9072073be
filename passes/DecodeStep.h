//===- DecodeStep.h - @decode from a causal @forward ------------*- C++ -*-===//
#ifndef EINC_PASSES_DECODESTEP_H
#define EINC_PASSES_DECODESTEP_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::ein {

/// Adds `@decode(inputs at one position, params..., pos, caches...) ->
/// (logits at pos, caches updated...)` to `module`, derived from @forward
/// (ein-decode-step, passes/DecodeStep.cpp). Failure: the module is
/// unchanged and `whyNot` says what in @forward cannot decode; `*applies`
/// (when given) is false where there is nothing to cache (no input with a
/// `ctx` axis, logits of no position: each token is one forward already).
LogicalResult buildDecodeStep(ModuleOp module, std::string &whyNot, bool *applies = nullptr);

} // namespace mlir::ein

#endif // EINC_PASSES_DECODESTEP_H
