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
/// input (0 <= k < rank; k = 0: the whole tensor, one row, a rank-0
/// result), static, of kind sum (f32 or i32: a narrow sum is a fold in
/// order, kept apart), max or min; nullopt for any other op.
std::optional<RowShape> rowReductionShape(Operation *op);

/// Row length from which the backends combine a row in chunks spread over
/// the device (codegen/RowOrder.h; CUDA: a warp per chunk, the chunks'
/// results combined by the row's last warp).
inline constexpr int64_t kChunkedRowsFrom = int64_t(1) << 17;

/// Whether a row kernel of `shape` holds only its reduction and the
/// reduction's producers (ops whose every result is read inside the
/// kernel), writing one value per row: a whole-tensor reduction (a
/// gradient's sum of squares: the square is fused, the scalars after it
/// are not) and rows of kChunkedRowsFrom or more, whose chunks CUDA spreads
/// over the device and combines after the last one: nothing can follow the
/// reduction inside the kernel.
inline bool rowKernelTakesProducersOnly(const RowShape &shape) {
  return shape.lead == 0 || shape.length >= kChunkedRowsFrom;
}

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
