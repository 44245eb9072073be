//===- RematSweep.h - The remat trade-off and "does it fit?" -----*- C++ -*-===//
//
// For `einc report`: on @train_step built and fused but not yet
// rematerialised, the solver's frontier (passes/RematSolver.h) as a ladder
// of budgets and the named policies on the same axes (`--remat-sweep`), and,
// when keeping everything does not fit the device, the answer: the plan of
// least recompute that fits, or else the split into micro-batches (with
// `accumulate`) whose step does, with the command line that applies it.
// Each plan's step time and peak are those of the step it becomes, lowered
// and priced as the report prices its own (StepPrice.h).
// docs/remat.md, docs/report.md.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_DRIVER_REMATSWEEP_H
#define EINC_TOOLS_DRIVER_REMATSWEEP_H

#include "CompileRequest.h"
#include "Report.h"
#include "Stages.h"

#include "passes/Analysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace einc {

/// The sweep of `module`'s @train_step on `device` into `sweep` (none: no
/// sweep); only when `ladder` (--remat-sweep) or the plain step does not
/// fit. Every plan it shows — a rung, a named policy, the fit advice — is
/// priced as the step it becomes (StepPrice.h), with `settings` (the
/// report's): its row is what `einc report --remat PLAN` reports. The
/// micro-batch splits are `request`'s parsed model elaborated again (no
/// split without one); its model path goes into the advice's command line.
/// Fails (the error printed) where pricing a plan does.
mlir::LogicalResult sweepRemat(mlir::ModuleOp module, const CompileRequest &request,
                               const einrt::TrainSettings &settings, const RematDevice *device,
                               bool ladder, std::optional<ReportRematSweep> &sweep);

/// A floor under every split of the batch into micro-batches: its
/// @accumulate_grad peak plus its @apply_update peak, whatever the
/// micro-batch. A function's arguments are resident (RematGraph); both take
/// the params and @apply_update the optimizer state too, typed as
/// `trainStep`'s arguments of those kinds are (one sized by the batch is
/// left out: a split shrinks it). The advice builds no split when this
/// exceeds the device.
int64_t splitResidentFloor(mlir::func::FuncOp trainStep,
                           const mlir::ein::ByteWidth &width = mlir::ein::irByteWidth);

} // namespace einc

#endif // EINC_TOOLS_DRIVER_REMATSWEEP_H
