//===- RowOrder.h - The order a reduction combines a row in -----*- C++ -*-===//
//
// One place for the order in which a reduction over the trailing dims
// combines the elements of one row, shared by the CPU kernels (CpuKernelGen's
// reduce, CpuRowsKernel's row kernels) and the CUDA renderer (CudaRenderRows:
// WarpRows / BlockRows): `partials` partial results, partial p combining
// vectors p, p + partials, ... in order (a vector: `vector` consecutive
// elements, in order), then each group of 32 partials by a fixed tree (a
// warp's xor shuffles: for d = 16, 8, 4, 2, 1, partial l < d takes l + d),
// then — with more than 32 partials — the 32 group results by the same tree.
// It depends on the row length and the element kind alone, so a fused and an
// unfused kernel, or a CPU and a CUDA one, combine a row the same way.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_ROWORDER_H
#define EINC_CODEGEN_ROWORDER_H

#include "codegen/CpuKernelGen.h"
#include "runtime/CudaKernels.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace ein::codegen {

/// Row length from which CUDA gives a row a block instead of a warp (a warp
/// would load 64 or more elements per lane).
inline constexpr int64_t kBlockRowsFrom = 2048;
/// Partials per row of a block: the largest block, so that any block has
/// at most one per thread.
inline constexpr int64_t kRowBlockPartials = einrt::kCudaKernelMaxBlock;

struct RowOrder {
  bool inOrder = true; // a fold in row order: rows of fewer than 32, narrow sums
  int64_t vector = 1;  // elements a partial takes at a time
  int64_t partials = 32;
};

/// The order a `kind` reduction of `elem` elements combines rows of
/// `length`: 16-byte vectors where the length allows, 32 partials (a warp)
/// or kRowBlockPartials (a block) from kBlockRowsFrom elements.
inline RowOrder rowOrder(int64_t length, ElemKind elem, llvm::StringRef kind) {
  RowOrder o;
  o.inOrder = length < 32 || (isNarrowKind(elem) && kind == "sum");
  int64_t bytes = elem == ElemKind::I1 ? 1 : isNarrowKind(elem) ? 2 : 4;
  o.vector = length % (16 / bytes) == 0 ? 16 / bytes : 1;
  o.partials = length >= kBlockRowsFrom ? kRowBlockPartials : 32;
  return o;
}

} // namespace ein::codegen

#endif // EINC_CODEGEN_ROWORDER_H
