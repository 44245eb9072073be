//===- Bf16GemmObjectTest.cpp - The VDPBF16PS kernel is in the object code -===//
//
// The instruction path cannot run on a CPU without AVX-512 BF16, so what
// can be checked on one is checked here, on every machine: the compiled
// object of runtime/cpu/Bf16Gemm.cpp (its path from CMake) disassembled with
// objdump holds vdpbf16ps, and only its tile kernel uses AVX-512 registers
// (the rest of the runtime stays portable); and reaching the kernel where
// it may not run gives an error, not SIGILL: on a CPU without it, and on
// any CPU under EINC_JIT_CPU=x86-64-v3 (the AVX2-only machine of
// scripts/as-avx2), so that this side of the gate runs everywhere.
//
//===----------------------------------------------------------------------===//
#include "Bf16GemmCases.h"
#include "test/unit/StatusTesting.h"

#include "runtime/cpu/Bf16Gemm.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

using namespace einrt;
using einrt::testing::EnvOverride;

namespace {

/// `objdump -d` of the object, or "" when it cannot be run.
std::string disassemble(const std::string &object) {
  std::string command = std::string(EINC_OBJDUMP) + " -d --no-show-raw-insn '" + object + "'";
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe)
    return "";
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe))
    out.append(buf, n);
  return pclose(pipe) == 0 ? out : "";
}

/// Per function (its symbol, as objdump prints it): how many of its
/// instructions name a zmm register, and how many are vdpbf16ps.
struct Use {
  int zmm = 0, dpbf16 = 0;
};
std::map<std::string, Use> usesByFunction(const std::string &text) {
  std::map<std::string, Use> uses;
  std::string current;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos)
      end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    // "0000000000000000 <symbol>:" starts a function.
    size_t open = line.find(" <");
    if (open != std::string::npos && !line.empty() && line.back() == ':' &&
        line.find('\t') == std::string::npos) {
      current = line.substr(open + 2, line.size() - open - 4);
      continue;
    }
    if (line.find("%zmm") != std::string::npos)
      ++uses[current].zmm;
    if (line.find("vdpbf16ps") != std::string::npos)
      ++uses[current].dpbf16;
  }
  return uses;
}

TEST(Bf16GemmObject, HoldsVdpbf16psInTheKernelOnly) {
  const std::string text = disassemble(EINC_BF16GEMM_OBJECT);
  ASSERT_FALSE(text.empty()) << "cannot disassemble " << EINC_BF16GEMM_OBJECT << " with "
                             << EINC_OBJDUMP;
  std::map<std::string, Use> uses = usesByFunction(text);
  int kernels = 0;
  for (const auto &[function, use] : uses) {
    if (use.zmm == 0)
      continue;
    // Only the tile kernel (einrt::(anonymous)::kernelTile) touches zmm.
    EXPECT_NE(function.find("kernelTile"), std::string::npos)
        << function << " uses AVX-512 registers outside the kernel";
    if (function.find("kernelTile") != std::string::npos) {
      ++kernels;
      // 8 rows x 2 columns of accumulators: 16 per pair of k, at least.
      EXPECT_GE(use.dpbf16, 16) << function;
    }
  }
  EXPECT_EQ(kernels, 1);
}

TEST(Bf16GemmObject, TheKernelIsGuarded) {
  // Unforced, the reason is there exactly where the kernel may not run.
  EXPECT_EQ(whyNoAvx512Bf16().empty(), cpuHasAvx512Bf16()) << whyNoAvx512Bf16();
  EnvOverride avx2("x86-64-v3", "EINC_JIT_CPU");
  ASSERT_FALSE(cpuHasAvx512Bf16());
  const std::string why = whyNoAvx512Bf16();
  EXPECT_TRUE(why == "EINC_JIT_CPU=x86-64-v3 runs no AVX-512 code" ||
              why.rfind("this CPU (or its OS) does not run AVX-512 BF16 (", 0) == 0)
      << why;
  Bf16GemmShape s;
  s.m = s.n = s.k = 2, s.lda = s.ldb = s.ldc = 2;
  const uint16_t a[4] = {0x3F80, 0, 0, 0x3F80}, b[4] = {0x3F80, 0x4000, 0x4040, 0x4080};
  float c[4] = {};
  uint32_t workspace[64];
  ASSERT_LE(bf16GemmWorkspaceWords(s), 64);
  EINC_EXPECT_STATUS_EQ(bf16Gemm(s, a, b, c, workspace), StatusCode::Unavailable,
                        "the AVX-512 BF16 GEMM kernel cannot run here: " + why);
  // The model computes it (identity times B).
  bf16GemmModel(s, a, b, c, workspace);
  EXPECT_EQ(c[0], 1.0f);
  EXPECT_EQ(c[3], 4.0f);
}

} // namespace
