//===- ParallelChunks.cpp - How the executor cuts a step into chunks ------===//
#include "runtime/ParallelChunks.h"

#include <algorithm>

namespace einrt {

int kernelChunkCount(int64_t extent, int64_t elements) {
  if (extent <= 1 || elements < kParallelElements)
    return 1;
  return int(std::min({extent, kMaxChunks, elements / kKernelChunkElements}));
}

Range kernelChunk(int64_t extent, int count, int c) {
  return {extent * c / count, extent * (c + 1) / count};
}

MatmulChunks planMatmulChunks(int64_t matrices, int64_t m, int64_t n, int64_t k) {
  MatmulChunks p;
  p.matrices = std::max<int64_t>(matrices, 0);
  p.rows = std::max<int64_t>(m, 0);
  p.rowsPerBlock = p.rows;
  const double perMatrix = 2.0 * double(m) * double(n) * double(k);
  if (matrices <= 0 || m <= 0 || perMatrix * double(matrices) < kParallelMatmulFlops)
    return p; // one chunk: every matrix whole
  if (matrices >= kMatmulChunks) {
    p.groups = std::min(matrices, kMaxChunks);
    return p;
  }
  // Fewer matrices than chunks wanted: cut each into row blocks.
  int64_t wanted = (kMatmulChunks + matrices - 1) / matrices;
  int64_t byFlops = std::max<int64_t>(1, int64_t(perMatrix / kMinMatmulCallFlops));
  int64_t blocks = std::min(wanted, byFlops);
  int64_t rows = (m + blocks - 1) / blocks;
  rows = (rows + kMatmulRowAlign - 1) / kMatmulRowAlign * kMatmulRowAlign;
  p.groups = matrices;
  if (rows < m) {
    p.rowsPerBlock = rows;
    p.rowBlocks = (m + rows - 1) / rows;
  }
  return p;
}

MatmulChunks::Chunk MatmulChunks::chunk(int c) const {
  const int64_t g = c / rowBlocks, block = c % rowBlocks;
  Chunk out;
  out.first = matrices * g / groups;
  out.last = matrices * (g + 1) / groups;
  out.r0 = block * rowsPerBlock;
  out.r1 = std::min(rows, out.r0 + rowsPerBlock);
  return out;
}

} // namespace einrt
