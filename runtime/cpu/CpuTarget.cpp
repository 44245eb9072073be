//===- CpuTarget.cpp - Which portable x86-64 target this CPU runs ---------===//
//
// The compiler runtime's CPU model (libgcc's or compiler-rt's
// __cpu_indicator_init: cpuid, and xgetbv for the OS-saved vector state)
// answers for the psABI levels by name, so this file holds no cpuid bits.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CpuTarget.h"

namespace einrt {

bool cpuRuns(const std::string &target) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // May run before the constructor that fills the CPU model (static
  // initialisation of a compiled executable), so initialise it here.
  __builtin_cpu_init();
  // __builtin_cpu_supports takes string literals only.
  if (target == "x86-64-v4")
    return __builtin_cpu_supports("x86-64-v4");
  if (target == "x86-64-v3")
    return __builtin_cpu_supports("x86-64-v3");
  if (target == "x86-64-v2")
    return __builtin_cpu_supports("x86-64-v2");
#else
  (void)target;
#endif
  return false;
}

std::string bestCpuTarget() {
  for (const char *target : kCpuTargets)
    if (cpuRuns(target))
      return target;
  return "";
}

} // namespace einrt
