//===- MemoryTest.cpp - Available memory and the executor's check ---------===//
#include "runtime/base/Memory.h"
#include "runtime/core/Executor.h"
#include "test/unit/StatusTesting.h"

#include "ProgramBuilder.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sys/resource.h>

using namespace einrt;
using einrt::test::ProgramBuilder;

namespace {

/// x: f32[n] -> exp(x): n floats of input, n of result.
Program bigProgram(int64_t n) {
  ProgramBuilder b;
  b.p.name = "big";
  int32_t x = b.arg(DType::F32, {n}, "x");
  int32_t e = b.step(StepKind::Exp, {x}, DType::F32, {n});
  b.result(e, "y");
  return b.p;
}

TEST(Memory, FormatBytes) {
  EXPECT_EQ(formatBytes(1234), "1234 bytes");
  EXPECT_EQ(formatBytes(int64_t(3) << 29), "1.50 GiB (1610612736 bytes)");
  EXPECT_EQ(formatBytes(int64_t(5) << 20), "5.0 MiB (5242880 bytes)");
}

TEST(Memory, PlannedBytesAreWhatCreateAllocates) {
  Program p = bigProgram(1000);
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(p, Precision::F32));
  EXPECT_EQ(Executor::plannedBytes(p, ex.device()), ex.arenaBytes() + ex.residentBytes());
  // x and y resident, each at a 64-byte-aligned place: 2 x 4032.
  EXPECT_EQ(Executor::plannedBytes(p, HostDevice(Precision::F32)), 8064);
  EXPECT_EQ(Executor::plannedBytes(p, HostDevice(Precision::F64)), 16000);
}

// Under an address-space limit (ulimit -v) a program larger than what is
// left is refused with both numbers, before allocating: no std::bad_alloc
// (which aborts: the runtime is built without exceptions). In a child
// process, so the limit stays there.
TEST(Memory, ExecutorRefusesAProgramLargerThanTheAddressSpaceLimit) {
  EXPECT_EXIT(
      {
        MemoryAvailable before = availableMemory();
        struct rlimit rl;
        getrlimit(RLIMIT_AS, &rl);
        // 256 MiB more than the process uses now.
        std::ifstream status("/proc/self/status");
        int64_t vmKb = 0;
        for (std::string l; std::getline(status, l);)
          if (l.rfind("VmSize:", 0) == 0)
            vmKb = std::atoll(l.c_str() + 7);
        rl.rlim_cur = rlim_t(vmKb * 1024 + (int64_t(256) << 20));
        if (setrlimit(RLIMIT_AS, &rl) != 0)
          std::exit(3);
        MemoryAvailable m = availableMemory();
        if (!(m.bytes <= (int64_t(256) << 20) && m.bytes < before.bytes &&
              m.limitedBy.find("ulimit -v") != std::string::npos))
          std::exit(4);
        // 1 G floats in and out: 8 GiB.
        Status big = Executor::create(bigProgram(int64_t(1) << 30), Precision::F32).takeStatus();
        const std::string &error = big.message();
        if (big.code() != StatusCode::OutOfMemory ||
            error.find("program 'big' (arena and buffers) needs 8.00 "
                       "GiB (8589934592 bytes) but only ") == std::string::npos ||
            error.find("the address-space limit (ulimit -v)") == std::string::npos)
          std::exit(5);
        // A small one still fits.
        if (!Executor::create(bigProgram(1000), Precision::F32).ok())
          std::exit(6);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

} // namespace
