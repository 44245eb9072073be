//===- CpuKernels.h - Non-contraction ops as compiled CPU kernels -*- C++ -*-===//
//
// Every `ein` op other than a contraction becomes a kernel generated as MLIR
// (func/scf/arith/math/memref on static shapes), lowered to LLVM, optimised
// and compiled to object code for a portable x86-64 target
// (codegen/CpuTargets.h), then either loaded in-process (compile(): the JIT
// of `einc run/train`, for the target this machine runs) or written out as
// an object file (emitObject(): for `einc compile`, any target). Both take
// the same steps (codegen/CpuKernelModule.h). Ops with the same signature
// (name, attributes except `axes`/`ein.*`, operand and result types) share
// one kernel. JIT-compiled kernels are kept per process (a cache keyed by
// target and signature) and run through plain function pointers
// (runtime/core/Program.h's KernelFn), so the runtime never sees MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_CPUKERNELS_H
#define EINC_CODEGEN_CPUKERNELS_H

#include "codegen/KernelSpec.h"
#include "runtime/base/Status.h"
#include "runtime/core/Program.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace ein::codegen {

class KernelCompiler : public KernelSpecTable {
public:
  /// Initialises LLVM's native target once per process.
  static std::unique_ptr<KernelCompiler> create();
  ~KernelCompiler() override;

  /// Registers the kernel for `op` (not a contraction, f32/i32/i1 types) and
  /// returns its index in the table; identical ops share an index. Errors are
  /// diagnostics on `op`.
  mlir::FailureOr<int64_t> add(mlir::Operation *op);
  /// Registers a kernel already described (e.g. a fused one,
  /// describeFusedKernel in codegen/CpuKernelGen.h); identical specs (same
  /// key) share an index.
  int64_t add(KernelSpec spec);

  /// JIT-compiles every kernel added since the last call (kernels already in
  /// the process cache are reused) for the JIT's target: setTarget's, else
  /// EINC_JIT_CPU's or the best this machine runs (jitCpuTarget in
  /// codegen/CpuTargets.h). After success, table() holds one function per
  /// index. Errors are printed to stderr.
  mlir::LogicalResult compile();
  /// Compile for `target` (a name of cpuTargets(), which this machine must
  /// run) instead; "" restores the default.
  void setTarget(const std::string &target);
  /// The target the last compile() used ("" before one succeeded).
  const std::string &jitTarget() const;

  /// Compiles every kernel added (all of table()'s indices, not only the
  /// JIT's) for `target` (a name of cpuTargets(): "x86-64-v3", ...; the
  /// machine need not run it) into one relocatable ELF object written to
  /// `out`: kernel i as the KernelFn `P_T_k<i>`, the table `P_T_kernels`
  /// and the count `P_T_kernel_count` (runtime/core/KernelTable.h: P = `prefix`,
  /// a C identifier; T = the target with '_' for '-'). It needs nothing at
  /// link time beyond libc and libm. The same IR and code as compile() for
  /// that target. Invalid: an unknown target or a bad prefix.
  einrt::Status emitObject(const std::string &target, const std::string &prefix,
                           llvm::raw_ostream &out);
  /// The same into the file `path` (written only when compilation succeeds;
  /// Io when it cannot be).
  einrt::Status emitObjectFile(const std::string &target, const std::string &prefix,
                               const std::string &path);

  /// Each kernel with the extent of its parallel loop (parallelExtent).
  const std::vector<einrt::KernelEntry> &table() const;
  /// Seconds spent generating and compiling (this compiler's calls).
  double compileSeconds() const;
  /// How many kernels were compiled fresh / taken from the process cache.
  int64_t compiledCount() const;
  int64_t cachedCount() const;

  /// Keep the optimised LLVM IR of the next compile() that compiles
  /// anything, or of the next emitObject() (for tests and debugging: e.g.
  /// checking vectorisation).
  void setKeepOptimizedIR(bool keep);
  const std::string &optimizedIR() const;
  /// Distinct kernels added, and the signature of one (name, attributes
  /// other than `axes`/`ein.*`, operand and result types; for elementwise
  /// ops and reshape, element types and the element count only).
  int64_t kernelCount() const override;
  const std::string &signature(int64_t index) const;
  /// The description of kernel `index` (what other backends render: the
  /// CUDA renderer, codegen/CudaRenderer.h).
  const KernelSpec &spec(int64_t index) const override;

  struct Impl;

private:
  KernelCompiler();
  std::unique_ptr<Impl> impl_;
};

} // namespace ein::codegen

#endif // EINC_CODEGEN_CPUKERNELS_H
