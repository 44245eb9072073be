//===- ConcatInPlace.cpp - Which inputs of a concat are written in place --===//
#include "passes/ConcatInPlace.h"

#include "passes/Analysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::ein {

namespace {

bool isReturned(Value v) {
  return llvm::any_of(v.getUsers(),
                      [](Operation *user) { return user->hasTrait<OpTrait::IsTerminator>(); });
}

/// `root` and the reshapes aliasing it (not returned ones), transitively.
SmallVector<Value> aliasesOf(Value root) {
  SmallVector<Value> values{root};
  for (size_t i = 0; i < values.size(); ++i)
    for (Operation *user : values[i].getUsers())
      if (isa<ReshapeOp>(user) && !isReturned(user->getResult(0)))
        values.push_back(user->getResult(0));
  return values;
}

} // namespace

Value storageValue(Value v) {
  while (auto reshape = v.getDefiningOp<ReshapeOp>()) {
    if (isReturned(v))
      break;
    v = reshape.getInput();
  }
  return v;
}

SmallVector<bool> concatInputsInPlace(ConcatOp op) {
  SmallVector<bool> inPlace(op.getInputs().size(), false);
  if (opPhase(op) == "forward")
    return inPlace;
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    Value root = storageValue(input);
    Operation *def = root.getDefiningOp();
    if (!def || isa<ConstantOp, SliceOp, ConcatOp, ReshapeOp>(def) || opPhase(def) != opPhase(op))
      continue;
    int64_t concatUses = 0;
    bool ok = true;
    for (Value v : aliasesOf(root)) {
      if (isReturned(v))
        ok = false;
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (isa<SliceOp>(user))
          ok = false;
        else if (isa<ConcatOp>(user))
          ++concatUses;
      }
    }
    // (Twice in this concat is two uses: neither copy is in place.)
    inPlace[i] = ok && concatUses == 1;
  }
  return inPlace;
}

} // namespace mlir::ein
