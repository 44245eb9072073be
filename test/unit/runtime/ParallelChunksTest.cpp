//===- ParallelChunksTest.cpp - How the executor cuts a step into chunks --===//
//
// The chunks of a Kernel or Matmul step cover every iteration / every row
// of every matrix exactly once, small steps are one chunk, and matmul row
// tiles are large and whole register blocks but for a matrix's last.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/ParallelChunks.h"

#include <gtest/gtest.h>

#include <vector>

using namespace einrt;

namespace {

TEST(ParallelChunks, KernelRangesCoverTheLoopOnce) {
  EXPECT_EQ(kernelChunkCount(1000, kParallelElements - 1), 1);
  EXPECT_EQ(kernelChunkCount(1, 1 << 24), 1); // one iteration: one call
  EXPECT_EQ(kernelChunkCount(3, 1 << 24), 3); // at most one per iteration
  EXPECT_EQ(kernelChunkCount(1 << 24, 1 << 24), int(kMaxChunks));
  EXPECT_EQ(kernelChunkCount(98321, 98321), int(98321 / kKernelChunkElements));
  for (int64_t extent : {2, 7, 1000, 98321}) {
    int count = kernelChunkCount(extent, 1 << 20);
    int64_t next = 0;
    for (int c = 0; c < count; ++c) {
      Range r = kernelChunk(extent, count, c);
      EXPECT_EQ(r.begin, next);
      EXPECT_GT(r.end, r.begin);
      next = r.end;
    }
    EXPECT_EQ(next, extent);
  }
}

TEST(ParallelChunks, MatmulChunksCoverEveryElementOnce) {
  struct Shape {
    int64_t matrices, m, n, k;
  };
  for (bool columns : {true, false})
    for (Shape s : std::vector<Shape>{{1, 4, 4, 4},         // small: one chunk
                                      {1, 200, 150, 100},   // fewer rows than two tiles
                                      {1, 203, 600, 100},   // column tiles
                                      {1, 256, 1024, 2048}, // gpt's weight gradient
                                      {1, 2048, 256, 1024},
                                      {1, 1000, 1000, 1000},
                                      {6, 300, 700, 100},
                                      {3, 1000, 1, 2000}, // tall and thin
                                      {1, 5, 4096, 4096}, // fewer rows than a tile
                                      {40, 40, 40, 40},   // whole matrices
                                      {100, 64, 64, 64}}) {
      MatmulChunks p = planMatmulChunks(s.matrices, s.m, s.n, s.k, columns);
      ASSERT_GE(p.count(), 1);
      if (2.0 * s.matrices * s.m * s.n * s.k < kParallelMatmulFlops)
        EXPECT_EQ(p.count(), 1);
      EXPECT_LE(p.count(), std::max(kMaxChunks, kMatmulChunks));
      if (!columns)
        EXPECT_EQ(p.colBlocks, 1);
      std::vector<int> hits(size_t(s.matrices * s.m * s.n), 0);
      for (int c = 0; c < p.count(); ++c) {
        MatmulChunks::Chunk ch = p.chunk(c);
        EXPECT_LT(ch.first, ch.last);
        EXPECT_LT(ch.r0, ch.r1);
        EXPECT_LT(ch.c0, ch.c1);
        if (p.tiles() > 1) { // a tile is never thinner than the minimum
          EXPECT_GE(ch.r1 - ch.r0, std::min(s.m, kMinTileRows));
          EXPECT_GE(ch.c1 - ch.c0, std::min(s.n, kMinTileCols));
        }
        if (ch.r1 != s.m) // only a matrix's last tiles have an edge
          EXPECT_EQ((ch.r1 - ch.r0) % kMatmulRowAlign, 0);
        if (ch.c1 != s.n)
          EXPECT_EQ((ch.c1 - ch.c0) % kMatmulColAlign, 0);
        for (int64_t i = ch.first; i < ch.last; ++i)
          for (int64_t r = ch.r0; r < ch.r1; ++r)
            for (int64_t col = ch.c0; col < ch.c1; ++col)
              ++hits[size_t((i * s.m + r) * s.n + col)];
      }
      for (int h : hits)
        ASSERT_EQ(h, 1) << s.matrices << " x " << s.m << "x" << s.n << "x" << s.k;
    }
}

// gpt's GEMMs are cut into few large tiles: enough for two and four
// threads, never a thin block that re-reads a whole operand for little work.
TEST(ParallelChunks, LargeMatmulsAreCutIntoFewLargeTiles) {
  // gpt's weight gradient: four 256x256 tiles (squarer than 128x512).
  MatmulChunks wgrad = planMatmulChunks(1, 256, 1024, 2048);
  EXPECT_EQ(wgrad.count(), 4);
  EXPECT_EQ(wgrad.rowsPerBlock, 256);
  EXPECT_EQ(wgrad.colsPerBlock, 256);
  MatmulChunks rowsOnly = planMatmulChunks(1, 256, 1024, 2048, /*columns=*/false);
  EXPECT_EQ(rowsOnly.count(), 2);
  EXPECT_EQ(rowsOnly.rowsPerBlock, 128);
  MatmulChunks tall = planMatmulChunks(1, 2048, 256, 1024);
  EXPECT_EQ(tall.count(), 4);
  EXPECT_EQ(tall.rowsPerBlock, 512);
  EXPECT_EQ(tall.colBlocks, 1);
  // A square matrix is cut into square tiles, not strips.
  MatmulChunks square = planMatmulChunks(1, 1000, 1000, 1000);
  EXPECT_EQ(square.rowBlocks, 2);
  EXPECT_EQ(square.colBlocks, 2);
  EXPECT_EQ(square.rowsPerBlock, 512);
  EXPECT_EQ(square.colsPerBlock, 512);
  // As square either way (512 x 1024 or 1024 x 512): whole rows.
  MatmulChunks gelu = planMatmulChunks(1, 2048, 1024, 256);
  EXPECT_EQ(gelu.rowBlocks, 4);
  EXPECT_EQ(gelu.colBlocks, 1);
  // Two matrices: two tiles each.
  EXPECT_EQ(planMatmulChunks(2, 1024, 1024, 64).count(), 4);
  // Many matrices stay whole.
  MatmulChunks batched = planMatmulChunks(64, 128, 128, 64);
  EXPECT_EQ(batched.tiles(), 1);
  EXPECT_EQ(batched.count(), 64);
}

} // namespace
