//===- FuseElementwise.h - The rules of elementwise fusion -----*- C++ -*-===//
//
// Shared by the ein-fuse-elementwise pass (which forms the groups) and the
// backends (which compile each group as one kernel): which ops fuse, and how
// a fused kernel reads a broadcast operand without materialising it.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_PASSES_FUSEELEMENTWISE_H
#define EINC_PASSES_FUSEELEMENTWISE_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace mlir::ein {

/// The attribute naming an op's fusion group (an i64, unique per function).
inline constexpr llvm::StringLiteral kFusionAttr = "ein.fusion";

/// The attribute of a contraction whose result fusion group `N` reads as
/// its epilogue (ein-fuse-epilogues): an i64, the group's kFusionAttr.
inline constexpr llvm::StringLiteral kEpilogueAttr = "ein.epilogue";

/// How an elementwise op can read an operand that is an `ein.broadcast`: as
/// the broadcast's smaller input, in place.
enum class BroadcastRead : uint8_t {
  Full,   // not a broadcast, or one that must be materialised
  Scalar, // a rank-0 input: every element reads element 0
  Prefix, // the input's dims are the result's leading dims: element i / inner
  Suffix, // the input's dims are the result's trailing dims: element i % count
};

struct BroadcastReadInfo {
  BroadcastRead read = BroadcastRead::Full;
  int64_t count = 0; // elements of the broadcast's input (Prefix, Suffix)
};

/// How `value` (an operand of an elementwise op) can be read in place.
BroadcastReadInfo classifyBroadcastRead(mlir::Value value);

/// A value a kernel can compute from the row-major index `i` of the element
/// it reads instead of loading it: element i is (i / stride) % size. Iotas
/// and what is only reshapes and broadcasts of one (exact integers, so the
/// same bits as the materialised tensor).
struct IndexRead {
  int64_t stride = 1, size = 1;
};

/// `value` as an index expression: an ein.iota, a reshape of one (the same
/// row-major elements), or a broadcast of one that keeps the dims the
/// iota's index runs over together and unexpanded; nullopt otherwise.
std::optional<IndexRead> classifyIndexRead(mlir::Value value);

/// The iotas, and reshapes / broadcasts of them (classifyIndexRead), that
/// no step of `body` needs written: every use is one `computes` accepts (a
/// kernel computing the value from its index) or is by another such op.
llvm::DenseSet<mlir::Operation *>
indexOpsComputedInKernels(mlir::Block &body, llvm::function_ref<bool(mlir::OpOperand &)> computes);

/// Whether the fusion passes marked `body` (an op carries ein.fusion,
/// ein.epilogue or ein.rows): an elementwise op alone then computes the
/// iotas it reads too (passes/StepKernels.h, computesIndex).
bool fusionMarked(mlir::Block &body);

/// Ops a fusion group may hold: elementwise (unary, binary, cmp, select,
/// cast), one ranked result of static shape.
bool isFusible(mlir::Operation *op);

/// The loop split of a fused kernel: `outer` × `inner` = the element count;
/// every Prefix read has `outer` elements, every Suffix read `inner`. Zero:
/// not fixed yet (no such read so far).
struct FusionSplit {
  int64_t elements = 0;
  int64_t outer = 0, inner = 0;
  /// Whether a read fits; when it does and fixes the split, records it.
  bool admit(const BroadcastReadInfo &read);
};

/// A contraction's (ein.contract) columns: the elements of one row of its
/// row-major product, the product of its rhs free dims (N of its GEMM).
int64_t contractionColumns(mlir::Operation *contract);
/// The elements one iteration of the kernel of `members` (a fusion group in
/// order) covers: the inner size of its split, or 1 without one. A block of
/// the product's rows is whole iterations when this divides the columns.
int64_t epilogueRowElements(llvm::ArrayRef<mlir::Operation *> members);

} // namespace mlir::ein

#endif // EINC_PASSES_FUSEELEMENTWISE_H
