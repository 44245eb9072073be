//===- CudaCompileExamplesTest.cpp - Every example kernel through NVRTC ---===//
//
// Issue 13, CI without a GPU: every kernel of examples/mlp_lm.ein and
// examples/gpt.ein, under every policy combination (fusion on / off;
// precision fp32, bf16-mixed, fp16-mixed, bf16; remat none / full; fp8
// block under bf16-mixed), compiled as `einc compile` compiles the step and
// the forward (compileModel), rendered by codegen/CudaRenderer.h and
// compiled by NVRTC for sm_80 and sm_90 with zero register spills (ptxas'
// report). A kernel is compiled once per run whatever the number of
// configurations it appears in (kernels are identified by the CPU backend's
// signature, from which the source is rendered): one translation unit per
// configuration holding its kernels not seen before. One configuration's
// whole bundle is also compiled as the device would compile it. NVRTC's
// cache is a temporary directory of this run. Skips only where NVRTC cannot
// be loaded. Prints the counts and times.
//
//===----------------------------------------------------------------------===//
#include "test/unit/StatusTesting.h"
#include "tools/driver/Compile.h"
#include "tools/driver/Frontend.h"

#include "codegen/CpuKernelGen.h"
#include "codegen/CudaRenderer.h"
#include "dsl/Elaborator.h"
#include "runtime/cuda/Nvrtc.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>

namespace {

struct Config {
  std::string model;
  std::vector<std::pair<std::string, std::string>> overrides;
  std::string name() const {
    std::string n = model;
    for (auto &[k, v] : overrides)
      n += " " + k + "=" + v;
    return n;
  }
};

std::vector<Config> configs() {
  std::vector<Config> all;
  for (std::string model : {"mlp_lm", "gpt"}) {
    for (std::string fusion : {"all", "off"})
      for (std::string precision : {"fp32", "bf16-mixed", "fp16-mixed", "bf16"})
        for (std::string remat : {"none", "full"})
          all.push_back({model, {{"fusion", fusion}, {"precision", precision}, {"remat", remat}}});
    all.push_back({model, {{"precision", "bf16-mixed"}, {"fp8", "block"}}});
  }
  return all;
}

/// compileModel of the example under `c`, as `einc compile` compiles it.
bool compile(const Config &c, mlir::MLIRContext &context, einc::CompiledModel &out) {
  einc::CompileRequest request;
  request.modelPath = std::string(EINC_SOURCE_DIR) + "/examples/" + c.model + ".ein";
  request.overrides = c.overrides;
  einc::Frontend fe;
  if (!fe.load(request.modelPath) || !fe.parse())
    return false;
  auto module = fe.lower(context, request.overrides, request.use);
  fe.printDiagnostics();
  if (!module)
    return false;
  request.functions = {"train_step", "forward"};
  request.jit = false;
  request.settings = fe.settings;
  request.frontend = &fe;
  return einc::compileModel(*module, request, out);
}

/// One translation unit to compile and what its kernels are.
struct Unit {
  std::string config;
  std::string source;
  std::vector<std::string> kernels; // entries
};

struct Result {
  std::string error;
  std::vector<einrt::PtxasReport> functions;
  double seconds = 0;
  bool cached = false;
};

TEST(CudaCompileExamples, EveryKernelEveryPolicyNoSpills) {
  einrt::Expected<const einrt::Nvrtc *> loaded = einrt::Nvrtc::load();
  if (!loaded.ok())
    GTEST_SKIP() << loaded.status().message();
  const einrt::Nvrtc *nvrtc = *loaded;
  auto start = std::chrono::steady_clock::now();
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };

  // Render every configuration; keep each kernel (by signature) once.
  std::map<std::string, int64_t> seen; // signature → unique index
  std::vector<Unit> units;
  std::string wholeBundle; // one configuration's translation unit, as rendered
  int64_t kernelsInConfigs = 0;
  for (const Config &c : configs()) {
    SCOPED_TRACE(c.name());
    mlir::MLIRContext context;
    ein::dsl::registerElaboratorDialects(context);
    einc::CompiledModel compiled;
    ASSERT_TRUE(compile(c, context, compiled)) << c.name();
    const ein::codegen::KernelCompiler &kernels = *compiled.kernels;
    kernelsInConfigs += kernels.kernelCount();
    ASSERT_GT(kernels.kernelCount(), 0);
    if (c.model == "gpt" && c.overrides.size() == 3 && c.overrides[1].second == "bf16-mixed" &&
        c.overrides[0].second == "all" && c.overrides[2].second == "none")
      wholeBundle = ein::codegen::renderCudaBundle(
                        kernels, {compiled.program("train_step"), compiled.program("forward")})
                        .source;
    Unit u;
    u.config = c.name();
    bool bf16 = false, f16 = false;
    for (int64_t i = 0; i < kernels.kernelCount(); ++i) {
      const ein::codegen::KernelSpec &spec = kernels.spec(i);
      auto [it, fresh] = seen.emplace(spec.key, int64_t(seen.size()));
      if (!fresh)
        continue;
      auto k = ein::codegen::renderCudaKernel(spec, it->second, "");
      // No value goes through an atomic: the only one is a chunked row's
      // counter (CudaRenderChunks.cpp).
      size_t atomic = k.text.find("atomic");
      if (atomic != std::string::npos) {
        std::string counter = "atomicAdd(&" + k.info.entry + "_done[row], 1u)";
        EXPECT_EQ(k.text.compare(atomic, counter.size(), counter), 0) << k.info.entry;
        EXPECT_EQ(k.text.find("atomic", atomic + 1), std::string::npos) << k.info.entry;
      }
      u.source += "\n" + k.text;
      u.kernels.push_back(k.info.entry);
      bf16 |= k.bf16;
      f16 |= k.f16;
    }
    if (u.kernels.empty())
      continue;
    u.source = ein::codegen::cudaPrelude(bf16, f16) + u.source;
    units.push_back(std::move(u));
  }
  ASSERT_FALSE(wholeBundle.empty());
  double renderSeconds = since(start);

  // NVRTC: each unit for each architecture, two threads (one per
  // architecture), the cache in a directory of this run.
  char pattern[] = "/tmp/einc-cuda-ci-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  std::string cacheDir = pattern;
  const std::vector<std::string> archs = {"sm_80", "sm_90"};
  std::vector<std::vector<Result>> results(archs.size(), std::vector<Result>(units.size()));
  auto nvrtcStart = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (size_t a = 0; a < archs.size(); ++a)
    threads.emplace_back([&, a] {
      for (size_t u = 0; u < units.size(); ++u) {
        einrt::NvrtcOptions o;
        o.arch = archs[a];
        o.cacheDir = cacheDir;
        Result &r = results[a][u];
        einrt::Expected<einrt::NvrtcOutput> out = nvrtc->compile(units[u].source, o);
        if (out.ok()) {
          r.functions = std::move(out->functions);
          r.seconds = out->seconds;
          r.cached = out->fromCache;
        } else {
          r.error = out.status().message();
        }
      }
    });
  for (std::thread &t : threads)
    t.join();
  double nvrtcSeconds = since(nvrtcStart);

  int64_t compiled = 0;
  for (size_t a = 0; a < archs.size(); ++a)
    for (size_t u = 0; u < units.size(); ++u) {
      const Result &r = results[a][u];
      ASSERT_TRUE(r.error.empty()) << units[u].config << " for " << archs[a] << ": " << r.error;
      std::set<std::string> reported;
      for (const einrt::PtxasReport &f : r.functions) {
        EXPECT_FALSE(f.spills()) << f.function << " (" << units[u].config << ") spills on "
                                 << archs[a] << ": " << f.spillStoreBytes << " bytes stored, "
                                 << f.spillLoadBytes << " loaded, " << f.registers << " registers";
        EXPECT_EQ(f.stackFrameBytes, 0) << f.function << " uses a stack frame on " << archs[a];
        if (f.entry)
          reported.insert(f.function);
      }
      for (const std::string &k : units[u].kernels)
        EXPECT_TRUE(reported.count(k)) << k << ": ptxas did not report it for " << archs[a];
      compiled += int64_t(units[u].kernels.size());
    }

  // The whole bundle of one configuration, as the device compiles it.
  auto bundleStart = std::chrono::steady_clock::now();
  einrt::NvrtcOptions o;
  o.arch = "sm_90";
  o.cacheDir = cacheDir;
  einrt::NvrtcOutput out;
  EINC_ASSERT_OK_AND_ASSIGN(out, nvrtc->compile(wholeBundle, o));
  for (const einrt::PtxasReport &f : out.functions)
    EXPECT_FALSE(f.spills()) << f.function;
  double bundleSeconds = since(bundleStart);

  std::printf("[cuda-compile] %zu configurations, %lld kernels in their tables, %zu distinct; "
              "%lld kernel compiles (sm_80 + sm_90) in %zu units\n",
              configs().size(), (long long)kernelsInConfigs, seen.size(), (long long)compiled,
              units.size() * archs.size());
  std::printf("[cuda-compile] NVRTC %s: render %.1f s, compile %.1f s (2 threads), gpt "
              "bf16-mixed bundle (%zu kernels, sm_90) %.1f s, total %.1f s\n",
              nvrtc->version().c_str(), renderSeconds, nvrtcSeconds, out.functions.size(),
              bundleSeconds, since(start));
  std::string rm = "rm -rf '" + cacheDir + "'";
  EXPECT_EQ(std::system(rm.c_str()), 0);
}

} // namespace
