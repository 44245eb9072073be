//===- AddInOrderKernelTest.cpp - The cuda device's ordered add, on the host -===//
//
// runtime/cuda/AddInOrder.cu compiled as host C++ (the CUDA built-ins as
// plain variables, __fadd_rn as the host's float add under
// -ffp-contract=off) and launched block by block, thread by thread: every
// element is visited once, under launch shapes that do not divide the
// count, and the parts are added in order, bit for bit the host device's
// Device::addInOrder. (The GPU runs the same source from the PTX nvcc makes
// of it; NcclTest's NcclOnGpu checks it there.)
//
//===----------------------------------------------------------------------===//
#include "runtime/core/HostDevice.h"
#include "test/unit/StatusTesting.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {
struct HostDim {
  unsigned x = 0;
};
HostDim threadIdx, blockIdx, blockDim, gridDim;
float __fadd_rn(float a, float b) { return a + b; }
} // namespace

#define __global__
#define __restrict__ __restrict
#include "runtime/cuda/AddInOrder.cu"
#undef __global__
#undef __restrict__

namespace einrt {
namespace {

void launch(unsigned grid, unsigned block, float *sum, const float *parts, long long partCount,
            long long stride, long long count) {
  gridDim.x = grid;
  blockDim.x = block;
  for (unsigned b = 0; b < grid; ++b)
    for (unsigned t = 0; t < block; ++t) {
      blockIdx.x = b;
      threadIdx.x = t;
      einc_add_in_order(sum, parts, partCount, stride, count);
    }
}

TEST(AddInOrderKernel, EqualsTheHostDevicesAddBitForBit) {
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> mant(-1, 1);
  std::uniform_int_distribution<int> exp(-12, 12);
  HostDevice host;
  for (long long count : {1LL, 255LL, 1000LL})
    for (long long partCount : {1LL, 2LL, 5LL})
      for (unsigned grid : {1u, 3u})
        for (unsigned block : {32u, 256u}) {
          const long long stride = count + 3; // parts apart by more than the count
          std::vector<float> parts(static_cast<size_t>(partCount * stride));
          std::vector<float> start(static_cast<size_t>(count));
          for (float &f : parts)
            f = std::ldexp(mant(gen), exp(gen));
          for (float &f : start)
            f = std::ldexp(mant(gen), exp(gen));
          std::vector<float> got = start, want = start;
          launch(grid, block, got.data(), parts.data(), partCount, stride, count);
          EINC_ASSERT_OK(host.addInOrder(want.data(), parts.data(), partCount, stride, count));
          ASSERT_EQ(0, std::memcmp(got.data(), want.data(), size_t(count) * sizeof(float)))
              << "count " << count << ", " << partCount << " parts, grid " << grid << " x "
              << block;
        }
}

} // namespace
} // namespace einrt
