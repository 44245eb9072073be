//===- RecomputeInKernels.cpp - The default plan: elementwise recompute ---===//
//
// `ein-recompute-in-kernels` (passes/Passes.td): every saved value that an
// elementwise chain rebuilds from values saved anyway is computed again in
// the backward, in the kernel of its elementwise readers, instead of being
// written by the forward and read back. docs/remat.md, "The default plan".
//
//===----------------------------------------------------------------------===//
#include "passes/Analysis.h"
#include "passes/FuseElementwise.h"
#include "passes/Passes.h"

#include "ir/EinOps.h"

#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <functional>

namespace mlir::ein {
#define GEN_PASS_DEF_EINRECOMPUTEINKERNELS
#include "passes/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

/// The most ops one saved value's recompute may clone (its chain back to
/// values saved anyway): a GELU's tanh form is 8.
constexpr int64_t kMaxChain = 16;

bool inPhase(Operation *op, StringRef phase) {
  auto attr = op->getAttrOfType<StringAttr>(kPhaseAttr);
  return attr && attr.getValue() == phase;
}

/// Known without the forward: constants, iotas and data movement of them.
bool isIndexOrConstant(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<ConstantOp, IotaOp>(def))
    return true;
  if (isa<BroadcastOp, ReshapeOp>(def))
    return isIndexOrConstant(def->getOperand(0));
  return false;
}

/// A forward op the backward may compute again in one of its kernels:
/// elementwise (fusible) and deterministic, or a broadcast (read in place).
bool isCheapForwardOp(Operation *op) {
  if (!op || !inPhase(op, "forward") || isa<StochasticRoundOp>(op))
    return false;
  return isFusible(op) || isa<BroadcastOp>(op);
}

struct Planner {
  /// Forward values a backward op reads, less those planned for recompute.
  llvm::DenseSet<Value> saved;

  /// Whether the backward can have `v` from saved values, constants,
  /// iotas and arguments through cheap ops (at most kMaxChain of them for
  /// one value, counted in `used`; `seen`: those already counted).
  bool rebuildable(Value v, int64_t &used, llvm::DenseSet<Value> &seen) const {
    if (isa<BlockArgument>(v) || isIndexOrConstant(v) || saved.contains(v) || seen.contains(v))
      return true;
    Operation *def = v.getDefiningOp();
    if (!isCheapForwardOp(def) || ++used > kMaxChain)
      return false;
    seen.insert(v);
    return llvm::all_of(def->getOperands(),
                        [&](Value operand) { return rebuildable(operand, used, seen); });
  }
};

/// Whether every op reading `v` outside the forward is an elementwise
/// backward op of `v`'s shape, which fusion can give the clone to.
bool readersFuseWithClone(Value v) {
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  bool any = false;
  for (Operation *user : v.getUsers()) {
    if (inPhase(user, "forward"))
      continue;
    if (!inPhase(user, "backward") || !isFusible(user) ||
        cast<RankedTensorType>(user->getResult(0).getType()).getShape() != shape)
      return false;
    any = true;
  }
  return any;
}

struct EinRecomputeInKernels : public ein::impl::EinRecomputeInKernelsBase<EinRecomputeInKernels> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    Block &body = fn.front();

    // The saved values, and the first backward op reading each.
    Planner plan;
    llvm::DenseMap<Value, Operation *> firstReader;
    for (Operation &op : body.without_terminator()) {
      if (inPhase(&op, "forward"))
        continue;
      for (Value operand : op.getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def || !inPhase(def, "forward") || isIndexOrConstant(operand))
          continue;
        plan.saved.insert(operand);
        firstReader.try_emplace(operand, &op);
      }
    }

    // In forward order: recompute a value when its readers are elementwise
    // and what it needs stays saved (or is recomputed itself).
    SmallVector<Value> recomputed;
    for (Operation &op : body.without_terminator()) {
      if (op.getNumResults() != 1 || !isFusible(&op) || !isCheapForwardOp(&op))
        continue;
      Value v = op.getResult(0);
      if (!plan.saved.contains(v) || !readersFuseWithClone(v))
        continue;
      plan.saved.erase(v);
      int64_t used = 0;
      llvm::DenseSet<Value> seen;
      if (llvm::all_of(op.getOperands(),
                       [&](Value operand) { return plan.rebuildable(operand, used, seen); }))
        recomputed.push_back(v);
      else
        plan.saved.insert(v);
    }

    // The clones, earliest first reader first: a clone another value's
    // chain shares is then always placed before its later readers.
    llvm::sort(recomputed,
               [&](Value a, Value b) { return firstReader[a]->isBeforeInBlock(firstReader[b]); });
    llvm::DenseMap<Value, Value> cloneOf;
    auto backward = StringAttr::get(fn.getContext(), "backward");
    std::function<Value(Value, OpBuilder &)> rebuild = [&](Value v, OpBuilder &b) -> Value {
      if (Value c = cloneOf.lookup(v))
        return c;
      Operation *def = v.getDefiningOp();
      if (isa<BlockArgument>(v) || isIndexOrConstant(v) || plan.saved.contains(v) ||
          !isCheapForwardOp(def))
        return v;
      IRMapping map;
      for (Value operand : def->getOperands())
        map.map(operand, rebuild(operand, b));
      Operation *clone = b.clone(*def, map);
      clone->setAttr(kPhaseAttr, backward);
      clone->removeAttr("ein.let");
      return cloneOf[v] = clone->getResult(0);
    };
    for (Value v : recomputed) {
      OpBuilder b(firstReader[v]);
      Value c = rebuild(v, b);
      v.replaceUsesWithIf(c, [](OpOperand &use) { return !inPhase(use.getOwner(), "forward"); });
    }
  }
};

} // namespace
