//===- CpuTarget.h - Which portable x86-64 target this CPU runs -*- C++ -*-===//
//
// Compiled CPU kernels are built for a few portable x86-64 targets, the
// psABI's micro-architecture levels, never for one machine's CPU: the
// kernels' bits depend on their vector width and the vectoriser's choices,
// so `einc train` (JIT) and an executable from `einc compile` (object code)
// must compile for the same target on a given machine to agree bit for bit.
// This is the runtime's half of that choice (no LLVM: a compiled executable
// runs it at start-up); codegen/CpuTargets.h is the compiler's, from LLVM's
// host features, and both pick the same name on every machine (cpu-unit's
// CpuTargets.RuntimeAndCompilerPickTheSame).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_CPUTARGET_H
#define EINC_RUNTIME_CPUTARGET_H

#include <string>

namespace einrt {

/// The targets, best first (the compiler's table, codegen/CpuTargets.h,
/// lists the same names in the same order).
constexpr const char *kCpuTargets[] = {"x86-64-v4", "x86-64-v3", "x86-64-v2"};

/// Whether this CPU, and its OS (the AVX / AVX-512 register state saved),
/// runs code built for `target`; false for a name not in kCpuTargets.
bool cpuRuns(const std::string &target);

/// The best target in kCpuTargets this CPU runs; "" when it runs none (not
/// x86-64, or older than x86-64-v2).
std::string bestCpuTarget();

} // namespace einrt

#endif // EINC_RUNTIME_CPUTARGET_H
