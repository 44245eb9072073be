//===- CpuKernels.h - Non-contraction ops as JIT-compiled CPU kernels -*- C++ -*-===//
//
// Every `ein` op other than a contraction becomes a kernel generated as MLIR
// (func/scf/arith/math/memref on static shapes), lowered to LLVM and compiled
// in-process by MLIR's ExecutionEngine for the host CPU (vectorised: a host
// TargetMachine is passed to the optimiser). Ops with the same signature
// (name, attributes except `axes`/`ein.*`, operand and result types) share
// one kernel. Kernels are compiled once per process (a cache keyed by that
// signature) and run through plain function pointers (runtime/Program.h's
// KernelFn), so the runtime never sees MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_CPUKERNELS_H
#define EINC_CODEGEN_CPUKERNELS_H

#include "runtime/Program.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ein::codegen {

struct KernelSpec; // codegen/CpuKernelGen.h

class KernelCompiler {
public:
  /// Initialises LLVM's native target once per process.
  static std::unique_ptr<KernelCompiler> create();
  ~KernelCompiler();

  /// Registers the kernel for `op` (not a contraction, f32/i32/i1 types) and
  /// returns its index in the table; identical ops share an index. Errors are
  /// diagnostics on `op`.
  mlir::FailureOr<int64_t> add(mlir::Operation *op);
  /// Registers a kernel already described (e.g. a fused one,
  /// describeFusedKernel in codegen/CpuKernelGen.h); identical specs (same
  /// key) share an index.
  int64_t add(KernelSpec spec);

  /// JIT-compiles every kernel added since the last call (kernels already in
  /// the process cache are reused). After success, table() holds one function
  /// per index.
  mlir::LogicalResult compile();

  /// Each kernel with the extent of its parallel loop (parallelExtent).
  const std::vector<einrt::KernelEntry> &table() const;
  /// Seconds spent generating and compiling (this compiler's calls).
  double compileSeconds() const;
  /// How many kernels were compiled fresh / taken from the process cache.
  int64_t compiledCount() const;
  int64_t cachedCount() const;

  /// Keep the optimised LLVM IR of the next compile() that compiles
  /// anything (for tests and debugging: e.g. checking vectorisation).
  void setKeepOptimizedIR(bool keep);
  const std::string &optimizedIR() const;
  /// Distinct kernels added, and the signature of one (name, attributes
  /// other than `axes`/`ein.*`, operand and result types; for elementwise
  /// ops and reshape, element types and the element count only).
  int64_t kernelCount() const;
  const std::string &signature(int64_t index) const;

  struct Impl;

private:
  KernelCompiler();
  std::unique_ptr<Impl> impl_;
};

} // namespace ein::codegen

#endif // EINC_CODEGEN_CPUKERNELS_H
