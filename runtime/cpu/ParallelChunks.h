//===- ParallelChunks.h - How the executor cuts a step into chunks -*- C++ -*-===//
//
// The CPU backend's Kernel and Matmul steps run as chunks: calls of a
// compiled kernel over a range of its parallel loop, and GEMM calls over
// whole matrices or over a tile of one matrix's result. The cut is a
// function of the step's shape alone, never of the thread count, and every
// thread count (one included) makes exactly these calls; threads only pick
// which chunk they run next. So a step's result is bit-identical at every
// thread count by construction, whatever BLAS kernel a call's shape selects
// (docs/determinism.md).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_PARALLELCHUNKS_H
#define EINC_RUNTIME_PARALLELCHUNKS_H

#include <cstdint>

namespace einrt {

/// A Kernel step whose buffers hold fewer elements than this runs as one
/// call; a larger one as one chunk per kKernelChunkElements elements (at
/// most kMaxChunks, at most one per iteration of its parallel loop).
constexpr int64_t kParallelElements = 32768;
constexpr int64_t kKernelChunkElements = 16384;
constexpr int64_t kMaxChunks = 64;
/// A Matmul step below this many FLOPs runs as one chunk.
constexpr double kParallelMatmulFlops = 4e6;
/// A larger Matmul step is cut into at most this many chunks: groups of
/// whole matrices, or tiles of C when it has fewer matrices than this. Few
/// large calls: a BLAS call packs the panels of A and B it reads, so a
/// call over a thin block of C re-reads a whole operand for little work
/// and runs memory-bound (16-row blocks of gpt's 256x1024, K = 2048 weight
/// gradient ran at half the speed of one call; four 256x256 tiles at 92%,
/// eight 128x256 at 85%: OpenBLAS, one thread, AMD EPYC). Four chunks keep
/// two threads evenly busy.
constexpr int64_t kMatmulChunks = 4;
/// A tile of C has at least this many rows and columns (or the whole
/// extent where C has fewer), so each call packs its operands once for a
/// block the BLAS kernels run compute-bound.
constexpr int64_t kMinTileRows = 128;
constexpr int64_t kMinTileCols = 256;
/// Every tile but a matrix's last in its row (column) of tiles is a
/// multiple of this many rows (columns): the register-block height of the
/// BLAS kernels (a cache line of floats times four), so only the last tile
/// has an edge.
constexpr int64_t kMatmulRowAlign = 16;
constexpr int64_t kMatmulColAlign = 64;

/// [begin, end) of a parallel loop.
struct Range {
  int64_t begin = 0, end = 0;
};

/// The number of chunks of a Kernel step whose parallel loop has `extent`
/// iterations and whose largest buffer holds `elements` elements.
int kernelChunkCount(int64_t extent, int64_t elements);
/// Chunk `c` of `count`: consecutive, near-equal ranges covering [0, extent).
Range kernelChunk(int64_t extent, int count, int c);

/// The chunks of a Matmul step of `matrices` matrices, each C (m×n) =
/// op(A) (m×k) · op(B) (k×n): `groups` consecutive groups of whole
/// matrices, or (tiles() > 1) one matrix per group cut into a grid of
/// rowBlocks x colBlocks tiles of C. K is never cut: every element of C is
/// one call's sum over all of K.
struct MatmulChunks {
  int64_t matrices = 0, rows = 0, cols = 0;
  int64_t groups = 1;
  int64_t rowsPerBlock = 0; // `rows` when matrices are whole
  int64_t rowBlocks = 1;
  int64_t colsPerBlock = 0; // `cols` when rows are whole
  int64_t colBlocks = 1;

  int64_t tiles() const { return rowBlocks * colBlocks; }
  int count() const { return int(groups * tiles()); }
  /// Chunk c: matrices [first, last), rows [r0, r1) and columns [c0, c1)
  /// of each.
  struct Chunk {
    int64_t first, last, r0, r1, c0, c1;
  };
  Chunk chunk(int c) const;
};
/// How a Matmul step is cut, from its shape alone. `columns` false: tiles
/// are whole rows of C (for GEMM kernels that run row blocks only).
MatmulChunks planMatmulChunks(int64_t matrices, int64_t m, int64_t n, int64_t k,
                              bool columns = true);

} // namespace einrt

#endif // EINC_RUNTIME_PARALLELCHUNKS_H
