//===- CpuTestSupport.h - Lowering a function both ways and comparing ----===//
//
// Shared by the CPU-backend tests: lower one function for the CPU backend and
// for the reference backend, run both on the same arguments, and return the
// worst relative error over the results; run ein-fuse-elementwise.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_UNIT_CPU_CPUTESTSUPPORT_H
#define EINC_TEST_UNIT_CPU_CPUTESTSUPPORT_H

#include "codegen/CpuKernels.h"
#include "codegen/CpuLowering.h"
#include "codegen/ReferenceLowering.h"
#include "passes/Passes.h"
#include "runtime/core/Executor.h"
#include "runtime/cpu/CpuDevice.h"
#include "test/unit/StatusTesting.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace einc::cputest {

using ::ein::codegen::KernelCompiler;
using namespace mlir;

/// max |a - b| / max |ref| over all elements (0 when both are all zero).
inline double relativeError(const std::vector<double> &got, const std::vector<double> &ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    num = std::max(num, std::fabs(got[i] - ref[i]));
    den = std::max(den, std::fabs(ref[i]));
  }
  return den == 0 ? num : num / den;
}

struct Lowered {
  std::unique_ptr<KernelCompiler> kernels;
  std::optional<einrt::Program> cpu, reference;
  std::string errors;
};

inline Lowered lowerBoth(mlir::func::FuncOp fn) {
  Lowered l;
  ScopedDiagnosticHandler handler(fn.getContext(), [&](Diagnostic &d) {
    l.errors += d.str() + "\n";
    return success();
  });
  l.kernels = KernelCompiler::create();
  auto cpu = ::ein::codegen::lowerToCpuProgram(fn, *l.kernels);
  if (failed(cpu) || failed(l.kernels->compile()))
    return l;
  l.cpu = std::move(*cpu);
  auto ref = ::ein::codegen::lowerToProgram(fn);
  if (succeeded(ref))
    l.reference = std::move(*ref);
  return l;
}

/// A CPU device with `l`'s kernels on the thread count einc would use
/// (EINC_NUM_THREADS, ...): the determinism matrix (scripts/test-matrix)
/// varies it.
inline std::shared_ptr<einrt::CpuDevice> cpuDevice(const Lowered &l) {
  return std::make_shared<einrt::CpuDevice>(l.kernels->table(), einrt::defaultThreadCount());
}

/// Runs both programs on the same arguments (`fill` sets them on the
/// reference executor; they are copied to the CPU one; the CPU one on
/// einrt::defaultThreadCount() threads) and returns the worst relative
/// error over the results, or why a run failed.
template <class Fill> einrt::Expected<double> compareRuns(Lowered &l, Fill fill) {
  einrt::Expected<einrt::Executor> ref =
      einrt::Executor::create(*l.reference, einrt::Precision::F32);
  if (!ref.ok())
    return ref.takeStatus().withContext("the reference executor: ");
  einrt::Expected<einrt::Executor> cpu = einrt::Executor::create(*l.cpu, cpuDevice(l));
  if (!cpu.ok())
    return cpu.takeStatus().withContext("the cpu executor: ");
  fill(*ref);
  for (size_t a = 0; a < ref->argumentCount(); ++a) {
    einrt::Expected<std::vector<double>> v = ref->read(size_t(l.reference->arguments[a]));
    if (!v.ok())
      return v.takeStatus();
    EINRT_TRY(cpu->setArgument(a, v->data(), v->size()));
  }
  EINRT_TRY(ref->run().withContext("the reference run: "));
  EINRT_TRY(cpu->run().withContext("the cpu run: "));
  double worst = 0;
  for (size_t r = 0; r < ref->resultCount(); ++r) {
    double e = relativeError(cpu->getResult(r).values, ref->getResult(r).values);
    if (!(e <= worst)) // NaN-safe
      worst = e;
  }
  return worst;
}

inline void fillRandom(einrt::Executor &ex, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (size_t a = 0; a < ex.argumentCount(); ++a) {
    size_t b = size_t(ex.program().arguments[a]);
    std::vector<double> v(size_t(ex.elementCount(b)));
    for (double &x : v)
      x = u(gen);
    EINC_EXPECT_OK(ex.write(b, v.data(), v.size()));
  }
}

/// Runs ein-fuse-elementwise on every function of `module`.
inline bool fuse(mlir::ModuleOp module) {
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(mlir::ein::createEinFuseElementwise());
  return succeeded(pm.run(module));
}

} // namespace einc::cputest

#endif // EINC_TEST_UNIT_CPU_CPUTESTSUPPORT_H
