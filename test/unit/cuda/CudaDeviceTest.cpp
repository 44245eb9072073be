//===- CudaDeviceTest.cpp - The cuda device on a GPU ----------------------===//
//
// What only a GPU can check, skipped (with the reason) where the device
// does not open: buffers of every storage type through upload, copy and
// download (staged in parts through a buffer allocated at open, and one
// larger than the host refused), zeroed allocations, GEMMs of every transpose,
// batch and outer-loop layout against the CPU device (f32, bf16 -> f32,
// bf16 -> bf16), kernels from a cubin, from PTX and from source through
// NVRTC (TestKernels.cu, built by nvcc and copied beside this binary) with
// their launch shapes, whole runs replayed as CUDA graphs with new inputs
// each time (and issued step by step under EINC_CUDA_GRAPHS=0 and
// EINC_CUDA_SYNC=1), and the errors: a Program
// larger than the GPU's memory, a refused reference step.
//
//===----------------------------------------------------------------------===//
#include "../runtime/ProgramBuilder.h"
#include "test/unit/StatusTesting.h"

#include "runtime/core/Executor.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/Nvrtc.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

namespace einrt {
namespace {

using test::ProgramBuilder;
using test::valuesOf;

class CudaDeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    CudaDeviceOptions options;
    options.stagingBytes = 4096; // copies in parts
    Expected<std::shared_ptr<CudaDevice>> opened = createCudaDevice(options);
    if (!opened.ok())
      GTEST_SKIP() << "no cuda device here: " << opened.status().message();
    device = opened.take();
  }
  std::shared_ptr<CudaDevice> device;
};

std::vector<double> randomValues(size_t n, uint64_t seed, int lo = -4, int hi = 4) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<double> v(n);
  for (double &x : v)
    x = d(rng);
  return v;
}

void setInputs(Executor &ex, uint64_t seed) {
  for (size_t a = 0; a < ex.argumentCount(); ++a) {
    size_t b = size_t(ex.program().arguments[a]);
    std::vector<double> v = randomValues(size_t(ex.elementCount(b)), seed + a);
    EINC_ASSERT_OK(ex.write(b, v.data(), v.size()));
  }
}

TEST_F(CudaDeviceTest, BuffersOfEveryStorageRoundTrip) {
  ProgramBuilder b;
  for (DType t : {DType::F32, DType::BF16, DType::F16, DType::I32, DType::I1}) {
    int32_t x = b.arg(t, {3000}); // 12000 bytes of f32: three staging parts
    b.result(b.step(StepKind::Copy, {x}, t, {3000}));
  }
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(b.p, device));
  for (size_t r = 0; r < ex.resultCount(); ++r) // allocations are zeroed
    for (double v : valuesOf(ex, size_t(ex.program().results[r])))
      ASSERT_EQ(v, 0.0);
  for (int run = 0; run < 3; ++run) { // the third replays a graph
    for (size_t a = 0; a < ex.argumentCount(); ++a) {
      size_t buffer = size_t(ex.program().arguments[a]);
      DType t = ex.program().buffers[buffer].dtype;
      std::vector<double> v =
          randomValues(3000, 10 * run + a, t == DType::I1 ? 0 : -100, t == DType::I1 ? 1 : 100);
      EINC_ASSERT_OK(ex.write(buffer, v.data(), v.size()));
    }
    EINC_ASSERT_OK(ex.run());
    for (size_t r = 0; r < ex.resultCount(); ++r)
      EXPECT_EQ(valuesOf(ex, size_t(ex.program().results[r])),
                valuesOf(ex, size_t(ex.program().arguments[r])))
          << "result " << r << " run " << run;
  }
  EXPECT_EQ(device->graphsRecorded(), 1);
  EINC_ASSERT_OK(ex.zeroBuffer(size_t(ex.program().arguments[0])));
  for (double v : valuesOf(ex, size_t(ex.program().arguments[0])))
    ASSERT_EQ(v, 0.0);
}

/// One Matmul step C = op(A)·op(B) as the shorthand plan {batch, M, N, K,
/// transA, transB, lda, ldb, ldc, strideA, strideB, strideC} and loops.
Program gemmProgram(DType in, DType out, std::vector<int64_t> plan, std::vector<int64_t> loops,
                    int64_t sizeA, int64_t sizeB, int64_t sizeC) {
  ProgramBuilder b;
  int32_t a = b.arg(in, {sizeA});
  int32_t w = b.arg(in, {sizeB});
  b.result(b.step(StepKind::Matmul, {a, w}, out, {sizeC}, {plan, loops}));
  return b.p;
}

struct GemmCase {
  std::vector<int64_t> plan, loops;
  int64_t a, b, c;
};
const GemmCase kGemmCases[] = {
    {{1, 64, 48, 32, 0, 0, 32, 48, 48}, {}, 64 * 32, 32 * 48, 64 * 48},
    {{1, 64, 48, 32, 1, 0, 64, 48, 48}, {}, 64 * 32, 32 * 48, 64 * 48},
    {{1, 64, 48, 32, 0, 1, 32, 32, 48}, {}, 64 * 32, 32 * 48, 64 * 48},
    {{1, 64, 48, 32, 1, 1, 64, 32, 48}, {}, 64 * 32, 32 * 48, 64 * 48},
    // A batch with B shared, and an outer loop the batch cannot absorb
    // (C dense, as the Program format asks with outer loops).
    {{4, 16, 24, 8, 0, 0, 8, 24, 24, 128, 0, 384}, {}, 4 * 128, 8 * 24, 4 * 384},
    {{2, 8, 8, 16, 0, 1, 16, 16, 8, 128, 128, 64}, {3, 300, 300, 128}, 3 * 300, 3 * 300, 3 * 128},
};

TEST_F(CudaDeviceTest, GemmsMatchTheCpuDevice) {
  for (auto [in, out] : {std::pair{DType::F32, DType::F32}, std::pair{DType::BF16, DType::F32},
                         std::pair{DType::BF16, DType::BF16}})
    for (const GemmCase &c : kGemmCases) {
      Program p = gemmProgram(in, out, c.plan, c.loops, c.a, c.b, c.c);
      ASSERT_EQ(p.validate().message(), "");
      EINC_ASSERT_OK_AND_ASSIGN(auto gpu, Executor::create(p, device));
      EINC_ASSERT_OK_AND_ASSIGN(auto cpu, Executor::create(p, std::make_shared<CpuDevice>()));
      for (int run = 0; run < 3; ++run) {
        setInputs(gpu, 100 + run);
        setInputs(cpu, 100 + run);
        EINC_ASSERT_OK(gpu.run());
        EINC_ASSERT_OK(cpu.run());
        // Small integers: every product and f32 sum exact, so any order of
        // summation agrees (a bf16 result rounds the same value once).
        EXPECT_EQ(valuesOf(gpu, size_t(p.results[0])), valuesOf(cpu, size_t(p.results[0])))
            << dtypeName(in) << " -> " << dtypeName(out) << " run " << run;
      }
    }
}

/// The test kernels, their images read from beside this executable (false
/// when one is missing: the kernels are listed all the same).
enum class Images { All, PtxOnly, SourceOnly };

bool readKernels(CudaKernelBundle &bundle, Images which, std::string &why) {
  CudaKernelInfo scale;
  scale.entry = "k0_scale";
  scale.kind = CudaLaunchKind::Elements;
  scale.work = 10000;
  scale.params = 2;
  CudaKernelInfo rowsum;
  rowsum.entry = "k1_rowsum";
  rowsum.kind = CudaLaunchKind::WarpRows;
  rowsum.work = 300;
  rowsum.rowLength = 100;
  rowsum.params = 2;
  bundle.kernels = {scale, rowsum};
  char self[4096] = {0};
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  std::string dir = n > 0 ? std::string(self, size_t(n)) : "";
  dir = dir.substr(0, dir.rfind('/') + 1);
  if (which == Images::SourceOnly) { // NVRTC compiles it on the device
    std::ifstream in(dir + "cuda-test-kernels.cu");
    if (!in) {
      why = "no " + dir + "cuda-test-kernels.cu";
      return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    bundle.source = ss.str();
    return true;
  }
  const std::pair<const char *, bool> images[] = {
      {"sm_80", false}, {"sm_90", false}, {"compute_80", true}};
  for (auto [arch, ptx] : images) {
    if (which == Images::PtxOnly && !ptx)
      continue;
    std::string file = dir + "cuda-test-kernels." + arch + (ptx ? ".ptx" : ".cubin");
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      why = "no " + file + " (nvcc builds it)";
      return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    bundle.images.push_back({arch, ptx, ss.str()});
  }
  return true;
}

/// y = 2x + 1, z = row sums of y (300 x 100), then a GEMM and a copy.
Program kernelProgram() {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {300, 100});
  int32_t y = b.step(StepKind::Kernel, {x}, DType::F32, {300, 100}, {}, 0);
  int32_t z = b.step(StepKind::Kernel, {y}, DType::F32, {300}, {}, 1);
  int32_t w = b.arg(DType::F32, {300, 4});
  int32_t g = b.step(StepKind::Matmul, {z, w}, DType::F32, {4}, {{1, 1, 4, 300, 0, 0, 300, 4, 4}});
  b.result(b.step(StepKind::Copy, {g}, DType::F32, {4}));
  b.result(z);
  return b.p;
}

void expectKernelResults(Executor &ex) {
  const Program &p = ex.program();
  std::vector<double> x = valuesOf(ex, size_t(p.arguments[0]));
  std::vector<double> w = valuesOf(ex, size_t(p.arguments[1]));
  std::vector<double> z = valuesOf(ex, size_t(p.results[1]));
  std::vector<double> g = valuesOf(ex, size_t(p.results[0]));
  ASSERT_EQ(z.size(), 300u);
  for (size_t r = 0; r < 300; ++r) {
    double sum = 0;
    for (size_t j = 0; j < 100; ++j)
      sum += 2 * x[r * 100 + j] + 1;
    ASSERT_EQ(z[r], sum) << "row " << r;
  }
  for (size_t c = 0; c < 4; ++c) {
    double sum = 0;
    for (size_t r = 0; r < 300; ++r)
      sum += z[r] * w[r * 4 + c];
    EXPECT_EQ(g[c], sum) << "column " << c;
  }
}

TEST_F(CudaDeviceTest, KernelsFromCubinAndPtxReplayedAsGraphs) {
  for (Images which : {Images::All, Images::PtxOnly, Images::SourceOnly}) {
    SCOPED_TRACE(which == Images::All       ? "cubin"
                 : which == Images::PtxOnly ? "PTX"
                                            : "source, through NVRTC");
    auto bundle = std::make_shared<CudaKernelBundle>();
    std::string error;
    if (!readKernels(*bundle, which, error))
      GTEST_SKIP() << error;
    EINC_ASSERT_OK_AND_ASSIGN(auto dev, createCudaDevice({})); // a device per image kind
    dev->setKernels(bundle);
    EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(kernelProgram(), dev));
    for (int run = 0; run < 4; ++run) {
      setInputs(ex, 7 + run);
      EINC_ASSERT_OK(ex.run());
      expectKernelResults(ex);
    }
    EXPECT_EQ(dev->graphsRecorded(), 1);
    // Profiled runs are issued step by step and give the same results.
    ex.setProfiling(true);
    setInputs(ex, 99);
    EINC_ASSERT_OK(ex.run());
    expectKernelResults(ex);
    EXPECT_EQ(ex.profiledRuns(), 1);
  }
}

// The debug switches (EINC_CUDA_GRAPHS=0, EINC_CUDA_SYNC=1): the same
// results, no graph recorded, and describe() says so.
TEST_F(CudaDeviceTest, DebugSwitchesRunStepByStep) {
  auto bundle = std::make_shared<CudaKernelBundle>();
  std::string error;
  if (!readKernels(*bundle, Images::All, error))
    GTEST_SKIP() << error;
  for (const char *variable : {"EINC_CUDA_GRAPHS", "EINC_CUDA_SYNC"}) {
    SCOPED_TRACE(variable);
    setenv(variable, variable == std::string("EINC_CUDA_GRAPHS") ? "0" : "1", 1);
    Expected<std::shared_ptr<CudaDevice>> opened = createCudaDevice({});
    unsetenv(variable);
    EINC_ASSERT_OK_AND_ASSIGN(auto dev, std::move(opened));
    EXPECT_NE(dev->describe().find(std::string(variable) + "="), std::string::npos)
        << dev->describe();
    dev->setKernels(bundle);
    EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(kernelProgram(), dev));
    for (int run = 0; run < 3; ++run) {
      setInputs(ex, 17 + run);
      EINC_ASSERT_OK(ex.run());
      expectKernelResults(ex);
    }
    EXPECT_EQ(dev->graphsRecorded(), 0);
  }
}

// The staging buffer is allocated at open, against the host's memory.
TEST_F(CudaDeviceTest, StagingLargerThanTheHostIsRefusedAtOpen) {
  CudaDeviceOptions options;
  options.stagingBytes = int64_t(1) << 60;
  Status refused = createCudaDevice(options).takeStatus();
  EXPECT_EQ(refused.code(), StatusCode::OutOfMemory) << refused.message();
  EXPECT_EQ(
      refused.message().rfind("the cuda device's pinned staging buffer (host memory) needs ", 0),
      0u)
      << refused.message();
}

TEST_F(CudaDeviceTest, NoImageForTheDeviceIsAnError) {
  auto bundle = std::make_shared<CudaKernelBundle>();
  std::string error;
  if (!readKernels(*bundle, Images::All, error))
    GTEST_SKIP() << error;
  bundle->images = {{"sm_10", false, "not a cubin"}};
  device->setKernels(bundle);
  EINC_EXPECT_STATUS(Executor::create(kernelProgram(), device), StatusCode::Unavailable,
                     "the kernels were compiled for sm_10");
}

TEST_F(CudaDeviceTest, TooLargeForTheGpu) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {int64_t(1) << 40}); // 4 TiB
  b.result(b.step(StepKind::Copy, {x}, DType::F32, {int64_t(1) << 40}));
  EINC_EXPECT_STATUS(Executor::create(b.p, device), StatusCode::OutOfMemory,
                     "are available (free memory of the cuda device");
}

TEST_F(CudaDeviceTest, ReferenceStepsOtherThanCopyAreRefused) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {8});
  b.result(b.step(StepKind::Exp, {x}, DType::F32, {8}));
  EINC_EXPECT_STATUS(Executor::create(b.p, device), StatusCode::Invalid,
                     "not on the cuda device yet");
}

// The Programs above are valid and, but for the GPU, runnable: each GEMM
// case runs on the CPU device, and the cuda device's check() accepts them
// with the test kernels (checked here, without a GPU).
TEST(CudaDeviceTestPrograms, AreValid) {
  std::string error;
  for (DType in : {DType::F32, DType::BF16})
    for (const GemmCase &c : kGemmCases) {
      Program p = gemmProgram(in, DType::F32, c.plan, c.loops, c.a, c.b, c.c);
      ASSERT_EQ(p.validate().message(), "");
      EXPECT_EQ(cudaProgramProblem(p, nullptr, {}).message(), "");
      EINC_ASSERT_OK_AND_ASSIGN(auto cpu, Executor::create(p, std::make_shared<CpuDevice>()));
      setInputs(cpu, 1);
      EINC_ASSERT_OK(cpu.run());
    }
  CudaKernelBundle bundle;
  ASSERT_TRUE(readKernels(bundle, Images::All, error) || error.find("no ") == 0) << error;
  Program k = kernelProgram();
  ASSERT_EQ(k.validate().message(), "");
  EXPECT_EQ(cudaProgramProblem(k, &bundle, {}).message(), "");
  // The source the NVRTC case hands the device compiles for sm_90 (where
  // this machine has NVRTC; the device compiles it the same way).
  CudaKernelBundle source;
  if (!readKernels(source, Images::SourceOnly, error))
    GTEST_SKIP() << error;
  Expected<const Nvrtc *> loaded = Nvrtc::load();
  if (!loaded.ok())
    GTEST_SKIP() << loaded.status().message();
  const Nvrtc *nvrtc = *loaded;
  NvrtcOptions options;
  options.arch = "sm_90";
  options.cache = false;
  NvrtcOutput out;
  EINC_ASSERT_OK_AND_ASSIGN(out, nvrtc->compile(source.source, options));
  EXPECT_FALSE(out.image.bytes.empty());
  EXPECT_FALSE(out.image.ptx);
}

} // namespace
} // namespace einrt
