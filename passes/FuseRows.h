//===- FuseRows.h - The rules of row fusion ---------------------*- C++ -*-===//
//
// Shared by the ein-fuse-rows pass (which forms the row groups), the
// backends (which compile each as one row kernel: codegen/CpuRowsKernel.cpp)
// and the byte ledger (passes/FusedCosts.cpp): which ops a row kernel of a
// [rows, L] shape holds, at which level, and how it reads what it does not
// compute.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_PASSES_FUSEROWS_H
#define EINC_PASSES_FUSEROWS_H

#include "passes/FuseElementwise.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace mlir::ein {

/// The attribute naming an op's row group (an i64, unique per function).
/// A row group's members carry no kFusionAttr.
inline constexpr llvm::StringLiteral kRowsAttr = "ein.rows";

/// The shape a row kernel iterates: `shape` (static), its first `lead` dims
/// the rows (`rows` of them), the others one row of `length` elements.
struct RowShape {
  llvm::SmallVector<int64_t, 4> shape;
  int64_t lead = 0, rows = 0, length = 0;
  bool operator==(const RowShape &o) const { return shape == o.shape && lead == o.lead; }
};

/// The row shape of a reduction over the trailing dims [k, rank) of its
/// input (1 <= k < rank), static, of kind sum (f32 or i32: a narrow sum is a
/// fold in order, kept apart), max or min; nullopt for any other op.
std::optional<RowShape> rowReductionShape(Operation *op);

/// Where a member of a row kernel computes: once per element of the row
/// (Element) or once per row (Row).
enum class RowLevel : uint8_t { None, Element, Row };

/// The level of `op` in a row kernel of `shape`: Element for a fusible op of
/// the full shape and for a broadcast of the per-row shape to it (leading
/// dims: the row's value for every element); Row for a fusible op of the
/// per-row shape and for a row reduction of `shape`; None otherwise.
RowLevel rowLevel(Operation *op, const RowShape &shape);

/// How a member at `level` reads `value` computed outside the kernel: in
/// place through a broadcast (Scalar, Prefix: one value per row, Suffix: one
/// per element of the row, e.g. a gain) or the value itself (Full: the full
/// shape at Element level, the per-row shape at Row level).
BroadcastRead rowOperandRead(Value value, RowLevel level, const RowShape &shape);

} // namespace mlir::ein

#endif // EINC_PASSES_FUSEROWS_H
