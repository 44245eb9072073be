//===- NcclTest.cpp - NCCL through dlopen, and the sum on the GPU ---------===//
//
// Without a GPU: the values runtime/dist/NcclAbi.h assumes against the toolkit's
// nccl.h, finding the library (and the errors for a missing or wrong one),
// version text, and openNccl on a device that is no GPU: a message
// ("ncclCommInitRank failed ... unhandled cuda error"), not a crash. On a GPU (skipped here, with
// the reason): one rank's NCCL communicator on the cuda device's stream, the ordered add and the
// whole DeviceOrderedSum against a left-to-right host sum, bit for bit.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaDevice.h"
#include "runtime/dist/DeviceOrderedSum.h"
#include "runtime/dist/NcclAbi.h"
#include "runtime/dist/NcclCollectives.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#if defined(EINC_HAVE_CUDA) && __has_include(<nccl.h>)
#include <nccl.h>
#define EINC_TEST_HAVE_NCCL_H 1
#endif

namespace einrt {
namespace {

TEST(NcclAbi, MatchesTheToolkitHeader) {
#ifndef EINC_TEST_HAVE_NCCL_H
  GTEST_SKIP() << "no nccl.h in this build";
#else
  EXPECT_EQ(nccl_abi::kSuccess, int(ncclSuccess));
  EXPECT_EQ(nccl_abi::kInProgress, int(ncclInProgress));
  EXPECT_EQ(nccl_abi::kUint8, int(ncclUint8));
  EXPECT_EQ(nccl_abi::kFloat32, int(ncclFloat32));
  EXPECT_EQ(nccl_abi::kSum, int(ncclSum));
  EXPECT_EQ(nccl_abi::kUniqueIdBytes, NCCL_UNIQUE_ID_BYTES);
  // The enums travel as ints, handles and streams as pointers, the id by
  // value with the header's layout.
  EXPECT_EQ(sizeof(ncclResult_t), sizeof(int));
  EXPECT_EQ(sizeof(ncclDataType_t), sizeof(int));
  EXPECT_EQ(sizeof(ncclRedOp_t), sizeof(int));
  EXPECT_EQ(sizeof(ncclComm_t), sizeof(nccl_abi::Comm));
  EXPECT_EQ(sizeof(cudaStream_t), sizeof(nccl_abi::Stream));
  EXPECT_EQ(sizeof(ncclUniqueId), sizeof(nccl_abi::UniqueId));
  EXPECT_EQ(alignof(ncclUniqueId), alignof(nccl_abi::UniqueId));
  EXPECT_GE(NCCL_VERSION_CODE, nccl_abi::kOldestVersion);
#endif
}

TEST(Nccl, VersionText) {
  EXPECT_EQ(ncclVersionText(22809), "2.28.9");
  EXPECT_EQ(ncclVersionText(21300), "2.13.0");
  EXPECT_EQ(ncclVersionText(2708), "2.7.8"); // the code before 2.9
}

/// EINC_NCCL_LIBRARY set for one test.
struct LibraryOverride {
  explicit LibraryOverride(const char *file) { setenv("EINC_NCCL_LIBRARY", file, 1); }
  ~LibraryOverride() { unsetenv("EINC_NCCL_LIBRARY"); }
};

TEST(Nccl, FindsTheToolkitsLibraryWithoutAGpu) {
#ifndef EINC_TEST_HAVE_NCCL_H
  GTEST_SKIP() << "no NCCL in this build";
#else
  Expected<NcclLibraryInfo> info = findNccl();
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_NE(info->file.find("libnccl.so.2"), std::string::npos) << info->file;
  EXPECT_GE(info->version, nccl_abi::kOldestVersion);
#endif
}

TEST(Nccl, AMissingLibraryIsAClearError) {
  LibraryOverride only("/nonexistent/libnccl.so.2");
  Expected<NcclLibraryInfo> info = findNccl();
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::Unavailable);
  const std::string &error = info.status().message();
  EXPECT_EQ(error.rfind("einc: NCCL not found (libnccl.so.2): tried ", 0), 0u) << error;
  EXPECT_NE(error.find("/nonexistent/libnccl.so.2"), std::string::npos) << error;
}

TEST(Nccl, ALibraryThatIsNotNcclIsRefused) {
  LibraryOverride only("libm.so.6");
  Expected<NcclLibraryInfo> info = findNccl();
  ASSERT_FALSE(info.ok());
  const std::string &error = info.status().message();
  EXPECT_NE(error.find("libm.so.6 is not an NCCL of 2.13.0 or later"), std::string::npos) << error;
}

/// A cuda device that is not one: what openNccl needs of it (a stream, its
/// context made current), on a machine without a GPU.
class NoGpu final : public CudaDevice {
public:
  void setKernels(std::shared_ptr<const CudaKernelBundle>) override {}
  std::string describe() const override { return "no GPU"; }
  CudaDeviceProperties properties() const override { return {}; }
  int64_t graphsRecorded() const override { return 0; }
  std::string memoryShortfall(int64_t, const std::string &) override { return ""; }
  void *nativeStream() const override { return nullptr; }
  Status makeCurrent() override { return Status::success(); }
  int ordinal() const override { return 0; }
  std::string name() const override { return "cuda"; }
  StorageType storageOf(DType t) const override { return cudaStorageOf(t); }
  bool runs(StepRunner) const override { return false; }
  Expected<DeviceMemory> allocate(int64_t, const std::string &) override {
    return Status(StatusCode::Unavailable, "no GPU");
  }
  void release(DeviceMemory &) override {}
  Status upload(void *, const void *, int64_t) override { return noGpu(); }
  Status download(void *, const void *, int64_t) override { return noGpu(); }
  Status copy(void *, const void *, int64_t) override { return noGpu(); }
  Status zero(void *, int64_t) override { return noGpu(); }
  Status synchronize() override { return Status::success(); }

private:
  static Status noGpu() { return Status(StatusCode::Unavailable, "no GPU"); }
};

TEST(Nccl, OpeningWithoutAGpuIsAnErrorNotACrash) {
  {
    LibraryOverride only("/nonexistent/libnccl.so.2");
    auto opened = openNccl(std::make_shared<NoGpu>(), nullptr);
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.status().code(), StatusCode::Unavailable);
    const std::string &error = opened.status().message();
    EXPECT_EQ(error.rfind("einc: NCCL not found (libnccl.so.2): tried ", 0), 0u) << error;
  }
#ifdef EINC_TEST_HAVE_NCCL_H
  // The toolkit's NCCL, but no GPU for its communicator.
  auto opened = openNccl(std::make_shared<NoGpu>(), nullptr);
  ASSERT_FALSE(opened.ok());
  const std::string &error = opened.status().message();
  // (ncclGetUniqueId needs a network interface, loopback will do; where
  // there is none, that is the message.)
  EXPECT_TRUE(error.find("ncclCommInitRank failed on rank 0 (GPU 0): ") != std::string::npos ||
              error.rfind("ncclGetUniqueId failed: ", 0) == 0)
      << error;
#endif
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(NcclOnGpu, OneRankSumsInOneProcessesOrder) {
  auto device = createCudaDevice({});
  if (!device.ok())
    GTEST_SKIP() << "no cuda device here: " << device.status().message();
  std::shared_ptr<CudaDevice> gpu = device.take();
  auto opened = openNccl(gpu, nullptr);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  std::unique_ptr<Collectives> nccl = opened.take();
  EXPECT_EQ(nccl->size(), 1);
  const int64_t count = 100003, rounds = 5;
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> mant(-1, 1);
  std::uniform_int_distribution<int> exp(-12, 12);
  std::vector<std::vector<float>> x(rounds, std::vector<float>(count));
  std::vector<float> want(count, 0.0f);
  for (auto &v : x)
    for (int64_t i = 0; i < count; ++i) {
      v[size_t(i)] = std::ldexp(mant(gen), exp(gen));
      want[size_t(i)] = want[size_t(i)] + v[size_t(i)];
    }
  auto created = DeviceOrderedSum::create(*nccl, count);
  ASSERT_TRUE(created.ok()) << created.status().message();
  std::unique_ptr<DeviceOrderedSum> sum = created.take();
  for (int64_t j = 0; j < rounds; ++j) {
    Status uploaded = gpu->upload(sum->contribution(), x[size_t(j)].data(), count * 4);
    ASSERT_TRUE(uploaded.ok()) << uploaded.message();
    Status added = sum->addRound(j);
    ASSERT_TRUE(added.ok()) << added.message();
  }
  Status finished = sum->finish();
  ASSERT_TRUE(finished.ok()) << finished.message();
  std::vector<float> got(count);
  ASSERT_TRUE(gpu->download(got.data(), sum->sum(), count * 4).ok());
  for (int64_t i = 0; i < count; ++i)
    ASSERT_EQ(bits(got[size_t(i)]), bits(want[size_t(i)])) << "element " << i;
  // One rank's all-reduce and broadcast leave the values as they are.
  Status unordered = sum->sumUnordered();
  ASSERT_TRUE(unordered.ok()) << unordered.message();
  ASSERT_TRUE(gpu->download(got.data(), sum->sum(), count * 4).ok());
  for (int64_t i = 0; i < count; ++i)
    ASSERT_EQ(bits(got[size_t(i)]), bits(x[rounds - 1][size_t(i)])) << "element " << i;
}

} // namespace
} // namespace einrt
