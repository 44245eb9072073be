//===- CompileRequest.h - What one compile of a model is asked for -*- C++ -*-===//
//
// The driver's whole input, typed: the model (its file, text, parsed front
// end, `--set` overrides and the settings they give: dims, precision, remat,
// fusion...), what to build (backend, functions, the JIT, the sample
// program), and the report's device and flags. compileModel (Compile.h)
// reads nothing else; einc fills one from its command line in one place
// (tools/einc/CompileOptions.cpp), tests fill one directly.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_DRIVER_COMPILEREQUEST_H
#define EINC_TOOLS_DRIVER_COMPILEREQUEST_H

#include "runtime/base/TrainSettings.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace einc {

struct Frontend;

/// `--set KEY=VALUE`s, in order (a later one wins).
using Overrides = std::vector<std::pair<std::string, std::string>>;

/// The report's figures beyond the one step (docs/report.md).
struct ReportFlags {
  bool kernelTable = false;    // the kernel table in the text report
  bool rematSweep = false;     // the remat frontier
  int64_t gpus = 0;            // data parallel over G GPUs (0: none)
  int64_t nodes = 1;           // ... on M nodes (the ring crosses nodes when M > 1)
  double clusterTokens = 0;    // the training run's tokens, for the cluster questions
  double mfu = -1;             // the MFU those assume (< 0: the predicted one)
  bool shardOptimizer = false; // the data-parallel figures with ZeRO-1
};

struct CompileRequest {
  // The model.
  /// Its file, as the bundle, the report and the report's advice name it
  /// ("-": stdin).
  std::string modelPath;
  /// Its text, carried in the bundle (an executable's `info`).
  std::string source;
  /// The parsed model the module was elaborated from (not owned; null: none),
  /// for what is built again at other dims: the sample program at batch 1
  /// and the report's micro-batch splits (none without it).
  const Frontend *frontend = nullptr;
  /// The overrides and the use the module was elaborated with, for those
  /// rebuilds.
  Overrides overrides;
  einrt::SettingsUse use = einrt::SettingsUse::Execute;
  /// The model's train settings with the overrides applied (precision,
  /// remat, fusion, optimizer...).
  einrt::TrainSettings settings;
  /// Another optimizer to build and price the step with ("": the settings').
  std::string optimizer;

  // What to build.
  /// A registered backend's name (runtime/core/Backend.h): its lowering
  /// builds the Programs ("cpu": fused kernels + BLAS; "reference": the
  /// interpreter) and its kernel section, if any, is rendered into the
  /// bundle (cuda: the cpu Programs' kernels as CUDA C++).
  std::string backend = "cpu";
  /// The functions to lower, in order; the bundle's programs follow it.
  /// "forward" needs no train step, nor "decode" (@forward one position at
  /// a time with a KV cache, passes/DecodeStep.h; left out, with
  /// CompiledModel::decodeNote, where the model cannot decode so); the others ("train_step",
  /// "accumulate_grad", "apply_update", "grad") are built by the train-step
  /// pipeline (runner::trainFunctionNames says which a training run needs).
  std::vector<std::string> functions;
  /// CPU backend: JIT-compile the kernels in-process, to run them now
  /// (CompiledModel::kernels->table()). Off for `einc compile` and
  /// `einc report`, which run nothing.
  bool jit = true;
  /// Also @sample, after the others: @forward of the model elaborated again
  /// with batch 1, its kernels in the same table (an executable samples with
  /// it). Nothing when the model has no `batch` dim or it is 1.
  bool sampleProgram = false;
  /// @grad as the loss's plain gradient: no loss scaling seeds it even where
  /// the precision policy has it (fp16-mixed), so its results are the
  /// gradients themselves (`einc run --mode grad`; the step is then built
  /// without loss scaling too).
  bool plainGradient = false;
  /// ZeRO-1 (train --shard-optimizer): @apply_update keeps rank
  /// `shardRank`'s share of `shardRanks` (1: everything).
  int64_t shardRank = 0, shardRanks = 1;

  // The report and the device profiles.
  /// Profiles beside the built-in ones and the user's (--device-file; "": none).
  std::string deviceFile;
  /// Build the static report of @train_step on `reportDevice`; a missing
  /// profile is no report, not an error, when `reportOptional`.
  bool report = false;
  std::string reportDevice = "cpu";
  bool reportOptional = false;
  /// Render the report into the bundle (JSON) and CompiledModel::reportText,
  /// as an executable carries it; off for `einc report`, which prints the one
  /// format it was asked for.
  bool renderReport = true;
  ReportFlags reportFlags;
};

} // namespace einc

#endif // EINC_TOOLS_DRIVER_COMPILEREQUEST_H
