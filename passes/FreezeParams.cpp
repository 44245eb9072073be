//===- FreezeParams.cpp - The freeze setting: params never trained --------===//
//
// Marks @forward's params that the `freeze` patterns name with ein.frozen
// (passes/Passes.h, kFrozenParam); see Passes.td.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/TrainEntryLoc.h"
#include "runtime/base/ParamGroups.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINFREEZEPARAMS
#include "passes/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;

namespace {

struct EinFreezeParams : mlir::ein::impl::EinFreezeParamsBase<EinFreezeParams> {
  using EinFreezeParamsBase::EinFreezeParamsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(forwardName);
    if (!forward || forward.isExternal()) {
      module.emitError("ein-freeze-params: no function @") << forwardName;
      return signalPassFailure();
    }
    // The params still trained (a `buffer` is frozen already).
    std::vector<std::string> names;
    SmallVector<unsigned> args;
    for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
      auto kind = forward.getArgAttrOfType<StringAttr>(i, "ein.kind");
      auto name = forward.getArgAttrOfType<StringAttr>(i, "ein.name");
      if (!kind || kind.getValue() != "param" || !name ||
          forward.getArgAttr(i, mlir::ein::kFrozenParam))
        continue;
      names.push_back(name.str());
      args.push_back(i);
    }
    einrt::Expected<std::vector<bool>> frozen = einrt::frozenParams(names, freeze);
    if (!frozen.ok()) {
      emitError(ein::trainEntryLoc(module, "freeze", forward.getLoc()), "ein-freeze-params: ")
          << frozen.status().message();
      return signalPassFailure();
    }
    UnitAttr unit = UnitAttr::get(&getContext());
    for (auto [i, isFrozen] : llvm::zip_equal(args, *frozen))
      if (isFrozen)
        forward.setArgAttr(i, mlir::ein::kFrozenParam, unit);
  }
};

} // namespace
