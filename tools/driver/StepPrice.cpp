//===- StepPrice.cpp - A remat plan priced as the step it becomes ---------===//
#include "StepPrice.h"
#include "Report.h"

#include "codegen/CpuLowering.h"
#include "passes/Remat.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace einc {

namespace {

/// A clone of `module` holding `function` alone, renamed @train_step (as
/// the report looks it up): the remat pass, the lowering and the pricing
/// see nothing else of the module.
OwningOpRef<ModuleOp> cloneOf(ModuleOp module, const std::string &function) {
  OwningOpRef<ModuleOp> clone(cast<ModuleOp>(module->clone()));
  for (auto fn : llvm::make_early_inc_range(clone->getOps<func::FuncOp>()))
    if (fn.getName() != function)
      fn.erase();
  auto fn = clone->lookupSymbol<func::FuncOp>(function);
  if (!fn)
    return nullptr;
  if (function != "train_step") // nothing calls it: the name alone changes
    SymbolTable::setSymbolName(fn, "train_step");
  return clone;
}

/// The clone's @train_step priced as reportOnStep prices the report's: its
/// time, and with `lowered` its memory plan (the Program lowered for the
/// CPU as compileModel lowers the report's).
std::optional<StepPrice> priceStep(ModuleOp clone, const CompileRequest &request,
                                   const einrt::TrainSettings &settings, bool lowered) {
  std::optional<einrt::Program> program;
  if (lowered) {
    auto unused = ::ein::codegen::KernelCompiler::create();
    FailureOr<einrt::Program> p =
        ::ein::codegen::lowerToCpuProgram(clone.lookupSymbol<func::FuncOp>("train_step"), *unused);
    if (failed(p))
      return std::nullopt;
    program = std::move(*p);
  }
  Report r;
  if (!reportOnStep(clone, program ? &*program : nullptr, request, settings, r))
    return std::nullopt;
  return StepPrice{r.stepSeconds, r.peakBytes};
}

} // namespace

std::optional<StepPrice> priceUnderRemat(ModuleOp module, const CompileRequest &request,
                                         const einrt::TrainSettings &settings,
                                         const RematDevice *device, const std::string &remat,
                                         const std::string &function) {
  OwningOpRef<ModuleOp> clone = cloneOf(module, function);
  if (!clone)
    return std::nullopt;
  einrt::TrainSettings under = settings;
  under.remat = remat;
  if (failed(applyRemat(*clone, under, device, {"train_step"})))
    return std::nullopt;
  return priceStep(*clone, request, under, /*lowered=*/true);
}

std::optional<StepPrice> pricePlan(ModuleOp module, const CompileRequest &request,
                                   const einrt::TrainSettings &settings,
                                   const mlir::ein::RematGraph::Options &graph,
                                   const std::vector<char> &keep) {
  OwningOpRef<ModuleOp> clone = cloneOf(module, "train_step");
  if (!clone)
    return std::nullopt;
  mlir::ein::RematGraph onClone(clone->lookupSymbol<func::FuncOp>("train_step"), graph);
  if (onClone.nodes().size() != keep.size())
    return std::nullopt; // not the graph `keep` was chosen on
  // The plan's peak as the pass predicts it: its arena placed as the
  // runtime places the lowered step's (RematGraph.h).
  mlir::ein::RematEvalOptions placed;
  placed.arena = true;
  int64_t peak = onClone.evaluate(keep, nullptr, placed).peakBytes;
  mlir::ein::applyRematPlan(onClone, keep);
  std::optional<StepPrice> step = priceStep(*clone, request, settings, /*lowered=*/false);
  if (step)
    step->peak = peak;
  return step;
}

} // namespace einc
