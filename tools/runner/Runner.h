//===- Runner.h - Running a compiled model: train, sample, report, info -*- C++ -*-===//
//
// The one driver of a compiled model (an einrt::ModelBundle), shared by
// `einc train` / `einc sample` (which compile the model first, Compile.h,
// and hand over the bundle and the JIT's kernel table) and by the
// executables of `einc compile` (whose bundle and kernels are linked in,
// tools/exe). Because both run this code on the same Programs, an
// executable trains bit for bit as einc does at the same thread count.
//
// MLIR-free and LLVM-free (library EincRunner: the runtime and
// nlohmann::json): an executable links it without them. Its flags come as a
// RunOptions (RunOptions.h) that each tool fills from its own command line.
// Output goes to std::cout, messages to std::cerr as "TOOL COMMAND: ...".
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_RUNNER_RUNNER_H
#define EINC_TOOLS_RUNNER_RUNNER_H

#include "RunOptions.h"

#include "runtime/base/TrainSettings.h"
#include "runtime/core/Backend.h"
#include "runtime/core/Device.h"
#include "runtime/core/Executor.h"
#include "runtime/dist/Communicator.h"
#include "runtime/io/CheckpointDir.h"
#include "runtime/io/ModelBundle.h"
#include "runtime/io/TokenData.h"
#include "runtime/train/Schedule.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace einc::runner {

/// Who runs the model: for messages and the training banner.
struct RunContext {
  std::string tool = "einc"; // "einc", or the executable's name
  std::string model;         // the model file the banner names
  /// Where a missing prediction comes from, for the banner's `predicted`
  /// line (einc: no `cpu` device profile; an executable: its report's device).
  std::string noPrediction = "no cpu profile: run einc calibrate";
  /// --distributed: the ranks (Distributed.h); null: this process alone.
  einrt::Communicator *comm = nullptr;
  /// "TOOL COMMAND: [rank R: ]MESSAGE" on standard error, after what was
  /// printed to standard output so far: every error line of the runner. 1,
  /// the exit status.
  int fail(const std::string &command, const std::string &message) const;
};

/// What the bundle's Programs run on: a registered backend
/// (runtime/core/Backend.h) and what it runs them with.
struct Backend {
  /// --backend (never null).
  const einrt::Backend *kind = &einrt::defaultBackend();
  std::vector<einrt::KernelEntry> kernels; // host kernels: the table the Kernel steps index
  int64_t threads = 0;                     // host kernels: --threads (0: the default)
  /// The backend's kernel section, when not the bundle's (einc's rendered
  /// kernels; null: the bundle's own).
  std::shared_ptr<const std::vector<uint8_t>> section;
  /// The device, when the caller opened it already (einc does, to fail
  /// before compiling a model for a GPU it does not have); else load()
  /// opens it with `open`.
  std::shared_ptr<einrt::Device> device;
  einrt::BackendOpen open;
  const char *name() const { return kind->name(); }
};

/// Opens `backend`'s device as `open` says, or says why not ("--backend
/// cuda: no CUDA driver ...").
einrt::Expected<std::shared_ptr<einrt::Device>> openDevice(const einrt::Backend &backend,
                                                           const einrt::BackendOpen &open);

/// Executors of some of a bundle's functions on one device.
struct Loaded {
  std::shared_ptr<einrt::Device> device;                 // every executor's
  std::vector<std::optional<einrt::Executor>> executors; // one per function
  int threads = 1;                                       // host kernels: kernels and GEMMs
  std::string description; // the device, for banners (Backend::describe): the GPU
};

/// Opens the backend's device (unless the caller did: Backend::device) and
/// gives it its kernels (the host table, or the bundle's kernel section of
/// the backend), and creates an executor for each of `functions`, after
/// checking that their planned storage together fits the memory the device
/// has free: NotFound for a function the bundle lacks, OutOfMemory when
/// the storage does not fit, the device's and the Executor's failures.
einrt::Status load(const einrt::ModelBundle &bundle, const std::vector<std::string> &functions,
                   const Backend &backend, Loaded &out);

/// The functions a training run loads: @train_step, or @accumulate_grad and
/// @apply_update when the settings accumulate micro-batches; then @forward
/// when `withForward` (evaluation on --val).
std::vector<std::string> trainFunctionNames(const einrt::TrainSettings &settings, bool withForward);

/// `train`. prepare() comes first: it opens and checks the data (every token
/// id against the vocab), makes, checks and locks the checkpoint directory
/// (runtime/io/CheckpointDir.h: writable, no other run in it) and settles the
/// learning-rate schedule (the settings, the checkpoint being resumed,
/// --steps) — before einc spends time compiling. run() then loads the bundle's train functions and
/// drives the runtime's Trainer: banner, progress, summary.
class TrainRun {
public:
  /// Null after printing why (TOOL train: ...).
  static std::unique_ptr<TrainRun> prepare(const RunContext &context, const RunOptions &o,
                                           const einrt::TrainSettings &settings, int32_t vocab);
  ~TrainRun();
  /// Whether there is validation data (the run needs @forward).
  bool withValidation() const { return valFile.has_value(); }
  /// Trains; the exit status: 0, 1, or einrt::kStoppedBySignalStatus when
  /// SIGINT/SIGTERM stopped it after saving (runtime/train/StopSignals.h). `origin` is the banner's
  /// word on where the Programs come from, after the backend: "compiled in 1.20 s; 12 kernels
  /// compiled, 3 cached", or "x86-64-v3 kernels linked in".
  int run(const einrt::ModelBundle &bundle, const Backend &backend, const std::string &origin);

private:
  TrainRun() = default;
  int fail(const std::string &message) const;

  RunContext context;
  RunOptions options;
  einrt::TrainSettings settings;
  int32_t vocab = 0;
  std::optional<einrt::TokenFile> trainFile, valFile;
  einrt::Schedule schedule;
  std::string totalFrom; // where the schedule's length comes from
  /// Rank 0: the checkpoint directory's lock, held until the run ends.
  std::unique_ptr<einrt::CheckpointDirLock> lock;
};

/// `sample`: the logits of `function` (a forward with batch 1, or the
/// training batch with every row the same context) on a sliding window,
/// sampled from a seeded generator; bytes to stdout. The exit status.
/// `settings`: the bundle's, or the executable's with run-time --set (its
/// `data` says which input is the context). `decode` ("": none): the
/// bundle's decode step of that forward (passes/DecodeStep.cpp), which
/// gives shifted windows' logits one position at a time (SampleDecode.h).
int sample(const RunContext &context, const RunOptions &o, const einrt::ModelBundle &bundle,
           const einrt::TrainSettings &settings, const std::string &function,
           const Backend &backend, const std::string &decode = "");

/// `report`: the report the bundle was compiled with, as text or JSON
/// (--format), to stdout or -o FILE. The exit status.
int report(const RunContext &context, const RunOptions &o, const einrt::ModelBundle &bundle);

/// `check` (DeviceCheck.cpp): every distinct Kernel and Matmul step of the
/// bundle's CPU Programs run alone on `reference` (the cpu device with the
/// linked kernels, one thread) and on `tested` (cuda, or cpu at another
/// thread count) from the values of a whole reference run, compared under
/// CheckCompare.h's bounds and timed on `tested`; each function also run
/// whole there (per kernel class, beside the report's prediction). A
/// Markdown table to stdout, JSON to --json FILE. The exit status: 1 when
/// a step is beyond its bound or a run fails.
int check(const RunContext &context, const RunOptions &o, const einrt::ModelBundle &bundle,
          const Backend &reference, const Backend &tested);

/// What `info` says of the linked kernels beside the bundle.
struct LinkedKernels {
  std::vector<std::string> targets; // every target linked in, best first
  std::string chosen;               // the one this CPU runs ("" when none)
  std::string why;                  // how it was chosen (EINC_JIT_CPU, the CPU)
};

/// `info`: the model, its dims and settings (compiled in / run-time), the
/// programs and their memory, the kernel objects and targets, the sizes and
/// the einc that compiled it; `programFileBytes` and `fileBytes` are the
/// sizes of the program file and of the executable (0: unknown). The exit
/// status.
int info(const RunContext &context, const einrt::ModelBundle &bundle, const LinkedKernels &linked,
         int64_t programFileBytes, int64_t fileBytes);

/// The settings an executable runs with: the bundle's, with the run-time
/// `--set`s of `o` applied. A dim or a compiled-in setting set to another
/// value than the compiled one is refused, naming it and saying to
/// recompile (Invalid).
einrt::Expected<einrt::TrainSettings> runSettings(const einrt::ModelBundle &bundle,
                                                  const RunOptions &o);

/// "0.12" ("%.*f").
std::string fixed(double v, int digits);

} // namespace einc::runner

#endif // EINC_TOOLS_RUNNER_RUNNER_H
