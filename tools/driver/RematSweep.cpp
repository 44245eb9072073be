//===- RematSweep.cpp - The remat trade-off and "does it fit?" ------------===//
#include "RematSweep.h"
#include "Frontend.h"
#include "StepPrice.h"

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
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <chrono>
#include <cmath>
#include <map>

using namespace mlir;
namespace pe = mlir::ein;

namespace einc {
namespace {

/// Recompute time on `device`, or on the built-in h100 without one, priced
/// as ein-remat prices it there (applyRemat passes the pass the same rates).
pe::RematGraph::Options onDevice(const RematDevice *device) {
  pe::DeviceProfile profile;
  if (device && device->matrixFlops > 0) {
    auto or32 = [](double rate, double f32) { return rate > 0 ? rate : f32; };
    profile.matmulFlops = {{"f32", device->matrixFlops},
                           {"bf16", or32(device->bf16MatrixFlops, device->matrixFlops)},
                           {"f16", or32(device->f16MatrixFlops, device->matrixFlops)}};
    profile.vectorFlops = {{"f32", device->vectorFlops},
                           {"bf16", or32(device->bf16VectorFlops, device->vectorFlops)},
                           {"f16", or32(device->f16VectorFlops, device->vectorFlops)}};
    profile.bandwidth = device->bandwidth;
    profile.kernelLatency = device->kernelLatency;
  } else {
    for (const pe::DeviceProfile &p : pe::builtinDeviceProfiles())
      if (p.name == "h100")
        profile = p;
  }
  return pe::rematPricingOn(profile);
}

/// A budget as the remat setting writes it: whole gigabytes as "80GB", else
/// bytes.
std::string sizeText(int64_t bytes) {
  if (bytes >= 1000000000 && bytes % 1000000000 == 0)
    return std::to_string(bytes / 1000000000) + "GB";
  return std::to_string(bytes);
}

/// A word as a POSIX shell reads it back: as is when it is plain, else in
/// single quotes.
std::string shellWord(const std::string &word) {
  bool plain = !word.empty() && llvm::all_of(word, [](char c) {
    return llvm::isAlnum(c) || llvm::StringRef("_-+=:./,@%").contains(c);
  });
  if (plain)
    return word;
  std::string quoted = "'";
  for (char c : word)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// The command that trains the model as reported with the advice's
/// settings: the model, the request's own `--set`s and optimizer (those the
/// advice sets replaced), then the advice's.
std::string adviceCommand(const CompileRequest &request, const Overrides &advice) {
  std::string command = "einc train " + shellWord(request.modelPath);
  for (const auto &[key, value] : request.overrides)
    if (llvm::none_of(advice, [&](const auto &a) { return a.first == key; }))
      command += " --set " + shellWord(key + "=" + value);
  if (!request.optimizer.empty())
    command += " --optimizer " + shellWord(request.optimizer);
  for (const auto &[key, value] : advice)
    command += " --set " + shellWord(key + "=" + value);
  return command;
}

ReportRematPlan planOf(std::string label, int64_t budget, const pe::RematCost &cost) {
  ReportRematPlan p;
  p.label = std::move(label);
  p.budget = budget;
  p.recomputeFlops = cost.recomputeFlops;
  p.recomputeSeconds = cost.recomputeSeconds;
  return p;
}

/// The first split of the batch into 2, 4, 8, ... micro-batches whose
/// @accumulate_grad (with the plan of least recompute that fits beside it)
/// and @apply_update fit `memory` together, as a training run allocates
/// them; priced as they run: `accumulate` × @accumulate_grad's step and one
/// @apply_update, each lowered and priced as the report prices a step.
FailureOr<ReportFitAdvice> microBatchAdvice(ModuleOp module, const CompileRequest &request,
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
    fit.recomputeSeconds = pick->cost.recomputeSeconds;
    if (pick->cost.recomputedOps > 0)
      fit.remat = "budget:" + sizeText(memory - applyPeak);
    std::optional<StepPrice> microStep = priceUnderRemat(
        *m, request, settings, device, fit.remat.empty() ? "none" : fit.remat, "accumulate_grad");
    std::optional<StepPrice> update =
        priceUnderRemat(*m, request, settings, device, "none", "apply_update");
    if (!microStep || !update)
      return failure();
    fit.peak = microStep->peak + update->peak;
    fit.stepSeconds = double(k) * microStep->stepSeconds + update->stepSeconds;
    fit.command = adviceCommand(request, {{"batch", std::to_string(batch / k)},
                                          {"accumulate", std::to_string(k)},
                                          {"remat", fit.remat.empty() ? "none" : fit.remat}});
    return fit;
  }
  fit.why = "no plan fits, and no split of the batch (" + std::to_string(batch) +
            " rows, halved until it is odd) into micro-batches does either";
  return fit;
}

/// Each distinct plan priced once, as the step it becomes (StepPrice.h).
class PlanPrices {
public:
  PlanPrices(ModuleOp module, const CompileRequest &request, const einrt::TrainSettings &settings,
             const pe::RematGraph::Options &graph)
      : module_(module), request_(request), settings_(settings), graph_(graph) {}

  LogicalResult price(const std::vector<char> &keep, ReportRematPlan &plan) {
    auto it = prices_.find(keep);
    if (it == prices_.end()) {
      std::optional<StepPrice> step = pricePlan(module_, request_, settings_, graph_, keep);
      if (!step)
        return failure();
      it = prices_.emplace(keep, *step).first;
    }
    plan.peak = it->second.peak;
    plan.stepSeconds = it->second.stepSeconds;
    return success();
  }

private:
  ModuleOp module_;
  const CompileRequest &request_;
  const einrt::TrainSettings &settings_;
  const pe::RematGraph::Options &graph_;
  std::map<std::vector<char>, StepPrice> prices_;
};

} // namespace

LogicalResult sweepRemat(ModuleOp module, const CompileRequest &request,
                         const einrt::TrainSettings &settings, const RematDevice *device,
                         bool ladder, std::optional<ReportRematSweep> &out) {
  out.reset();
  auto fn = module.lookupSymbol<func::FuncOp>("train_step");
  if (!fn)
    return success();
  auto start = std::chrono::steady_clock::now();
  pe::RematGraph graph(fn, onDevice(device));
  pe::RematEvalOptions placed;
  placed.arena = true;
  int64_t plain = graph.evaluate(graph.keepAll(), nullptr, placed).peakBytes;
  int64_t memory = device ? int64_t(device->memoryBytes) : 0;
  bool tooBig = memory > 0 && plain > memory;
  if (!ladder && !tooBig)
    return success();

  ReportRematSweep sweep;
  sweep.ladder = ladder;
  pe::RematFrontier frontier = pe::solveRematFrontier(graph);
  // The ladder draws every point; the fit advice places only those
  // pickForBudget looks at (placing one is a first-fit plan of the step).
  if (ladder)
    pe::placeFrontier(graph, frontier);
  sweep.frontierPoints = int64_t(frontier.points.size());
  sweep.candidates = frontier.candidates;
  std::vector<std::vector<char>> keeps; // each row's plan, rungs then policies
  if (ladder && !frontier.points.empty()) {
    int64_t least = plain;
    for (const pe::RematPoint &p : frontier.points)
      least = std::min(least, p.placedPeak);
    const int64_t rungs = 12;
    for (int64_t k = 0; k < rungs; ++k) {
      int64_t budget = least + (plain - least) * k / (rungs - 1);
      if (const pe::RematPoint *p = pe::pickForBudget(graph, frontier, budget)) {
        sweep.frontier.push_back(planOf("budget:" + std::to_string(budget), budget, p->cost));
        keeps.push_back(p->keep);
      }
    }
    for (const char *policy : einrt::rematPlainPolicies()) {
      pe::RematPolicyChoice choice;
      choice.policy = policy;
      einrt::Expected<std::vector<char>> keep = pe::planForPolicy(graph, choice);
      if (!keep.ok() || keep->empty())
        continue;
      sweep.policies.push_back(planOf(policy, 0, graph.evaluate(*keep, nullptr, placed)));
      keeps.push_back(keep.take());
    }
  }
  sweep.solverSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Every row is the step `einc report --remat ROW` reports: its plan
  // applied as ein-remat applies the plan that setting picks (the same
  // graph, the same solver), lowered and priced (StepPrice.h).
  PlanPrices prices(module, request, settings, graph.options());
  size_t row = 0;
  for (auto *plans : {&sweep.frontier, &sweep.policies})
    for (ReportRematPlan &p : *plans)
      if (failed(prices.price(keeps[row++], p)))
        return failure();
  if (tooBig) {
    ReportFitAdvice fit;
    if (const pe::RematPoint *p = pe::pickForBudget(graph, frontier, memory)) {
      fit.found = true;
      fit.remat = "budget:" + sizeText(memory);
      fit.recomputeSeconds = p->cost.recomputeSeconds;
      fit.command = adviceCommand(request, {{"remat", fit.remat}});
      std::optional<StepPrice> step = priceUnderRemat(module, request, settings, device, fit.remat);
      if (!step)
        return failure();
      fit.peak = step->peak;
      fit.stepSeconds = step->stepSeconds;
    } else {
      FailureOr<ReportFitAdvice> split = microBatchAdvice(module, request, device, memory);
      if (failed(split))
        return failure();
      fit = std::move(*split);
    }
    sweep.fit = fit;
  }
  out = std::move(sweep);
  return success();
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

} // namespace einc
