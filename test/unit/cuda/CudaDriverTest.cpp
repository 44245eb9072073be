//===- CudaDriverTest.cpp - Loading the driver fails cleanly --------------===//
//
// createCudaDevice where there is no GPU: no driver library (the default
// libcuda.so.1 on a machine without one, and a named file), the toolkit's
// stub driver (every call answers CUDA_ERROR_STUB_LIBRARY), and an einc
// built without the CUDA headers. Each is a message, never a crash; the
// checked-call macro's message names the file, line, call and error.
//
// The stub test runs in its own process (ctest cuda-unit-stub): once the
// stub is loaded, its soname libcuda.so.1 would satisfy the default load.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaDevice.h"
#include "test/unit/StatusTesting.h"

#ifdef EINC_HAVE_CUDA
#include "runtime/cuda/CudaDriver.h"
#endif

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>

namespace einrt {
namespace {

bool startsWith(const std::string &s, const std::string &prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

#ifdef EINC_HAVE_CUDA

TEST(CudaDriver, NoDriverLibrary) {
  // The default: $EINC_CUDA_DRIVER, else libcuda.so.1. Asserted where this
  // machine has no driver (the development and CI machines); on a GPU
  // machine the device opens instead.
  unsetenv("EINC_CUDA_DRIVER");
  void *probe = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (probe)
    dlclose(probe);
  Expected<std::shared_ptr<CudaDevice>> device = createCudaDevice({});
  if (device.ok()) {
    EXPECT_EQ((*device)->name(), "cuda");
    EXPECT_NE((*device)->describe().find("sm_"), std::string::npos) << (*device)->describe();
    GTEST_SKIP() << "this machine has a CUDA device: " << (*device)->describe();
  }
  EXPECT_EQ(device.status().code(), StatusCode::Unavailable);
  const std::string &error = device.status().message();
  EXPECT_TRUE(startsWith(error, "no CUDA driver (libcuda.so.1 not found: ") ||
              startsWith(error, "no CUDA device ("))
      << error;
  if (!probe && startsWith(error, "no CUDA driver")) {
    EXPECT_NE(error.find("libcuda.so.1: cannot open shared object file"), std::string::npos)
        << error;
  }
}

TEST(CudaDriver, NamedLibraryMissing) {
  CudaDeviceOptions options;
  options.driver = "/nonexistent/libcuda.so.1";
  Status named = createCudaDevice(options).takeStatus();
  EXPECT_EQ(named.code(), StatusCode::Unavailable);
  EXPECT_TRUE(startsWith(named.message(), "no CUDA driver (/nonexistent/libcuda.so.1 not found: "))
      << named.message();
  // Through the environment, as einc's lit tests and users name it.
  setenv("EINC_CUDA_DRIVER", "/nonexistent/libcuda-env.so.1", 1);
  Status fromEnvironment = createCudaDevice({}).takeStatus();
  unsetenv("EINC_CUDA_DRIVER");
  EXPECT_EQ(fromEnvironment.code(), StatusCode::Unavailable);
  EXPECT_TRUE(startsWith(fromEnvironment.message(),
                         "no CUDA driver (/nonexistent/libcuda-env.so.1 not found"))
      << fromEnvironment.message();
}

TEST(CudaDriver, NotADriverLibrary) {
  CudaDeviceOptions options;
  options.driver = "libm.so.6";
  Expected<std::shared_ptr<CudaDevice>> device = createCudaDevice(options);
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), StatusCode::Unavailable);
  EXPECT_EQ(device.status().message(),
            "no CUDA driver (libm.so.6 has no cuInit: not a CUDA driver library)");
}

TEST(CudaDriver, CheckedCallsNameFileLineCallAndError) {
  CudaDriver d; // no library: the names come from the fallback table
  EXPECT_TRUE(d.check(CUDA_SUCCESS, "cuInit(0)", __FILE__, __LINE__).ok());
  int line = __LINE__ + 1;
  Status noDevice = d.check(CUDA_ERROR_NO_DEVICE, "cuInit(0)", __FILE__, line);
  EXPECT_EQ(noDevice.message(), "CudaDriverTest.cpp:" + std::to_string(line) +
                                    ": cuInit(0) failed: CUDA_ERROR_NO_DEVICE");
  EXPECT_EQ(noDevice.code(), StatusCode::Unavailable);
  Status unknown = d.check(CUresult(12345), "cuFoo()", "/src/einc/runtime/cuda/CudaDevice.cpp", 7);
  EXPECT_EQ(unknown.message(), "runtime/cuda/CudaDevice.cpp:7: cuFoo() failed: CUresult 12345");
  EXPECT_EQ(unknown.code(), StatusCode::Internal);
  // What the caller acts on: memory the device lacks.
  EXPECT_EQ(d.check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(&p, n)", __FILE__, __LINE__).code(),
            StatusCode::OutOfMemory);
  // EINC_CU checks a call in place: its Status, the call's text in the message.
  CudaDriver withCall;
  withCall.cuCtxSetCurrent = [](CUcontext) { return CUDA_ERROR_NOT_INITIALIZED; };
  Status set = EINC_CU(withCall, cuCtxSetCurrent(nullptr));
  EXPECT_NE(set.message().find(": cuCtxSetCurrent(nullptr) failed: CUDA_ERROR_NOT_INITIALIZED"),
            std::string::npos)
      << set.message();
  EXPECT_EQ(set.code(), StatusCode::Unavailable);
}

TEST(CudaDriverStub, StubLibraryIsNoDevice) {
#ifndef EINC_CUDA_STUB_DRIVER
  GTEST_SKIP() << "the toolkit has no stub driver";
#else
  CudaDeviceOptions options;
  options.driver = EINC_CUDA_STUB_DRIVER;
  EINC_EXPECT_STATUS_EQ(createCudaDevice(options), StatusCode::Unavailable,
                        "no CUDA device (cuInit failed: CUDA_ERROR_STUB_LIBRARY)");
#endif
}

#else // built without the CUDA headers

TEST(CudaDriver, BuiltWithoutCudaHeaders) {
  Status refused = createCudaDevice({}).takeStatus();
  EXPECT_EQ(refused.code(), StatusCode::Unavailable);
  EXPECT_TRUE(startsWith(refused.message(), "this einc was built without CUDA headers"))
      << refused.message();
}

#endif

} // namespace
} // namespace einrt
