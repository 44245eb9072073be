//===- CudaHostEmulationTest.cpp - Rendered kernels run as host code ------===//
//
// The renderer's kernels executed without a GPU: every distinct kernel of
// small versions of both examples' @train_step (fp32, bf16-mixed, fp16-mixed
// and bf16; fused and unfused; a vocabulary long enough for BlockRows) is
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
// Kernels with 16-byte vector accesses run once more on buffers that start
// one element past a 16-byte boundary (a view at an odd offset,
// runtime/Arena.h) and must give the same bits; the host code is compiled
// with -fsanitize=alignment trapping, so a vector access at such an address
// (one the GPU would fault on) stops the test.
//
//===----------------------------------------------------------------------===//
#include "CudaHostShim.h"

#include "tools/einc/Compile.h"
#include "tools/einc/Frontend.h"

#include "codegen/CpuKernelGen.h"
#include "codegen/CudaRenderer.h"
#include "dsl/Elaborator.h"
#include "runtime/Arena.h"
#include "runtime/CublasLtMapping.h"
#include "runtime/CudaDevice.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
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
  return all;
}

struct Compiled {
  std::unique_ptr<mlir::MLIRContext> context;
  einc::CompiledModel model;
};

bool compile(const Config &c, Compiled &out) {
  out.context = std::make_unique<mlir::MLIRContext>();
  ein::dsl::registerElaboratorDialects(*out.context);
  einc::Options o;
  o.command = "train";
  o.input =
      std::string(EINC_SOURCE_DIR) +
      (c.model.find('/') != std::string::npos ? "/" + c.model : "/examples/" + c.model + ".ein");
  o.overrides = c.overrides;
  einc::Frontend fe;
  if (!fe.load(o.input) || !fe.parse())
    return false;
  auto module = fe.lower(*out.context, o);
  fe.printDiagnostics();
  if (!module)
    return false;
  einc::CompileRequest request;
  request.functions = {"train_step"};
  request.jit = true; // the CPU kernels, to hold the CUDA ones against
  return einc::compileModel(*module, o, fe.settings, "", request, out.model);
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

/// Random operands for `s` (a gather's or scatter_add's ids in range and
/// one past each end).
std::vector<std::vector<uint8_t>> randomOperands(const KernelSpec &s, std::mt19937 &gen) {
  std::vector<std::vector<uint8_t>> in;
  for (size_t j = 0; j < s.operands.size(); ++j) {
    int64_t idRows = -1;
    if (j == 1 && s.op == "ein.gather")
      idRows = s.operands[0].shape[0];
    if (j == 1 && s.op == "ein.scatter_add")
      idRows = s.result.shape[0];
    in.push_back(randomBuffer(s.operands[j], idRows, gen));
  }
  return in;
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

using Emulate = int (*)(const char *, void **, unsigned, unsigned, int);

/// Rendered kernels (`body`, their launcher `entries`) compiled as one host
/// library with CudaHostShim.h, trapping on a misaligned vector access.
struct HostLibrary {
  std::string dir;
  void *handle = nullptr;
  Emulate emulate = nullptr;

  bool build(const std::string &body, const std::string &entries, bool bf16, bool f16) {
    std::string prelude = ein::codegen::cudaPrelude(bf16, f16), kept;
    for (size_t at = 0; at < prelude.size();) {
      size_t end = prelude.find('\n', at);
      std::string line = prelude.substr(at, end - at);
      if (line.rfind("#include <cuda_", 0) != 0)
        kept += line + "\n";
      at = end == std::string::npos ? prelude.size() : end + 1;
    }
    char name[] = "/tmp/einc-cuda-host-XXXXXX";
    if (!mkdtemp(name))
      return false;
    dir = name;
    std::string src = dir + "/kernels.cpp", lib = dir + "/kernels.so";
    std::string epilogue = einc::cudatest::kHostShimEpilogue;
    epilogue.replace(epilogue.find("EIN_ENTRIES"), 11, entries);
    std::ofstream(src) << einc::cudatest::kHostShimPrologue << kept << body << epilogue;
    std::string cmd = std::string(EINC_TEST_CXX) +
                      " -std=c++17 -O1 -fPIC -shared -pthread -ffp-contract=off "
                      "-fno-strict-aliasing -fsanitize=alignment "
                      "-fsanitize-undefined-trap-on-error -w -o " +
                      lib + " " + src;
    if (std::system(cmd.c_str()) != 0 || !(handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL)))
      return false;
    emulate = reinterpret_cast<Emulate>(dlsym(handle, "einc_emulate"));
    return emulate != nullptr;
  }
  ~HostLibrary() {
    if (handle)
      dlclose(handle);
    if (!dir.empty())
      EXPECT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
  }
};

/// `b` copied to `offset` bytes past a 256-byte boundary of a new block
/// kept in `store`.
uint8_t *placeAt(const std::vector<uint8_t> &b, int64_t offset,
                 std::vector<std::vector<uint8_t>> &store) {
  store.emplace_back(b.size() + 512, 0xA5);
  uint8_t *at = store.back().data();
  at += (256 - reinterpret_cast<uintptr_t>(at) % 256) % 256 + offset;
  std::memcpy(at, b.data(), b.size());
  return at;
}

struct Kernel {
  const KernelSpec *spec;
  einrt::KernelEntry cpu;
  einrt::CudaKernelInfo info;
  bool vectors = false; // 16-byte loads or stores (ein_load, ein_store)
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
      entry = {&spec, kc.table()[size_t(i)], k.info,
               k.text.find("ein_load<") != std::string::npos ||
                   k.text.find("ein_store<") != std::string::npos};
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

  HostLibrary host;
  ASSERT_TRUE(host.build(body, entries, bf16, f16));
  Emulate emulate = host.emulate;

  std::mt19937 gen(13);
  int exact = 0, loose = 0, rows = 0, unaligned = 0;
  for (Kernel *k : kernels) {
    const KernelSpec &s = *k->spec;
    SCOPED_TRACE(k->info.entry + " " + s.key);
    std::vector<std::vector<uint8_t>> in = randomOperands(s, gen);
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
    if (k->vectors) { // every buffer one element past a 16-byte boundary
      ++unaligned;
      std::vector<std::vector<uint8_t>> store;
      std::vector<void *> up;
      for (size_t j = 0; j < in.size(); ++j)
        up.push_back(placeAt(in[j], bytesOf(s.operands[j].elem), store));
      auto out = blank();
      for (size_t t = 0; t < results.size(); ++t)
        up.push_back(placeAt(out[t], bytesOf(results[t].elem), store));
      ASSERT_EQ(emulate(k->info.entry.c_str(), up.data(), 3, 64, threads), 0);
      for (size_t t = 0; t < results.size(); ++t)
        EXPECT_EQ(std::memcmp(up[in.size() + t], cuda[t].data(), cuda[t].size()), 0)
            << "result " << t << " differs on buffers off a 16-byte boundary";
    }
  }
  std::printf("[cuda-host] %zu kernels: %d bit for bit with the CPU kernels, %d within rounding "
              "(f32 row sums, transcendentals); %d row kernels the same under two launch shapes; "
              "%d with vector accesses the same on buffers off a 16-byte boundary\n",
              kernels.size(), exact, loose, rows, unaligned);
}

/// Where the cuda device puts a Program's buffers: runtime/Arena.h's plan
/// with its storage sizes, in an allocation aligned to 256 bytes.
struct CudaPlacement {
  einrt::MemoryPlan plan;
  explicit CudaPlacement(const einrt::Program &p) {
    einrt::StorageSizes sizes;
    for (uint8_t t = 0; t < einrt::kDTypeCount; ++t)
      sizes.bytes[t] = einrt::storageBytes(einrt::cudaStorageOf(einrt::DType(t)));
    plan = einrt::planMemory(p, sizes);
  }
  /// Bytes from the allocation's start.
  int64_t offset(int32_t b) const {
    return plan.arenaOffset[size_t(b)] >= 0 ? plan.arenaOffset[size_t(b)]
                                            : plan.arenaBytes + plan.residentOffset[size_t(b)];
  }
  int32_t alignment(int32_t b) const {
    return einrt::addressAlignment(reinterpret_cast<void *>((uintptr_t(1) << 32) + offset(b)));
  }
};

// A model whose unpacked halves sit 63 elements apart (odd-unpack.ein: 252
// f32 bytes, 126 bf16 bytes), their gradients written into views of one
// buffer: kernel steps with 16-byte accesses get buffers off a 16-byte
// boundary where the cuda device places them, and give the CPU kernel's
// values there.
TEST(CudaHostEmulation, KernelStepsOnViewsOffA16ByteBoundary) {
  for (std::string precision : {"fp32", "bf16-mixed"}) {
    SCOPED_TRACE(precision);
    Compiled m;
    ASSERT_TRUE(
        compile({"test/unit/cudarender/Inputs/odd-unpack.ein", {{"precision", precision}}}, m));
    const einrt::Program *p = m.model.program("train_step");
    ASSERT_NE(p, nullptr);
    CudaPlacement place(*p);

    // The kernel steps with vector accesses and a buffer off a 16-byte boundary.
    const ein::codegen::KernelCompiler &kc = *m.model.kernels;
    struct Launch {
      size_t step;
      int64_t kernel;
      std::vector<int32_t> buffers;
      einrt::CudaKernelInfo info;
    };
    std::vector<Launch> launches;
    std::set<int64_t> rendered;
    std::string body, entries;
    bool bf16 = false, f16 = false;
    for (size_t i = 0; i < p->steps.size(); ++i) {
      const einrt::Step &step = p->steps[i];
      const auto *launch = std::get_if<einrt::KernelLaunch>(&step.payload);
      if (!launch)
        continue;
      std::vector<int32_t> buffers = step.inputs, outputs = step.outputs();
      buffers.insert(buffers.end(), outputs.begin(), outputs.end());
      auto k = ein::codegen::renderCudaKernel(kc.spec(launch->kernel), launch->kernel, "");
      bool vectors = k.text.find("ein_load<") != std::string::npos ||
                     k.text.find("ein_store<") != std::string::npos;
      bool off = std::any_of(buffers.begin(), buffers.end(),
                             [&](int32_t b) { return place.offset(b) % 16 != 0; });
      if (!vectors || !off)
        continue;
      if (rendered.insert(launch->kernel).second) {
        body += "\n" + k.text;
        entries +=
            "{\"" + k.info.entry + "\", [](void **p) { ein_call(" + k.info.entry + ", p); }},\n";
        bf16 |= k.bf16;
        f16 |= k.f16;
      }
      launches.push_back({i, launch->kernel, buffers, k.info});
    }
    ASSERT_FALSE(launches.empty());
    HostLibrary host;
    ASSERT_TRUE(host.build(body, entries, bf16, f16));

    std::mt19937 gen(29);
    for (const Launch &l : launches) {
      const KernelSpec &s = kc.spec(l.kernel);
      SCOPED_TRACE("step " + std::to_string(l.step) + " " + l.info.entry);
      std::vector<std::vector<uint8_t>> in = randomOperands(s, gen);
      std::vector<KernelTensor> results = {s.result};
      results.insert(results.end(), s.extraResults.begin(), s.extraResults.end());
      // The CPU kernel on buffers of its own.
      std::vector<std::vector<uint8_t>> cpu;
      std::vector<void *> cp;
      for (auto &b : in)
        cp.push_back(b.data());
      for (const KernelTensor &t : results) {
        cpu.emplace_back(size_t(std::max<int64_t>(t.count(), 1) * bytesOf(t.elem)), 0xA5);
        cp.push_back(cpu.back().data());
      }
      const einrt::KernelEntry &entry = kc.table()[size_t(l.kernel)];
      int64_t begin = 0, end = entry.extent;
      std::vector<void *> args;
      for (void *&ptr : cp)
        args.push_back(&ptr);
      args.push_back(&begin);
      args.push_back(&end);
      entry.fn(args.data());
      // The CUDA kernel on buffers where the cuda device puts them.
      std::vector<std::vector<uint8_t>> store;
      std::vector<void *> gp;
      for (size_t j = 0; j < l.buffers.size(); ++j) {
        std::vector<uint8_t> b = j < in.size() ? in[j] : cpu[j - in.size()];
        if (j >= in.size())
          std::fill(b.begin(), b.end(), 0xA5);
        gp.push_back(placeAt(b, place.offset(l.buffers[j]) % 256, store));
      }
      bool threads = l.info.kind != einrt::CudaLaunchKind::Elements;
      ASSERT_EQ(host.emulate(l.info.entry.c_str(), gp.data(), 3, 64, threads), 0);
      for (size_t t = 0; t < results.size(); ++t) {
        const uint8_t *at = static_cast<const uint8_t *>(gp[in.size() + t]);
        std::vector<uint8_t> cuda(at, at + cpu[t].size());
        std::string d =
            compare(s, mayDiffer(s, l.info), results[t], cpu[t], cuda, in.empty() ? cpu[t] : in[0]);
        EXPECT_TRUE(d.empty()) << "result " << t << ": " << d;
      }
    }
    std::printf("[cuda-host] odd-unpack.ein %s: %zu kernel steps with 16-byte accesses on buffers "
                "off a 16-byte boundary, the CPU kernels' values\n",
                precision.c_str(), launches.size());
  }
}

// gpt at odd dims: q, k and v are views of the qkv product 50 elements
// (200 f32 bytes) apart, read by the attention GEMMs. Each call's
// alignments are at most its buffers' where the cuda device places them
// (the heuristic is asked for algorithms valid there), some below 16.
TEST(CudaHostEmulation, GemmCallsCarryTheirBuffersAlignment) {
  Compiled m;
  ASSERT_TRUE(compile({"gpt",
                       {{"batch", "1"},
                        {"ctx", "5"},
                        {"d", "10"},
                        {"heads", "2"},
                        {"layers", "1"},
                        {"vocab", "40"},
                        {"precision", "fp32"}}},
                      m));
  const einrt::Program *p = m.model.program("train_step");
  ASSERT_NE(p, nullptr);
  CudaPlacement place(*p);
  int32_t least = 256;
  for (const einrt::Step &step : p->steps) {
    const auto *g = std::get_if<einrt::GemmDesc>(&step.payload);
    if (!g)
      continue;
    einrt::LtAlignments bases{place.alignment(step.inputs[0]),
                              place.alignment(step.inputs[1]),
                              place.alignment(step.output),
                              {}};
    std::vector<einrt::DType> types;
    for (const std::vector<int32_t> *list : {&g->post.operands, &g->post.outputs})
      for (int32_t b : *list) {
        types.push_back(p->buffers[size_t(b)].dtype);
        bases.post.push_back(place.alignment(b));
      }
    einrt::CublasLtPlan calls;
    std::string error;
    ASSERT_TRUE(einrt::mapGemmToCublasLt(*g, {}, calls, error, g->post.present() ? &types : nullptr,
                                         &bases))
        << error;
    for (const einrt::CublasLtCall &call : calls.calls) {
      EXPECT_LE(call.alignA, bases.b); // cuBLASLt's A is the step's B
      EXPECT_LE(call.alignB, bases.a);
      if (!call.separateD)
        EXPECT_LE(call.alignC, bases.c);
      least = std::min({least, call.alignA, call.alignB, call.alignC});
    }
  }
  EXPECT_LT(least, 16); // below what a 16-byte access needs
  std::printf("[cuda-host] gpt at odd dims: GEMM calls as little as %d-byte aligned\n", least);
}

} // namespace
