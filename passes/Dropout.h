//===- Dropout.h - ein.dropout's mask in @train_step ------------*- C++ -*-===//
//
// ein-train-step expands every `ein.dropout` of @train_step into the ops of
// its mask, keyed by the step's `step` and `seed` arguments; dropout is the
// identity everywhere else (mlir::ein::eraseDropouts). docs/language.md
// ("Dropout") has the semantics.
//
//===----------------------------------------------------------------------===//
#ifndef EIN_PASSES_DROPOUT_H
#define EIN_PASSES_DROPOUT_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::ein {

/// Whether any `ein.dropout` is under `root`.
bool hasDropout(Operation *root);

/// Replaces every `ein.dropout` in `body` by x · keep / (1 − p) for its
/// input x. `step` is the rank-0 f32 step (t, 1-based), `seed` the rank-0
/// i32 run seed. Element i of dropout site s keeps its value when
///   key = (seed · 0x9E3779B1 + t) · 0x85EBCA6B + s · 0xC2B2AE35   (mod 2^32)
///   u   = (stochasticBits(key, i) >> 8) · 2^-24                  (in [0, 1))
/// is ≥ p: stochasticBits is runtime/core/FloatFormats.h's counter-based
/// hash, which `ein.stochastic_round` computes bit for bit on every backend;
/// the expansion reads it through a stochastic rounding to f16 of p · 2^-24
/// (which rounds up to 2^-24 exactly when u < p: see Dropout.cpp). Two
/// dropouts of one site (the forward's and its gradient's) get one mask.
/// A dropout's result among `results` (values held outside the IR, such as
/// the gradients to return) is replaced there too.
void expandDropouts(Block &body, Value step, Value seed, SmallVectorImpl<Value> &results);

} // namespace mlir::ein

#endif // EIN_PASSES_DROPOUT_H
