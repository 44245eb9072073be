//===- ParallelChunksTest.cpp - How the executor cuts a step into chunks --===//
//
// The chunks of a Kernel or Matmul step cover every iteration / every row
// of every matrix exactly once, small steps are one chunk, and matmul row
// blocks are whole register blocks but for a matrix's last.
//
//===----------------------------------------------------------------------===//
#include "runtime/ParallelChunks.h"

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

TEST(ParallelChunks, MatmulChunksCoverEveryRowOnce) {
  struct Shape {
    int64_t matrices, m, n, k;
  };
  for (Shape s : std::vector<Shape>{{1, 4, 4, 4},       // small: one chunk
                                    {1, 200, 150, 100}, // row blocks
                                    {1, 203, 150, 100},
                                    {6, 100, 100, 100},
                                    {3, 1000, 1, 2000}, // tall and thin
                                    {1, 5, 4096, 4096}, // fewer rows than a block
                                    {40, 40, 40, 40},   // whole matrices
                                    {100, 64, 64, 64}}) {
    MatmulChunks p = planMatmulChunks(s.matrices, s.m, s.n, s.k);
    ASSERT_GE(p.count(), 1);
    if (2.0 * s.matrices * s.m * s.n * s.k < kParallelMatmulFlops)
      EXPECT_EQ(p.count(), 1);
    EXPECT_LE(p.count(), std::max<int64_t>(kMaxChunks, s.matrices * kMatmulChunks));
    std::vector<int> hits(size_t(s.matrices * s.m), 0);
    for (int c = 0; c < p.count(); ++c) {
      MatmulChunks::Chunk ch = p.chunk(c);
      EXPECT_LT(ch.first, ch.last);
      EXPECT_LT(ch.r0, ch.r1);
      if (ch.r1 != s.m) // only a matrix's last block has an edge
        EXPECT_EQ((ch.r1 - ch.r0) % kMatmulRowAlign, 0);
      if (p.rowBlocks > 1)
        EXPECT_GE(2.0 * (ch.r1 - ch.r0) * s.n * s.k, ch.r1 == s.m ? 0.0 : kMinMatmulCallFlops);
      for (int64_t i = ch.first; i < ch.last; ++i)
        for (int64_t r = ch.r0; r < ch.r1; ++r)
          ++hits[size_t(i * s.m + r)];
    }
    for (int h : hits)
      ASSERT_EQ(h, 1) << s.matrices << " x " << s.m << "x" << s.n << "x" << s.k;
  }
}

} // namespace
