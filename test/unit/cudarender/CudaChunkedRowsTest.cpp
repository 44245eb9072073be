//===- CudaChunkedRowsTest.cpp - Long rows: CUDA chunks = the CPU's order -===//
//
// Rows of kChunkedRowsFrom elements or more are combined in kRowChunks
// chunks (codegen/RowOrder.h): on CUDA a warp per chunk across the device,
// the row's last warp combining the chunks' results (CudaRenderChunks.cpp);
// on the CPU the same chunks in turn (CpuRowsKernel.cpp reduceRow). Here the
// rendered kernels, compiled as host code with CudaHostShim.h, run under two
// launch shapes and must give the CPU kernel's bits for f32 sums of lengths
// around the threshold (below it: one block), odd lengths (single-element
// vectors), multiples of 4 (16-byte vectors), several rows, and a row
// kernel holding a square and its sum (a gradient norm's part).
//
//===----------------------------------------------------------------------===//
#include "CudaHostShim.h"

#include "codegen/CpuKernelGen.h"
#include "codegen/CpuKernels.h"
#include "codegen/CudaRenderer.h"
#include "codegen/RowOrder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <random>
#include <unistd.h>

namespace {

using ein::codegen::Access;
using ein::codegen::ElemKind;
using ein::codegen::FusedNode;
using ein::codegen::kChunkedRowsFrom;
using ein::codegen::KernelSpec;
using ein::codegen::KernelTensor;
using ein::codegen::kRowChunks;

KernelTensor f32(std::vector<int64_t> shape) {
  KernelTensor t;
  t.elem = ElemKind::F32;
  t.shape = std::move(shape);
  t.access = Access::Full;
  return t;
}

/// sum over the last dim of [rows, length] (rows 0: a rank-1 input summed
/// to a scalar).
KernelSpec rowSum(int64_t rows, int64_t length) {
  KernelSpec s;
  s.op = "ein.reduce";
  s.kind = "sum";
  s.operands = {rows ? f32({rows, length}) : f32({length})};
  s.result = rows ? f32({rows}) : f32({});
  s.dims = {rows ? 1 : 0};
  s.key = "test.sum." + std::to_string(rows) + "x" + std::to_string(length);
  return s;
}

/// The row kernel of a square and its sum over a whole [length] tensor: what
/// row fusion makes of a gradient's part of the norm.
KernelSpec sumOfSquares(int64_t length) {
  KernelSpec s;
  s.op = "ein.rows";
  s.operands = {f32({length})};
  s.result = f32({});
  FusedNode square;
  square.op = "ein.mul";
  square.args = {0, 0};
  FusedNode sum;
  sum.op = "ein.reduce";
  sum.kind = "sum";
  sum.args = {-1};
  sum.perRow = true;
  s.body = {square, sum};
  s.outputNodes = {1};
  s.outer = 1;
  s.inner = length;
  s.key = "test.rows.sumsq." + std::to_string(length);
  return s;
}

struct Case {
  KernelSpec spec;
  bool chunked;
  bool secondShape; // also under another launch shape (the emulation is slow)
};

/// Below the threshold (a block), at it (16-byte vectors), one past it
/// (single elements, a short last chunk and an empty one), a longer odd
/// row with empty chunks, two rows, and the square-and-sum row kernel.
std::vector<Case> cases() {
  const int64_t T = kChunkedRowsFrom;
  return {{rowSum(0, T - 4), false, false},      {rowSum(0, T), true, true},
          {rowSum(0, T + 1), true, false},       {rowSum(0, 3 * T + 7), true, false},
          {rowSum(2, T + 8), true, true},        {sumOfSquares(T + 5), true, false},
          {sumOfSquares(2 * T + 16), true, true}};
}

// In the cuda-host-emulation ctest entry (CudaHostEmulation.*): it runs a
// host thread per CUDA thread.
TEST(CudaHostEmulation, ChunkedRowsAreBitEqualToTheCpuKernel) {
  std::vector<Case> all = cases();
  auto compiler = ein::codegen::KernelCompiler::create();
  std::vector<int64_t> index;
  std::string body, entries;
  std::vector<einrt::CudaKernelInfo> infos;
  for (size_t i = 0; i < all.size(); ++i) {
    index.push_back(compiler->add(all[i].spec));
    auto k = ein::codegen::renderCudaKernel(all[i].spec, int64_t(i), "");
    SCOPED_TRACE(all[i].spec.key);
    // Chunked: a warp per chunk over the device, one counter per row; the
    // counter is the only atomic, and values never go through it.
    size_t atomics = 0;
    for (size_t at = k.text.find("atomic"); at != std::string::npos;
         at = k.text.find("atomic", at + 1))
      ++atomics;
    int64_t rows = all[i].spec.op == "ein.rows"       ? all[i].spec.outer
                   : all[i].spec.result.shape.empty() ? 1
                                                      : all[i].spec.result.shape[0];
    if (all[i].chunked) {
      EXPECT_EQ(k.info.kind, einrt::CudaLaunchKind::WarpRows);
      EXPECT_EQ(k.info.work, rows * kRowChunks);
      EXPECT_EQ(atomics, 1u) << k.text;
      EXPECT_NE(k.text.find("atomicAdd(&" + k.info.entry + "_done[row], 1u)"), std::string::npos)
          << k.text;
    } else {
      EXPECT_EQ(k.info.kind, einrt::CudaLaunchKind::BlockRows);
      EXPECT_EQ(atomics, 0u) << k.text;
    }
    body += "\n" + k.text;
    entries += "{\"" + k.info.entry + "\", [](void **p) { ein_call(" + k.info.entry + ", p); }},\n";
    infos.push_back(k.info);
  }
  ASSERT_TRUE(mlir::succeeded(compiler->compile()));

  std::string prelude = ein::codegen::cudaPrelude(false, false), kept;
  for (size_t at = 0; at < prelude.size();) {
    size_t end = prelude.find('\n', at);
    std::string line = prelude.substr(at, end - at);
    if (line.rfind("#include <cuda_", 0) != 0)
      kept += line + "\n";
    at = end == std::string::npos ? prelude.size() : end + 1;
  }
  char dir[] = "/tmp/einc-chunked-rows-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string src = std::string(dir) + "/kernels.cpp", lib = std::string(dir) + "/kernels.so";
  std::string epilogue = einc::cudatest::kHostShimEpilogue;
  epilogue.replace(epilogue.find("EIN_ENTRIES"), 11, entries);
  std::ofstream(src) << einc::cudatest::kHostShimPrologue << kept << body << epilogue;
  std::string cmd = std::string(EINC_TEST_CXX) +
                    " -std=c++17 -O1 -fPIC -shared -pthread -ffp-contract=off "
                    "-fno-strict-aliasing -w -o " +
                    lib + " " + src;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  void *handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  using Emulate = int (*)(const char *, void **, unsigned, unsigned, int);
  auto emulate = reinterpret_cast<Emulate>(dlsym(handle, "einc_emulate"));
  ASSERT_NE(emulate, nullptr);

  std::mt19937 gen(26);
  // Values of both signs and many magnitudes: any other association of
  // the sums rounds differently.
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-12, 12);
  for (size_t i = 0; i < all.size(); ++i) {
    const KernelSpec &s = all[i].spec;
    SCOPED_TRACE(s.key);
    std::vector<float> in(size_t(s.operands[0].count()));
    for (float &x : in)
      x = std::ldexp(mantissa(gen), exponent(gen));
    size_t outputs = size_t(std::max<int64_t>(s.result.count(), 1));
    std::vector<float> cpu(outputs, NAN), cuda(outputs, NAN), again(outputs, NAN);

    einrt::KernelEntry entry = compiler->table()[size_t(index[i])];
    void *inPtr = in.data(), *outPtr = cpu.data();
    int64_t begin = 0, end = entry.extent;
    void *args[] = {&inPtr, &outPtr, &begin, &end};
    entry.fn(args);

    void *params[] = {in.data(), cuda.data()};
    ASSERT_EQ(emulate(infos[i].entry.c_str(), params, 3, 64, 1), 0);
    for (size_t o = 0; o < outputs; ++o)
      EXPECT_EQ(std::memcmp(&cpu[o], &cuda[o], 4), 0)
          << "row " << o << ": CPU " << cpu[o] << ", CUDA " << cuda[o];
    if (!all[i].secondShape)
      continue;
    void *paramsAgain[] = {in.data(), again.data()};
    ASSERT_EQ(emulate(infos[i].entry.c_str(), paramsAgain, 1, 96, 1), 0);
    for (size_t o = 0; o < outputs; ++o)
      EXPECT_EQ(std::memcmp(&cuda[o], &again[o], 4), 0)
          << "row " << o << " depends on the launch shape: " << cuda[o] << " vs " << again[o];
  }
  dlclose(handle);
  std::string rm = "rm -rf '" + std::string(dir) + "'";
  EXPECT_EQ(std::system(rm.c_str()), 0);
}

TEST(CudaChunkedRows, LongRowsAreCutIntoAFixedNumberOfChunks) {
  // The test above would pass vacuously if both sides ignored the chunks:
  // the orders differ on rows at and past the threshold.
  auto below = ein::codegen::rowOrder(kChunkedRowsFrom - 4, ElemKind::F32, "sum");
  auto at = ein::codegen::rowOrder(kChunkedRowsFrom, ElemKind::F32, "sum");
  EXPECT_EQ(below.chunks, 0);
  EXPECT_EQ(at.chunks, kRowChunks);
  EXPECT_EQ(at.chunkVectors, kChunkedRowsFrom / 4 / kRowChunks);
  auto odd = ein::codegen::rowOrder(3 * kChunkedRowsFrom + 7, ElemKind::F32, "sum");
  EXPECT_EQ(odd.vector, 1);
  EXPECT_EQ(odd.chunkVectors, (3 * kChunkedRowsFrom + 7 + kRowChunks - 1) / kRowChunks);
  // A narrow sum folds in order, never in chunks.
  EXPECT_EQ(ein::codegen::rowOrder(kChunkedRowsFrom, ElemKind::BF16, "sum").chunks, 0);
}

} // namespace
