//===- ConcatInPlace.h - Which inputs of a concat are written in place -*- C++ -*-===//
//
// The CPU backend (codegen/CpuLowering.cpp) lets the producer of an
// ein.concat's input write it straight into its rows of the result: the
// input's buffer becomes a view of the concat's (runtime/core/Program.h,
// Buffer::viewOf), so it needs neither storage of its own nor a copy. The
// other inputs are copied. Remat's pricing (passes/RematGraph.cpp) follows
// the same choice, so that its peak is the runtime's memory plan; this is
// the one place that makes it.
//
// An input is written in place when the value holding its bytes (through
// reshapes, which the CPU backend aliases) is
//   * the result of an op of the concat's phase, the concat being in the
//     backward or a later phase (not a forward value or a recompute clone,
//     whose storage remat prices; not an argument or a constant, which are
//     resident; not a slice or a concat, which are views or the root of
//     views already);
//   * not returned (a result has storage of its own), and
//   * read by no slice and by no other concat, nor twice by this one,
//     through any of its reshapes.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_PASSES_CONCATINPLACE_H
#define EINC_PASSES_CONCATINPLACE_H

#include "ir/EinOps.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir::ein {

/// The value whose buffer holds `v`'s bytes on the CPU backend: `v` through
/// the reshapes that are not returned.
Value storageValue(Value v);

/// Per input of `op`: whether its producer writes it in place.
llvm::SmallVector<bool> concatInputsInPlace(ConcatOp op);

} // namespace mlir::ein

#endif // EINC_PASSES_CONCATINPLACE_H
