//===- KernelTable.h - Compiled kernels linked in as object code -*- C++ -*-===//
//
// An object file from KernelCompiler::emitObject (codegen/CpuKernels.h)
// holds, for one target (runtime/cpu/CpuTarget.h) and a symbol prefix P:
//
//   void P_T_k<i>(void **args);                  // kernel i, a KernelFn
//   const einrt_kernel_entry P_T_kernels[N];     // {P_T_k<i>, its extent}
//   const int64_t P_T_kernel_count;              // N
//
// where T is the target's name with '-' as '_' (x86-64-v3: x86_64_v3), and
// i is the kernel's index in the compiler's table, which the Program's
// Kernel steps hold. A program linked with such objects declares the table
// and count extern "C" and hands them to kernelTable(): kernels are found
// by index, never by name. Several targets' objects link side by side (the
// names carry the target); bestCpuTarget() says which one to use.
//
// The JIT (codegen/CpuKernels.cpp) loads objects of the same form.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_KERNELTABLE_H
#define EINC_RUNTIME_KERNELTABLE_H

#include "runtime/core/Program.h"

#include <cstdint>
#include <string>
#include <vector>

extern "C" {
/// One entry of a compiled kernel table: 16 bytes, the function pointer
/// then the extent of its parallel loop (runtime/core/Program.h's KernelEntry).
struct einrt_kernel_entry {
  void (*fn)(void **args);
  int64_t extent;
};
}

namespace einrt {

/// `target` as it appears in symbol names: '-' and '.' become '_'.
std::string targetSymbolPart(const std::string &target);
/// The symbols of an object's kernel i, table and count (see above).
std::string kernelSymbol(const std::string &prefix, const std::string &target, int64_t index);
std::string kernelTableSymbol(const std::string &prefix, const std::string &target);
std::string kernelCountSymbol(const std::string &prefix, const std::string &target);

/// Whether `prefix` can start a C symbol name: [A-Za-z_][A-Za-z0-9_]*.
bool isSymbolPrefix(const std::string &prefix);

/// A CPU device's kernel table (runtime/cpu/CpuDevice.h) from a linked one.
std::vector<KernelEntry> kernelTable(const einrt_kernel_entry *entries, int64_t count);

} // namespace einrt

#endif // EINC_RUNTIME_KERNELTABLE_H
