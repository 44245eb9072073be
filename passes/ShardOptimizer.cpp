//===- ShardOptimizer.cpp - ZeRO-1: one rank's share of @apply_update -----===//
//
// Removes from @apply_update the new values and optimizer state of the
// params another rank owns (runtime/base/ShardPlan.h), and the ops only they
// used. Params, gradients, the scaler and the scalars stay: the gradient
// norm and the finite check are global. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "runtime/base/ShardPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"

#include <map>

namespace mlir::ein {
#define GEN_PASS_DEF_EINSHARDOPTIMIZER
#include "passes/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;

namespace {

StringRef attrText(DictionaryAttr d, StringRef key) {
  auto s = d ? d.getAs<StringAttr>(key) : StringAttr();
  return s ? s.getValue() : StringRef();
}

/// The param a state named `name` belongs to ("<param>.<slot>"), or "".
StringRef stateOwnerParam(StringRef name, const std::map<std::string, int> &owner) {
  for (size_t dot = name.rfind('.'); dot != StringRef::npos && dot > 0;
       dot = name.substr(0, dot).rfind('.'))
    if (owner.count(name.substr(0, dot).str()))
      return name.substr(0, dot);
  return {};
}

struct EinShardOptimizer : mlir::ein::impl::EinShardOptimizerBase<EinShardOptimizer> {
  using EinShardOptimizerBase::EinShardOptimizerBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fn = module.lookupSymbol<func::FuncOp>(applyName);
    if (!fn || fn.isExternal()) {
      module.emitError("ein-shard-optimizer: no @") << applyName << " to shard";
      return signalPassFailure();
    }
    if (ranks < 1 || rank < 0 || rank >= ranks) {
      fn.emitError("ein-shard-optimizer: rank ")
          << int64_t(rank) << " is not in [0, " << int64_t(ranks) << ")";
      return signalPassFailure();
    }
    Builder b(fn.getContext());
    fn->setAttr("ein.shard", b.getI64ArrayAttr({int64_t(rank), int64_t(ranks)}));
    if (ranks == 1)
      return;

    // The params, in argument order, and their owners.
    std::vector<std::string> names;
    std::vector<int64_t> elements;
    for (unsigned a = 0; a < fn.getNumArguments(); ++a) {
      if (attrText(fn.getArgAttrDict(a), "ein.kind") != "param")
        continue;
      auto type = dyn_cast<RankedTensorType>(fn.getArgument(a).getType());
      if (!type || !type.hasStaticShape()) {
        fn.emitError("ein-shard-optimizer: param argument ") << a << " has no static shape";
        return signalPassFailure();
      }
      names.push_back(attrText(fn.getArgAttrDict(a), "ein.name").str());
      elements.push_back(type.getNumElements());
    }
    std::vector<int> owners = einrt::shardOwners(elements, int(ranks));
    std::map<std::string, int> owner;
    for (size_t k = 0; k < names.size(); ++k)
      owner[names[k]] = owners[k];
    auto foreign = [&](StringRef name, StringRef kind) {
      if (kind == "param")
        return owner.count(name.str()) && owner[name.str()] != rank;
      if (kind != "opt_state")
        return false;
      StringRef param = stateOwnerParam(name, owner);
      return !param.empty() && owner[param.str()] != rank;
    };

    // Results: drop the foreign params' new values and new state.
    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    llvm::BitVector dropResults(fn.getNumResults());
    for (unsigned r = 0; r < fn.getNumResults(); ++r) {
      DictionaryAttr d = fn.getResultAttrDict(r);
      dropResults[r] = foreign(attrText(d, "ein.name"), attrText(d, "ein.kind"));
    }
    SmallVector<Value> kept;
    for (unsigned r = 0; r < ret.getNumOperands(); ++r)
      if (!dropResults[r])
        kept.push_back(ret.getOperand(r));
    OpBuilder rb(ret);
    rb.create<func::ReturnOp>(ret.getLoc(), kept);
    ret.erase();
    fn.eraseResults(dropResults);

    // The ops that computed them: erase dead pure ops, last first.
    Block &body = fn.getBody().front();
    // (Collected first: erasing under a reverse iterator invalidates it.)
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (op->use_empty() && isMemoryEffectFree(op))
        op->erase();

    // Arguments: the foreign state, now unread.
    llvm::BitVector dropArgs(fn.getNumArguments());
    for (unsigned a = 0; a < fn.getNumArguments(); ++a) {
      DictionaryAttr d = fn.getArgAttrDict(a);
      if (attrText(d, "ein.kind") != "opt_state" || !foreign(attrText(d, "ein.name"), "opt_state"))
        continue;
      if (!fn.getArgument(a).use_empty()) {
        fn.emitError("ein-shard-optimizer: the state '")
            << attrText(d, "ein.name") << "' of another rank's param is still read";
        return signalPassFailure();
      }
      dropArgs[a] = true;
    }
    fn.eraseArguments(dropArgs);
  }
};

} // namespace
