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
// A row of kChunkedRowsFrom elements or more is cut into kRowChunks chunks
// of consecutive vectors (the last ones shorter or empty), each combined as
// 32 partials by that tree (CUDA: a warp per chunk, across the whole GPU),
// and the chunks' results are then combined as a row of kRowChunks elements
// in this same order (CUDA: by the warp that finishes a row's last chunk).
// It depends on the row length and the element kind alone, so a fused and an
// unfused kernel, or a CPU and a CUDA one, combine a row the same way.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_ROWORDER_H
#define EINC_CODEGEN_ROWORDER_H

#include "codegen/KernelSpec.h"
#include "passes/FuseRows.h"
#include "runtime/cuda/CudaKernels.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace ein::codegen {

/// Row length from which CUDA gives a row a block instead of a warp (a warp
/// would load 64 or more elements per lane).
inline constexpr int64_t kBlockRowsFrom = 2048;
/// Partials per row of a block: the largest block, so that any block has
/// at most one per thread.
inline constexpr int64_t kRowBlockPartials = einrt::kCudaKernelMaxBlock;
/// Row length from which a row is combined in chunks (mlir::ein's row
/// fusion keeps only the reduction's producers in a row kernel of such
/// rows: passes/FuseRows.h).
inline constexpr int64_t kChunkedRowsFrom = mlir::ein::kChunkedRowsFrom;
/// Chunks of such a row: a constant, so that the order depends on the row
/// length alone (not on the GPU, its block size or the CPU's threads);
/// 2048 warps keep every SM of a large GPU busy. At kChunkedRowsFrom a
/// chunk is 64 elements.
inline constexpr int64_t kRowChunks = 2048;

struct RowOrder {
  bool inOrder = true; // a fold in row order: rows of fewer than 32, narrow sums
  int64_t vector = 1;  // elements a partial takes at a time
  int64_t partials = 32;
  /// > 0: the row in `chunks` chunks of `chunkVectors` vectors (the last
  /// ones shorter or empty), each of 32 partials; then the chunks' results
  /// as a row of `chunks` elements, in rowOrder(chunks)'s order.
  int64_t chunks = 0, chunkVectors = 0;
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
  if (!o.inOrder && length >= kChunkedRowsFrom) {
    o.partials = 32;
    o.chunks = kRowChunks;
    o.chunkVectors = (length / o.vector + kRowChunks - 1) / kRowChunks;
  }
  return o;
}

} // namespace ein::codegen

#endif // EINC_CODEGEN_ROWORDER_H
