//===- BackendRegistryTest.cpp - The backends and what they say ------------===//
#include "runtime/core/Backend.h"
#include "runtime/core/Device.h"
#include "runtime/core/Executor.h"
#include "test/unit/runtime/ProgramBuilder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <set>

using namespace einrt;

TEST(BackendRegistry, NamesAreUniqueAndFound) {
  std::set<std::string> names;
  for (const Backend *b : backends()) {
    EXPECT_TRUE(names.insert(b->name()).second) << b->name();
    EXPECT_EQ(findBackend(b->name()), b);
    EXPECT_STRNE(b->summary(), "");
    // Every backend runs Programs of a lowering some backend names, and a
    // kernel section belongs to one backend.
    EXPECT_STRNE(b->programLowering(), "");
    if (*b->kernelSection())
      EXPECT_EQ(backendOfSection(b->kernelSection()), b);
  }
  EXPECT_EQ(&defaultBackend(), backends().front());
  EXPECT_EQ(findBackend("tpu"), nullptr);
  EXPECT_EQ(backendOfSection(""), nullptr);
  EXPECT_EQ(unknownBackend("tpu"), "unknown backend 'tpu' (" + backendNames() + ")");
  EXPECT_EQ(backendNames(), "cpu, reference, cuda");
}

TEST(BackendRegistry, HostBackendsOpenAndRunAProgram) {
  // The default and the reference backend open here, take their kernels
  // (none for these steps) and run a Program; their memory is this
  // machine's, so a plan larger than any machine is refused, not aborted.
  test::ProgramBuilder pb;
  int32_t x = pb.arg(DType::F32, {4});
  int32_t y = pb.step(StepKind::Exp, {x}, DType::F32, {4});
  pb.result(y);
  const Program &p = pb.p;
  ASSERT_TRUE(p.validate().ok()) << p.validate().message();
  for (const char *name : {"cpu", "reference"}) {
    const Backend *b = findBackend(name);
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(b->hostMemory()) << name;
    BackendOpen open;
    open.threads = 2;
    Expected<std::shared_ptr<Device>> device = b->open(open);
    ASSERT_TRUE(device.ok()) << device.status().message();
    EXPECT_EQ((*device)->name(), name);
    ASSERT_TRUE(b->attachKernels(**device, {}).ok());
    EXPECT_EQ(b->threads(**device), b->hostKernels() ? 2 : 1) << name;
    EXPECT_NE(b->memoryShortfall(**device, int64_t(1) << 62, "the plan"), "") << name;
    EXPECT_EQ(b->memoryShortfall(**device, 1024, "the plan"), "") << name;
    Expected<Executor> ex = Executor::create(p, *device);
    ASSERT_TRUE(ex.ok()) << ex.status().message();
    std::vector<float> xs = {0, 1, 2, 3};
    Status set = ex->setArgument(0, xs.data(), xs.size());
    ASSERT_TRUE(set.ok()) << set.message();
    Status ran = ex->run();
    ASSERT_TRUE(ran.ok()) << ran.message();
    Expected<std::vector<double>> read = ex->read(size_t(y));
    ASSERT_TRUE(read.ok()) << read.status().message();
    const std::vector<double> &ys = *read;
    ASSERT_EQ(ys.size(), 4u);
    EXPECT_NEAR(ys[2], std::exp(2.0), 1e-5) << name;
  }
  // Only the cpu backend's devices hold a host kernel table.
  EXPECT_TRUE(findBackend("cpu")->hostKernels());
  EXPECT_FALSE(findBackend("reference")->hostKernels());
  EXPECT_TRUE(findBackend("reference")->runsF64());
}

TEST(BackendRegistry, CudaWithoutADriverIsUnavailable) {
  const Backend *cuda = findBackend("cuda");
  ASSERT_NE(cuda, nullptr);
  EXPECT_FALSE(cuda->hostMemory());
  EXPECT_TRUE(cuda->deviceCollectives());
  EXPECT_STREQ(cuda->kernelSection(), "cuda");
  EXPECT_STREQ(cuda->programLowering(), findBackend("cpu")->programLowering());
  setenv("EINC_CUDA_DRIVER", "/nonexistent/libcuda-registry.so.1", 1);
  Expected<std::shared_ptr<Device>> device = cuda->open({});
  unsetenv("EINC_CUDA_DRIVER");
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), StatusCode::Unavailable);
  // "no CUDA driver (.../libcuda-registry.so.1 not found ...)", or, in an
  // einc built without the CUDA headers, that it has no cuda device.
  EXPECT_NE(device.status().message(), "");
  // Which device profile describes what ran: a word of the GPU's name.
  EXPECT_TRUE(cuda->profileDescribes("h200", "NVIDIA H200 (sm_90, 132 SMs)"));
  EXPECT_FALSE(cuda->profileDescribes("h100", "NVIDIA H200 (sm_90, 132 SMs)"));
  EXPECT_FALSE(cuda->profileDescribes("cpu", "NVIDIA H200"));
  EXPECT_TRUE(findBackend("cpu")->profileDescribes("cpu", ""));
}
