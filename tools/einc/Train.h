//===- Train.h - `einc train`: the training loop ----------------*- C++ -*-===//
#ifndef EINC_TOOLS_EINC_TRAIN_H
#define EINC_TOOLS_EINC_TRAIN_H

#include "Options.h"

#include "codegen/CpuKernels.h"
#include "runtime/Executor.h"
#include "runtime/TrainSettings.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace einc {

/// Functions of one module lowered for a backend ("cpu": BLAS matmuls and
/// JIT-compiled kernels; "reference": the reference kernels). The kernel
/// compiler (cpu) holds the compiled code: keep this alive while the
/// executors run.
struct Lowered {
  std::unique_ptr<ein::codegen::KernelCompiler> kernels;
  std::shared_ptr<einrt::Device> device;                 // every executor's
  std::vector<std::optional<einrt::Executor>> executors; // one per name
  double compileSeconds = 0;
  int64_t kernelsCompiled = 0, kernelsCached = 0;
  std::string backend;
  int threads = 1; // CPU backend: threads for kernels and BLAS
  ~Lowered();
};

/// Lowers @name for each of `names` and creates an executor for each; false
/// after printing why. CPU backend: `threads` for kernels and BLAS (0:
/// einrt::defaultThreadCount()).
bool lowerFunctions(mlir::ModuleOp module, const einrt::TrainSettings &settings,
                    const std::vector<std::string> &names, const std::string &backend,
                    int64_t threads, Lowered &out);

/// `einc train`: compile the training step with the model's settings, lower
/// it for --backend, and run the runtime's Trainer. Returns the exit status.
int trainModel(const Options &o, const einrt::TrainSettings &settings, mlir::ModuleOp module);

} // namespace einc

#endif // EINC_TOOLS_EINC_TRAIN_H
