//===- ParallelChunks.cpp - How the executor cuts a step into chunks ------===//
#include "runtime/cpu/ParallelChunks.h"

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

namespace {
/// The size of block b of `count` blocks over `extent`, each but the last
/// a multiple of `align`: the blocks of blocksOf().
int64_t blockSize(int64_t extent, int64_t count, int64_t align) {
  int64_t size = (extent + count - 1) / count;
  return std::min(extent, (size + align - 1) / align * align);
}
/// The number of blocks of blockSize(extent, count, align): rounding a
/// block up may need fewer than `count`.
int64_t blocksOf(int64_t extent, int64_t count, int64_t align) {
  int64_t size = blockSize(extent, count, align);
  return size ? (extent + size - 1) / size : 1;
}
} // namespace

MatmulChunks planMatmulChunks(int64_t matrices, int64_t m, int64_t n, int64_t k, bool columns) {
  MatmulChunks p;
  p.matrices = std::max<int64_t>(matrices, 0);
  p.rows = std::max<int64_t>(m, 0);
  p.cols = std::max<int64_t>(n, 0);
  p.rowsPerBlock = p.rows;
  p.colsPerBlock = p.cols;
  const double perMatrix = 2.0 * double(m) * double(n) * double(k);
  if (matrices <= 0 || m <= 0 || n <= 0 || perMatrix * double(matrices) < kParallelMatmulFlops)
    return p; // one chunk: every matrix whole
  if (matrices >= kMatmulChunks) {
    p.groups = std::min(matrices, kMaxChunks);
    return p;
  }
  // Fewer matrices than chunks wanted: cut each into a grid of tiles, the
  // most tiles (up to the chunks wanted per matrix) of at least the
  // minimum size, and of those grids the one whose tiles are squarest (the
  // least packing per FLOP: a tile of r x c reads r·k + k·c to compute
  // 2·r·c·k).
  const int64_t wanted = (kMatmulChunks + matrices - 1) / matrices;
  const int64_t maxRows = std::max<int64_t>(1, m / kMinTileRows);
  const int64_t maxCols = columns ? std::max<int64_t>(1, n / kMinTileCols) : 1;
  p.groups = matrices;
  double bestCost = 1.0 / double(m) + 1.0 / double(n);
  for (int64_t r = 1; r <= std::min(maxRows, wanted); ++r)
    for (int64_t c = 1; c <= maxCols && r * c <= wanted; ++c) {
      const int64_t rs = blockSize(m, r, kMatmulRowAlign), cs = blockSize(n, c, kMatmulColAlign);
      const int64_t gr = blocksOf(m, r, kMatmulRowAlign), gc = blocksOf(n, c, kMatmulColAlign);
      const double cost = 1.0 / double(rs) + 1.0 / double(cs);
      // Of grids as square, the one of whole rows: an epilogue whose
      // iterations are rows runs on whole-row tiles only.
      const bool squarer = cost < bestCost * (1 - 1e-9);
      const bool asSquare = !squarer && cost <= bestCost * (1 + 1e-9);
      if (gr * gc > p.tiles() ||
          (gr * gc == p.tiles() && (squarer || (asSquare && gc < p.colBlocks)))) {
        p.rowsPerBlock = rs, p.rowBlocks = gr, p.colsPerBlock = cs, p.colBlocks = gc;
        bestCost = cost;
      }
    }
  return p;
}

MatmulChunks::Chunk MatmulChunks::chunk(int c) const {
  const int64_t g = c / tiles(), tile = c % tiles();
  const int64_t rb = tile / colBlocks, cb = tile % colBlocks;
  Chunk out;
  out.first = matrices * g / groups;
  out.last = matrices * (g + 1) / groups;
  out.r0 = rb * rowsPerBlock;
  out.r1 = std::min(rows, out.r0 + rowsPerBlock);
  out.c0 = cb * colsPerBlock;
  out.c1 = std::min(cols, out.c0 + colsPerBlock);
  return out;
}

} // namespace einrt
