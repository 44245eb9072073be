//===- StepPrice.h - A remat plan priced as the step it becomes -*- C++ -*-===//
//
// The remat sweep's rows and the fit advice give, for each plan, the step
// time and peak `einc report --remat PLAN` would give: the function,
// rematerialised by the same stage (applyRemat), lowered for the CPU as the
// report lowers it and priced by the report's own code (reportOnStep: the
// kernel table's time, the lowered Program's memory plan). One number per
// plan, whichever table shows it (issue 30; docs/remat.md).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_DRIVER_STEPPRICE_H
#define EINC_TOOLS_DRIVER_STEPPRICE_H

#include "CompileRequest.h"
#include "Stages.h"

#include "passes/RematGraph.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace einc {

struct StepPrice {
  double stepSeconds = 0; // the report's step time: its kernel table's
  int64_t peak = 0;       // the lowered Program's planned peak
};

/// `function` of `module` (built and fused, not yet rematerialised; left
/// untouched) under the remat setting `remat`, on `request`'s report device,
/// priced as `einc report` prices @train_step; `settings` are the step's
/// (the report's priced settings), `device` the one `budget:` is taken on.
/// None (with the error printed) when a stage fails.
std::optional<StepPrice> priceUnderRemat(mlir::ModuleOp module, const CompileRequest &request,
                                         const einrt::TrainSettings &settings,
                                         const RematDevice *device, const std::string &remat,
                                         const std::string &function = "train_step");

/// @train_step of `module` (as above) with the plan `keep` applied as
/// ein-remat applies a plan (applyRematPlan, on a graph of the clone built
/// with `graph`, the options of the graph `keep` was chosen on): the same
/// step as the remat setting that picks `keep`, without solving again, and
/// not lowered: its peak is the plan's placed peak, which is the lowered
/// step's memory plan (RematGraph.h; test/report/remat-sweep-is-the-step.test
/// holds the two equal).
std::optional<StepPrice> pricePlan(mlir::ModuleOp module, const CompileRequest &request,
                                   const einrt::TrainSettings &settings,
                                   const mlir::ein::RematGraph::Options &graph,
                                   const std::vector<char> &keep);

} // namespace einc

#endif // EINC_TOOLS_DRIVER_STEPPRICE_H
