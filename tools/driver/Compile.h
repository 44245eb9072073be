//===- Compile.h - The one compile path: a model's module → a bundle -*- C++ -*-===//
//
// Every einc command that runs or prices a model goes through compileModel,
// once (`einc run --gradcheck` a second time: the model as elaborated for the
// reference backend in float64), with a typed CompileRequest
// (CompileRequest.h): the train-step
// pipeline (ein-build-train-step with the settings as its options), fusion
// (unless `fusion = off`), lowering of each requested function to an
// einrt::Program for the backend, and — for the CPU backend — the kernels
// those Programs call (JIT-compiled in-process when asked; the same compiler
// emits them as object code for `einc compile`). The static report is built
// from that same result: its costs from the fused IR, its memory from the
// memory plan (runtime/core/Arena.h planMemory) of the very @train_step Program
// the runtime allocates, so the report's peak is the runtime's arena +
// resident block by construction.
//
// The result is an einrt::ModelBundle (runtime/io/ModelBundle.h: Programs,
// metadata, report) — what `einc train`/`einc sample` hand to the runner and
// `einc compile` writes into an executable.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_DRIVER_COMPILE_H
#define EINC_TOOLS_DRIVER_COMPILE_H

#include "CompileRequest.h"
#include "Report.h"
#include "Stages.h"

#include "codegen/CpuKernels.h"
#include "runtime/base/TrainSettings.h"
#include "runtime/io/ModelBundle.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace einc {

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
  /// Why "decode" (asked for in request.functions) is not in the bundle:
  /// what in @forward the decode step cannot handle ("": it is there, or
  /// the model reads no window, so there is nothing to cache).
  std::string decodeNote;
  double compileSeconds = 0; // pipeline + lowering + kernels
  int64_t kernelsCompiled = 0, kernelsCached = 0;

  /// The program of `function` in the bundle (null: not lowered).
  const einrt::Program *program(const std::string &function) const;
};

/// This machine as ein-remat's device for a run on the cpu or reference
/// backend: the memory the process can still allocate (runtime/base/Memory.h,
/// what `budget:N%` takes N% of) with `rates`' flop rates and bandwidth (the
/// cpu profile's, when there is one; else the pass's defaults). nullopt when
/// no bound on memory is known.
std::optional<RematDevice> thisMachineForRemat(const RematDevice *rates);

/// Compiles `module` (elaborated from `request`'s model, changed in place)
/// as `request` asks. Errors are printed (`einc: ...`) and return false.
bool compileModel(mlir::ModuleOp module, const CompileRequest &request, CompiledModel &out);

/// `einc emit --stage`: the module as compileModel's stages leave it before
/// lowering: "grad" (the precision policy, then @grad), "step" (the train
/// step, then remat), "fused" (the train step, fusion, then remat); "ir" and
/// any other stage leave it as elaborated. Remat prices on no device here
/// (`budget:N%` is an error). False after printing why.
bool compileToStage(mlir::ModuleOp module, const CompileRequest &request, const std::string &stage);

/// `einc report`: compileModel of `request` with the report alone (its
/// @train_step lowered for the CPU to plan its memory, nothing JIT-compiled,
/// nothing rendered) into `report`; false after printing why (unknown device,
/// bad device file, a failed pipeline).
bool buildReport(mlir::ModuleOp module, CompileRequest request, Report &report);

/// The model of `request` elaborated again with batch 1 (its other
/// overrides kept) into `context`, for sampling one sequence; a clone of
/// `module` when it has no `batch` dim or it is 1. Null after printing the
/// diagnostics (or when the request has no parsed front end).
mlir::OwningOpRef<mlir::ModuleOp> sampleModule(mlir::ModuleOp module, const CompileRequest &request,
                                               mlir::MLIRContext &context);

} // namespace einc

#endif // EINC_TOOLS_DRIVER_COMPILE_H
