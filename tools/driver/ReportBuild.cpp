//===- ReportBuild.cpp - A compiled step → its static cost report ---------===//
//
// On the @train_step that compileModel (Compile.h) built, fused and lowered:
// runs the cost analysis (passes/Analysis.h) under the precision policy,
// takes the memory from the lowered Program's memory plan (runtime/core/Arena.h,
// the one the runtime allocates), places every op on the device's roofline
// (passes/DeviceProfile.h) and aggregates. Every figure and formula is
// documented in docs/report.md; keep them together.
//
//===----------------------------------------------------------------------===//
#include "DeviceProfiles.h"
#include "Report.h"
#include "Stages.h"

#include "passes/Analysis.h"
#include "passes/DeviceProfile.h"
#include "passes/Passes.h"
#include "runtime/base/TerminalText.h"
#include "runtime/core/Arena.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include "Errors.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

using namespace mlir;

namespace einc {
namespace {

bool fail(const llvm::Twine &message) { return printError(message); }

std::string dtypeName(Type t) {
  if (auto shaped = dyn_cast<ShapedType>(t))
    t = shaped.getElementType();
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  return "f32";
}

int64_t elements(Type t) {
  auto shaped = dyn_cast<ShapedType>(t);
  return shaped && shaped.hasStaticShape() ? shaped.getNumElements() : 0;
}

/// The element type an op computes in: its first float operand's, else its
/// first result's.
Type computeType(Operation *op) {
  for (Value v : op->getOperands())
    if (auto shaped = dyn_cast<ShapedType>(v.getType()))
      if (isa<FloatType>(shaped.getElementType()))
        return shaped.getElementType();
  if (op->getNumResults() > 0)
    return op->getResult(0).getType();
  return Type();
}

int layerNumber(const std::string &layer) {
  int n = 0;
  if (llvm::StringRef(layer).starts_with("layer.") &&
      !llvm::StringRef(layer).drop_front(6).getAsInteger(10, n))
    return n;
  return -1;
}

} // namespace

std::vector<size_t> Report::topOps(size_t n) const {
  std::vector<size_t> order(ops.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ops[a].seconds > ops[b].seconds; });
  if (order.size() > n)
    order.resize(n);
  return order;
}

bool reportOnStep(ModuleOp module, const einrt::Program *step, const CompileRequest &request,
                  const einrt::TrainSettings &priced, Report &r) {
  const ReportFlags &o = request.reportFlags;
  r.model = request.modelPath;
  auto device = findDeviceProfile(request.deviceFile, request.reportDevice);
  if (!device)
    return false;
  r.device = device->name;
  r.deviceDescription = device->description;
  r.deviceSource = device->source;
  r.bandwidth = device->bandwidth;
  r.deviceMemory = device->memoryBytes;
  r.intraNodeLink = device->intraNodeLink;
  r.interNodeLink = device->interNodeLink;
  r.precision = priced.precision;
  r.optimizer = priced.optimizer;

  if (auto tokens = module->getAttrOfType<IntegerAttr>("ein.tokens")) {
    r.tokensPerStep = std::max<int64_t>(1, tokens.getInt());
    r.tokensKnown = true;
  }
  if (auto dims = module->getAttrOfType<DictionaryAttr>("ein.dims"))
    for (NamedAttribute a : dims)
      if (auto i = dyn_cast<IntegerAttr>(a.getValue()))
        r.dims[a.getName().str()] = i.getInt();

  // The remat policy's record on the step (ein-remat; none: no record).
  r.remat.policy = priced.remat;
  auto fn = module.lookupSymbol<func::FuncOp>("train_step");
  if (!fn)
    return fail("building the training step produced no @train_step");
  if (auto record = fn->getAttrOfType<DictionaryAttr>("ein.remat")) {
    auto count = [&](StringRef key) {
      auto v = record.getAs<IntegerAttr>(key);
      return v ? v.getInt() : int64_t(0);
    };
    r.remat.recomputedOps = count("recomputed_ops");
    r.remat.kept = count("kept");
    r.remat.keptBytes = count("kept_bytes");
    if (auto seconds = record.getAs<FloatAttr>("recompute_seconds"))
      r.remat.recomputeSeconds = seconds.getValueAsDouble();
  }

  // Fusion (the `fusion` setting, on by default): the groups the backends
  // compile as single kernels, and the order they run in.
  r.fusion = fusionEnabled(priced);
  r.fusionSetting = priced.fusion;
  r.kernelTable = o.kernelTable;

  // The IR's own element types: the precision policy rewrote @forward
  // (ein-mixed-precision) before the step was built, so every byte and
  // FLOP below is of the step that runs.
  std::vector<ein::OpCost> costs = ein::analyzeCosts(fn);
  if (r.fusion)
    r.fusionSummary = ein::applyFusionToCosts(fn, costs);
  // The ledger's categories (params, grads, state, saved activations); the
  // peak below is the Program's memory plan, not this analysis's.
  ein::FusedValues fused;
  if (r.fusion)
    fused = ein::fusedValues(fn);
  ein::MemoryLedger ledger = ein::analyzeMemory(fn, ein::irByteWidth, r.fusion ? &fused : nullptr);

  // Argument counts by kind.
  int64_t stateTensors = 0, paramTensors = 0;
  for (BlockArgument arg : fn.getArguments()) {
    auto kind = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "ein.kind");
    if (!kind)
      continue;
    if (kind.getValue() == "param") {
      r.params += elements(arg.getType());
      // The slots per trained param: a frozen one (or a buffer) has none.
      if (!fn.getArgAttr(arg.getArgNumber(), ein::kFrozenParam))
        ++paramTensors;
    } else if (kind.getValue() == "opt_state") {
      ++stateTensors;
    }
  }
  r.optimizerSlots = paramTensors ? stateTensors / paramTensors : 0;

  // Memory. Under a mixed policy the params' own f32 buffers are the
  // master copy (their bf16/f16 working copies are forward values).
  r.paramBytes = ledger.params;
  const einrt::PrecisionPolicy *policy = einrt::findPrecisionPolicy(r.precision);
  bool master = policy && *policy->narrow && !policy->narrowParams;
  r.masterBytes = master ? ledger.params : 0;
  r.gradBytes = ledger.grads;
  r.optimizerBytes = ledger.optimizerState;
  r.activationBytes = ledger.activations;
  r.activationBytesByDtype = ledger.activationsByDtype;
  r.paramCopyBytes = ledger.paramCopies;
  r.inputBytes = ledger.inputs;
  r.savedInputBytes = ledger.savedInputs;
  r.bytesPerParam =
      r.params ? double(r.paramBytes + r.gradBytes + r.optimizerBytes) / double(r.params) : 0;
  // The memory plan of the Program the runtime runs, each buffer at its
  // dtype's width (bf16/f16 2 bytes, as a GPU and the narrow-storing
  // backends hold them).
  if (step) {
    einrt::StorageSizes sizes;
    for (uint8_t t = 0; t < einrt::kDTypeCount; ++t)
      sizes.bytes[t] = einrt::dtypeSize(einrt::DType(t));
    einrt::MemoryPlan plan = einrt::planMemory(*step, sizes);
    r.arenaBytes = plan.arenaBytes;
    r.residentBytes = plan.residentBytes;
    r.peakBytes = plan.totalBytes();
    r.peakOpIndex = plan.peakStep;
    if (plan.peakStep >= 0)
      r.peakOp = step->steps[size_t(plan.peakStep)].note;
    r.liveAfter.clear();
    for (int64_t live : plan.liveAtStep)
      r.liveAfter.push_back(r.residentBytes + live);
    r.memoryTimeline = memoryTimeline(fn, *step, plan, sizes);
  }
  r.marginBytes = r.deviceMemory - static_cast<double>(r.peakBytes);
  r.fits = r.marginBytes >= 0;

  // The dtype model FLOPs run at (MFU's denominator): the operand type of
  // the most model FLOPs (bf16 under bf16-mixed, f32 under fp32 unless the
  // model declares bf16/f16 tensors), an f32 contraction's tf32 under the
  // tf32 setting.
  bool tf32 = priced.tf32 == "on";
  auto rateDtype = [&](const ein::OpCost &c) {
    std::string dtype = dtypeName(computeType(c.op));
    return c.kind == "contraction" ? ein::contractionDtype(*device, dtype, tf32) : dtype;
  };
  std::map<std::string, int64_t> modelByDtype;
  for (const ein::OpCost &c : costs)
    if (c.isModelFlop)
      modelByDtype[rateDtype(c)] += c.flops;
  r.computeDtype = "f32";
  int64_t best = -1;
  for (auto &[dtype, flops] : modelByDtype)
    if (flops > best)
      best = flops, r.computeDtype = dtype;
  auto peakOf = [&](const std::map<std::string, double> &rates, const std::string &dtype) {
    auto it = rates.find(dtype);
    if (it == rates.end())
      it = rates.find("f32");
    return it == rates.end() ? 0.0 : it->second;
  };
  r.matrixPeak = peakOf(device->matmulFlops, r.computeDtype);
  r.vectorPeak = peakOf(device->vectorFlops, r.computeDtype);

  // Every op on the roofline.
  std::map<std::string, size_t> layerIndex, dtypeIndex;
  for (size_t i = 0; i < costs.size(); ++i) {
    const ein::OpCost &c = costs[i];
    ReportOp op;
    op.index = static_cast<int64_t>(i);
    op.name = c.name;
    op.kind = c.kind;
    op.phase = c.phase;
    op.layer = c.layer.empty() ? "—" : c.layer;
    op.location = c.location;
    op.flops = c.flops;
    op.transcendentals = c.transcendentals;
    op.modelFlop = c.isModelFlop;
    op.matrixUnits = c.kind == "contraction";
    op.bytes = c.bytesRead + c.bytesWritten;
    // The op's operand type: a contraction runs at the matrix peak of it
    // (of tf32 for f32 operands under the tf32 setting).
    op.dtype = rateDtype(c);
    if (c.fp8) // at the fp8 peak; a device without one (a100) runs it at bf16
      op.dtype = device->matmulFlops.count("fp8") ? "fp8" : "bf16";
    ein::Roofline roof =
        ein::roofline(*device, op.dtype, op.matrixUnits, static_cast<double>(op.flops),
                      static_cast<double>(op.bytes));
    op.intensity = std::isfinite(roof.intensity) ? roof.intensity : 0;
    op.rooflineSeconds = roof.seconds;
    op.computeBound = roof.computeBound && op.flops > 0;

    PhaseFlops &phase = r.flops;
    int64_t *slot = c.phase == "backward"    ? &phase.backward
                    : c.phase == "optimizer" ? &phase.optimizer
                    : c.phase == "recompute" ? &phase.recompute
                                             : &phase.forward;
    *slot += c.flops;
    if (c.phase == "recompute" && op.matrixUnits)
      r.remat.recomputeMatrixFlops += c.flops;
    if (c.isModelFlop)
      (c.phase == "backward"    ? r.modelFlops.backward
       : c.phase == "optimizer" ? r.modelFlops.optimizer
                                : r.modelFlops.forward) += c.flops;
    r.transcendentals += c.transcendentals;
    r.flopsByKind[c.kind] += c.flops;
    auto [dt, added] = dtypeIndex.try_emplace(op.dtype, r.dtypes.size());
    if (added) {
      ReportDtype d;
      d.dtype = op.dtype;
      d.matrixPeak = peakOf(device->matmulFlops, op.dtype);
      d.vectorPeak = peakOf(device->vectorFlops, op.dtype);
      r.dtypes.push_back(d);
    }
    ReportDtype &d = r.dtypes[dt->second];
    ++d.ops;
    d.flops += op.flops;
    d.matrixFlops += op.matrixUnits ? op.flops : 0;
    d.bytes += op.bytes;

    auto [it, inserted] = layerIndex.try_emplace(op.layer, r.layers.size());
    if (inserted)
      r.layers.push_back(ReportLayer{op.layer});
    ReportLayer &l = r.layers[it->second];
    ++l.ops;
    l.flops += op.flops;
    l.modelFlops += c.isModelFlop ? op.flops : 0;
    l.bytes += op.bytes;
    r.ops.push_back(std::move(op));
  }
  // Time is the kernels': each op's share of its kernel's (ReportKernels.cpp).
  buildKernelTable(fn, costs, *device, r);
  for (const ReportOp &op : r.ops) {
    r.dtypes[dtypeIndex.at(op.dtype)].seconds += op.seconds;
    r.layers[layerIndex.at(op.layer)].seconds += op.seconds;
    r.stepSeconds += op.seconds;
    if (op.computeBound)
      r.computeBoundSeconds += op.seconds;
    if (op.matrixUnits)
      r.matrixSeconds += op.seconds;
  }
  // Layers in numeric order, ops outside any loop ("—") last.
  std::stable_sort(r.layers.begin(), r.layers.end(),
                   [](const ReportLayer &a, const ReportLayer &b) {
                     int x = layerNumber(a.name), y = layerNumber(b.name);
                     if (x < 0 || y < 0)
                       return x >= 0 && y < 0;
                     return x < y;
                   });

  double tokens = static_cast<double>(r.tokensPerStep);
  r.flopsPerToken = r.flops.total() / tokens;
  r.modelFlopsPerToken = r.modelFlops.total() / tokens;
  r.forwardModelFlopsPerToken = r.modelFlops.forward / tokens;
  r.sixN = 6.0 * static_cast<double>(r.params);
  if (r.dims.count("layers") && r.dims.count("ctx") && r.dims.count("d"))
    r.palmPerToken = r.sixN + 12.0 * static_cast<double>(r.dims["layers"]) *
                                  static_cast<double>(r.dims["ctx"]) *
                                  static_cast<double>(r.dims["d"]);

  if (r.stepSeconds > 0) {
    r.tokensPerSecond = tokens / r.stepSeconds;
    if (r.matrixPeak > 0) {
      r.mfu = r.modelFlops.total() / (r.stepSeconds * r.matrixPeak);
      r.hfu =
          (r.modelFlops.total() + r.remat.recomputeMatrixFlops) / (r.stepSeconds * r.matrixPeak);
    }
  }

  if (o.gpus > 0) {
    // A ring all-reduce of the gradients: each device sends (and receives)
    // 2(N−1)/N of them over the ring's slowest link — between nodes when
    // there are several, else within the node. Buckets of the backward
    // are reduced as it produces them, so the backward can hide the ring.
    ReportDataParallel d;
    d.gpus = o.gpus;
    d.nodes = o.nodes;
    const auto &link = d.nodes > 1 ? r.interNodeLink : r.intraNodeLink;
    if (link) {
      d.link = link->kind;
      d.linkBandwidth = link->bytesPerSecond;
    }
    d.gradientBytes = r.gradBytes;
    d.ringBytes = 2.0 * double(d.gpus - 1) / double(d.gpus) * double(d.gradientBytes);
    d.commSeconds = d.gpus == 1           ? 0
                    : d.linkBandwidth > 0 ? d.ringBytes / d.linkBandwidth
                                          : INFINITY;
    d.computeSeconds = r.stepSeconds;
    for (const ReportOp &op : r.ops)
      if (op.phase == "backward")
        d.backwardSeconds += op.seconds;
    d.exposedSeconds = std::max(0.0, d.commSeconds - d.backwardSeconds);
    d.hidden = d.commSeconds <= d.backwardSeconds;
    d.stepSeconds = d.computeSeconds + d.exposedSeconds;
    d.mfu = d.stepSeconds > 0 && r.matrixPeak > 0
                ? r.modelFlops.total() / (d.stepSeconds * r.matrixPeak)
                : 0;
    d.shardOptimizer = o.shardOptimizer;
    d.optimizerBytesPerRank =
        d.shardOptimizer ? (r.optimizerBytes + d.gpus - 1) / d.gpus : r.optimizerBytes;
    d.peakBytesPerRank = r.peakBytes - r.optimizerBytes + d.optimizerBytesPerRank;
    r.dataParallel = d;
  }

  // The run's length: --tokens, else the schedule's steps (each a step of
  // every device, `accumulate` micro-batches each).
  const std::optional<int64_t> &scheduleSteps = request.settings.steps;
  if ((o.gpus > 0 && o.clusterTokens > 0) || (scheduleSteps && r.tokensKnown)) {
    ReportCluster c;
    c.gpus = std::max<int64_t>(1, o.gpus);
    if (o.clusterTokens > 0) {
      c.tokens = o.clusterTokens;
    } else {
      c.scheduleSteps = *scheduleSteps;
      c.schedule = request.settings.schedule;
      c.accumulate = request.settings.accumulate;
      c.tokens = double(c.scheduleSteps) * double(r.tokensPerStep) *
                 double(request.settings.accumulate) * double(c.gpus);
    }
    c.mfuGiven = o.mfu > 0;
    // The predicted MFU is the data-parallel step's (exposed communication
    // included) where there is one.
    c.mfu = c.mfuGiven ? o.mfu : r.dataParallel ? r.dataParallel->mfu : r.mfu;
    c.flopsPerToken = r.modelFlopsPerToken;
    c.totalFlops = c.flopsPerToken * c.tokens;
    c.sixNDFlops = r.sixN * c.tokens;
    double rate = static_cast<double>(c.gpus) * r.matrixPeak * c.mfu;
    c.seconds = rate > 0 ? c.totalFlops / rate : INFINITY;
    c.days = c.seconds / 86400;
    c.gpuHours = c.seconds / 3600 * static_cast<double>(c.gpus);
    c.bytesPerParam = r.bytesPerParam;
    if (c.bytesPerParam > 0) {
      c.maxParamsPerDevice = r.deviceMemory / c.bytesPerParam;
      c.maxParams = c.maxParamsPerDevice * static_cast<double>(c.gpus);
    }
    r.cluster = c;
  }
  return true;
}

} // namespace einc
