//===- FuseRows.cpp - Reductions fused with their producers and consumers -===//
//
// `ein-fuse-rows`: see Passes.td. Runs on the groups ein-fuse-elementwise
// (and ein-fuse-epilogues) left: the units are those groups and every other
// op. From each reduction over trailing dims (in program order) a row group
// grows over adjacent units — producers, consumers, siblings reading the
// same row-shaped value — that fit its shape at either level (rowLevel),
// share its phase, keep the input budget and make no cycle (a walk over the
// condensed graph: units and row groups as single nodes). The function is
// then reordered so that each row group's members are adjacent.
//
//===----------------------------------------------------------------------===//
#include "passes/FuseRows.h"
#include "passes/Analysis.h"
#include "passes/GatherNodes.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <limits>

namespace mlir::ein {
#define GEN_PASS_DEF_EINFUSEROWS
#include "passes/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace mlir::ein {

std::optional<RowShape> rowReductionShape(Operation *op) {
  auto r = dyn_cast<ReduceOp>(op);
  if (!r)
    return std::nullopt;
  auto in = cast<RankedTensorType>(r.getInput().getType());
  if (!in.hasStaticShape() || in.getRank() < 1)
    return std::nullopt;
  Type e = in.getElementType();
  bool sum = r.getKind() == ReduceKind::sum;
  if (!(e.isF32() || e.isInteger(32) || (!sum && (e.isBF16() || e.isF16()))))
    return std::nullopt;
  ArrayRef<int64_t> dims = r.getDimensions();
  int64_t rank = in.getRank(), lead = rank - int64_t(dims.size());
  if (lead < 0)
    return std::nullopt;
  for (size_t k = 0; k < dims.size(); ++k)
    if (dims[k] != lead + int64_t(k))
      return std::nullopt;
  RowShape s;
  s.shape.assign(in.getShape().begin(), in.getShape().end());
  s.lead = lead;
  s.rows = 1;
  for (int64_t d = 0; d < lead; ++d)
    s.rows *= s.shape[d];
  s.length = in.getNumElements() / std::max<int64_t>(1, s.rows);
  if (s.rows <= 0 || s.length <= 0)
    return std::nullopt;
  return s;
}

RowLevel rowLevel(Operation *op, const RowShape &s) {
  if (auto r = rowReductionShape(op))
    return *r == s ? RowLevel::Row : RowLevel::None;
  auto shapeOf = [](Value v) { return cast<RankedTensorType>(v.getType()).getShape(); };
  ArrayRef<int64_t> full(s.shape), row = full.take_front(s.lead);
  if (auto b = dyn_cast<BroadcastOp>(op)) {
    if (!isa<RankedTensorType>(b.getInput().getType()) || shapeOf(b.getResult()) != full ||
        shapeOf(b.getInput()) != row)
      return RowLevel::None;
    ArrayRef<int64_t> dims = b.getDimensions();
    for (size_t k = 0; k < dims.size(); ++k)
      if (dims[k] != int64_t(k))
        return RowLevel::None;
    return RowLevel::Element;
  }
  if (!isFusible(op))
    return RowLevel::None;
  ArrayRef<int64_t> shape = shapeOf(op->getResult(0));
  if (shape == full)
    return RowLevel::Element;
  if (shape == row)
    return RowLevel::Row;
  return RowLevel::None;
}

BroadcastRead rowOperandRead(Value value, RowLevel level, const RowShape &s) {
  BroadcastReadInfo read = classifyBroadcastRead(value);
  if (read.read == BroadcastRead::Scalar)
    return BroadcastRead::Scalar;
  if (level != RowLevel::Element)
    return BroadcastRead::Full;
  if (read.read == BroadcastRead::Prefix && read.count == s.rows)
    return BroadcastRead::Prefix;
  if (read.read == BroadcastRead::Suffix && read.count == s.length)
    return BroadcastRead::Suffix;
  return BroadcastRead::Full;
}

} // namespace mlir::ein

namespace {

/// A unit: an elementwise fusion group, or one op.
struct Unit {
  SmallVector<Operation *> ops;
  int64_t first = 0, last = 0; // program indices
  bool epilogue = false;       // a contraction's epilogue: stays with it
  int64_t rowGroup = -1;
};

struct RowGroup {
  RowShape shape;
  Attribute phase;
  SmallVector<int64_t> units;
};

class RowFuser {
public:
  RowFuser(Block &block, unsigned maxInputs) : block(block), maxInputs(maxInputs) {}

  LogicalResult run() {
    formUnits();
    for (Operation &op : block.without_terminator()) {
      auto shape = rowReductionShape(&op);
      if (!shape || units[unitOf[&op]].rowGroup >= 0)
        continue;
      grow(unitOf[&op], *shape, op.getAttr(kPhaseAttr));
    }
    return annotateAndReorder();
  }

private:
  void formUnits() {
    llvm::DenseSet<int64_t> epilogueGroups;
    for (Operation &op : block.without_terminator())
      if (auto id = op.getAttrOfType<IntegerAttr>(kEpilogueAttr))
        epilogueGroups.insert(id.getInt());
    llvm::DenseMap<int64_t, int64_t> unitOfGroup;
    int64_t i = 0;
    for (Operation &op : block.without_terminator()) {
      index[&op] = i++;
      // A contraction and its epilogue are one unit: nothing may come
      // between them (the lowering runs the epilogue in the contraction's
      // step), and a row group takes neither.
      auto id = op.getAttrOfType<IntegerAttr>(kFusionAttr);
      if (!id || !isFusible(&op))
        id = op.getAttrOfType<IntegerAttr>(kEpilogueAttr);
      int64_t u;
      if (id) {
        auto [it, fresh] = unitOfGroup.try_emplace(id.getInt(), int64_t(units.size()));
        if (fresh) {
          units.emplace_back();
          units.back().first = index[&op];
          units.back().epilogue = epilogueGroups.count(id.getInt());
        }
        u = it->second;
      } else {
        u = int64_t(units.size());
        units.emplace_back();
        units.back().first = index[&op];
      }
      units[u].ops.push_back(&op);
      units[u].last = index[&op];
      unitOf[&op] = u;
    }
  }

  /// Grows a row group from the reduction unit `seed` until no adjacent
  /// unit can join.
  void grow(int64_t seed, const RowShape &shape, Attribute phase) {
    int64_t g = int64_t(groups.size());
    groups.push_back({shape, phase, {seed}});
    units[seed].rowGroup = g;
    for (bool changed = true; changed;) {
      changed = false;
      llvm::SmallSetVector<int64_t, 16> candidates;
      auto consider = [&](Operation *op) {
        if (op && op->getBlock() == &block && !op->hasTrait<OpTrait::IsTerminator>() &&
            units[unitOf[op]].rowGroup < 0)
          candidates.insert(unitOf[op]);
      };
      for (int64_t u : groups[g].units)
        for (Operation *op : units[u].ops) {
          for (Value v : op->getOperands()) {
            consider(v.getDefiningOp());
            // Siblings: other readers of a row-shaped value the group reads.
            if (cast<RankedTensorType>(v.getType()).getShape() == ArrayRef<int64_t>(shape.shape))
              for (Operation *user : v.getUsers())
                consider(user);
          }
          for (Operation *user : op->getUsers())
            consider(user);
        }
      for (int64_t u : candidates)
        if (tryJoin(g, u))
          changed = true;
    }
  }

  bool fits(int64_t g, int64_t u) {
    const Unit &unit = units[u];
    const RowGroup &group = groups[g];
    if (unit.epilogue)
      return false;
    if (rowKernelTakesProducersOnly(group.shape))
      return producesOnlyFor(g, u);
    for (Operation *op : unit.ops) {
      if (op->getAttr(kPhaseAttr) != group.phase)
        return false;
      RowLevel level = rowLevel(op, group.shape);
      if (level == RowLevel::None)
        return false;
      // A broadcast joins only to spread a per-row value the group computes.
      if (auto b = dyn_cast<BroadcastOp>(op)) {
        Operation *def = b.getInput().getDefiningOp();
        if (!def || def->getBlock() != &block || units[unitOf[def]].rowGroup != g)
          return false;
      }
    }
    return true;
  }

  /// Whether unit `u` computes, per element, only what row group `g` reads.
  bool producesOnlyFor(int64_t g, int64_t u) {
    for (Operation *op : units[u].ops) {
      if (op->getAttr(kPhaseAttr) != groups[g].phase || isa<ReduceOp, BroadcastOp>(op) ||
          rowLevel(op, groups[g].shape) != RowLevel::Element)
        return false;
      for (Operation *user : op->getUsers())
        if (user->getBlock() != &block || user->hasTrait<OpTrait::IsTerminator>() ||
            (unitOf[user] != u && units[unitOf[user]].rowGroup != g))
          return false;
    }
    return true;
  }

  bool tryJoin(int64_t g, int64_t u) {
    if (!fits(g, u))
      return false;
    SmallVector<int64_t> members = groups[g].units;
    members.push_back(u);
    llvm::DenseSet<int64_t> in(members.begin(), members.end());
    if (inputCount(members, groups[g].shape, in) > maxInputs || makesCycle(members, in))
      return false;
    groups[g].units.push_back(u);
    units[u].rowGroup = g;
    return true;
  }

  /// The distinct buffers a row kernel of `members` reads.
  size_t inputCount(ArrayRef<int64_t> members, const RowShape &shape,
                    const llvm::DenseSet<int64_t> &in) {
    llvm::SmallSetVector<Value, 16> inputs;
    for (int64_t u : members)
      for (Operation *op : units[u].ops) {
        RowLevel level = rowLevel(op, shape);
        for (Value v : op->getOperands()) {
          Operation *def = v.getDefiningOp();
          if (def && def->getBlock() == &block && in.count(unitOf[def]))
            continue;
          if (!isa<BroadcastOp>(op) && classifyIndexRead(v))
            continue; // computed from the element's (or row's) index
          BroadcastRead read =
              isa<ReduceOp>(op) ? BroadcastRead::Full : rowOperandRead(v, level, shape);
          inputs.insert(read == BroadcastRead::Full ? v
                                                    : v.getDefiningOp<BroadcastOp>().getInput());
        }
      }
    return inputs.size();
  }

  /// The node of `op` in the condensed graph: its row group, else its unit.
  int64_t nodeOf(Operation *op) const {
    int64_t u = unitOf.lookup(op);
    return units[u].rowGroup >= 0 ? int64_t(units.size()) + units[u].rowGroup : u;
  }

  /// Whether a path leaves `members` (units) and comes back: the walk goes
  /// forward from their users, over whole nodes; a node starting after the
  /// members' last op cannot lead back (every edge goes forward in program
  /// order).
  bool makesCycle(ArrayRef<int64_t> members, const llvm::DenseSet<int64_t> &in) {
    int64_t last = 0;
    for (int64_t u : members)
      last = std::max(last, units[u].last);
    SmallVector<int64_t> work;
    llvm::DenseSet<int64_t> seen;
    auto firstOf = [&](int64_t n) {
      if (n < int64_t(units.size()))
        return units[n].first;
      int64_t f = std::numeric_limits<int64_t>::max();
      for (int64_t u : groups[n - units.size()].units)
        f = std::min(f, units[u].first);
      return f;
    };
    bool cycle = false;
    auto pushUsersOf = [&](ArrayRef<Operation *> ops) {
      for (Operation *op : ops)
        for (Operation *user : op->getUsers()) {
          if (user->getBlock() != &block || user->hasTrait<OpTrait::IsTerminator>())
            continue;
          if (in.count(unitOf[user])) {
            cycle |= !in.count(unitOf[op]); // back in from outside
            continue;
          }
          int64_t n = nodeOf(user);
          if (firstOf(n) < last && seen.insert(n).second)
            work.push_back(n);
        }
    };
    for (int64_t u : members)
      pushUsersOf(units[u].ops);
    while (!work.empty() && !cycle) {
      int64_t n = work.pop_back_val();
      if (n < int64_t(units.size())) {
        pushUsersOf(units[n].ops);
      } else {
        for (int64_t u : groups[n - units.size()].units)
          pushUsersOf(units[u].ops);
      }
    }
    return cycle;
  }

  /// Marks the row groups that absorbed anything (`ein.rows`, dropping their
  /// members' `ein.fusion`) and moves each group's members together
  /// (gatherNodes).
  LogicalResult annotateAndReorder() {
    auto order = gatherNodes(block, [&](Operation *op) {
      const Unit &unit = units[unitOf[op]];
      return unit.rowGroup >= 0 ? -1 - unit.rowGroup : unitOf[op];
    });
    if (failed(order))
      return failure();
    Builder builder(block.getParentOp()->getContext());
    int64_t nextId = 0;
    for (const SmallVector<Operation *> &ops : *order) {
      const Unit &unit = units[unitOf[ops.front()]];
      bool rows = unit.rowGroup >= 0 && groups[unit.rowGroup].units.size() > 1;
      IntegerAttr id = rows ? builder.getI64IntegerAttr(nextId++) : IntegerAttr();
      if (rows)
        for (Operation *op : ops) {
          op->setAttr(kRowsAttr, id);
          op->removeAttr(kFusionAttr);
        }
    }
    return success();
  }

  Block &block;
  unsigned maxInputs;
  llvm::DenseMap<Operation *, int64_t> index;
  llvm::DenseMap<Operation *, int64_t> unitOf;
  std::vector<Unit> units;
  std::vector<RowGroup> groups;
};

struct EinFuseRows : public ein::impl::EinFuseRowsBase<EinFuseRows> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    if (!fn.getBody().hasOneBlock()) {
      fn.emitError("ein-fuse-rows: expected a function with one block");
      return signalPassFailure();
    }
    if (failed(RowFuser(fn.getBody().front(), maxInputs).run())) {
      fn.emitError("ein-fuse-rows: internal error: the row groups depend on each other in a "
                   "cycle; please report this program");
      return signalPassFailure();
    }
  }
};

} // namespace
