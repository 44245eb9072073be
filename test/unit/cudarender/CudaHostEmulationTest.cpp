//===- CudaHostEmulationTest.cpp - Rendered kernels run as host code ------===//
//
// The renderer's kernels executed without a GPU: every distinct kernel of
// small versions of both examples' @train_step (fp32, bf16-mixed, fp16-mixed
// and bf16; fused and unfused, gpt also under `fusion = on`, whose causal
// mask is a fused kernel computing its iotas from the element index; a
// vocabulary long enough for BlockRows) is
// rendered, compiled as host C++ with CudaHostShim.h's built-ins and
// intrinsics (threads for warps and blocks), run on random inputs and held
// against the CPU backend's JIT-compiled kernel of the same KernelSpec:
// bit for bit (row sums included: CPU and CUDA combine a row in
// codegen/RowOrder.h's order; row kernels too), except where the two
// legitimately differ (f32 sums over leading dims, which the CPU
// reassociates; exp / log / tanh / pow, which the CPU kernels approximate
// with their own polynomials and the host here with libm: within a few f32
// ulps, one narrow ulp for narrow results). Rows kernels also run under a
// second launch shape (another grid, a block of three warps) and must give
// the same bits: the order of their sums depends on the row length alone.
//
//===----------------------------------------------------------------------===//
#include "CudaHostShim.h"

#include "tools/driver/Compile.h"
#include "tools/driver/Frontend.h"

#include "codegen/CpuKernelGen.h"
#include "codegen/CudaRenderer.h"
#include "dsl/Elaborator.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <unistd.h>

namespace {

using ein::codegen::ElemKind;
using ein::codegen::KernelSpec;
using ein::codegen::KernelTensor;

struct Config {
  std::string model;
  std::vector<std::pair<std::string, std::string>> overrides;
};

/// Small dims (the emulation runs a host thread per CUDA thread of a block);
/// mlp_lm at its own dims too, whose 2048 rows of activations make its sums
/// over rows column tiles.
std::vector<Config> configs() {
  std::vector<std::pair<std::string, std::string>> gpt = {
      {"batch", "2"}, {"ctx", "16"}, {"d", "64"}, {"layers", "1"}, {"vocab", "2048"}};
  std::vector<std::pair<std::string, std::string>> mlp = {{"batch", "16"}};
  std::vector<Config> all;
  for (std::string precision : {"fp32", "bf16-mixed", "fp16-mixed", "bf16"})
    for (std::string fusion : {"all", "off"}) {
      for (auto [model, dims] : {std::pair{"gpt", gpt}, std::pair{"mlp_lm", mlp}}) {
        Config c{model, dims};
        c.overrides.push_back({"precision", precision});
        c.overrides.push_back({"fusion", fusion});
        all.push_back(c);
      }
    }
  for (std::string precision : {"fp32", "bf16-mixed"})
    all.push_back({"mlp_lm", {{"precision", precision}}});
  // Elementwise groups without row kernels: the causal mask's iotas are
  // computed by a fused kernel (under `all`, by the softmax's row kernel).
  Config on{"gpt", gpt};
  on.overrides.push_back({"fusion", "on"});
  all.push_back(on);
  return all;
}

struct Compiled {
  std::unique_ptr<mlir::MLIRContext> context;
  einc::CompiledModel model;
};

bool compile(const Config &c, Compiled &out) {
  out.context = std::make_unique<mlir::MLIRContext>();
  ein::dsl::registerElaboratorDialects(*out.context);
  einc::CompileRequest request;
  request.modelPath = std::string(EINC_SOURCE_DIR) + "/examples/" + c.model + ".ein";
  request.overrides = c.overrides;
  einc::Frontend fe;
  if (!fe.load(request.modelPath) || !fe.parse())
    return false;
  auto module = fe.lower(*out.context, request.overrides, request.use);
  fe.printDiagnostics();
  if (!module)
    return false;
  request.functions = {"train_step"};
  request.jit = true; // the CPU kernels, to hold the CUDA ones against
  request.settings = fe.settings;
  request.frontend = &fe;
  return einc::compileModel(*module, request, out.model);
}

int64_t bytesOf(ElemKind k) {
  static const int64_t bytes[] = {4, 4, 1, 2, 2};
  return bytes[int(k)];
}

/// A buffer of `t` with random contents (ids in [-1, rows] for an index
/// operand: one past each end is out of range).
std::vector<uint8_t> randomBuffer(const KernelTensor &t, int64_t idRows, std::mt19937 &gen) {
  int64_t n = t.count();
  std::vector<uint8_t> b(size_t(std::max<int64_t>(n, 1) * bytesOf(t.elem)));
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (int64_t i = 0; i < n; ++i) {
    uint8_t *p = b.data() + i * bytesOf(t.elem);
    float f = u(gen);
    switch (t.elem) {
    case ElemKind::F32:
      std::memcpy(p, &f, 4);
      break;
    case ElemKind::I32: {
      int32_t v = idRows >= 0 ? int32_t(std::uniform_int_distribution<int64_t>(-1, idRows)(gen))
                              : int32_t(std::uniform_int_distribution<int>(-7, 7)(gen));
      std::memcpy(p, &v, 4);
      break;
    }
    case ElemKind::I1:
      *p = uint8_t(gen() & 1);
      break;
    case ElemKind::BF16: {
      uint32_t u32;
      std::memcpy(&u32, &f, 4);
      uint16_t h = uint16_t((u32 + 0x7FFFu + ((u32 >> 16) & 1u)) >> 16);
      std::memcpy(p, &h, 2);
      break;
    }
    case ElemKind::F16: {
      _Float16 h = (_Float16)f;
      std::memcpy(p, &h, 2);
      break;
    }
    }
  }
  return b;
}

double valueAt(const std::vector<uint8_t> &b, ElemKind k, int64_t i) {
  const uint8_t *p = b.data() + i * bytesOf(k);
  switch (k) {
  case ElemKind::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case ElemKind::BF16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    uint32_t u = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  case ElemKind::F16: {
    _Float16 h;
    std::memcpy(&h, p, 2);
    return double(float(h));
  }
  case ElemKind::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case ElemKind::I1:
    return *p;
  }
  return 0;
}

/// Whether the CPU and CUDA kernels of `s` may differ by rounding.
bool mayDiffer(const KernelSpec &s, const einrt::CudaKernelInfo &info) {
  auto transcendental = [](const std::string &op) {
    return op == "ein.exp" || op == "ein.log" || op == "ein.tanh" || op == "ein.pow";
  };
  if (transcendental(s.op))
    return true;
  for (const auto &n : s.body)
    if (transcendental(n.op))
      return true;
  // Sums over rows (the trailing dims) combine in one order on both
  // (codegen/RowOrder.h): bit for bit; sums over leading dims (column tiles)
  // are reassociated on the CPU.
  bool trailing = !s.dims.empty() && s.dims.back() + 1 == int64_t(s.operands[0].shape.size());
  return s.op == "ein.reduce" && s.kind == "sum" && s.result.elem == ElemKind::F32 &&
         info.kind != einrt::CudaLaunchKind::Elements && !trailing;
}

/// First difference beyond what `s` allows, or "". A reassociated f32 row
/// sum may differ by 16 f32 ulps of the sum of its inputs' magnitudes;
/// transcendentals by 2e-6 of the result's largest magnitude (a few ulps),
/// or one ulp of a narrow result.
std::string compare(const KernelSpec &s, bool loose, const KernelTensor &t,
                    const std::vector<uint8_t> &cpu, const std::vector<uint8_t> &cuda,
                    const std::vector<uint8_t> &input) {
  double scale = 1;
  for (int64_t i = 0; i < t.count(); ++i)
    if (std::isfinite(valueAt(cpu, t.elem, i)))
      scale = std::max(scale, std::fabs(valueAt(cpu, t.elem, i)));
  double narrowUlp = t.elem == ElemKind::BF16 ? 0x1p-7 : t.elem == ElemKind::F16 ? 0x1p-10 : 0;
  // The inputs of output i: i * rowLength + j (a sum over trailing dims) or
  // j * outputs + i (over leading dims).
  bool rowSum = s.op == "ein.reduce";
  int64_t rowLength = rowSum && t.count() ? s.operands[0].count() / t.count() : 0;
  bool columns = rowSum && !s.dims.empty() && s.dims[0] == 0 &&
                 s.dims.back() + 1 < int64_t(s.operands[0].shape.size());
  for (int64_t i = 0; i < t.count(); ++i) {
    double a = valueAt(cpu, t.elem, i), b = valueAt(cuda, t.elem, i);
    bool same = std::memcmp(cpu.data() + i * bytesOf(t.elem), cuda.data() + i * bytesOf(t.elem),
                            size_t(bytesOf(t.elem))) == 0;
    if (same || (std::isnan(a) && std::isnan(b)) || a == b) // NaN payloads, zero signs
      continue;
    if (loose) {
      double tol =
          narrowUlp > 0 ? narrowUlp * std::max(std::fabs(a), std::fabs(b)) + 1e-30 : 2e-6 * scale;
      if (rowSum) {
        double magnitude = 0;
        for (int64_t j = 0; j < rowLength; ++j)
          magnitude += std::fabs(
              valueAt(input, s.operands[0].elem, columns ? j * t.count() + i : i * rowLength + j));
        tol = 0x1p-20 * magnitude;
      }
      if (std::fabs(a - b) <= tol)
        continue;
    }
    char msg[160];
    std::snprintf(msg, sizeof msg, "element %lld: CPU %.9g, CUDA %.9g", (long long)i, a, b);
    return msg;
  }
  return "";
}

struct Kernel {
  const KernelSpec *spec;
  einrt::KernelEntry cpu;
  einrt::CudaKernelInfo info;
};

TEST(CudaHostEmulation, RenderedKernelsMatchTheCpuKernels) {
  // Every distinct kernel of every configuration.
  std::vector<std::unique_ptr<Compiled>> models;
  std::map<std::string, Kernel> byKey;
  std::vector<Kernel *> kernels;
  std::string body;
  std::string entries;
  bool bf16 = false, f16 = false;
  for (const Config &c : configs()) {
    auto m = std::make_unique<Compiled>();
    ASSERT_TRUE(compile(c, *m)) << c.model;
    const ein::codegen::KernelCompiler &kc = *m->model.kernels;
    for (int64_t i = 0; i < kc.kernelCount(); ++i) {
      const KernelSpec &spec = kc.spec(i);
      if (byKey.count(spec.key))
        continue;
      auto k = ein::codegen::renderCudaKernel(spec, int64_t(byKey.size()), "");
      Kernel &entry = byKey[spec.key];
      entry = {&spec, kc.table()[size_t(i)], k.info};
      kernels.push_back(&entry);
      body += "\n" + k.text;
      entries +=
          "{\"" + k.info.entry + "\", [](void **p) { ein_call(" + k.info.entry + ", p); }},\n";
      bf16 |= k.bf16;
      f16 |= k.f16;
    }
    models.push_back(std::move(m));
  }
  ASSERT_GT(kernels.size(), 100u);

  // One host library of them all.
  std::string prelude = ein::codegen::cudaPrelude(bf16, f16), kept;
  for (size_t at = 0; at < prelude.size();) {
    size_t end = prelude.find('\n', at);
    std::string line = prelude.substr(at, end - at);
    if (line.rfind("#include <cuda_", 0) != 0)
      kept += line + "\n";
    at = end == std::string::npos ? prelude.size() : end + 1;
  }
  char dir[] = "/tmp/einc-cuda-host-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string src = std::string(dir) + "/kernels.cpp", lib = std::string(dir) + "/kernels.so";
  std::string epilogue = einc::cudatest::kHostShimEpilogue;
  epilogue.replace(epilogue.find("EIN_ENTRIES"), 11, entries);
  std::ofstream(src) << einc::cudatest::kHostShimPrologue << kept << body << epilogue;
  std::string cmd = std::string(EINC_TEST_CXX) +
                    " -std=c++17 -O1 -fPIC -shared -pthread -ffp-contract=off "
                    "-fno-strict-aliasing -w -o " +
                    lib + " " + src;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  void *handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  using Emulate = int (*)(const char *, void **, unsigned, unsigned, int);
  auto emulate = reinterpret_cast<Emulate>(dlsym(handle, "einc_emulate"));
  ASSERT_NE(emulate, nullptr);

  std::mt19937 gen(13);
  int exact = 0, loose = 0, rows = 0;
  int fusedIota = 0, rowsIota = 0; // kernels computing an iota from the index
  for (Kernel *k : kernels) {
    const KernelSpec &s = *k->spec;
    bool iota = llvm::any_of(s.body, [](const auto &n) { return n.op == "ein.iota"; });
    fusedIota += iota && s.op == "ein.fused";
    rowsIota += iota && s.op == "ein.rows";
    SCOPED_TRACE(k->info.entry + " " + s.key);
    std::vector<std::vector<uint8_t>> in;
    for (size_t j = 0; j < s.operands.size(); ++j) {
      int64_t idRows = -1;
      if (j == 1 && s.op == "ein.gather")
        idRows = s.operands[0].shape[0];
      if (j == 1 && s.op == "ein.scatter_add")
        idRows = s.result.shape[0];
      in.push_back(randomBuffer(s.operands[j], idRows, gen));
    }
    std::vector<KernelTensor> results = {s.result};
    results.insert(results.end(), s.extraResults.begin(), s.extraResults.end());
    auto blank = [&] {
      std::vector<std::vector<uint8_t>> out;
      for (const KernelTensor &t : results) // garbage first: every element must be written
        out.emplace_back(size_t(std::max<int64_t>(t.count(), 1) * bytesOf(t.elem)), 0xA5);
      return out;
    };
    auto pointers = [&](std::vector<std::vector<uint8_t>> &out) {
      std::vector<void *> p;
      for (auto &b : in)
        p.push_back(b.data());
      for (auto &b : out)
        p.push_back(b.data());
      return p;
    };

    // The CPU kernel over its whole parallel range.
    auto cpu = blank();
    std::vector<void *> cp = pointers(cpu);
    int64_t begin = 0, end = k->cpu.extent;
    std::vector<void *> args;
    for (void *&ptr : cp)
      args.push_back(&ptr);
    args.push_back(&begin);
    args.push_back(&end);
    k->cpu.fn(args.data());

    // The CUDA kernel: a grid of three blocks of two warps.
    bool threads = k->info.kind != einrt::CudaLaunchKind::Elements;
    auto cuda = blank();
    std::vector<void *> gp = pointers(cuda);
    ASSERT_EQ(emulate(k->info.entry.c_str(), gp.data(), 3, 64, threads), 0);
    bool differ = mayDiffer(s, k->info);
    for (size_t t = 0; t < results.size(); ++t) {
      std::string d = compare(s, differ, results[t], cpu[t], cuda[t], in.empty() ? cpu[t] : in[0]);
      EXPECT_TRUE(d.empty()) << "result " << t << ": " << d;
    }
    (differ ? loose : exact)++;
    if (threads) { // another launch shape: the same bits
      ++rows;
      auto again = blank();
      std::vector<void *> ap = pointers(again);
      ASSERT_EQ(emulate(k->info.entry.c_str(), ap.data(), 1, 96, 1), 0);
      for (size_t t = 0; t < results.size(); ++t)
        EXPECT_TRUE(again[t] == cuda[t]) << "result " << t << " depends on the launch shape";
    }
  }
  std::printf("[cuda-host] %zu kernels: %d bit for bit with the CPU kernels, %d within rounding "
              "(f32 row sums, transcendentals); %d row kernels the same under two launch shapes; "
              "%d fused and %d row kernels computing an iota from the index\n",
              kernels.size(), exact, loose, rows, fusedIota, rowsIota);
  // gpt's causal masks (fused under `on`, in the softmax's row kernel
  // under `all`) and cross-entropy's class index (a row kernel).
  EXPECT_GE(fusedIota, 1);
  EXPECT_GE(rowsIota, 2);
  dlclose(handle);
  std::string rm = "rm -rf '" + std::string(dir) + "'";
  EXPECT_EQ(std::system(rm.c_str()), 0);
}

} // namespace
