//===- EinBuilders.h - Small IR-building helpers shared by passes -*- C++ -*-===//
#ifndef EINC_IR_EINBUILDERS_H
#define EINC_IR_EINBUILDERS_H

#include "mlir/IR/Builders.h"

namespace mlir::ein {

/// A tensor of `type` filled with `value`: a rank-0 ein.constant, then an
/// ein.broadcast to `type` named `axes` (none when `type` is rank 0).
Value buildSplat(OpBuilder &b, Location loc, Type type, double value, ArrayAttr axes);

} // namespace mlir::ein

#endif // EINC_IR_EINBUILDERS_H
