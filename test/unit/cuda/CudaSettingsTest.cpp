//===- CudaSettingsTest.cpp - The cuda device's switches and staging ------===//
//
// Without a GPU: EINC_CUDA_GRAPHS and EINC_CUDA_SYNC read into the device's
// options (graphs off, a synchronise after every step, what describe()
// says), bad values refused by name, also by createCudaDevice before it
// looks for a driver; the pinned staging buffer checked against the host's
// memory.
//
//===----------------------------------------------------------------------===//
#include "runtime/base/StatusOut.h"
#include "runtime/cuda/CudaDevice.h"

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

CudaDeviceOptions switches(std::string &error, bool &ok) {
  CudaDeviceOptions o;
  ok = statusOut(readCudaDebugSwitches(o), error);
  return o;
}

TEST(CudaSwitches, DefaultsCaptureGraphsWithoutSyncing) {
  unsetenv("EINC_CUDA_GRAPHS");
  unsetenv("EINC_CUDA_SYNC");
  std::string error;
  bool ok = false;
  CudaDeviceOptions o = switches(error, ok);
  ASSERT_TRUE(ok) << error;
  EXPECT_TRUE(o.graphs);
  EXPECT_FALSE(o.syncEveryStep);
  EXPECT_TRUE(o.capturesGraphs());
  EXPECT_EQ(cudaSwitchesText(o), "");
  Env empty("EINC_CUDA_GRAPHS", ""); // empty: as unset
  o = switches(error, ok);
  ASSERT_TRUE(ok) << error;
  EXPECT_TRUE(o.capturesGraphs());
}

TEST(CudaSwitches, GraphsOffRunsPlainLaunches) {
  Env graphs("EINC_CUDA_GRAPHS", "0");
  std::string error;
  bool ok = false;
  CudaDeviceOptions o = switches(error, ok);
  ASSERT_TRUE(ok) << error;
  EXPECT_FALSE(o.graphs);
  EXPECT_FALSE(o.capturesGraphs());
  EXPECT_FALSE(o.syncEveryStep);
  EXPECT_EQ(cudaSwitchesText(o), "; graphs off (EINC_CUDA_GRAPHS=0)");
}

TEST(CudaSwitches, SyncAfterEveryStepTurnsGraphsOff) {
  Env sync("EINC_CUDA_SYNC", "1");
  std::string error;
  bool ok = false;
  CudaDeviceOptions o = switches(error, ok);
  ASSERT_TRUE(ok) << error;
  EXPECT_TRUE(o.syncEveryStep);
  EXPECT_TRUE(o.graphs); // asked for, but a capture cannot synchronise
  EXPECT_FALSE(o.capturesGraphs());
  EXPECT_EQ(cudaSwitchesText(o), "; synchronised after every step (EINC_CUDA_SYNC=1)");
  Env graphs("EINC_CUDA_GRAPHS", "1");
  Env noSync("EINC_CUDA_SYNC", "0");
  o = switches(error, ok);
  ASSERT_TRUE(ok) << error;
  EXPECT_TRUE(o.capturesGraphs());
}

TEST(CudaSwitches, BadValuesAreNamed) {
  std::string error;
  bool ok = true;
  {
    Env graphs("EINC_CUDA_GRAPHS", "maybe");
    switches(error, ok);
    EXPECT_FALSE(ok);
    EXPECT_EQ(error, "EINC_CUDA_GRAPHS=maybe: expected 0 (run every step by plain launches) or 1 "
                     "(capture runs as CUDA graphs and replay them, the default)");
    // The device reads them before anything else: said without a GPU.
    error.clear();
    EXPECT_FALSE(statusOut(createCudaDevice({}), error));
    EXPECT_EQ(error.rfind("EINC_CUDA_GRAPHS=maybe: expected 0", 0), 0u) << error;
  }
  Env sync("EINC_CUDA_SYNC", "yes");
  switches(error, ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(error.rfind("EINC_CUDA_SYNC=yes: expected 0 (the default) or 1 (synchronise", 0), 0u)
      << error;
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
