//===- FuseEpilogues.cpp - Elementwise groups as contraction epilogues ----===//
//
// `ein-fuse-epilogues`: see Passes.td. Runs after ein-fuse-elementwise: a
// contraction whose result is read by a fusion group (or a lone fusible op)
// of its shape and phase becomes the head of that group, so a backend
// computes the group on each block of the product while it is in cache (a
// GEMM epilogue, docs/fusion.md). The contraction is marked with the
// group's `ein.epilogue = N : i64` and moved to just before the group's
// first member; a lone op gets a group number of its own. Values are not
// changed.
//
//===----------------------------------------------------------------------===//
#include "passes/Analysis.h"
#include "passes/FuseElementwise.h"
#include "passes/Passes.h"

#include "ir/EinOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINFUSEEPILOGUES
#include "passes/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace mlir::ein {

int64_t contractionColumns(Operation *contract) {
  auto op = cast<ContractOp>(contract);
  auto rhs = cast<RankedTensorType>(op.getRhs().getType());
  auto result = cast<RankedTensorType>(op.getResult().getType());
  int64_t free =
      rhs.getRank() - int64_t(op.getRhsBatch().size()) - int64_t(op.getRhsContract().size());
  int64_t n = 1;
  for (int64_t d = result.getRank() - free; d < result.getRank(); ++d)
    n *= result.getDimSize(d);
  return n;
}

int64_t epilogueRowElements(ArrayRef<Operation *> members) {
  llvm::SmallPtrSet<Operation *, 16> inGroup(members.begin(), members.end());
  FusionSplit split;
  split.elements = cast<RankedTensorType>(members.front()->getResult(0).getType()).getNumElements();
  for (Operation *op : members)
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && inGroup.count(def))
        continue;
      BroadcastReadInfo read = classifyBroadcastRead(v);
      if (read.read != BroadcastRead::Full)
        split.admit(read);
    }
  return split.outer > 0 ? split.inner : 1;
}

} // namespace mlir::ein

namespace {

bool sameShape(Value a, Value b) {
  auto ta = dyn_cast<RankedTensorType>(a.getType());
  auto tb = dyn_cast<RankedTensorType>(b.getType());
  return ta && tb && ta.hasStaticShape() && ta.getShape() == tb.getShape();
}

struct EinFuseEpilogues : public ein::impl::EinFuseEpiloguesBase<EinFuseEpilogues> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal() || !fn.getBody().hasOneBlock())
      return;
    Block &block = fn.getBody().front();
    // The groups ein-fuse-elementwise formed (adjacent members), by number.
    llvm::DenseMap<int64_t, SmallVector<Operation *>> groups;
    int64_t nextId = 0;
    SmallVector<ContractOp> contractions;
    for (Operation &op : block.without_terminator()) {
      if (auto id = op.getAttrOfType<IntegerAttr>(kFusionAttr)) {
        groups[id.getInt()].push_back(&op);
        nextId = std::max(nextId, id.getInt() + 1);
      }
      if (auto c = dyn_cast<ContractOp>(op))
        contractions.push_back(c);
    }
    llvm::DenseSet<Operation *> taken; // first members of groups already heads' epilogues
    // The block's order, kept here: each move below invalidates the block's
    // own, which isBeforeInBlock would then renumber for every contraction
    // (quadratic on a large step). A moved contraction takes a number
    // between its new neighbours' (each group's first member is moved
    // before at most once, so a gap is split once).
    llvm::DenseMap<Operation *, int64_t> position;
    int64_t next = 0;
    for (Operation &op : block)
      position[&op] = (next += 1024);
    auto isBefore = [&](Operation *a, Operation *b) { return position[a] < position[b]; };
    Builder builder(fn.getContext());
    for (ContractOp c : contractions) {
      Value product = c.getResult();
      if (!cast<RankedTensorType>(product.getType()).hasStaticShape() || c->hasAttr(kEpilogueAttr))
        continue;
      // The first fusible reader of the product's shape and phase.
      Operation *first = nullptr;
      for (Operation *user : product.getUsers())
        if (user->getBlock() == &block && isFusible(user) &&
            sameShape(user->getResult(0), product) &&
            user->getAttr(kPhaseAttr) == c->getAttr(kPhaseAttr) &&
            (!first || isBefore(user, first)))
          first = user;
      if (!first)
        continue;
      auto id = first->getAttrOfType<IntegerAttr>(kFusionAttr);
      SmallVector<Operation *> members = id ? groups[id.getInt()] : SmallVector<Operation *>{first};
      if (members.empty() || taken.count(members.front()))
        continue;
      // Every other reader of the product comes after the group: it reads
      // the product's buffer (an aux output) once the epilogue has run.
      llvm::SmallPtrSet<Operation *, 16> inGroup(members.begin(), members.end());
      bool after = llvm::all_of(product.getUsers(), [&](Operation *u) {
        return inGroup.count(u) || u->hasTrait<OpTrait::IsTerminator>() ||
               (u->getBlock() == &block && isBefore(members.back(), u));
      });
      // Each row of the product must be whole iterations of the kernel.
      if (!after || contractionColumns(c) % epilogueRowElements(members) != 0)
        continue;
      if (!id) {
        id = builder.getI64IntegerAttr(nextId++);
        first->setAttr(kFusionAttr, id);
      }
      taken.insert(members.front());
      c->setAttr(kEpilogueAttr, id);
      Operation *prev = members.front()->getPrevNode();
      int64_t to = position[members.front()];
      if (prev != c.getOperation())
        position[c] = ((prev ? position[prev] : to - 1024) + to) / 2;
      c->moveBefore(members.front());
    }
  }
};

} // namespace
