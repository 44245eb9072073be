//===- Remat.cpp - ein-remat: checkpoint policies and their rewrite -------===//
//
// `ein-remat` decides, for each forward value of @grad, @train_step and
// @accumulate_grad that the backward reads, whether the backward keeps it
// or recomputes it, and rewrites the function accordingly (Remat.h). The
// named policies are plans over the RematGraph; `budget` asks the solver
// (RematSolver.h) for the plan of least predicted recompute time whose peak
// fits. Each rewritten function records what was done in `ein.remat`.
// docs/remat.md.
//
//===----------------------------------------------------------------------===//
#include "passes/Remat.h"
#include "passes/Analysis.h"
#include "passes/DeviceProfile.h"
#include "passes/FuseElementwise.h"
#include "passes/FuseRows.h"
#include "passes/Passes.h"
#include "passes/RematSolver.h"

#include "ir/EinOps.h"
#include "runtime/base/RematPolicy.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringExtras.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace mlir::ein {
#define GEN_PASS_DEF_EINREMAT
#include "passes/Passes.h.inc"

const char *rematPolicyNames() { return einrt::rematKindNames(); }

int64_t sqrtSpacing(int64_t iterations) {
  int64_t k = std::max<int64_t>(1, int64_t(std::sqrt(double(iterations))));
  while (k * k < iterations)
    ++k;
  return k;
}

namespace {

/// Checkpointed regions of `spacing` loop iterations each (iterations 0..K-1,
/// K..2K-1, ...): keep what is outside every loop and each value one region
/// defines and another reads (a region's inputs and outputs); recompute the
/// rest.
std::vector<char> keepRegionBoundaries(const RematGraph &g, int64_t spacing) {
  const std::vector<RematNode> &nodes = g.nodes();
  auto region = [&](int32_t i) {
    return nodes[i].iteration < 0 ? -1 : nodes[i].iteration / spacing;
  };
  std::vector<char> keep(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    keep[i] |= nodes[i].iteration < 0;
    for (int32_t u : nodes[i].operands) {
      int32_t r = nodes[u].view ? nodes[u].root : u;
      if (r >= 0 && region(r) != region(int32_t(i)))
        keep[r] = 1;
    }
  }
  return keep;
}

} // namespace

einrt::Expected<std::vector<char>> planForPolicy(const RematGraph &g, const RematPolicyChoice &c) {
  const std::vector<RematNode> &nodes = g.nodes();
  const int64_t iterations = int64_t(g.iterations().size());
  using Kind = einrt::RematPolicy::Kind;
  std::optional<Kind> kind = einrt::rematKindNamed(c.policy);
  if (!kind) {
    return einrt::Status::invalid("unknown policy '" + c.policy +
                                  "' (valid: " + rematPolicyNames() + ")");
  }
  switch (*kind) {
  case Kind::None:
    return g.keepAll();
  case Kind::Full:
    return keepRegionBoundaries(g, 1);
  case Kind::Sqrt:
    return keepRegionBoundaries(g, sqrtSpacing(iterations));
  case Kind::Every:
    if (c.every < 1) {
      return einrt::Status::invalid("every needs a spacing of at least 1 iteration, got " +
                                    std::to_string(c.every));
    }
    return keepRegionBoundaries(g, c.every);
  case Kind::Selective: {
    // Contraction outputs and what crosses an iteration's boundary stay;
    // elementwise ops, reductions and data movement are recomputed.
    std::vector<char> keep = keepRegionBoundaries(g, 1);
    for (size_t i = 0; i < nodes.size(); ++i)
      keep[i] = nodes[i].contraction || (keep[i] && nodes[i].iteration >= 0);
    return keep;
  }
  case Kind::Names: {
    std::set<std::string> known;
    for (const RematNode &n : nodes)
      known.insert(n.lets.begin(), n.lets.end());
    for (const std::string &name : c.names)
      if (!known.count(name)) {
        return einrt::Status::invalid(
            "names: '" + name +
            "' is not a value of the program; its let-bound names: " + llvm::join(known, ", "));
      }
    std::set<std::string> wanted(c.names.begin(), c.names.end());
    std::vector<char> keep(nodes.size(), 0);
    for (size_t i = 0; i < nodes.size(); ++i)
      if (llvm::any_of(nodes[i].lets, [&](const std::string &l) { return wanted.count(l); })) {
        int32_t r = nodes[i].view ? nodes[i].root : int32_t(i);
        if (r >= 0)
          keep[r] = 1;
      }
    return keep;
  }
  case Kind::Budget:
    break;
  }
  return einrt::Status::invalid(
      "'budget' is no named plan: the solver chooses it (passes/RematSolver.h)");
}

RematCost applyRematPlan(const RematGraph &g, const std::vector<char> &keep) {
  RematSchedule schedule;
  RematEvalOptions placed;
  placed.arena = true;
  RematCost cost = g.evaluate(keep, &schedule, placed);
  if (cost.recomputedOps == 0)
    return cost;
  const std::vector<RematNode> &nodes = g.nodes();
  MLIRContext *ctx = g.function().getContext();
  auto phase = StringAttr::get(ctx, "recompute");

  // The later-phase ops, before any clone exists.
  std::vector<Operation *> late;
  for (Operation *op : g.ops())
    if (g.nodeOf(op) < 0)
      late.push_back(op);

  // The elementwise clones of one kernel's members that iterate one shape
  // (RematNode::cloneKernel), placed before the same op, form a kernel of
  // their own: a fresh group id.
  int64_t nextGroup = 0;
  for (Operation *op : g.ops())
    if (auto id = op->getAttrOfType<IntegerAttr>(kFusionAttr))
      nextGroup = std::max(nextGroup, id.getInt() + 1);
  std::map<std::pair<int64_t, int64_t>, int64_t> cloneGroup; // (cloneKernel, place) -> id
  IRMapping clones;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!schedule.recompute[i])
      continue;
    OpBuilder b(g.ops()[size_t(schedule.need[i])]);
    Operation *c = b.clone(*nodes[i].op, clones);
    c->setAttr(kPhaseAttr, phase);
    // A recomputed contraction runs without an epilogue: its group's
    // clones get another number and need not follow it (ein-fuse-epilogues).
    c->removeAttr(kEpilogueAttr);
    // Clones of a row group's members are no row kernel (a part of one
    // need not hold its reduction): their elementwise ops fuse as a group.
    c->removeAttr(kRowsAttr);
    c->removeAttr(kFusionAttr);
    if (nodes[i].cloneKernel >= 0) {
      auto [it, fresh] =
          cloneGroup.try_emplace({nodes[i].cloneKernel, schedule.need[i]}, nextGroup);
      if (fresh)
        ++nextGroup;
      c->setAttr(kFusionAttr, IntegerAttr::get(IntegerType::get(ctx, 64), it->second));
    }
  }
  for (Operation *op : late)
    for (OpOperand &use : op->getOpOperands()) {
      int32_t w = use.get().getDefiningOp() ? g.nodeOf(use.get().getDefiningOp()) : -1;
      if (w >= 0 && schedule.recompute[size_t(w)])
        use.set(clones.lookup(use.get()));
    }
  // Forward ops that only the backward read are dead now.
  for (size_t i = nodes.size(); i-- > 0;)
    if (isOpTriviallyDead(nodes[i].op))
      nodes[i].op->erase();
  return cost;
}

namespace {

struct EinRemat : public impl::EinRematBase<EinRemat> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::vector<std::string> names(funcs.begin(), funcs.end());
    if (names.empty())
      names = {"grad", "train_step", "accumulate_grad"};
    RematPolicyChoice choice;
    choice.policy = policy;
    choice.every = every;
    choice.names.assign(namesToKeep.begin(), namesToKeep.end());
    for (const std::string &name : names) {
      auto fn = module.lookupSymbol<func::FuncOp>(name);
      if (!fn || fn.isExternal() || fn->hasAttr("ein.remat"))
        continue; // none, or rewritten already
      if (failed(runOn(fn, choice)))
        return signalPassFailure();
    }
  }

  /// Recompute priced on the device the options name: each op on the
  /// roofline, the clones as the kernels they run as (rematPricingOn).
  FailureOr<RematGraph::Options> pricing(func::FuncOp fn) {
    const DeviceProfile *found = nullptr;
    for (const DeviceProfile &p : builtinDeviceProfiles())
      if (p.name == device)
        found = &p;
    if (!found && (matrixFlops <= 0 || vectorFlops <= 0 || bandwidth <= 0))
      return fn.emitError() << "ein-remat: unknown device '" << device << "'";
    DeviceProfile profile = found ? *found : DeviceProfile{};
    // A 16-bit rate not given is the f32 one given.
    auto rates = [](double f32, double bf16, double f16) -> std::map<std::string, double> {
      return {{"f32", f32}, {"bf16", bf16 > 0 ? bf16 : f32}, {"f16", f16 > 0 ? f16 : f32}};
    };
    if (matrixFlops > 0)
      profile.matmulFlops = rates(matrixFlops, bf16MatrixFlops, f16MatrixFlops);
    if (vectorFlops > 0)
      profile.vectorFlops = rates(vectorFlops, bf16VectorFlops, f16VectorFlops);
    if (bandwidth > 0)
      profile.bandwidth = bandwidth;
    if (kernelLatency >= 0)
      profile.kernelLatency = kernelLatency;
    return rematPricingOn(profile);
  }

  LogicalResult runOn(func::FuncOp fn, const RematPolicyChoice &choice) {
    Builder b(fn.getContext());
    SmallVector<NamedAttribute> extra;
    std::vector<char> keep;
    std::optional<RematGraph> graph;
    using Kind = einrt::RematPolicy::Kind;
    std::optional<Kind> kind = einrt::rematKindNamed(choice.policy);
    if (kind == Kind::Budget) {
      if (!(budget > 0))
        return fn.emitError() << "ein-remat: budget needs a positive number of bytes, got "
                              << budget.getValue();
      auto options = pricing(fn);
      if (failed(options))
        return failure();
      graph.emplace(fn, *options);
      // Nothing the forward computes is read by the backward (a loss that
      // no param reaches): no plan to choose, and nothing to hold.
      if (graph->nodes().empty())
        return success();
      auto start = std::chrono::steady_clock::now();
      RematFrontier frontier = solveRematFrontier(*graph);
      const RematPoint *pick = pickForBudget(*graph, frontier, int64_t(budget));
      double solved =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      bool mustFitThis = mustFit.empty() || llvm::is_contained(mustFit, fn.getName().str());
      if (!pick && !mustFitThis && !frontier.points.empty()) {
        // Not run by the caller: the plan of least peak, recorded as not fitting.
        placeFrontier(*graph, frontier);
        pick = &frontier.points.front();
        for (const RematPoint &p : frontier.points)
          if (p.placedPeak < pick->placedPeak)
            pick = &p;
        extra.push_back(b.getNamedAttr("fits", b.getBoolAttr(false)));
      }
      if (!pick) {
        InFlightDiagnostic diag = fn.emitError()
                                  << "ein-remat: no plan of @" << fn.getName()
                                  << " fits a budget of " << int64_t(budget) << " bytes";
        if (!frontier.points.empty()) {
          placeFrontier(*graph, frontier);
          const RematPoint *least = &frontier.points.front();
          for (const RematPoint &p : frontier.points)
            if (p.placedPeak < least->placedPeak)
              least = &p;
          diag << "; the least peak of a plan is " << least->placedPeak << " bytes (" << least->how
               << ")";
        }
        return diag;
      }
      keep = pick->keep;
      extra.append(
          {b.getNamedAttr("budget", b.getI64IntegerAttr(int64_t(budget))),
           b.getNamedAttr("plan", b.getStringAttr(pick->how)),
           b.getNamedAttr("frontier", b.getI64IntegerAttr(int64_t(frontier.points.size()))),
           b.getNamedAttr("candidates", b.getI64IntegerAttr(frontier.candidates)),
           b.getNamedAttr("solver_ms", b.getI64IntegerAttr(int64_t(solved * 1000)))});
    } else {
      auto options = pricing(fn);
      if (failed(options))
        return failure();
      graph.emplace(fn, *options);
      einrt::Expected<std::vector<char>> plan = planForPolicy(*graph, choice);
      if (!plan.ok())
        return fn.emitError() << "ein-remat: " << plan.status().message();
      keep = plan.take();
    }
    if (keep.empty())
      return success();
    RematCost cost = applyRematPlan(*graph, keep);
    SmallVector<NamedAttribute> record{
        b.getNamedAttr("policy", b.getStringAttr(choice.policy)),
        b.getNamedAttr("recomputed_ops", b.getI64IntegerAttr(cost.recomputedOps)),
        b.getNamedAttr("recompute_flops", b.getI64IntegerAttr(cost.recomputeFlops)),
        b.getNamedAttr("recompute_seconds", b.getF64FloatAttr(cost.recomputeSeconds)),
        b.getNamedAttr("kept", b.getI64IntegerAttr(cost.keptCount)),
        b.getNamedAttr("kept_bytes", b.getI64IntegerAttr(cost.savedBytes)),
        b.getNamedAttr("predicted_peak", b.getI64IntegerAttr(cost.peakBytes))};
    if (kind == Kind::Every || kind == Kind::Sqrt)
      record.push_back(b.getNamedAttr(
          "every", b.getI64IntegerAttr(kind == Kind::Every
                                           ? choice.every
                                           : sqrtSpacing(int64_t(graph->iterations().size())))));
    record.append(extra.begin(), extra.end());
    fn->setAttr("ein.remat", b.getDictionaryAttr(record));
    return success();
  }
};

} // namespace
} // namespace mlir::ein
