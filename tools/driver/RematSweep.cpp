//===- RematSweep.cpp - The remat trade-off and "does it fit?" ------------===//
#include "RematSweep.h"
#include "Frontend.h"

#include "dsl/Elaborator.h"
#include "passes/Analysis.h"
#include "passes/DeviceProfile.h"
#include "passes/Remat.h"
#include "passes/RematGraph.h"
#include "passes/RematSolver.h"
#include "runtime/base/FirstFit.h"
#include "runtime/base/RematPolicy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <chrono>
#include <cmath>

using namespace mlir;
namespace pe = mlir::ein;

namespace einc {
namespace {

/// Recompute time on `device`, or on the built-in h100 without one.
pe::RematGraph::Options onDevice(const RematDevice *device) {
  pe::RematGraph::Options options;
  pe::DeviceProfile profile;
  if (device) {
    for (const char *dtype : {"f32", "bf16", "f16"}) {
      profile.matmulFlops[dtype] = device->matrixFlops;
      profile.vectorFlops[dtype] = device->vectorFlops;
    }
    profile.bandwidth = device->bandwidth;
  } else {
    for (const pe::DeviceProfile &p : pe::builtinDeviceProfiles())
      if (p.name == "h100")
        profile = p;
  }
  options.seconds = pe::recomputeSecondsOn(profile);
  return options;
}

/// A budget as the remat setting writes it: whole gigabytes as "80GB", else
/// bytes.
std::string sizeText(int64_t bytes) {
  if (bytes >= 1000000000 && bytes % 1000000000 == 0)
    return std::to_string(bytes / 1000000000) + "GB";
  return std::to_string(bytes);
}

ReportRematPlan planOf(std::string label, int64_t budget, int64_t peak, const pe::RematCost &cost) {
  ReportRematPlan p;
  p.label = std::move(label);
  p.budget = budget;
  p.peak = peak;
  p.recomputeFlops = cost.recomputeFlops;
  p.recomputeSeconds = cost.recomputeSeconds;
  return p;
}

/// The first split of the batch into 2, 4, 8, ... micro-batches whose
/// @accumulate_grad (with the plan of least recompute that fits beside it)
/// and @apply_update fit `memory` together, as a training run allocates
/// them.
ReportFitAdvice microBatchAdvice(ModuleOp module, const CompileRequest &request,
                                 const RematDevice *device, int64_t memory) {
  ReportFitAdvice fit;
  auto dims = module->getAttrOfType<DictionaryAttr>("ein.dims");
  auto batchAttr = dims ? dims.getAs<IntegerAttr>("batch") : nullptr;
  if (!batchAttr) {
    fit.why = "no plan fits, and the model has no `batch` dim to split into micro-batches";
    return fit;
  }
  if (!request.frontend) {
    fit.why = "no plan fits, and the model is not at hand to build a split into micro-batches";
    return fit;
  }
  int64_t batch = batchAttr.getInt();
  // Each split tried is the parsed model elaborated again; none is when even the bytes
  // every split holds do not fit.
  auto trainStep = module.lookupSymbol<func::FuncOp>("train_step");
  bool noSplitFits = trainStep && splitResidentFloor(trainStep, onDevice(device).width) > memory;
  for (int64_t k = 2; !noSplitFits && k <= batch && batch % k == 0; k *= 2) {
    MLIRContext context;
    ::ein::dsl::registerElaboratorDialects(context);
    Overrides split = request.overrides;
    split.push_back({"batch", std::to_string(batch / k)});
    split.push_back({"accumulate", std::to_string(k)});
    split.push_back({"remat", "none"});
    einrt::TrainSettings settings;
    OwningOpRef<ModuleOp> m =
        request.frontend->elaborate(context, split, request.use, settings, /*diagnostics=*/nullptr);
    ++fit.splitsBuilt;
    if (!m || failed(buildTrainStep(*m, settings)))
      break;
    auto accumulate = m->lookupSymbol<func::FuncOp>("accumulate_grad");
    auto apply = m->lookupSymbol<func::FuncOp>("apply_update");
    if (!accumulate || !apply)
      break;
    // Fusion is per function: only the two priced here are fused.
    for (auto fn : llvm::make_early_inc_range(m->getOps<func::FuncOp>()))
      if (fn != accumulate && fn != apply)
        fn.erase();
    if (failed(applyFusion(*m, settings)))
      break;
    pe::RematEvalOptions placed;
    placed.arena = true;
    pe::RematGraph applyGraph(apply, onDevice(device));
    int64_t applyPeak = applyGraph.evaluate(applyGraph.keepAll(), nullptr, placed).peakBytes;
    pe::RematGraph graph(accumulate, onDevice(device));
    pe::RematFrontier frontier = pe::solveRematFrontier(graph);
    const pe::RematPoint *pick = pe::pickForBudget(graph, frontier, memory - applyPeak);
    if (!pick)
      continue;
    fit.found = true;
    fit.accumulate = k;
    fit.microBatch = batch / k;
    fit.peak = pick->placedPeak + applyPeak;
    fit.recomputeSeconds = pick->cost.recomputeSeconds;
    if (pick->cost.recomputedOps > 0)
      fit.remat = "budget:" + sizeText(memory - applyPeak);
    fit.command = "einc train " + request.modelPath + " --set batch=" + std::to_string(batch / k) +
                  " --set accumulate=" + std::to_string(k) +
                  (fit.remat.empty() ? "" : " --set remat=" + fit.remat);
    return fit;
  }
  fit.why = "no plan fits, and no split of the batch (" + std::to_string(batch) +
            " rows, halved until it is odd) into micro-batches does either";
  return fit;
}

} // namespace

std::optional<ReportRematSweep> sweepRemat(ModuleOp module, const CompileRequest &request,
                                           const RematDevice *device, bool ladder) {
  auto fn = module.lookupSymbol<func::FuncOp>("train_step");
  if (!fn)
    return std::nullopt;
  auto start = std::chrono::steady_clock::now();
  pe::RematGraph graph(fn, onDevice(device));
  pe::RematEvalOptions placed;
  placed.arena = true;
  int64_t plain = graph.evaluate(graph.keepAll(), nullptr, placed).peakBytes;
  int64_t memory = device ? int64_t(device->memoryBytes) : 0;
  bool tooBig = memory > 0 && plain > memory;
  if (!ladder && !tooBig)
    return std::nullopt;

  ReportRematSweep sweep;
  sweep.ladder = ladder;
  pe::RematFrontier frontier = pe::solveRematFrontier(graph);
  // The ladder draws every point; the fit advice places only those
  // pickForBudget looks at (placing one is a first-fit plan of the step).
  if (ladder)
    pe::placeFrontier(graph, frontier);
  sweep.frontierPoints = int64_t(frontier.points.size());
  sweep.candidates = frontier.candidates;
  if (ladder && !frontier.points.empty()) {
    int64_t least = plain;
    for (const pe::RematPoint &p : frontier.points)
      least = std::min(least, p.placedPeak);
    const int64_t rungs = 12;
    for (int64_t k = 0; k < rungs; ++k) {
      int64_t budget = least + (plain - least) * k / (rungs - 1);
      if (const pe::RematPoint *p = pe::pickForBudget(graph, frontier, budget))
        sweep.frontier.push_back(
            planOf("budget:" + std::to_string(budget), budget, p->placedPeak, p->cost));
    }
    for (const char *policy : einrt::rematPlainPolicies()) {
      pe::RematPolicyChoice choice;
      choice.policy = policy;
      einrt::Expected<std::vector<char>> keep = pe::planForPolicy(graph, choice);
      if (!keep.ok() || keep->empty())
        continue;
      pe::RematCost cost = graph.evaluate(*keep, nullptr, placed);
      sweep.policies.push_back(planOf(policy, 0, cost.peakBytes, cost));
    }
  }
  if (tooBig) {
    ReportFitAdvice fit;
    if (const pe::RematPoint *p = pe::pickForBudget(graph, frontier, memory)) {
      fit.found = true;
      fit.remat = "budget:" + sizeText(memory);
      fit.peak = p->placedPeak;
      fit.recomputeSeconds = p->cost.recomputeSeconds;
      fit.command = "einc train " + request.modelPath + " --set remat=" + fit.remat;
    } else {
      fit = microBatchAdvice(module, request, device, memory);
    }
    sweep.fit = fit;
  }
  sweep.solverSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return sweep;
}

int64_t splitResidentFloor(func::FuncOp trainStep, const pe::ByteWidth &width) {
  int64_t floor = 0;
  for (BlockArgument arg : trainStep.getArguments()) {
    auto kind = trainStep.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "ein.kind");
    auto axes = trainStep.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), "ein.axes");
    bool byBatch = axes && llvm::any_of(axes, [](Attribute a) {
                     auto s = dyn_cast<StringAttr>(a);
                     return !s || s.getValue().contains("batch");
                   });
    if (!kind || byBatch)
      continue;
    int64_t bytes = einrt::alignArena(pe::valueBytes(arg.getType(), width));
    if (kind.getValue() == "param")
      floor += 2 * bytes; // in both functions
    else if (kind.getValue() == "opt_state")
      floor += bytes;
  }
  return floor;
}

void fillSweepStepTimes(Report &r) {
  if (!r.rematSweep)
    return;
  double recompute = 0; // the predicted time of the policy's own clones
  for (const ReportOp &op : r.ops)
    if (op.phase == "recompute")
      recompute += op.seconds;
  double plain = r.stepSeconds - recompute;
  for (auto *plans : {&r.rematSweep->frontier, &r.rematSweep->policies})
    for (ReportRematPlan &p : *plans)
      p.stepSeconds = plain + p.recomputeSeconds;
}

} // namespace einc
