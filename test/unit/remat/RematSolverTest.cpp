//===- RematSolverTest.cpp - The budget solver against exact search -------===//
//
// Issue 11, the solver behind `budget:`: "where the exact search finishes,
// the fast solver's plan is within 1% of its recompute cost (small
// graphs)"; "monotonic: a larger budget never gives more recompute or a
// higher peak"; "a test sweeps 20 budgets on both examples and checks
// monotonicity and that every plan's measured arena is within its budget".
//
//===----------------------------------------------------------------------===//
#include "tools/driver/Compile.h"
#include "tools/driver/Frontend.h"
#include "tools/driver/Stages.h"

#include "dsl/Elaborator.h"
#include "ir/EinOps.h"
#include "passes/DeviceProfile.h"
#include "passes/RematGraph.h"
#include "passes/RematSolver.h"
#include "runtime/core/Executor.h"
#include "runtime/cpu/CpuDevice.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace {

using Overrides = std::vector<std::pair<std::string, std::string>>;

/// The model's @train_step built and fused as einc builds it (no remat).
mlir::OwningOpRef<mlir::ModuleOp> trainStep(mlir::MLIRContext &context, const std::string &path,
                                            const Overrides &overrides,
                                            einrt::TrainSettings &settings) {
  einc::CompileRequest request;
  request.use = einrt::SettingsUse::Report;
  request.modelPath = path;
  request.overrides = overrides;
  einc::Frontend fe;
  if (!fe.load(request.modelPath) || !fe.parse())
    return nullptr;
  mlir::OwningOpRef<mlir::ModuleOp> module = fe.lower(context, request.overrides, request.use);
  fe.printDiagnostics();
  if (!module)
    return nullptr;
  settings = fe.settings;
  if (failed(einc::buildTrainStep(*module, settings)) ||
      failed(einc::applyFusion(*module, settings)))
    return nullptr;
  return module;
}

std::string example(const std::string &name) {
  return std::string(EINC_SOURCE_DIR) + "/examples/" + name + ".ein";
}
std::string input(const std::string &name) {
  return std::string(EINC_SOURCE_DIR) + "/test/" + name;
}

/// Recompute time on the built-in h100, as ein-remat prices it by default.
mlir::ein::RematGraph::Options onH100() {
  mlir::ein::RematGraph::Options options;
  for (const mlir::ein::DeviceProfile &p : mlir::ein::builtinDeviceProfiles())
    if (p.name == "h100")
      options.seconds = mlir::ein::recomputeSecondsOn(p);
  return options;
}

double objective(const mlir::ein::RematCost &c) {
  return c.recomputeSeconds + 1e-18 * double(c.recomputeFlops);
}

TEST(RematSolver, FastWithinOnePercentOfExactOnSmallGraphs) {
  struct Graph {
    std::string path;
    Overrides overrides;
  };
  // Activations well above the weights, so that the peak is theirs.
  std::vector<Graph> graphs = {
      {input("passes/Inputs/remat-chain.ein"), {{"layers", "1"}, {"batch", "64"}}},
      {input("passes/Inputs/remat-chain.ein"), {{"layers", "2"}, {"batch", "64"}}},
      {input("passes/Inputs/remat-chain.ein"), {{"layers", "3"}, {"batch", "64"}}},
      {input("report/Inputs/relu-net.ein"), {{"layers", "4"}, {"batch", "64"}, {"d", "4"}}},
      {input("report/Inputs/relu-net.ein"), {{"layers", "8"}, {"batch", "64"}, {"d", "4"}}},
      {example("mlp_lm"), {{"batch", "64"}, {"vocab", "16"}, {"embed", "4"}, {"hidden", "16"}}},
  };
  int finished = 0, compared = 0;
  for (const Graph &gr : graphs) {
    SCOPED_TRACE(gr.path + " " + gr.overrides[0].first + "=" + gr.overrides[0].second);
    mlir::MLIRContext context;
    ein::dsl::registerElaboratorDialects(context);
    einrt::TrainSettings settings;
    auto module = trainStep(context, gr.path, gr.overrides, settings);
    ASSERT_TRUE(module);
    auto fn = module->lookupSymbol<mlir::func::FuncOp>("train_step");
    mlir::ein::RematGraph graph(fn, onH100());
    mlir::ein::RematFrontier frontier = mlir::ein::solveRematFrontier(graph);
    mlir::ein::placeFrontier(graph, frontier);
    ASSERT_FALSE(frontier.points.empty());
    int64_t lo = frontier.points.front().placedPeak, hi = frontier.points.back().placedPeak;
    for (int k = 0; k <= 5; ++k) {
      int64_t budget = lo + (hi - lo) * k / 5;
      const mlir::ein::RematPoint *fast = mlir::ein::pickForBudget(graph, frontier, budget);
      ASSERT_NE(fast, nullptr) << "budget " << budget;
      mlir::ein::RematExactResult exact = mlir::ein::solveRematExact(graph, budget, 3, fast);
      ASSERT_TRUE(exact.feasible);
      EXPECT_LE(exact.best.placedPeak, budget);
      ++compared;
      if (!exact.finished) { // the bound it reached stays below the plan found
        EXPECT_LE(exact.lowerBound, objective(exact.best.cost));
        EXPECT_GE(exact.gap, 0);
        continue;
      }
      ++finished;
      EXPECT_LE(objective(fast->cost), objective(exact.best.cost) * 1.01 + 1e-15)
          << "budget " << budget << ": fast " << fast->how << " " << fast->cost.recomputeFlops
          << " FLOPs, exact " << exact.best.cost.recomputeFlops << " FLOPs";
    }
  }
  EXPECT_GE(finished, compared / 2) << "the exact search finished too rarely to compare";
  std::printf("exact search finished for %d of %d budgets\n", finished, compared);
}

/// compileModel as `einc report --device h100` compiles it.
bool compile(const std::string &model, const Overrides &overrides, mlir::MLIRContext &context,
             einc::CompiledModel &out, mlir::OwningOpRef<mlir::ModuleOp> &module) {
  einc::CompileRequest request;
  request.use = einrt::SettingsUse::Report;
  request.modelPath = example(model);
  request.overrides = overrides;
  einc::Frontend fe;
  if (!fe.load(request.modelPath) || !fe.parse())
    return false;
  module = fe.lower(context, request.overrides, request.use);
  fe.printDiagnostics();
  if (!module)
    return false;
  request.functions = {"train_step"};
  request.jit = false;
  request.report = true;
  request.reportDevice = "h100";
  request.settings = fe.settings;
  request.frontend = &fe;
  return einc::compileModel(*module, request, out);
}

// Twenty budgets from half the peak of keeping everything to a little above
// it, both examples: each plan's arena, as the executor allocates it, fits
// its budget; recompute never grows and the peak never shrinks as the
// budget grows; budgets too small for any plan fail, and only those.
TEST(RematSolver, TwentyBudgetsOnBothExamples) {
  // mlp_lm at batch 1024: at its default 256 rows the peak is the
  // gradients' and the optimizer's, which no plan changes.
  std::vector<std::pair<std::string, Overrides>> models = {{"gpt", {}},
                                                           {"mlp_lm", {{"batch", "1024"}}}};
  for (const auto &[model, dims] : models) {
    SCOPED_TRACE(model);
    // The range: the least peak of a plan (the frontier's first point) to
    // a little above keeping everything.
    int64_t least = 0, none = 0;
    {
      mlir::MLIRContext context;
      ein::dsl::registerElaboratorDialects(context);
      einrt::TrainSettings settings;
      auto module = trainStep(context, example(model), dims, settings);
      ASSERT_TRUE(module);
      mlir::ein::RematGraph graph(module->lookupSymbol<mlir::func::FuncOp>("train_step"), onH100());
      mlir::ein::RematFrontier frontier = mlir::ein::solveRematFrontier(graph);
      mlir::ein::placeFrontier(graph, frontier);
      least = frontier.points.front().placedPeak;
      none = frontier.points.back().placedPeak;
    }
    ASSERT_LT(least, none) << "no plan saves memory";
    double lastRecompute = -1;
    int64_t lastPeak = -1, fitted = 0;
    for (int k = 0; k < 20; ++k) {
      int64_t budget = least + (none + none / 50 - least) * k / 19;
      SCOPED_TRACE("budget " + std::to_string(budget));
      mlir::MLIRContext context;
      ein::dsl::registerElaboratorDialects(context);
      einc::CompiledModel compiled;
      mlir::OwningOpRef<mlir::ModuleOp> module;
      Overrides overrides = dims;
      overrides.push_back({"remat", "budget:" + std::to_string(budget)});
      bool ok = compile(model, overrides, context, compiled, module);
      if (!ok) {
        EXPECT_EQ(fitted, 0) << "a larger budget failed after a smaller one fitted";
        continue;
      }
      ++fitted;
      const einrt::Program *step = compiled.program("train_step");
      ASSERT_NE(step, nullptr);
      einrt::CpuDevice cpu;
      int64_t allocated = einrt::Executor::plannedBytes(*step, cpu);
      const einc::Report &r = *compiled.report;
      EXPECT_EQ(r.peakBytes, allocated);
      EXPECT_LE(allocated, budget);
      if (lastRecompute >= 0) {
        EXPECT_LE(r.remat.recomputeSeconds, lastRecompute) << "more recompute for a larger budget";
        EXPECT_GE(allocated, lastPeak) << "a lower peak for a larger budget";
      }
      lastRecompute = r.remat.recomputeSeconds;
      lastPeak = allocated;
    }
    EXPECT_EQ(fitted, 20);
    EXPECT_EQ(lastRecompute, 0) << "a budget above none's peak recomputes nothing";
  }
}

} // namespace
