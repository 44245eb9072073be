//===- Report.h - `einc report`: the static cost report --------*- C++ -*-===//
//
// The report of one model: its training step built with the chosen
// optimizer, costed op by op under a precision policy (passes/Analysis.h),
// every op placed on a device's roofline (passes/DeviceProfile.h), and the
// totals, per-layer sums, memory ledger and cluster questions derived from
// them. ReportBuild.cpp fills a `Report`; ReportText.cpp, ReportJson.cpp and
// ReportHtml.cpp print it. Every figure and its formula: docs/report.md.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_DRIVER_REPORT_H
#define EINC_TOOLS_DRIVER_REPORT_H

#include "CompileRequest.h"
#include "DeviceProfiles.h"

#include "passes/Analysis.h"
#include "passes/DeviceProfile.h"
#include "runtime/base/Fields.h"
#include "runtime/base/TrainSettings.h"
#include "runtime/core/Arena.h"
#include "runtime/core/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace einc {

/// One op of @train_step, in execution order.
struct ReportOp {
  int64_t index = 0;        // position in @train_step
  std::string name;         // "ein.contract"
  std::string kind;         // contraction | elementwise | reduction | data
  std::string phase;        // forward | backward | optimizer
  std::string layer;        // "layer.3", or "—" outside any loop iteration
  std::string location;     // "examples/gpt.ein:31:9" or ""
  std::string dtype;        // the roofline's dtype: "f32", "bf16", "f16"
  bool matrixUnits = false; // contractions run on the matrix units
  bool modelFlop = false;   // counted by MFU
  int64_t flops = 0;
  int64_t transcendentals = 0;
  int64_t bytes = 0;    // read + written under the policy
  double intensity = 0; // flops / bytes (0 when bytes = 0)
  bool computeBound = false;
  double rooflineSeconds = 0; // the op alone: max(flops / peak, bytes / bandwidth)
  /// Its share of its kernel's time (ReportKernel::seconds, split by the
  /// kernel's ops' rooflineSeconds); 0 for an op in no kernel (a view).
  double seconds = 0;

  /// "compute", "memory", or "none" (no FLOPs, no bytes).
  const char *bound() const {
    return flops == 0 && bytes == 0 ? "none" : computeBound ? "compute" : "memory";
  }

  // The JSON (docs/report.md) of this and the structs below: their fields,
  // written by einrt::BasicFieldsWriter (ReportJson.cpp).
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("index", self.index);
    visit("name", self.name);
    visit("kind", self.kind);
    visit("layer", self.layer);
    visit("phase", self.phase);
    visit("location", self.location);
    visit("dtype", self.dtype);
    visit("units", einrt::computed(self.matrixUnits ? "matrix" : "vector"));
    visit("model", self.modelFlop);
    visit("flops", self.flops);
    visit("transcendentals", self.transcendentals);
    visit("bytes", self.bytes);
    visit("intensity", self.intensity);
    visit("bound", einrt::computed(self.bound()));
    visit("roofline_seconds", self.rooflineSeconds);
    visit("seconds", self.seconds);
  }
};

/// A boundary fusion stopped at: a value this kernel writes and kernel `to`
/// reads (passes/StepKernels.h).
struct ReportFusionStop {
  int64_t to = 0;     // index of the reading kernel in Report::kernels
  std::string reason; // policy | contraction | movement | reduction | phase | shape | cycle | ...
  std::string detail; // "f32[8x64x256] vs f32[8x64]", "read by a GEMM", ...

  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("to", self.to);
    visit("reason", self.reason);
    visit("detail", self.detail);
  }
};

/// One kernel of @train_step as a fusing backend runs it (passes/StepKernels.h),
/// priced on the device's roofline from the ops' fused costs.
struct ReportKernel {
  int64_t index = 0;
  std::string kind;                   // fused | rows | matmul+epilogue | matmul | op
  std::vector<std::string> ops;       // its ops' names in order ("ein.exp")
  std::vector<std::string> locations; // their distinct `.ein` locations, in order
  std::string phase, layer, dtype;
  int64_t flops = 0;
  int64_t bytesRead = 0, bytesWritten = 0;
  double intensity = 0; // flops / bytes
  bool computeBound = false;
  /// max(Σ ops' compute time at their peaks, bytes / bandwidth) + the
  /// device's kernel latency: the step time is the sum of these.
  double seconds = 0;
  std::vector<ReportFusionStop> stops;

  /// "compute", "memory", or "none" (no FLOPs, no bytes).
  const char *bound() const {
    return flops == 0 && bytesRead + bytesWritten == 0 ? "none"
           : computeBound                              ? "compute"
                                                       : "memory";
  }

  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("index", self.index);
    visit("kind", self.kind);
    visit("phase", self.phase);
    visit("layer", self.layer);
    visit("dtype", self.dtype);
    visit("ops", self.ops);
    visit("locations", self.locations);
    visit("flops", self.flops);
    visit("bytes_read", self.bytesRead);
    visit("bytes_written", self.bytesWritten);
    visit("intensity", self.intensity);
    visit("bound", einrt::computed(self.bound()));
    visit("seconds", self.seconds);
    visit("fusion_stops", self.stops);
  }
};

/// FLOPs split by phase (recompute: the clones of forward ops ein-remat
/// adds; model FLOPs have none).
struct PhaseFlops {
  int64_t forward = 0, backward = 0, optimizer = 0, recompute = 0;
  int64_t total() const { return forward + backward + optimizer + recompute; }
};

/// One plan of the remat trade-off of @train_step (ReportRematSweep).
struct ReportRematPlan {
  std::string label;  // "budget:123456" for the ladder, the policy's name otherwise
  int64_t budget = 0; // the ladder's budget (0 for a named policy)
  int64_t peak = 0;   // planned peak of the step it becomes (`einc report --remat LABEL`'s)
  int64_t recomputeFlops = 0;
  double recomputeSeconds = 0; // the solver's model of its clones (what budget: minimises)
  double stepSeconds = 0;      // the step it becomes, as `einc report --remat LABEL` prices it

  /// A named policy is written with its name, a rung of the ladder with its budget.
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    bool named = self.budget == 0;
    visit("policy", einrt::computed(named ? std::optional(self.label) : std::nullopt));
    visit("budget", einrt::computed(named ? std::nullopt : std::optional(self.budget)));
    visit("peak", self.peak);
    visit("recompute_flops", self.recomputeFlops);
    visit("recompute_seconds", self.recomputeSeconds);
    visit("step_seconds", self.stepSeconds);
  }
};

/// "Does it fit?" as an answer: the cheapest plan that fits the device, or
/// the micro-batch split that does.
struct ReportFitAdvice {
  bool found = false;
  std::string remat;      // the remat setting that fits ("budget:80GB"), "" for none needed
  int64_t accumulate = 1; // micro-batches (> 1: split the batch)
  int64_t microBatch = 0; // rows per micro-batch (with accumulate > 1)
  int64_t peak = 0;       // its planned peak (with a split: @accumulate_grad's + @apply_update's)
  double recomputeSeconds = 0; // the solver's model of its clones (of one micro-batch)
  /// The step it becomes, priced as the report prices one (with a split:
  /// `accumulate` × @accumulate_grad's + @apply_update's).
  double stepSeconds = 0;
  std::string command;     // the command line that applies it
  std::string why;         // when nothing was found
  int64_t splitsBuilt = 0; // micro-batch splits of the model built to find it (not printed)

  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("found", self.found);
    visit("remat", self.remat);
    visit("accumulate", self.accumulate);
    visit("micro_batch", self.microBatch);
    visit("peak", self.peak);
    visit("recompute_seconds", self.recomputeSeconds);
    visit("step_seconds", self.stepSeconds);
    visit("command", self.command);
    visit("why", self.why);
  }
};

/// `--remat-sweep`, and the plans a report that does not fit looks at:
/// computed on @train_step before the remat policy (RematSweep.h).
struct ReportRematSweep {
  bool ladder = false;                   // --remat-sweep: the frontier was asked for
  std::vector<ReportRematPlan> frontier; // the pick for each budget of the ladder
  std::vector<ReportRematPlan> policies; // none, full, sqrt, selective on the same axes
  int64_t frontierPoints = 0;            // Pareto points the solver found
  int64_t candidates = 0;                // plans it priced
  double solverSeconds = 0;
  std::optional<ReportFitAdvice> fit; // when the plain step does not fit the device
};

/// What the remat policy did to @train_step (its `ein.remat` record).
struct ReportRemat {
  std::string policy = "none"; // the setting as written: "sqrt", "every:2", ...
  int64_t recomputedOps = 0;   // clones of forward ops
  int64_t kept = 0;            // forward values live into the backward
  int64_t keptBytes = 0;
  int64_t recomputeMatrixFlops = 0; // the recompute's contractions (HFU counts them)
  /// The plan's predicted recompute time (ein-remat's model: each clone's
  /// roofline on the policy's device, unfused; what `budget:` minimises).
  double recomputeSeconds = 0;
};

/// The ops computing in one element type (their operands'), on that
/// type's peaks: the roofline by dtype.
struct ReportDtype {
  std::string dtype; // "f32", "bf16", "f16"
  int64_t ops = 0;
  int64_t flops = 0;
  int64_t matrixFlops = 0; // of contractions (on the matrix units)
  int64_t bytes = 0;       // read + written
  double seconds = 0;
  double matrixPeak = 0, vectorPeak = 0; // the device's FLOP/s for this dtype

  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("dtype", self.dtype);
    visit("ops", self.ops);
    visit("flops", self.flops);
    visit("matrix_flops", self.matrixFlops);
    visit("bytes", self.bytes);
    visit("seconds", self.seconds);
    visit("matrix_flops_per_second", self.matrixPeak);
    visit("vector_flops_per_second", self.vectorPeak);
  }
};

/// Sums over the ops of one layer ("layer.N" or "—").
struct ReportLayer {
  std::string name;
  int64_t ops = 0;
  int64_t flops = 0;
  int64_t modelFlops = 0;
  int64_t bytes = 0;
  double seconds = 0;

  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("name", self.name);
    visit("ops", self.ops);
    visit("flops", self.flops);
    visit("model_flops", self.modelFlops);
    visit("bytes", self.bytes);
    visit("seconds", self.seconds);
  }
};

/// The cluster questions (--gpus G --tokens D [--mfu M]), or the training
/// run the schedule fixes (the `steps` setting: D = steps × tokens per step
/// × accumulate × G, G = 1 without --gpus).
struct ReportCluster {
  int64_t gpus = 0;
  double tokens = 0;         // D, training tokens in all
  int64_t scheduleSteps = 0; // D from the schedule: its steps (0: D is --tokens)
  std::string schedule;      // ... and its kind (cosine, wsd, ...)
  int64_t accumulate = 1;    // micro-batches per step
  double mfu = 0;            // assumed
  bool mfuGiven = false;     // from --mfu (else the predicted MFU)
  double flopsPerToken = 0;  // counted model FLOPs per token (fwd + bwd contractions)
  double totalFlops = 0;     // flopsPerToken × D
  double seconds = 0, days = 0, gpuHours = 0;
  double sixNDFlops = 0; // 6 · N · D, the napkin figure beside it
  // The largest model that fits G devices (napkin: params + grads + state only).
  double bytesPerParam = 0; // (params + grads + optimizer state) / N under the policy
  double maxParams = 0;     // G × device memory / bytesPerParam
  double maxParamsPerDevice = 0;

  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("gpus", self.gpus);
    visit("tokens", self.tokens);
    visit("schedule_steps", self.scheduleSteps);
    visit("schedule", self.schedule);
    visit("accumulate", self.accumulate);
    visit("mfu", self.mfu);
    visit("mfu_given", self.mfuGiven);
    visit("flops_per_token", self.flopsPerToken);
    visit("total_flops", self.totalFlops);
    visit("six_nd_flops", self.sixNDFlops);
    visit("seconds", self.seconds);
    visit("days", self.days);
    visit("gpu_hours", self.gpuHours);
    visit("bytes_per_param", self.bytesPerParam);
    visit("max_params", self.maxParams);
    visit("max_params_per_device", self.maxParamsPerDevice);
  }
};

/// Data parallelism on a cluster (--gpus N [--nodes M] [--shard-optimizer]):
/// the gradient all-reduce of one step against its compute.
struct ReportDataParallel {
  int64_t gpus = 1, nodes = 1;
  std::optional<std::string> link; // the ring's slowest link kind (none in the profile: null)
  double linkBandwidth = 0;        // bytes/s per device and direction
  int64_t gradientBytes = 0;       // what each step all-reduces
  double ringBytes = 0;            // sent per device: 2(N−1)/N × gradientBytes
  double commSeconds = 0;          // ringBytes / linkBandwidth
  double computeSeconds = 0;       // the report's predicted step
  double backwardSeconds = 0;      // its backward ops (what the all-reduce can hide behind)
  double exposedSeconds = 0;       // max(0, comm − backward)
  double stepSeconds = 0;          // compute + exposed
  bool hidden = false;             // comm <= backward
  double mfu = 0;                  // model FLOPs / (step × peak)
  bool shardOptimizer = false;
  int64_t optimizerBytesPerRank = 0; // ZeRO-1: ceil(state / N); else all of it
  int64_t peakBytesPerRank = 0;      // the planned peak with that state

  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("gpus", self.gpus);
    visit("nodes", self.nodes);
    visit("link", einrt::orNull(self.link));
    visit("link_bandwidth", self.linkBandwidth);
    visit("gradient_bytes", self.gradientBytes);
    visit("ring_bytes", self.ringBytes);
    visit("comm_seconds", self.commSeconds);
    visit("compute_seconds", self.computeSeconds);
    visit("backward_seconds", self.backwardSeconds);
    visit("exposed_seconds", self.exposedSeconds);
    visit("step_seconds", self.stepSeconds);
    visit("hidden", self.hidden);
    visit("mfu", self.mfu);
    visit("shard_optimizer", self.shardOptimizer);
    visit("optimizer_bytes_per_rank", self.optimizerBytesPerRank);
    visit("peak_bytes_per_rank", self.peakBytesPerRank);
  }
};

/// A run of consecutive Program steps of one phase.
struct ReportPhaseRun {
  std::string phase;           // forward | backward | recompute | optimizer
  int64_t first = 0, last = 0; // Program steps, inclusive

  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("phase", self.phase);
    visit("first", self.first);
    visit("last", self.last);
  }
};

/// Report::liveAfter by what the bytes hold (ReportMemoryTimeline.cpp): the
/// resident block, the same at every step, and the arena's temporaries
/// live at each step of the @train_step Program. At every step i,
/// resident() + Σ temporaries at i = liveAfter[i].
struct ReportMemoryTimeline {
  // Resident, each buffer as planned (64-byte aligned).
  int64_t params = 0;         // the param arguments and the updated params returned
  int64_t optimizerState = 0; // the opt_state arguments and the updated state returned
  int64_t inputs = 0;         // input arguments (tokens, targets)
  int64_t otherResident = 0;  // scalars, constants, the loss and other results
  // Temporaries live at each step.
  std::vector<int64_t> grads;         // backward values the optimizer reads
  std::vector<int64_t> saved;         // forward values the backward or a recompute reads
  std::vector<int64_t> recompute;     // values the remat policy's clones compute
  std::vector<int64_t> other;         // every other temporary
  std::vector<ReportPhaseRun> phases; // the phase of each step (its outputs' ops')

  int64_t resident() const { return params + optimizerState + inputs + otherResident; }
  int64_t liveAt(size_t step) const {
    return resident() + grads[step] + saved[step] + recompute[step] + other[step];
  }

  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("params", self.params);
    visit("optimizer_state", self.optimizerState);
    visit("inputs", self.inputs);
    visit("other_resident", self.otherResident);
    visit("grads", self.grads);
    visit("saved_activations", self.saved);
    visit("recompute", self.recompute);
    visit("temporaries", self.other);
    visit("phases", self.phases);
  }
};

struct Report {
  // What was reported on.
  std::string model; // the input file
  std::string device, deviceDescription, deviceSource;
  std::string precision; // fp32 | bf16-mixed | fp16-mixed | bf16 (the step was built under it)
  std::string optimizer; // adamw | adam | sgd | adagrad
  bool fusion = true;    // the `fusion` setting: bytes as a fusing backend moves them
  mlir::ein::FusionSummary fusionSummary; // applyFusionToCosts (zeros when off)
  std::string computeDtype;               // the matrix dtype MFU is measured against
  double matrixPeak = 0;                  // FLOP/s at computeDtype
  double vectorPeak = 0;                  // FLOP/s at computeDtype on the vector units
  double bandwidth = 0;                   // bytes/s
  double deviceMemory = 0;                // bytes
  int64_t tokensPerStep = 1;              // ein.tokens (1 when the model has no cross_entropy)
  bool tokensKnown = false;
  std::map<std::string, int64_t> dims; // ein.dims

  // Parameters.
  int64_t params = 0;         // count (elements of all params)
  int64_t optimizerSlots = 0; // state tensors per param (AdamW: 2)

  // FLOPs.
  PhaseFlops flops;      // hardware FLOPs: every op executed
  PhaseFlops modelFlops; // contractions of forward and backward (what MFU counts)
  int64_t transcendentals = 0;
  std::map<std::string, int64_t> flopsByKind;
  double flopsPerToken = 0;      // flops.total / tokens
  double modelFlopsPerToken = 0; // modelFlops.total / tokens
  double forwardModelFlopsPerToken = 0;
  double sixN = 0;                    // 6 · N per token
  std::optional<double> palmPerToken; // 6N + 12 · layers · ctx · d

  // Memory, bytes.
  // Every byte at the IR's element types (the policy's pass ran first).
  int64_t paramBytes = 0;  // the params' own buffers
  int64_t masterBytes = 0; // those buffers when they are an fp32 master copy (mixed policies)
  int64_t gradBytes = 0;
  int64_t optimizerBytes = 0;
  int64_t activationBytes = 0;                           // saved for backward
  std::map<std::string, int64_t> activationBytesByDtype; // "bf16" -> bytes, ...
  int64_t paramCopyBytes = 0; // the params' working copies the backward reads (mixed policies)
  double bytesPerParam = 0;   // (params + grads + optimizer state) / params
  int64_t inputBytes = 0;
  int64_t savedInputBytes = 0; // inputs the backward reads (part of inputBytes)
  // The peak is the memory plan of the @train_step Program the runtime
  // runs (runtime/core/Arena.h): its arena of temporaries + its resident block
  // (arguments, results, constants), every buffer at its dtype's width.
  int64_t peakBytes = 0;
  int64_t arenaBytes = 0;              // the planned arena (first fit by liveness)
  int64_t residentBytes = 0;           // the resident block
  std::string plannedBackend;          // whose lowering was planned: "cpu" | "reference"
  int64_t peakOpIndex = -1;            // the Program step where most temporaries are live
  std::string peakOp;                  // that step's op and source location
  std::vector<int64_t> liveAfter;      // per step: resident + temporaries live at it
  ReportMemoryTimeline memoryTimeline; // liveAfter by category, and the steps' phases
  bool fits = false;
  double marginBytes = 0; // device memory − peak (negative: short by)

  // Prediction.
  double stepSeconds = 0;
  double tokensPerSecond = 0;
  double mfu = 0;
  double hfu = 0;                 // MFU's numerator plus the recompute's contractions
  double computeBoundSeconds = 0; // time of the compute-bound ops
  double matrixSeconds = 0;       // time of the ops on matrix units

  ReportRemat remat;
  std::optional<ReportRematSweep> rematSweep;

  std::vector<ReportOp> ops;
  // The kernel table (ReportKernels.cpp): every kernel of the step, and
  // how often fusion stopped for each reason.
  std::string fusionSetting; // off | elementwise | on | all
  std::vector<ReportKernel> kernels;
  double kernelSeconds = 0; // Σ kernels' seconds
  double kernelLatency = 0; // the device's seconds per kernel beyond the roofline
  double launchSeconds = 0; // kernels × kernelLatency, within kernelSeconds
  std::vector<std::pair<std::string, int64_t>> fusionStops; // reason -> boundaries, by count
  bool kernelTable = false;        // --kernels: the text report lists the kernels
  std::vector<ReportDtype> dtypes; // in order of first appearance
  std::vector<ReportLayer> layers;
  std::optional<ReportCluster> cluster;
  std::optional<ReportDataParallel> dataParallel;
  /// The device profile's links (for the data-parallel figures).
  std::optional<mlir::ein::DeviceProfile::Link> intraNodeLink, interNodeLink;

  // Ops by predicted time, longest first (indices into `ops`).
  std::vector<size_t> topOps(size_t n) const;

  /// The JSON's members, nested as docs/report.md shows them (ReportJson.cpp).
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit);
};

/// The report of a module whose @train_step was built and fused under
/// `priced` (the settings with the request's optimizer applied), with the
/// Program that step was lowered to (its memory plan is the report's
/// memory), on the device `request.reportDevice` names (see
/// findDeviceProfile), with the request's report flags. Without the
/// Program, no memory plan (the peak left 0): the step's time alone (the
/// remat sweep's, StepPrice.h).
bool reportOnStep(mlir::ModuleOp module, const einrt::Program *trainStep,
                  const CompileRequest &request, const einrt::TrainSettings &priced,
                  Report &report);

/// Fills report.kernels from the fused @train_step and the ops' costs (the
/// report's ops, one per cost, in order).
void buildKernelTable(mlir::func::FuncOp trainStep, const std::vector<mlir::ein::OpCost> &costs,
                      const mlir::ein::DeviceProfile &device, Report &report);

/// liveAfter of `plan` (the memory plan of `trainStep`, lowered from `fn`)
/// by what each buffer holds, and the phase of each step.
ReportMemoryTimeline memoryTimeline(mlir::func::FuncOp fn, const einrt::Program &trainStep,
                                    const einrt::MemoryPlan &plan,
                                    const einrt::StorageSizes &sizes);

void printReportText(const Report &report, llvm::raw_ostream &os);
/// The kernel table (--kernels): every kernel and where fusion stopped.
void printKernelTable(const Report &report, llvm::raw_ostream &os);
void printReportJson(const Report &report, llvm::raw_ostream &os);
void printReportHtml(const Report &report, llvm::raw_ostream &os);

// Number formatting shared by the renderers.
std::string withThousands(int64_t n);                       // 1,234,567
std::string formatBytes(double bytes);                      // 1.50 GiB
std::string formatSeconds(double s);                        // 69.5 µs
std::string formatFlops(double flops);                      // 68.72 GFLOP
std::string formatRate(double perSecond, const char *unit); // 989.5 T<unit>/s
std::string formatCount(double n);                          // 7.00 B
std::string fixed(double v, int decimals);

} // namespace einc

#endif // EINC_TOOLS_DRIVER_REPORT_H
