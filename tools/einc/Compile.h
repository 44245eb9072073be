//===- Compile.h - The one compile path: a model's module → a bundle -*- C++ -*-===//
//
// Every einc command that runs or prices a model goes through compileModel,
// once: the train-step pipeline (ein-build-train-step with the settings as
// its options), fusion (unless `fusion = off`), lowering of each requested
// function to an einrt::Program for the backend, and — for the CPU backend —
// the kernels those Programs call (JIT-compiled in-process when asked; the
// same compiler emits them as object code for `einc compile`). The static
// report is built from that same result: its costs from the fused IR, its
// memory from the memory plan (runtime/Arena.h planMemory) of the very
// @train_step Program the runtime allocates, so the report's peak is the
// runtime's arena + resident block by construction.
//
// The result is an einrt::ModelBundle (runtime/ModelBundle.h: Programs,
// metadata, report) — what `einc train`/`einc sample` hand to the runner and
// `einc compile` writes into an executable.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_EINC_COMPILE_H
#define EINC_TOOLS_EINC_COMPILE_H

#include "Options.h"
#include "Report.h"
#include "Stages.h"

#include "codegen/CpuKernels.h"
#include "runtime/ModelBundle.h"
#include "runtime/TrainSettings.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace einc {

struct CompileRequest {
  /// "cpu" (fused kernels + BLAS), "reference" (the interpreter) or "cuda"
  /// (the cpu Programs, their kernels rendered to CUDA: bundle.cuda).
  std::string backend = "cpu";
  /// The functions to lower, in order; the bundle's programs follow it.
  /// "forward" needs no train step; the others ("train_step",
  /// "accumulate_grad", "apply_update", "grad") are built by the train-step
  /// pipeline (runner::trainFunctionNames says which a training run needs).
  std::vector<std::string> functions;
  /// CPU backend: JIT-compile the kernels in-process, to run them now
  /// (CompiledModel::kernels->table()). Off for `einc compile` and
  /// `einc report`, which run nothing.
  bool jit = true;
  /// Build the static report of @train_step on `reportDevice` (with the
  /// Options' --device-file); a missing profile is no report, not an error,
  /// when `reportOptional`.
  bool report = false;
  std::string reportDevice = "cpu";
  bool reportOptional = false;
  /// Render the report into the bundle (JSON) and CompiledModel::reportText,
  /// as an executable carries it; off for `einc report`, which prints the one
  /// format it was asked for.
  bool renderReport = true;
  /// ZeRO-1 (train --shard-optimizer): @apply_update keeps rank
  /// `shardRank`'s share of `shardRanks` (1: everything).
  int64_t shardRank = 0, shardRanks = 1;
};

struct CompiledModel {
  /// The Programs (request order), the model's metadata (name, source,
  /// dims, settings, window mapping when a train program has one) and the
  /// report's JSON. Kernel objects are not in it: emit them from `kernels`.
  einrt::ModelBundle bundle;
  /// The CPU backend's kernels, which the bundle's Kernel steps index;
  /// compiled for this machine when the request asked for the JIT.
  std::unique_ptr<ein::codegen::KernelCompiler> kernels;
  /// The static report (request.report), and its text rendering.
  std::optional<Report> report;
  std::string reportText;
  /// The settings the module was compiled with (the model's, with the
  /// report flags --precision/--optimizer applied).
  einrt::TrainSettings settings;
  double compileSeconds = 0; // pipeline + lowering + kernels
  int64_t kernelsCompiled = 0, kernelsCached = 0;

  /// The program of `function` in the bundle (null: not lowered).
  const einrt::Program *program(const std::string &function) const;
};

/// This machine as ein-remat's device for a run on the cpu or reference
/// backend: the memory the process can still allocate (runtime/Memory.h,
/// what `budget:N%` takes N% of) with `rates`' flop rates and bandwidth (the
/// cpu profile's, when there is one; else the pass's defaults). nullopt when
/// no bound on memory is known.
std::optional<RematDevice> thisMachineForRemat(const RematDevice *rates);

/// Compiles `module` (the front end's, changed in place) as `request` asks.
/// `o` supplies the model's file name and the report's flags (--device-file,
/// --precision, --optimizer, --gpus...); `source` is the model file's text.
/// Errors are printed (`einc: ...`) and return false.
bool compileModel(mlir::ModuleOp module, const Options &o, const einrt::TrainSettings &settings,
                  const std::string &source, const CompileRequest &request, CompiledModel &out);

} // namespace einc

#endif // EINC_TOOLS_EINC_COMPILE_H
