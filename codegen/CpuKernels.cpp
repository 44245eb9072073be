//===- CpuKernels.cpp - Non-contraction ops as JIT-compiled CPU kernels ---===//
//
// add() describes an op (codegen/CpuKernelGen.h) and deduplicates it by its
// signature. compile() compiles every kernel not yet in the process cache
// into ELF objects for the JIT's target (codegen/CpuTargets.h) through the
// one code path object files take too (codegen/CpuKernelModule.h), loads
// them into a process-wide LLJIT and reads each object's kernel table
// (runtime/core/KernelTable.h): the packed `void(void **)` functions that are
// runtime/core/Program.h's KernelFn. emitObject() writes such an object for all
// the kernels added, for any target.
//
// The process cache maps target and signature to function pointers; the JIT
// owning the code lives as long as the process (never destroyed, so no
// exit-time ordering problems with LLVM's globals). New kernels are split
// into up to min(hardware threads, 8) objects of at least ~24 kernels that
// compile on parallel threads. Environment: EINC_JIT_CPU=TARGET overrides
// the target; EINC_JIT_THREADS=N the thread count.
//
//===----------------------------------------------------------------------===//
#include "codegen/CpuKernels.h"

#include "codegen/CpuKernelGen.h"
#include "codegen/CpuKernelModule.h"
#include "codegen/CpuTargets.h"
#include "runtime/core/KernelTable.h"

#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SmallVectorMemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <unordered_map>

using namespace mlir;

namespace ein::codegen {
namespace {

/// Process-wide: compiled kernels by target and signature, and the JIT
/// holding them.
struct ProcessCache {
  std::mutex mutex;
  std::unordered_map<std::string, einrt::KernelFn> kernels;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  int64_t nextObject = 0;
};

ProcessCache &cache() {
  static ProcessCache *c = new ProcessCache(); // deliberately never destroyed
  return *c;
}

std::string cacheKey(const CpuTarget &target, const KernelSpec &spec) {
  return std::string(target.name) + "\n" + spec.key;
}

void initialiseLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

/// Kernels compiled together: one object.
struct Chunk {
  std::vector<const KernelSpec *> specs;
  std::vector<int64_t> indices; // in the compiler's table
  std::string prefix;           // of its symbols, unique in the process
  std::string *optimizedIR = nullptr;
  // Results:
  einrt::Status status;
  llvm::SmallVector<char, 0> object;
};

/// Loads a compiled chunk into the process's JIT and reads its table.
einrt::Expected<std::vector<einrt::KernelFn>> loadChunk(ProcessCache &pc, const CpuTarget &target,
                                                        Chunk &chunk) {
  if (!pc.jit) {
    auto jit = llvm::orc::LLJITBuilder().create();
    if (!jit)
      return einrt::Status::internal("cannot start the JIT for the CPU kernels: " +
                                     llvm::toString(jit.takeError()));
    pc.jit = std::move(*jit);
  }
  auto buffer =
      std::make_unique<llvm::SmallVectorMemoryBuffer>(std::move(chunk.object), chunk.prefix, false);
  if (llvm::Error err = pc.jit->addObjectFile(std::move(buffer)))
    return einrt::Status::internal("JIT loading of the CPU kernels failed: " +
                                   llvm::toString(std::move(err)));
  const std::string table = einrt::kernelTableSymbol(chunk.prefix, target.name);
  auto address = pc.jit->lookup(table);
  if (!address)
    return einrt::Status::internal("JIT lookup of " + table +
                                   " failed: " + llvm::toString(address.takeError()));
  const auto *entries = address->toPtr<const einrt_kernel_entry *>();
  std::vector<einrt::KernelFn> fns;
  for (size_t k = 0; k < chunk.specs.size(); ++k)
    fns.push_back(entries[k].fn);
  return fns;
}

} // namespace

struct KernelCompiler::Impl {
  std::vector<KernelSpec> specs; // by index
  std::unordered_map<std::string, int64_t> byKey;
  std::vector<einrt::KernelEntry> table;
  std::string target; // setTarget's; empty: jitCpuTarget()
  std::string jitTarget;
  double seconds = 0;
  int64_t compiled = 0, cached = 0;
  bool keepIR = false;
  std::string optimizedIR;
};

KernelCompiler::KernelCompiler() : impl_(std::make_unique<Impl>()) {}
KernelCompiler::~KernelCompiler() = default;

std::unique_ptr<KernelCompiler> KernelCompiler::create() {
  initialiseLLVM();
  return std::unique_ptr<KernelCompiler>(new KernelCompiler());
}

FailureOr<int64_t> KernelCompiler::add(Operation *op) {
  auto start = std::chrono::steady_clock::now();
  auto spec = describeKernel(op);
  if (failed(spec))
    return failure();
  int64_t index = add(std::move(*spec));
  impl_->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return index;
}

int64_t KernelCompiler::add(KernelSpec spec) {
  auto it = impl_->byKey.find(spec.key);
  if (it != impl_->byKey.end())
    return it->second;
  int64_t index = int64_t(impl_->specs.size());
  impl_->byKey.emplace(spec.key, index);
  impl_->specs.push_back(std::move(spec));
  impl_->table.push_back(nullptr);
  return index;
}

void KernelCompiler::setTarget(const std::string &target) { impl_->target = target; }
const std::string &KernelCompiler::jitTarget() const { return impl_->jitTarget; }

/// The target compile() uses.
static einrt::Expected<const CpuTarget *> chooseJitTarget(const std::string &requested) {
  if (requested.empty())
    return jitCpuTarget();
  const CpuTarget *t = findCpuTarget(requested);
  if (!t)
    return einrt::Status::invalid("unknown CPU target '" + requested + "' (einc knows " +
                                  cpuTargetNames() + ")");
  if (!hostRuns(*t))
    return einrt::Status::invalid("this CPU cannot run " + requested + " code");
  return t;
}

LogicalResult KernelCompiler::compile() {
  auto start = std::chrono::steady_clock::now();
  auto finish = [&](LogicalResult r) {
    impl_->seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  };
  einrt::Expected<const CpuTarget *> chosen = chooseJitTarget(impl_->target);
  if (!chosen.ok()) {
    llvm::errs() << chosen.status().message() << "\n";
    return finish(failure());
  }
  const CpuTarget *target = *chosen;
  // Kernels compiled for another target (an earlier call) are not these.
  if (impl_->jitTarget != target->name)
    for (einrt::KernelEntry &e : impl_->table)
      e = nullptr;
  impl_->jitTarget = target->name;
  ProcessCache &pc = cache();
  std::lock_guard<std::mutex> lock(pc.mutex);

  // Take what the process already has; collect the rest (one per key).
  std::vector<int64_t> fresh;
  for (size_t i = 0; i < impl_->specs.size(); ++i) {
    if (impl_->table[i].fn)
      continue;
    auto it = pc.kernels.find(cacheKey(*target, impl_->specs[i]));
    if (it != pc.kernels.end()) {
      impl_->table[i] = {it->second, parallelExtent(impl_->specs[i])};
      ++impl_->cached;
    } else {
      fresh.push_back(int64_t(i));
    }
  }
  if (fresh.empty())
    return finish(success());

  // Independent objects compile in parallel: worth it from a few dozen
  // kernels (a training step has about a hundred).
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  if (const char *env = std::getenv("EINC_JIT_THREADS"))
    threads = std::max(1, std::atoi(env));
  size_t chunks = std::min<size_t>({threads, 8, (fresh.size() + 23) / 24});
  if (impl_->keepIR || chunks == 0)
    chunks = 1;
  std::vector<Chunk> work(chunks);
  for (size_t k = 0; k < fresh.size(); ++k) {
    Chunk &c = work[k * chunks / fresh.size()];
    c.specs.push_back(&impl_->specs[fresh[k]]);
    c.indices.push_back(fresh[k]);
  }
  for (Chunk &c : work)
    c.prefix = "einc_jit" + std::to_string(pc.nextObject++);
  if (impl_->keepIR)
    work[0].optimizedIR = &impl_->optimizedIR;
  auto compileOne = [target](Chunk &c) {
    KernelObjectRequest request;
    request.specs = c.specs;
    request.target = target;
    request.prefix = c.prefix;
    request.indices = c.indices;
    request.optimizedIR = c.optimizedIR;
    c.status = compileKernelObject(request, c.object);
  };
  std::vector<std::thread> pool;
  for (size_t c = 1; c < chunks; ++c)
    pool.emplace_back([&work, &compileOne, c] { compileOne(work[c]); });
  compileOne(work[0]);
  for (std::thread &t : pool)
    t.join();

  bool ok = true;
  for (Chunk &c : work) {
    einrt::Expected<std::vector<einrt::KernelFn>> loaded =
        c.status.ok() ? loadChunk(pc, *target, c)
                      : einrt::Expected<std::vector<einrt::KernelFn>>(c.status);
    if (!loaded.ok()) {
      llvm::errs() << loaded.status().message() << "\n";
      ok = false;
      continue;
    }
    const std::vector<einrt::KernelFn> &fns = *loaded;
    for (size_t k = 0; k < c.indices.size(); ++k) {
      const KernelSpec &spec = impl_->specs[c.indices[k]];
      pc.kernels[cacheKey(*target, spec)] = fns[k];
      impl_->table[c.indices[k]] = {fns[k], parallelExtent(spec)};
      ++impl_->compiled;
    }
  }
  return finish(success(ok));
}

einrt::Status KernelCompiler::emitObject(const std::string &target, const std::string &prefix,
                                         llvm::raw_ostream &out) {
  auto start = std::chrono::steady_clock::now();
  const CpuTarget *t = findCpuTarget(target);
  if (!t)
    return einrt::Status::invalid("unknown CPU target '" + target + "' (einc knows " +
                                  cpuTargetNames() + ")");
  if (!einrt::isSymbolPrefix(prefix))
    return einrt::Status::invalid("the kernel symbol prefix '" + prefix +
                                  "' is not a C identifier");
  std::vector<const KernelSpec *> specs;
  KernelObjectRequest request;
  for (size_t i = 0; i < impl_->specs.size(); ++i) {
    specs.push_back(&impl_->specs[i]);
    request.indices.push_back(int64_t(i));
  }
  request.specs = specs;
  request.target = t;
  request.prefix = prefix;
  if (impl_->keepIR)
    request.optimizedIR = &impl_->optimizedIR;
  llvm::SmallVector<char, 0> object;
  einrt::Status compiled = compileKernelObject(request, object);
  if (compiled.ok())
    out.write(object.data(), object.size());
  impl_->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return compiled;
}

einrt::Status KernelCompiler::emitObjectFile(const std::string &target, const std::string &prefix,
                                             const std::string &path) {
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  // Before opening `path`: no empty file left behind.
  EINRT_TRY(emitObject(target, prefix, os));
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  if (!ec) {
    out.write(object.data(), object.size());
    out.close();
    ec = out.error();
    out.clear_error();
  }
  if (ec)
    return einrt::Status(einrt::StatusCode::Io, "cannot write " + path + ": " + ec.message());
  return einrt::Status();
}

const std::vector<einrt::KernelEntry> &KernelCompiler::table() const { return impl_->table; }
double KernelCompiler::compileSeconds() const { return impl_->seconds; }
int64_t KernelCompiler::compiledCount() const { return impl_->compiled; }
int64_t KernelCompiler::cachedCount() const { return impl_->cached; }

void KernelCompiler::setKeepOptimizedIR(bool keep) { impl_->keepIR = keep; }
const std::string &KernelCompiler::optimizedIR() const { return impl_->optimizedIR; }
int64_t KernelCompiler::kernelCount() const { return int64_t(impl_->specs.size()); }
const std::string &KernelCompiler::signature(int64_t index) const {
  return impl_->specs[index].key;
}
const KernelSpec &KernelCompiler::spec(int64_t index) const { return impl_->specs[index]; }

} // namespace ein::codegen
