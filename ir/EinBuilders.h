//===- EinBuilders.h - Small IR-building helpers shared by passes -*- C++ -*-===//
#ifndef EINC_IR_EINBUILDERS_H
#define EINC_IR_EINBUILDERS_H

#include "mlir/IR/Builders.h"

namespace mlir::ein {

/// A tensor of `type` filled with `value`: a rank-0 ein.constant, then an
/// ein.broadcast to `type` named `axes` (none when `type` is rank 0).
Value buildSplat(OpBuilder &b, Location loc, Type type, double value, ArrayAttr axes);

/// Whether `v` is a tensor of zeros made by buildSplat (or a splat zero
/// constant).
bool isZeroSplat(Value v);

/// `a + c`, two gradient contributions to one value of type `a`'s. When
/// both are ein.concat whose non-zero inputs cover disjoint rows (the
/// gradients of slices of one tensor: ein.slice), it is one concat of those
/// inputs, zeros in the rows neither covers; when `a` is `other + concat`
/// (a sum built here, read by nothing) and `c` merges with that concat so,
/// it is `other + the merged concat`; otherwise an ein.add named `axes`.
/// Nothing is erased (the caller may hold the ops it created): what the
/// result replaces is left dead, for the caller's dead-code removal
/// (ein-autodiff's last step).
Value buildGradientSum(OpBuilder &b, Location loc, Value a, Value c, ArrayAttr axes);

} // namespace mlir::ein

#endif // EINC_IR_EINBUILDERS_H
