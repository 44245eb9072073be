//===- CudaLaunchShapeTest.cpp - Grids and blocks of rendered kernels -----===//
//
// cudaLaunchShape (runtime/cuda/CudaKernels.h) on H200- and A100-like
// properties and on random ones: a block of whole warps within the
// contract's and the device's limits, a grid of at least one block that
// covers the work or fills the device once, one block per row for
// BlockRows; and the image a device loads (cudaImageFor).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaKernels.h"
#include "test/unit/StatusTesting.h"

#include <gtest/gtest.h>

#include <random>

namespace einrt {
namespace {

// The numbers cuDeviceGetAttribute reports on these devices.
CudaDeviceProperties h200() { return {132, 1024, 2048, 32, 2147483647, 9, 0}; }
CudaDeviceProperties a100() { return {108, 1024, 2048, 32, 2147483647, 8, 0}; }

CudaKernelInfo kernel(CudaLaunchKind kind, int64_t work, int64_t rowLength = 0) {
  CudaKernelInfo k;
  k.entry = "k";
  k.kind = kind;
  k.work = work;
  k.rowLength = rowLength;
  return k;
}

TEST(CudaLaunchShape, KindNames) {
  EXPECT_STREQ(cudaLaunchKindName(CudaLaunchKind::Elements), "elements");
  EXPECT_STREQ(cudaLaunchKindName(CudaLaunchKind::WarpRows), "warp_rows");
  EXPECT_STREQ(cudaLaunchKindName(CudaLaunchKind::BlockRows), "block_rows");
}

TEST(CudaLaunchShape, ElementsFillTheDeviceOnce) {
  // 4M vectors, the calculator's 768 threads at 2 blocks per SM: the grid
  // stops at 2 x 132 blocks (grid-stride loops do the rest).
  CudaLaunchShape s = cudaLaunchShape(kernel(CudaLaunchKind::Elements, 4 << 20), h200(), {768, 2});
  EXPECT_EQ(s.block, 768u);
  EXPECT_EQ(s.grid, 264u);
  s = cudaLaunchShape(kernel(CudaLaunchKind::Elements, 4 << 20), a100(), {768, 2});
  EXPECT_EQ(s.grid, 216u);
}

TEST(CudaLaunchShape, ElementsCoverSmallWork) {
  // 10000 items at 256 threads: 40 blocks, fewer than fill the device.
  CudaLaunchShape s = cudaLaunchShape(kernel(CudaLaunchKind::Elements, 10000), h200(), {256, 8});
  EXPECT_EQ(s.block, 256u);
  EXPECT_EQ(s.grid, 40u);
  // 100 items: one block of 4 warps, not a mostly idle 256.
  s = cudaLaunchShape(kernel(CudaLaunchKind::Elements, 100), h200(), {256, 8});
  EXPECT_EQ(s.block, 128u);
  EXPECT_EQ(s.grid, 1u);
  s = cudaLaunchShape(kernel(CudaLaunchKind::Elements, 1), h200(), {256, 8});
  EXPECT_EQ(s.block, 32u);
  EXPECT_EQ(s.grid, 1u);
}

TEST(CudaLaunchShape, BlockIsWholeWarpsWithinLimits) {
  // A calculator's answer that is not a multiple of the warp size is
  // rounded down; above the device's limit it is capped.
  CudaLaunchShape s = cudaLaunchShape(kernel(CudaLaunchKind::Elements, 1 << 24), h200(), {1000, 2});
  EXPECT_EQ(s.block, 992u);
  CudaDeviceProperties small = h200();
  small.maxThreadsPerBlock = 512;
  s = cudaLaunchShape(kernel(CudaLaunchKind::Elements, 1 << 24), small, {1024, 2});
  EXPECT_EQ(s.block, 512u);
  // No answer from the calculator: the largest block, and as many resident
  // blocks as the multiprocessor's threads hold (2048 / 1024).
  s = cudaLaunchShape(kernel(CudaLaunchKind::Elements, 1 << 24), h200(), {0, 0});
  EXPECT_EQ(s.block, 1024u);
  EXPECT_EQ(s.grid, 264u);
}

TEST(CudaLaunchShape, WarpRowsOneWarpPerRow) {
  // 4096 rows, 8 warps a block: 512 blocks wanted, the device holds
  // 132 x 4 at once.
  CudaLaunchShape s = cudaLaunchShape(kernel(CudaLaunchKind::WarpRows, 4096, 64), h200(), {256, 4});
  EXPECT_EQ(s.block, 256u);
  EXPECT_EQ(s.grid, 512u);
  // 3 rows: one block of 3 warps.
  s = cudaLaunchShape(kernel(CudaLaunchKind::WarpRows, 3, 64), h200(), {256, 4});
  EXPECT_EQ(s.block, 96u);
  EXPECT_EQ(s.grid, 1u);
  // 2000 rows: 250 blocks of 8 warps, within one fill (528).
  s = cudaLaunchShape(kernel(CudaLaunchKind::WarpRows, 2000, 64), h200(), {256, 4});
  EXPECT_EQ(s.grid, 250u);
}

TEST(CudaLaunchShape, BlockRowsOneBlockPerRow) {
  // Softmax over a 50304 vocabulary, 8192 rows: a block per row.
  CudaLaunchShape s =
      cudaLaunchShape(kernel(CudaLaunchKind::BlockRows, 8192, 50304), h200(), {1024, 2});
  EXPECT_EQ(s.block, 1024u);
  EXPECT_EQ(s.grid, 8192u);
  // A row shorter than the block: the block shrinks to the row (whole warps).
  s = cudaLaunchShape(kernel(CudaLaunchKind::BlockRows, 16, 200), h200(), {1024, 2});
  EXPECT_EQ(s.block, 224u);
  EXPECT_EQ(s.grid, 16u);
  // More rows than the grid holds: the kernel strides over the rest.
  CudaDeviceProperties small = h200();
  small.maxGridX = 65535;
  s = cudaLaunchShape(kernel(CudaLaunchKind::BlockRows, 100000, 4096), small, {512, 4});
  EXPECT_EQ(s.grid, 65535u);
}

TEST(CudaLaunchShape, NoWorkIsOneWarp) {
  for (CudaLaunchKind kind :
       {CudaLaunchKind::Elements, CudaLaunchKind::WarpRows, CudaLaunchKind::BlockRows}) {
    CudaLaunchShape s = cudaLaunchShape(kernel(kind, 0, 0), h200(), {256, 4});
    EXPECT_EQ(s.grid, 1u);
    EXPECT_EQ(s.block, 32u);
  }
}

TEST(CudaLaunchShape, RandomDevicesAndKernelsKeepTheContract) {
  std::mt19937_64 rng(13);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int i = 0; i < 20000; ++i) {
    CudaDeviceProperties d;
    d.warpSize = 32;
    d.multiprocessors = int32_t(pick(1, 200));
    d.maxThreadsPerBlock = int32_t(pick(0, 2048));
    d.maxThreadsPerMultiprocessor = int32_t(pick(0, 4096));
    d.maxGridX = pick(0, 1) ? pick(1, 1 << 20) : 2147483647;
    CudaOccupancy o{int32_t(pick(0, 2048)), int32_t(pick(0, 64))};
    auto kind = CudaLaunchKind(pick(0, 2));
    CudaKernelInfo k =
        kernel(kind, pick(0, 1) ? pick(0, 100) : pick(0, int64_t(1) << 34), pick(0, 1 << 17));
    CudaLaunchShape s = cudaLaunchShape(k, d, o);
    SCOPED_TRACE("case " + std::to_string(i));
    int64_t limit = std::min<int64_t>(1024, d.maxThreadsPerBlock > 0 ? d.maxThreadsPerBlock : 1024);
    limit = std::max<int64_t>(32, limit / 32 * 32);
    ASSERT_EQ(s.block % 32, 0u);
    ASSERT_GE(s.block, 32u);
    ASSERT_LE(int64_t(s.block), limit);
    ASSERT_GE(s.grid, 1u);
    ASSERT_LE(int64_t(s.grid), d.maxGridX > 0 ? d.maxGridX : int64_t(UINT32_MAX));
    if (kind == CudaLaunchKind::BlockRows) {
      ASSERT_EQ(int64_t(s.grid), std::clamp<int64_t>(k.work, 1, d.maxGridX));
    } else {
      // Never more blocks than the work needs.
      int64_t units = kind == CudaLaunchKind::Elements ? s.block : s.block / 32;
      ASSERT_LE(int64_t(s.grid), std::max<int64_t>(1, (k.work + units - 1) / units));
    }
  }
}

CudaKernelBundle bundleWith(std::vector<std::pair<std::string, bool>> images) {
  CudaKernelBundle b;
  for (auto &[arch, ptx] : images)
    b.images.push_back({arch, ptx, "image of " + arch});
  return b;
}

TEST(CudaImage, CubinForTheDeviceFirst) {
  CudaKernelBundle b = bundleWith({{"compute_80", true}, {"sm_80", false}, {"sm_90", false}});
  EINC_ASSERT_OK_AND_ASSIGN(const CudaImage *i, cudaImageFor(b, 9, 0));
  EXPECT_EQ(i->arch, "sm_90");
  EINC_ASSERT_OK_AND_ASSIGN(i, cudaImageFor(b, 8, 0));
  EXPECT_EQ(i->arch, "sm_80");
}

TEST(CudaImage, ArchitectureSpecificCubinBeforePtx) {
  CudaKernelBundle b = bundleWith({{"compute_90", true}, {"sm_90a", false}, {"sm_80", false}});
  EINC_ASSERT_OK_AND_ASSIGN(const CudaImage *i, cudaImageFor(b, 9, 0));
  EXPECT_EQ(i->arch, "sm_90a");
  b = bundleWith({{"sm_90a", false}, {"sm_90", false}});
  EINC_ASSERT_OK_AND_ASSIGN(i, cudaImageFor(b, 9, 0));
  EXPECT_EQ(i->arch, "sm_90");
  EINC_EXPECT_STATUS(cudaImageFor(bundleWith({{"sm_90a", false}}), 10, 0), StatusCode::Unavailable,
                     "");
}

TEST(CudaImage, NewestPtxNotNewerThanTheDevice) {
  CudaKernelBundle b = bundleWith({{"sm_80", false}, {"compute_80", true}, {"compute_90", true}});
  // sm_100: no cubin of major 10
  EINC_ASSERT_OK_AND_ASSIGN(const CudaImage *i, cudaImageFor(b, 10, 0));
  EXPECT_EQ(i->arch, "compute_90");
  EINC_ASSERT_OK_AND_ASSIGN(i, cudaImageFor(b, 9, 0)); // sm_80's cubin does not run across majors
  EXPECT_EQ(i->arch, "compute_90");
  b = bundleWith({{"sm_90", false}, {"compute_80", true}});
  EINC_ASSERT_OK_AND_ASSIGN(i, cudaImageFor(b, 8, 6)); // sm_86: sm_90's cubin is newer; PTX 80 runs
  EXPECT_EQ(i->arch, "compute_80");
}

// What `einc compile --target cuda` makes (tools/einc/CudaTarget.h), on
// every card: sm_86 and sm_89 take sm_80's cubin, not NVRTC.
TEST(CudaImage, ACubinRunsOnLaterMinorsOfItsMajor) {
  CudaKernelBundle b = bundleWith({{"sm_80", false}, {"sm_90", false}, {"compute_90", true}});
  auto chosen = [&](int major, int minor) {
    Expected<const CudaImage *> i = cudaImageFor(b, major, minor);
    return i.ok() ? (*i)->arch : "none: " + i.status().message();
  };
  EXPECT_EQ(chosen(8, 0), "sm_80");
  EXPECT_EQ(chosen(8, 6), "sm_80");
  EXPECT_EQ(chosen(8, 9), "sm_80");
  EXPECT_EQ(chosen(9, 0), "sm_90");
  EXPECT_EQ(chosen(10, 0), "compute_90"); // not sm_90's cubin: another major
  EXPECT_EQ(chosen(12, 0), "compute_90");
  EXPECT_EQ(chosen(7, 5).rfind("none: ", 0), 0u);
  // The highest compatible minor; the exact one before it; never a newer one.
  b = bundleWith({{"sm_80", false}, {"sm_86", false}, {"sm_89", false}, {"compute_80", true}});
  EXPECT_EQ(chosen(8, 7), "sm_86");
  EXPECT_EQ(chosen(8, 9), "sm_89");
  EXPECT_EQ(chosen(8, 6), "sm_86");
  EXPECT_EQ(chosen(8, 0), "sm_80");
  // Majors of two digits: sm_100's cubin on sm_103, not on sm_120.
  b = bundleWith({{"sm_100", false}, {"compute_90", true}});
  EXPECT_EQ(chosen(10, 3), "sm_100");
  EXPECT_EQ(chosen(12, 0), "compute_90");
}

TEST(CudaImage, ArchitectureSpecificImagesOnlyOnTheirArchitecture) {
  // sm_90a (and compute_90a) run on sm_90 alone: not on a later minor, not
  // across majors; a plain lower cubin of the major runs instead.
  CudaKernelBundle b = bundleWith({{"sm_100a", false}, {"sm_100", false}, {"compute_90a", true}});
  EINC_ASSERT_OK_AND_ASSIGN(const CudaImage *i, cudaImageFor(b, 10, 3));
  EXPECT_EQ(i->arch, "sm_100");
  EINC_EXPECT_STATUS(cudaImageFor(b, 9, 2), StatusCode::Unavailable,
                     ""); // compute_90a is sm_90's alone
  EINC_ASSERT_OK_AND_ASSIGN(i, cudaImageFor(b, 9, 0));
  EXPECT_EQ(i->arch, "compute_90a");
  b = bundleWith({{"sm_120", false}, {"sm_121a", false}});
  EINC_ASSERT_OK_AND_ASSIGN(
      i, cudaImageFor(b, 12, 1)); // the exact specific one before the lower minor
  EXPECT_EQ(i->arch, "sm_121a");
}

TEST(CudaImage, NoImageNamesTheArchitectures) {
  CudaKernelBundle b = bundleWith({{"sm_90", false}, {"compute_90", true}});
  Status none80 = cudaImageFor(b, 8, 0).takeStatus();
  EINC_EXPECT_STATUS(none80, StatusCode::Unavailable, "sm_90, compute_90 (PTX)");
  EINC_EXPECT_STATUS(none80, StatusCode::Unavailable,
                     "sm_80 device (a cubin for sm_80, or PTX for compute_80 or older, is needed)");
  EINC_EXPECT_STATUS(cudaImageFor(b, 8, 9), StatusCode::Unavailable,
                     "(a cubin for sm_80 to sm_89, or PTX");
  CudaKernelBundle none;
  EINC_EXPECT_STATUS(cudaImageFor(none, 9, 0), StatusCode::Unavailable, "no architecture");
}

} // namespace
} // namespace einrt
