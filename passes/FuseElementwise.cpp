//===- FuseElementwise.cpp - Group elementwise chains into kernels --------===//
//
// `ein-fuse-elementwise`: see Passes.td. Groups are formed greedily in
// program order: an op joins the first group it can join (same shape, no
// cycle, split and input budget kept) among those producing its operands,
// then those already reading one of its operands; else it starts its own. A
// value read from outside a group must not depend on the group: checked by a
// walk back from the value over the groups (`dependsOn`). Greedy grouping
// can leave a producer and its reader apart where an op with no grouped
// operand started a group that a later op joined first (AdamW's `v * beta2`
// before `+ (1 - beta2) * g * g`): a second walk merges each group into the
// groups whose values it reads, where the merged group keeps the same rules.
// The groups are then scheduled in a topological order; a cycle left there
// is an internal error, never invalid IR.
//
//===----------------------------------------------------------------------===//
#include "passes/FuseElementwise.h"
#include "passes/Analysis.h"
#include "passes/GatherNodes.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINFUSEELEMENTWISE
#include "passes/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace mlir::ein {

/// Whether reading the forward broadcast `b` in place from the backward
/// would keep more bytes alive than writing it: its input is a view
/// (reshape, slice) of a buffer larger than the broadcast's result, and a
/// backward or recompute op reads it, so folding it saves the whole buffer
/// for the backward where materialising saves only the result.
static bool foldingKeepsLargerBuffer(BroadcastOp b) {
  if (opPhase(b) != "forward")
    return false;
  bool readLater = llvm::any_of(b->getUsers(), [](Operation *user) {
    StringRef phase = opPhase(user);
    return phase == "backward" || phase == "recompute";
  });
  if (!readLater)
    return false;
  Value root = b.getInput();
  while (Operation *def = root.getDefiningOp()) {
    if (!isa<ReshapeOp, SliceOp>(def))
      break;
    root = def->getOperand(0);
  }
  auto rootType = dyn_cast<ShapedType>(root.getType());
  auto outType = cast<ShapedType>(b.getResult().getType());
  return rootType && rootType.hasStaticShape() &&
         rootType.getNumElements() > outType.getNumElements();
}

BroadcastReadInfo classifyBroadcastRead(Value value) {
  auto b = value.getDefiningOp<BroadcastOp>();
  if (!b)
    return {};
  auto in = cast<RankedTensorType>(b.getInput().getType());
  auto out = cast<RankedTensorType>(b.getResult().getType());
  int64_t r = in.getRank(), rank = out.getRank();
  if (!in.hasStaticShape() || !out.hasStaticShape())
    return {};
  if (foldingKeepsLargerBuffer(b))
    return {};
  if (r == 0)
    return {BroadcastRead::Scalar, 1};
  ArrayRef<int64_t> dims = b.getDimensions();
  for (int64_t k = 0; k < r; ++k) // no size-1 expansion: sizes must match
    if (in.getDimSize(k) != out.getDimSize(dims[k]))
      return {};
  bool prefix = true, suffix = true;
  for (int64_t k = 0; k < r; ++k) {
    prefix &= dims[k] == k;
    suffix &= dims[k] == rank - r + k;
  }
  if (!prefix && !suffix)
    return {};
  return {prefix ? BroadcastRead::Prefix : BroadcastRead::Suffix, in.getNumElements()};
}

/// Row-major strides of a static shape, in elements.
static SmallVector<int64_t, 4> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t, 4> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

std::optional<IndexRead> classifyIndexRead(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  Operation *def = value.getDefiningOp();
  if (!type || !type.hasStaticShape() || !def)
    return std::nullopt;
  ArrayRef<int64_t> shape = type.getShape();
  if (auto iota = dyn_cast<IotaOp>(def)) {
    int64_t d = int64_t(iota.getDimension());
    if (d < 0 || d >= type.getRank())
      return std::nullopt;
    return IndexRead{rowMajorStrides(shape)[d], shape[d]};
  }
  if (auto reshape = dyn_cast<ReshapeOp>(def)) // the same row-major elements
    return classifyIndexRead(reshape.getInput());
  auto b = dyn_cast<BroadcastOp>(def);
  if (!b)
    return std::nullopt;
  std::optional<IndexRead> in = classifyIndexRead(b.getInput());
  if (!in)
    return std::nullopt;
  if (in->size == 1)
    return IndexRead{}; // always 0
  // The input dims the index runs over: those with a stride in
  // [stride, stride · size) (size-1 dims aside), covering exactly that range.
  ArrayRef<int64_t> inShape = cast<RankedTensorType>(b.getInput().getType()).getShape();
  ArrayRef<int64_t> dims = b.getDimensions();
  SmallVector<int64_t, 4> inStrides = rowMajorStrides(inShape), outStrides = rowMajorStrides(shape);
  SmallVector<int64_t, 4> group;
  int64_t count = 1;
  for (size_t k = 0; k < inShape.size(); ++k)
    if (inShape[k] > 1 && inStrides[k] >= in->stride && inStrides[k] < in->stride * in->size) {
      group.push_back(int64_t(k));
      count *= inShape[k];
    }
  if (group.empty() || count != in->size || inStrides[group.back()] != in->stride)
    return std::nullopt;
  // Their result dims: unexpanded, and consecutive in the result's memory
  // (so that the same mixed-radix number is read off the result's index).
  for (size_t g = 0; g < group.size(); ++g) {
    int64_t k = group[g];
    if (shape[dims[k]] != inShape[k])
      return std::nullopt;
    if (g + 1 < group.size() &&
        outStrides[dims[k]] != outStrides[dims[group[g + 1]]] * shape[dims[group[g + 1]]])
      return std::nullopt;
  }
  return IndexRead{outStrides[dims[group.back()]], in->size};
}

llvm::DenseSet<Operation *>
indexOpsComputedInKernels(Block &body, llvm::function_ref<bool(OpOperand &)> computes) {
  llvm::DenseSet<Operation *> computed;
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  // Users come after their operands' producers: decided first.
  for (Operation *op : llvm::reverse(ops)) {
    if (!isa<IotaOp, ReshapeOp, BroadcastOp>(op) || op->getNumResults() != 1 || op->use_empty() ||
        !classifyIndexRead(op->getResult(0)))
      continue;
    if (llvm::all_of(op->getUses(), [&](OpOperand &use) {
          return computed.count(use.getOwner()) || computes(use);
        }))
      computed.insert(op);
  }
  return computed;
}

bool fusionMarked(Block &body) {
  return llvm::any_of(body.without_terminator(), [](Operation &op) {
    return op.hasAttr(kFusionAttr) || op.hasAttr(kEpilogueAttr) || op.hasAttr("ein.rows");
  });
}

bool isFusible(Operation *op) {
  if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumResults() != 1)
    return false;
  auto t = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return t && t.hasStaticShape();
}

bool FusionSplit::admit(const BroadcastReadInfo &read) {
  if (read.read == BroadcastRead::Full || read.read == BroadcastRead::Scalar)
    return true;
  if (read.count <= 0 || elements % read.count != 0)
    return false;
  int64_t o = read.read == BroadcastRead::Prefix ? read.count : elements / read.count;
  if (outer != 0 && outer != o)
    return false;
  outer = o;
  inner = elements / o;
  return true;
}

} // namespace mlir::ein

namespace {

struct Group {
  SmallVector<Operation *> members;
  int64_t first = 0; // program index of the first member
  int64_t last = 0;  // and of the last
  FusionSplit split;
  llvm::SmallSetVector<Value, 16> inputs; // buffers read from outside
};

class Fuser {
public:
  Fuser(Block &block, unsigned maxInputs) : block(block), maxInputs(maxInputs) {}

  /// Forms the groups and reorders the block; fails, leaving the block as
  /// it was, if the groups could not be scheduled.
  LogicalResult run() {
    int64_t i = 0;
    for (Operation &op : block.without_terminator())
      index[&op] = i++;
    for (Operation &op : block.without_terminator()) {
      if (!isFusible(&op))
        continue;
      // Candidates: the groups producing its operands, then the groups
      // already reading one of them (siblings: the value is read once).
      SmallVector<int64_t, 4> candidates;
      auto consider = [&](int64_t g) {
        if (!llvm::is_contained(candidates, g))
          candidates.push_back(g);
      };
      for (Value v : op.getOperands())
        if (Operation *def = v.getDefiningOp(); def && groupOf.count(def))
          consider(groupOf[def]);
      for (Value v : op.getOperands())
        if (auto it = readBy.find(v); it != readBy.end())
          consider(it->second);
      bool joined = llvm::any_of(candidates, [&](int64_t g) { return tryJoin(&op, g); });
      if (!joined)
        startGroup(&op);
      int64_t g = groupOf[&op];
      for (Value v : op.getOperands())
        readBy[v] = g;
    }
    mergeReaders();
    return annotateAndReorder();
  }

private:
  /// Adds `op` to group `gi` if it fits: same shape, every value it reads
  /// from outside (a broadcast read in place: the broadcast's input)
  /// independent of the group, the split and the input budget kept.
  bool tryJoin(Operation *op, int64_t gi) {
    Group &g = groups[gi];
    Operation *head = g.members.front();
    if (cast<RankedTensorType>(head->getResult(0).getType()).getShape() !=
        cast<RankedTensorType>(op->getResult(0).getType()).getShape())
      return false;
    // Only within one phase: a backward op pulled into a forward group would
    // be computed early and its result kept alive until the backward.
    if (head->getAttr(kPhaseAttr) != op->getAttr(kPhaseAttr))
      return false;
    FusionSplit split = g.split;
    llvm::SmallSetVector<Value, 16> inputs = g.inputs;
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && groupOf.count(def) && groupOf.lookup(def) == gi)
        continue;
      if (classifyIndexRead(v))
        continue; // computed from the element's index: no buffer, no dependency
      BroadcastReadInfo read = classifyBroadcastRead(v);
      Value source = v;
      if (read.read != BroadcastRead::Full) {
        if (!split.admit(read))
          read = {}; // read the materialised broadcast instead
        else
          source = v.getDefiningOp<BroadcastOp>().getInput();
      }
      if (dependsOn(source, gi))
        return false;
      inputs.insert(source);
    }
    if (inputs.size() > maxInputs)
      return false;
    g.split = split;
    g.inputs = std::move(inputs);
    g.members.push_back(op);
    g.first = std::min(g.first, index[op]);
    g.last = std::max(g.last, index[op]);
    groupOf[op] = gi;
    return true;
  }

  /// Merges each group into a group whose value it reads (same shape and
  /// phase), in program order, until no merge applies: the reader's members
  /// join the producer's one by one under tryJoin's rules, and the merged
  /// group must read nothing that depends on it. A refused merge leaves
  /// both groups as they were.
  void mergeReaders() {
    for (bool merged = true; merged;) {
      merged = false;
      for (Operation &op : block.without_terminator()) {
        auto own = groupOf.find(&op);
        if (own == groupOf.end())
          continue;
        for (Value v : op.getOperands()) {
          Operation *def = v.getDefiningOp();
          auto producer = def ? groupOf.find(def) : groupOf.end();
          if (producer == groupOf.end() || producer->second == groupOf[&op])
            continue;
          if (tryMerge(producer->second, groupOf[&op]))
            merged = true;
        }
      }
    }
  }

  /// Moves group `ci`'s members into group `pi` if every one can join it
  /// and the merged group reads nothing that depends on it.
  bool tryMerge(int64_t pi, int64_t ci) {
    Group savedP = groups[pi], savedC = groups[ci];
    SmallVector<Operation *> moving = savedC.members;
    llvm::sort(moving, [&](Operation *a, Operation *b) { return index[a] < index[b]; });
    for (Operation *m : moving)
      groupOf.erase(m);
    groups[ci] = Group(); // empty: no path through it
    bool ok = llvm::all_of(moving, [&](Operation *m) { return tryJoin(m, pi); });
    // tryJoin checks the joining op's reads only: a member of `pi` may read
    // a value computed outside from one of `ci`'s members.
    ok = ok && llvm::none_of(groups[pi].inputs, [&](Value v) { return dependsOn(v, pi); });
    if (ok)
      return true;
    groups[pi] = std::move(savedP);
    groups[ci] = std::move(savedC);
    for (Operation *m : moving)
      groupOf[m] = ci;
    return false;
  }

  void startGroup(Operation *op) {
    Group g;
    g.members.push_back(op);
    g.first = g.last = index[op];
    g.split.elements = cast<RankedTensorType>(op->getResult(0).getType()).getNumElements();
    for (Value v : op->getOperands()) {
      if (classifyIndexRead(v))
        continue;
      BroadcastReadInfo read = classifyBroadcastRead(v);
      if (read.read != BroadcastRead::Full && g.split.admit(read))
        g.inputs.insert(v.getDefiningOp<BroadcastOp>().getInput());
      else
        g.inputs.insert(v);
    }
    groupOf[op] = static_cast<int64_t>(groups.size());
    groups.push_back(std::move(g));
  }

  /// Whether `v` depends on group `gi` once groups run as single kernels: a
  /// group reads every input of every member, so the walk back from `v`
  /// enters all of a group's members at once.
  ///
  /// The walk skips nodes that cannot be on a path from `gi`. A group's
  /// members need not be adjacent in program order (a backward group can
  /// hold ops on both sides of a reduction that reads one of them), so a
  /// path from `gi` can reach ops before `gi`'s first member: through a group
  /// that starts before it and ends after it. `pathFloor` is the lowest
  /// program index such a path can reach.
  bool dependsOn(Value v, int64_t gi) {
    const int64_t floor = pathFloor(gi);
    SmallVector<Operation *> work;
    llvm::DenseSet<Operation *> seenOps;
    llvm::DenseSet<int64_t> seenGroups;
    auto push = [&](Value x) {
      Operation *d = x.getDefiningOp();
      if (!d || d->getBlock() != &block || !seenOps.insert(d).second)
        return;
      auto g = groupOf.find(d);
      if (g == groupOf.end()) {
        if (index.lookup(d) >= floor)
          work.push_back(d);
      } else if (groups[g->second].first >= floor && seenGroups.insert(g->second).second) {
        work.push_back(d);
      }
    };
    push(v);
    while (!work.empty()) {
      Operation *d = work.pop_back_val();
      auto g = groupOf.find(d);
      if (g == groupOf.end()) {
        for (Value x : d->getOperands())
          push(x);
        continue;
      }
      if (g->second == gi)
        return true;
      for (Operation *m : groups[g->second].members)
        for (Value x : m->getOperands())
          push(x);
    }
    return false;
  }

  /// The largest index L <= first(gi) such that every group ending after L
  /// starts at or after L. Every node on a path from `gi` starts at or after
  /// L: a node reading a node that starts at or after L has a member after L;
  /// an op is then after L, and a group ends after L, so (by the choice of L)
  /// starts at or after it.
  int64_t pathFloor(int64_t gi) const {
    int64_t floor = groups[gi].first;
    for (bool lowered = true; lowered;) {
      lowered = false;
      for (const Group &g : groups)
        if (g.last > floor && g.first < floor) {
          floor = g.first;
          lowered = true;
        }
    }
    return floor;
  }

  /// Numbers the groups of two or more ops and moves each group's members
  /// next to each other (gatherNodes: single ops are nodes of one); fails,
  /// leaving the block untouched, if the groups form a cycle.
  LogicalResult annotateAndReorder() {
    // Node of every op: its group, or a singleton (keys below zero).
    auto order = gatherNodes(block, [&](Operation *op) {
      auto g = groupOf.find(op);
      return g != groupOf.end() ? g->second : -1 - index[op];
    });
    if (failed(order))
      return failure();
    Builder builder(block.getParentOp()->getContext());
    int64_t nextId = 0;
    for (const SmallVector<Operation *> &ops : *order) {
      bool fused = ops.size() > 1;
      IntegerAttr id;
      if (fused)
        id = builder.getI64IntegerAttr(nextId++);
      for (Operation *op : ops) {
        if (fused)
          op->setAttr(kFusionAttr, id);
        else
          op->removeAttr(kFusionAttr);
      }
    }
    return success();
  }

  Block &block;
  unsigned maxInputs;
  llvm::DenseMap<Operation *, int64_t> index;
  llvm::DenseMap<Operation *, int64_t> groupOf;
  llvm::DenseMap<Value, int64_t> readBy; // the last group reading a value
  std::vector<Group> groups;
};

struct EinFuseElementwise : public ein::impl::EinFuseElementwiseBase<EinFuseElementwise> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    if (!fn.getBody().hasOneBlock()) {
      fn.emitError("ein-fuse-elementwise: expected a function with one block");
      return signalPassFailure();
    }
    if (failed(Fuser(fn.getBody().front(), maxInputs).run())) {
      fn.emitError("ein-fuse-elementwise: internal error: the fusion groups "
                   "depend on each other in a cycle; please report this program");
      return signalPassFailure();
    }
  }
};

} // namespace
