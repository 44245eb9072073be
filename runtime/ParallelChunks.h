//===- ParallelChunks.h - How the executor cuts a step into chunks -*- C++ -*-===//
//
// The CPU backend's Kernel and Matmul steps run as chunks: calls of a
// compiled kernel over a range of its parallel loop, and cblas_sgemm calls
// over whole matrices or over a block of rows of one matrix. The cut is a
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
/// A Matmul step with fewer matrices than this has its matrices cut into
/// row blocks, aiming at this many chunks in all...
constexpr int64_t kMatmulChunks = 24;
/// ... with every call at least this large ...
constexpr double kMinMatmulCallFlops = 1e6;
/// ... and every block but a matrix's last a multiple of this many rows (the
/// register-block height of the BLAS kernels, so only the last block has an
/// edge).
constexpr int64_t kMatmulRowAlign = 16;

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
/// matrices, or (rowBlocks > 1) one matrix per group cut into blocks of
/// rowsPerBlock rows of C.
struct MatmulChunks {
  int64_t matrices = 0, rows = 0;
  int64_t groups = 1;
  int64_t rowsPerBlock = 0; // `rows` when matrices are whole
  int64_t rowBlocks = 1;

  int count() const { return int(groups * rowBlocks); }
  /// Chunk c: matrices [first, last), rows [r0, r1) of each.
  struct Chunk {
    int64_t first, last, r0, r1;
  };
  Chunk chunk(int c) const;
};
MatmulChunks planMatmulChunks(int64_t matrices, int64_t m, int64_t n, int64_t k);

} // namespace einrt

#endif // EINC_RUNTIME_PARALLELCHUNKS_H
