//===- CpuKernelModule.h - Kernels to optimised LLVM IR to object code -*- C++ -*-===//
//
// The one code path of the CPU kernels, shared by the JIT and by object files
// (codegen/CpuKernels.h): KernelSpecs → MLIR (CpuKernelGen) → polynomial
// approximations of math functions → the LLVM dialect (bare-pointer memref
// arguments) → an llvm::Module → each kernel's packed wrapper and the table
// (runtime/core/KernelTable.h) → O3 for the target's TargetMachine → one ELF
// object. The JIT loads that object; emitObject writes it. So the JIT runs
// the very kernels an object file holds for the same target and names.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_CPUKERNELMODULE_H
#define EINC_CODEGEN_CPUKERNELMODULE_H

#include "codegen/CpuTargets.h"
#include "runtime/base/Status.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ein::codegen {

struct KernelSpec; // codegen/CpuKernelGen.h

/// Kernels to compile together and the names of their symbols.
struct KernelObjectRequest {
  llvm::ArrayRef<const KernelSpec *> specs;
  const CpuTarget *target = nullptr;
  std::string prefix;                 // runtime/core/KernelTable.h's P
  std::vector<int64_t> indices;       // kernel k is P_T_k<indices[k]>
  std::string *optimizedIR = nullptr; // when set: receives the optimised module
};

/// Compiles the request into a relocatable ELF object in `object`; else
/// Internal (generated kernels should always compile). Runs in LLVM and MLIR
/// contexts of its own, so calls may run on several threads.
einrt::Status compileKernelObject(const KernelObjectRequest &request,
                                  llvm::SmallVectorImpl<char> &object);

} // namespace ein::codegen

#endif // EINC_CODEGEN_CPUKERNELMODULE_H
