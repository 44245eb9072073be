//===- CpuTargets.h - The portable x86-64 targets kernels compile for -*- C++ -*-===//
//
// The CPU kernels are compiled for one of a few portable targets, never for
// the host's own CPU: their bits depend on the vector width and on the
// vectoriser's choices (reassociated sums), so the JIT (`einc run/train`)
// and object files (`einc compile`, KernelCompiler::emitObject) must compile
// for the same target on a given machine to agree bit for bit. Both pick it
// here; the runtime makes the same pick without LLVM (runtime/cpu/CpuTarget.h).
// Targets are data: the LLVM CPU whose instructions the code may use, the
// CPU it is tuned for, the preferred vector width, and the host features
// (LLVM's names) a machine must report to run it: the psABI level's.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_CPUTARGETS_H
#define EINC_CODEGEN_CPUTARGETS_H

#include "runtime/base/Status.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>
#include <vector>

namespace ein::codegen {

struct CpuTarget {
  const char *name;                   // runtime/cpu/CpuTarget.h's name: "x86-64-v3"
  const char *cpu;                    // the LLVM CPU: the instructions the kernels may use
  const char *tuneCpu;                // the LLVM CPU they are scheduled and vectorised for
  int vectorWidth;                    // bits the vectoriser prefers (0: as tuneCpu does)
  const char *below;                  // the level this one extends (null: the lowest)
  std::vector<const char *> features; // the host features this level adds
};

/// Best first; the names and order of runtime/cpu/CpuTarget.h's kCpuTargets.
llvm::ArrayRef<CpuTarget> cpuTargets();
/// The target called `name`; null when there is none.
const CpuTarget *findCpuTarget(llvm::StringRef name);
/// The host features `target` needs: its own and every level's below it.
std::vector<const char *> levelFeatures(const CpuTarget &target);
/// "x86-64-v4, x86-64-v3, x86-64-v2": for messages.
std::string cpuTargetNames();

/// Whether LLVM's host features (llvm::sys::getHostCPUFeatures) include
/// levelFeatures(target).
bool hostRuns(const CpuTarget &target);
/// The best target the host runs; null when it runs none.
const CpuTarget *hostCpuTarget();

/// The JIT's target: EINC_JIT_CPU=NAME when set (a target the host runs: how
/// scripts/test-matrix emulates an AVX2 machine on an AVX-512 one), else
/// hostCpuTarget(). Invalid when the variable names no target or one the
/// host cannot run; Unavailable when the host runs none.
einrt::Expected<const CpuTarget *> jitCpuTarget();

/// The TargetMachine both the JIT and object files use for `target`: x86-64
/// Linux ELF, position-independent code, the small code model, O3. The
/// caller initialises LLVM's x86 target. Internal on failure.
einrt::Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const CpuTarget &target);

} // namespace ein::codegen

#endif // EINC_CODEGEN_CPUTARGETS_H
