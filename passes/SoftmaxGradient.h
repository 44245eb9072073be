//===- SoftmaxGradient.h - The softmax's gradient from its output -*- C++ -*-===//
//
// The front end decomposes softmax (dsl/Builtins.cpp) into
//   p = exp(z) / broadcast(sum(exp(z)))   with z = x − broadcast(c)
// (c: the max over the same dims, the shift that keeps exp finite). The
// per-op rules would differentiate each op and read z's max input, exp(z)
// and p. ein-autodiff instead differentiates the whole as one op, as
// PyTorch's softmax does, reading p alone:
//   dx = p · (dp − broadcast(sum(dp · p)))
// The shift gets no gradient: softmax(x − c) does not depend on c, so its
// gradient through c is 0 (the per-op rules computed it as a rounding
// residue).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_PASSES_SOFTMAXGRADIENT_H
#define EINC_PASSES_SOFTMAXGRADIENT_H

#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::ein {

/// A softmax found in the IR: p = exp(x − broadcast(c)) / broadcast(sum),
/// or p = exp(x) / broadcast(sum), the sum over `dims` (in the type of
/// exp(..) or widened by a cast and rounded back, as under a narrow policy).
struct SoftmaxMatch {
  Value input;               // x
  Value output;              // p
  SmallVector<int64_t> dims; // the normalised dims of x
  SmallVector<int64_t> kept; // the others, in order
};

/// The softmax whose output is the result of `op` (an ein.div), when the
/// values inside it (z, exp(z), the sum and its broadcast) are read by
/// nothing else, so no other gradient reaches them.
std::optional<SoftmaxMatch> matchSoftmax(Operation *op);

/// dx = p · (dp − broadcast(sum(dp · p))), the sum accumulated in f32 for a
/// narrow float (as the rules' sums: docs/autodiff.md). Built at `b`'s
/// insertion point at the division's location.
Value buildSoftmaxGradient(OpBuilder &b, Location loc, const SoftmaxMatch &softmax, Value dp);

} // namespace mlir::ein

#endif // EINC_PASSES_SOFTMAXGRADIENT_H
