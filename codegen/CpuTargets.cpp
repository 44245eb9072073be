//===- CpuTargets.cpp - The portable x86-64 targets kernels compile for ---===//
#include "codegen/CpuTargets.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/TargetParser/Host.h"

#include <cstdlib>

namespace ein::codegen {
namespace {

// The psABI's micro-architecture levels, in LLVM's feature names, each
// tuned as LLVM tunes the level itself (x86-64-v3: Haswell's model): in
// gpt's step, "generic" tuning made the reductions about 1.6x slower on an
// AVX2 machine. x86-64-v4's own tuning is Skylake-X's, which prefers 256-bit
// vectors; its kernels are 512 bits (16 floats) wide instead.
// docs/decisions.md, "Portable CPU targets".
// clang-format off
const CpuTarget kTargets[] = {
    {"x86-64-v4", "x86-64-v4", "x86-64-v4", 512, "x86-64-v3",
     {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}},
    {"x86-64-v3", "x86-64-v3", "x86-64-v3", 0, "x86-64-v2",
     {"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave"}},
    {"x86-64-v2", "x86-64-v2", "x86-64-v2", 0, nullptr,
     {"cx16", "sahf", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3"}},
};
// clang-format on

constexpr const char *kTriple = "x86_64-unknown-linux-gnu";

} // namespace

llvm::ArrayRef<CpuTarget> cpuTargets() { return kTargets; }

const CpuTarget *findCpuTarget(llvm::StringRef name) {
  for (const CpuTarget &t : kTargets)
    if (name == t.name)
      return &t;
  return nullptr;
}

std::vector<const char *> levelFeatures(const CpuTarget &target) {
  std::vector<const char *> all;
  for (const CpuTarget *t = &target; t; t = t->below ? findCpuTarget(t->below) : nullptr)
    all.insert(all.end(), t->features.begin(), t->features.end());
  return all;
}

std::string cpuTargetNames() {
  std::string s;
  for (const CpuTarget &t : kTargets)
    s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

bool hostRuns(const CpuTarget &target) {
#if defined(__x86_64__)
  const auto host = llvm::sys::getHostCPUFeatures();
  for (const char *feature : levelFeatures(target)) {
    auto it = host.find(feature);
    if (it == host.end() || !it->second)
      return false;
  }
  return true;
#else
  (void)target;
  return false;
#endif
}

const CpuTarget *hostCpuTarget() {
  for (const CpuTarget &t : kTargets)
    if (hostRuns(t))
      return &t;
  return nullptr;
}

einrt::Expected<const CpuTarget *> jitCpuTarget() {
  const char *env = std::getenv("EINC_JIT_CPU");
  if (env && *env) {
    const CpuTarget *t = findCpuTarget(env);
    if (!t)
      return einrt::Status::invalid(std::string("EINC_JIT_CPU: '") + env +
                                    "' is not a CPU target einc knows (" + cpuTargetNames() + ")");
    if (!hostRuns(*t)) {
      const CpuTarget *best = hostCpuTarget();
      return einrt::Status::invalid(
          std::string("EINC_JIT_CPU: this CPU cannot run ") + t->name + " code (" +
          (best ? std::string("its best target is ") + best->name : "it runs none") + ")");
    }
    return t;
  }
  if (const CpuTarget *t = hostCpuTarget())
    return t;
  return einrt::Status(
      einrt::StatusCode::Unavailable,
      "the CPU backend needs an x86-64 CPU of at least x86-64-v2 (SSE4.2, POPCNT); this one is '" +
          llvm::sys::getHostCPUName().str() + "' (use --backend reference)");
}

einrt::Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const CpuTarget &target) {
  std::string lookupError;
  const llvm::Target *llvmTarget = llvm::TargetRegistry::lookupTarget(kTriple, lookupError);
  if (!llvmTarget)
    return einrt::Status::internal("this LLVM has no x86-64 code generator: " + lookupError);
  std::unique_ptr<llvm::TargetMachine> tm(llvmTarget->createTargetMachine(
      kTriple, target.cpu, /*Features=*/"", llvm::TargetOptions(), llvm::Reloc::PIC_,
      /*CodeModel=*/std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    return einrt::Status::internal(std::string("cannot create a TargetMachine for ") + target.name);
  return tm;
}

} // namespace ein::codegen
