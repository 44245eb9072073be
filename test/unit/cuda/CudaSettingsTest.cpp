//===- CudaSettingsTest.cpp - The cuda device's switches and staging ------===//
//
// Without a GPU: EINC_CUDA_GRAPHS and EINC_CUDA_SYNC read into the device's
// options (graphs off, a synchronise after every step, what describe()
// says), bad values refused by name, also by createCudaDevice before it
// looks for a driver; the pinned staging buffer checked against the host's
// memory.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaDevice.h"
#include "test/unit/StatusTesting.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace einrt {
namespace {

/// An environment variable set for one scope (unset after).
struct Env {
  const char *name;
  Env(const char *name, const char *value) : name(name) { setenv(name, value, 1); }
  ~Env() { unsetenv(name); }
};

Expected<CudaDeviceOptions> switches() {
  CudaDeviceOptions o;
  EINRT_TRY(readCudaDebugSwitches(o));
  return o;
}

TEST(CudaSwitches, DefaultsCaptureGraphsWithoutSyncing) {
  unsetenv("EINC_CUDA_GRAPHS");
  unsetenv("EINC_CUDA_SYNC");
  EINC_ASSERT_OK_AND_ASSIGN(CudaDeviceOptions o, switches());
  EXPECT_TRUE(o.graphs);
  EXPECT_FALSE(o.syncEveryStep);
  EXPECT_TRUE(o.capturesGraphs());
  EXPECT_EQ(cudaSwitchesText(o), "");
  Env empty("EINC_CUDA_GRAPHS", ""); // empty: as unset
  EINC_ASSERT_OK_AND_ASSIGN(o, switches());
  EXPECT_TRUE(o.capturesGraphs());
}

TEST(CudaSwitches, GraphsOffRunsPlainLaunches) {
  Env graphs("EINC_CUDA_GRAPHS", "0");
  EINC_ASSERT_OK_AND_ASSIGN(CudaDeviceOptions o, switches());
  EXPECT_FALSE(o.graphs);
  EXPECT_FALSE(o.capturesGraphs());
  EXPECT_FALSE(o.syncEveryStep);
  EXPECT_EQ(cudaSwitchesText(o), "; graphs off (EINC_CUDA_GRAPHS=0)");
}

TEST(CudaSwitches, SyncAfterEveryStepTurnsGraphsOff) {
  Env sync("EINC_CUDA_SYNC", "1");
  EINC_ASSERT_OK_AND_ASSIGN(CudaDeviceOptions o, switches());
  EXPECT_TRUE(o.syncEveryStep);
  EXPECT_TRUE(o.graphs); // asked for, but a capture cannot synchronise
  EXPECT_FALSE(o.capturesGraphs());
  EXPECT_EQ(cudaSwitchesText(o), "; synchronised after every step (EINC_CUDA_SYNC=1)");
  Env graphs("EINC_CUDA_GRAPHS", "1");
  Env noSync("EINC_CUDA_SYNC", "0");
  EINC_ASSERT_OK_AND_ASSIGN(o, switches());
  EXPECT_TRUE(o.capturesGraphs());
}

TEST(CudaSwitches, BadValuesAreNamed) {
  {
    Env graphs("EINC_CUDA_GRAPHS", "maybe");
    EINC_EXPECT_STATUS_EQ(switches(), StatusCode::Invalid,
                          "EINC_CUDA_GRAPHS=maybe: expected 0 (run every step by plain launches) "
                          "or 1 (capture runs as CUDA graphs and replay them, the default)");
    // The device reads them before anything else: said without a GPU.
    Status refused = createCudaDevice({}).takeStatus();
    EXPECT_EQ(refused.code(), StatusCode::Invalid);
    EXPECT_EQ(refused.message().rfind("EINC_CUDA_GRAPHS=maybe: expected 0", 0), 0u)
        << refused.message();
  }
  Env sync("EINC_CUDA_SYNC", "yes");
  Status bad = switches().takeStatus();
  EXPECT_EQ(bad.code(), StatusCode::Invalid);
  EXPECT_EQ(
      bad.message().rfind("EINC_CUDA_SYNC=yes: expected 0 (the default) or 1 (synchronise", 0), 0u)
      << bad.message();
}

TEST(CudaStaging, CheckedAgainstTheHostsMemory) {
  // The default fits any machine that runs the tests; 2^60 bytes no host
  // has, and the message names the host's bound, not the GPU's memory.
  EXPECT_EQ(cudaStagingProblem(CudaDeviceOptions{}.stagingBytes).message(), "");
  std::string problem = cudaStagingProblem(int64_t(1) << 60).message();
  EXPECT_EQ(
      problem.rfind("the cuda device's pinned staging buffer (host memory) needs 1073741824.00 "
                    "GiB (1152921504606846976 bytes) but only ",
                    0),
      0u)
      << problem;
  EXPECT_NE(problem.find(" are available ("), std::string::npos) << problem;
  EXPECT_EQ(problem.find("free memory of the cuda device"), std::string::npos) << problem;
}

} // namespace
} // namespace einrt
