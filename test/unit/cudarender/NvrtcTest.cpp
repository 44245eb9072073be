//===- NvrtcTest.cpp - NVRTC: ptxas' report, the cache, compiling ---------===//
//
// parsePtxasReport on ptxas' -v lines (entries, device functions, spills,
// shared memory); the on-disk cache's entries (round trip, another key under
// the same name, truncation, a flipped byte: all misses); and, where NVRTC
// is available, compiling a small source to a cubin and to PTX, the cache
// answering the second time, a corrupt entry recompiled and rewritten, and a
// compile error carrying NVRTC's log.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Nvrtc.h"
#include "runtime/cuda/NvrtcCache.h"
#include "test/unit/StatusTesting.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace {

std::string tempDir() {
  char pattern[] = "/tmp/einc-nvrtc-test-XXXXXX";
  const char *d = mkdtemp(pattern);
  EXPECT_NE(d, nullptr);
  return d ? d : "/tmp";
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

TEST(PtxasReport, ParsesEntriesAndSpills) {
  const char *log = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k1_reduce_sum' for 'sm_90'
ptxas info    : Function properties for k1_reduce_sum
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 18 registers, used 1 barriers, 128 bytes smem
ptxas info    : Compile time = 3.100 ms
ptxas info    : Compiling entry function 'k0_big' for 'sm_80'
ptxas info    : Function properties for k0_big
ptxas         .     800 bytes stack frame, 24 bytes spill stores, 16 bytes spill loads
ptxas info    : Used 64 registers, used 0 barriers, 800 bytes cumulative stack size
ptxas info    : Function properties for helper
ptxas         .     8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
)";
  std::vector<einrt::PtxasReport> r = einrt::parsePtxasReport(log);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].function, "k1_reduce_sum");
  EXPECT_EQ(r[0].arch, "sm_90");
  EXPECT_TRUE(r[0].entry);
  EXPECT_EQ(r[0].registers, 18);
  EXPECT_EQ(r[0].barriers, 1);
  EXPECT_EQ(r[0].sharedBytes, 128);
  EXPECT_FALSE(r[0].spills());
  EXPECT_EQ(r[1].function, "k0_big");
  EXPECT_EQ(r[1].arch, "sm_80");
  EXPECT_EQ(r[1].registers, 64);
  EXPECT_EQ(r[1].stackFrameBytes, 800);
  EXPECT_EQ(r[1].spillStoreBytes, 24);
  EXPECT_EQ(r[1].spillLoadBytes, 16);
  EXPECT_TRUE(r[1].spills());
  EXPECT_EQ(r[2].function, "helper");
  EXPECT_FALSE(r[2].entry);
  EXPECT_EQ(r[2].stackFrameBytes, 8);
  EXPECT_TRUE(einrt::parsePtxasReport("warning: nothing\n").empty());
}

TEST(NvrtcCache, EntriesRoundTripAndCorruptOnesMiss) {
  namespace c = einrt::nvrtccache;
  std::string dir = tempDir() + "/nested/cache";
  std::string key = c::keyText("source", {"-a", "-b"}, "13.0", "sm_90");
  uint32_t check = c::keyCheck(key);
  c::Entry e{false,
             std::string("\x7f"
                         "ELF\0\1binary",
                         11),
             "ptxas info : Used 8 registers"};
  einrt::Status written = c::write(dir, "x.nvrtc", check, e);
  ASSERT_TRUE(written.ok()) << written.message();
  c::Entry back;
  ASSERT_TRUE(c::read(dir + "/x.nvrtc", check, back));
  EXPECT_EQ(back.image, e.image);
  EXPECT_EQ(back.log, e.log);
  EXPECT_FALSE(back.ptx);
  // Another key under the same file name.
  EXPECT_FALSE(c::read(dir + "/x.nvrtc", check ^ 1u, back));
  // Truncated; a byte of the payload flipped; garbage; absent.
  std::string bytes = readFile(dir + "/x.nvrtc");
  writeFile(dir + "/t.nvrtc", bytes.substr(0, bytes.size() - 3));
  EXPECT_FALSE(c::read(dir + "/t.nvrtc", check, back));
  std::string flipped = bytes;
  flipped[flipped.size() - 5] ^= 0x20;
  writeFile(dir + "/f.nvrtc", flipped);
  EXPECT_FALSE(c::read(dir + "/f.nvrtc", check, back));
  writeFile(dir + "/g.nvrtc", "not an entry\n");
  EXPECT_FALSE(c::read(dir + "/g.nvrtc", check, back));
  EXPECT_FALSE(c::read(dir + "/none.nvrtc", check, back));
  // The key covers source, options, version and architecture.
  std::string k = einrt::nvrtcCacheKey("s", {"-a"}, "13.0", "sm_90");
  EXPECT_EQ(k.size(), 16u);
  EXPECT_NE(k, einrt::nvrtcCacheKey("t", {"-a"}, "13.0", "sm_90"));
  EXPECT_NE(k, einrt::nvrtcCacheKey("s", {"-b"}, "13.0", "sm_90"));
  EXPECT_NE(k, einrt::nvrtcCacheKey("s", {"-a"}, "13.1", "sm_90"));
  EXPECT_NE(k, einrt::nvrtcCacheKey("s", {"-a"}, "13.0", "sm_80"));
}

TEST(NvrtcCache, DefaultDirectoryFollowsTheEnvironment) {
  auto keep = [](const char *n) {
    const char *v = std::getenv(n);
    return std::pair<bool, std::string>(v != nullptr, v ? v : "");
  };
  auto restore = [](const char *n, const std::pair<bool, std::string> &v) {
    if (v.first)
      setenv(n, v.second.c_str(), 1);
    else
      unsetenv(n);
  };
  auto cache = keep("EINC_CACHE_DIR"), xdg = keep("XDG_CACHE_HOME"), home = keep("HOME");
  setenv("EINC_CACHE_DIR", "/a/b", 1);
  EXPECT_EQ(einrt::defaultNvrtcCacheDir(), "/a/b");
  unsetenv("EINC_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/x", 1);
  EXPECT_EQ(einrt::defaultNvrtcCacheDir(), "/x/einc/cuda");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/h", 1);
  EXPECT_EQ(einrt::defaultNvrtcCacheDir(), "/h/.cache/einc/cuda");
  restore("EINC_CACHE_DIR", cache);
  restore("XDG_CACHE_HOME", xdg);
  restore("HOME", home);
}

const char *kSource = R"(#include <cuda_bf16.h>
extern "C" __global__ void k0_scale(const __nv_bfloat16 *__restrict__ in0, float *out0) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < 1000;
       i += (long long)gridDim.x * blockDim.x)
    out0[i] = __fmul_rn(__bfloat162float(in0[i]), 2.0f);
}
)";

TEST(Nvrtc, CompilesCubinAndPtxThroughTheCache) {
  einrt::Expected<const einrt::Nvrtc *> loaded = einrt::Nvrtc::load();
  if (!loaded.ok())
    GTEST_SKIP() << loaded.status().message();
  const einrt::Nvrtc *nvrtc = *loaded;
  EXPECT_NE(nvrtc->version().find('.'), std::string::npos);
  EXPECT_FALSE(nvrtc->includeDir().empty()) << "no CUDA include directory found";
  std::string dir = tempDir();
  einrt::NvrtcOptions o;
  o.arch = "sm_80";
  o.cacheDir = dir;
  einrt::NvrtcOutput out;
  EINC_ASSERT_OK_AND_ASSIGN(out, nvrtc->compile(kSource, o));
  EXPECT_FALSE(out.fromCache);
  EXPECT_TRUE(out.cacheWarning.empty()) << out.cacheWarning;
  EXPECT_EQ(out.image.bytes.substr(0, 4), "\x7f"
                                          "ELF");
  EXPECT_EQ(out.image.arch, "sm_80");
  ASSERT_EQ(out.functions.size(), 1u) << out.log;
  EXPECT_EQ(out.functions[0].function, "k0_scale");
  EXPECT_EQ(out.functions[0].arch, "sm_80");
  EXPECT_GT(out.functions[0].registers, 0);
  EXPECT_FALSE(out.functions[0].spills());

  // Again: from the cache, the same image and report.
  einrt::NvrtcOutput again;
  EINC_ASSERT_OK_AND_ASSIGN(again, nvrtc->compile(kSource, o));
  EXPECT_TRUE(again.fromCache);
  EXPECT_TRUE(again.image.bytes == out.image.bytes); // (no binary in a failure message)
  ASSERT_EQ(again.functions.size(), 1u);
  EXPECT_EQ(again.functions[0].registers, out.functions[0].registers);
  std::printf("[nvrtc] NVRTC %s: a one-kernel cubin in %.3f s, from the cache in %.4f s\n",
              nvrtc->version().c_str(), out.seconds, again.seconds);

  // A corrupt entry is ignored, recompiled and rewritten.
  std::string file =
      dir + "/" + einrt::nvrtcCacheKey(kSource, nvrtc->commandLine(o), nvrtc->version(), "sm_80") +
      ".nvrtc";
  std::string bytes = readFile(file);
  ASSERT_FALSE(bytes.empty()) << file;
  writeFile(file, bytes.substr(0, bytes.size() / 2));
  einrt::NvrtcOutput recompiled;
  EINC_ASSERT_OK_AND_ASSIGN(recompiled, nvrtc->compile(kSource, o));
  EXPECT_FALSE(recompiled.fromCache);
  EXPECT_TRUE(recompiled.image.bytes == out.image.bytes);
  namespace c = einrt::nvrtccache;
  c::Entry rewritten;
  ASSERT_TRUE(c::read(
      file, c::keyCheck(c::keyText(kSource, nvrtc->commandLine(o), nvrtc->version(), "sm_80")),
      rewritten));
  EXPECT_TRUE(rewritten.image == out.image.bytes);

  // PTX for a virtual architecture: text, no ptxas report.
  o.arch = "compute_90";
  einrt::NvrtcOutput ptx;
  EINC_ASSERT_OK_AND_ASSIGN(ptx, nvrtc->compile(kSource, o));
  EXPECT_TRUE(ptx.image.ptx);
  EXPECT_NE(ptx.image.bytes.find(".entry k0_scale"), std::string::npos);
  EXPECT_NE(ptx.image.bytes.find(".target sm_90"), std::string::npos);
  EXPECT_NE(ptx.image.bytes.back(), '\0');
}

TEST(Nvrtc, ErrorsCarryTheLog) {
  einrt::Expected<const einrt::Nvrtc *> loaded = einrt::Nvrtc::load();
  if (!loaded.ok())
    GTEST_SKIP() << loaded.status().message();
  const einrt::Nvrtc *nvrtc = *loaded;
  einrt::NvrtcOptions o;
  o.cache = false;
  einrt::Status failed =
      nvrtc->compile("extern \"C\" __global__ void k() { undeclared_thing(); }", o).takeStatus();
  EINC_EXPECT_STATUS(failed, einrt::StatusCode::Invalid, "NVRTC_ERROR_COMPILATION");
  EINC_EXPECT_STATUS(failed, einrt::StatusCode::Invalid, "undeclared_thing");
  EINC_EXPECT_STATUS(failed, einrt::StatusCode::Invalid, "Nvrtc.cpp:");
  o.arch = "sm90";
  EINC_EXPECT_STATUS(nvrtc->compile("", o), einrt::StatusCode::Invalid,
                     "unknown CUDA architecture 'sm90'");
}

} // namespace
