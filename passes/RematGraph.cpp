//===- RematGraph.cpp - Forward values, their late uses, a plan's cost ----===//
//
// The liveness evaluate() computes is the runtime's memory plan
// (runtime/core/Arena.h) on the schedule the remat pass produces: arguments,
// results and constants resident; every other value live from the op that
// writes it to the last op that reads it, both included; a reshape, and a
// broadcast that every user reads in place, are views of their input. The
// schedule is the body in order with each clone inserted just before the
// position `need` says, clones of one position in forward order.
//
//===----------------------------------------------------------------------===//
#include "passes/RematGraph.h"

#include "ir/EinOps.h"
#include "passes/ConcatInPlace.h"
#include "passes/FuseElementwise.h"
#include "passes/StepKernels.h"
#include "runtime/base/FirstFit.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <limits>
#include <map>

namespace mlir::ein {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

/// A broadcast that every user reads in place (a scalar, a leading or a
/// trailing block of the result) is never written to memory.
bool isFoldedBroadcast(Operation *op) {
  if (!isa<BroadcastOp>(op) || op->use_empty())
    return false;
  if (classifyBroadcastRead(op->getResult(0)).read == BroadcastRead::Full)
    return false;
  return llvm::all_of(op->getUsers(), [](Operation *user) { return isFusible(user); });
}

bool isViewOp(Operation *op) {
  return (isa<ReshapeOp, SliceOp>(op) && op->getNumOperands() == 1) || isFoldedBroadcast(op);
}

} // namespace

RematGraph::RematGraph(func::FuncOp fn, Options options) : fn_(fn), options_(std::move(options)) {
  if (fn.isExternal())
    return;
  Block &body = fn.front();
  llvm::DenseMap<Operation *, int64_t> position;
  for (Operation &op : body)
    if (!op.hasTrait<OpTrait::IsTerminator>()) {
      position[&op] = int64_t(ops_.size());
      ops_.push_back(&op);
    }
  const ByteWidth &width = options_.width;

  // Kernels of several ops (a fusion group, a row group, a contraction with
  // its epilogue: passes/StepKernels.h) run as one step at the last of them.
  const std::vector<StepKernel> kernels = stepKernels(body);
  // Iotas every reader computes from its index have no storage (as views
  // of nothing: no root).
  const llvm::DenseSet<Operation *> computed = computedIndexOps(kernels);
  auto isView = [&](Operation *op) { return isViewOp(op) || computed.count(op); };
  llvm::DenseMap<Operation *, int64_t> kernelOf;
  const int64_t numOps = int64_t(ops_.size());
  runStart_.resize(numOps);
  runEnd_.resize(numOps);
  for (int64_t p = 0; p < numOps; ++p)
    runStart_[p] = runEnd_[p] = p;
  for (size_t k = 0; k < kernels.size(); ++k) {
    const StepKernel &kernel = kernels[k];
    bool several = kernel.kind == KernelKind::Fused || kernel.kind == KernelKind::Rows ||
                   kernel.kind == KernelKind::Epilogue;
    if (!several || kernel.members.size() < 2)
      continue;
    for (Operation *op : kernel.members) {
      kernelOf[op] = int64_t(k);
      runStart_[position[op]] = kernel.first;
      runEnd_[position[op]] = kernel.last;
    }
  }
  auto groupOf = [&](Operation *op) -> int64_t {
    auto it = kernelOf.find(op);
    return it == kernelOf.end() ? -1 : it->second;
  };
  auto inGroup = [&](Operation *user, int64_t g) { return g >= 0 && groupOf(user) == g; };
  std::map<std::pair<int64_t, std::vector<int64_t>>, int64_t> cloneKernels;

  // Nodes: the forward ops with results.
  llvm::DenseMap<Value, int32_t> valueNode;
  llvm::DenseMap<StringRef, int32_t> iterationIndex;
  for (Operation *op : ops_) {
    if (opPhase(op) != "forward" || op->getNumResults() == 0)
      continue;
    RematNode node;
    RematNode &n = node;
    n.op = op;
    n.position = position[op];
    n.recomputable = op->getNumResults() == 1 && op->getNumRegions() == 0;
    n.view = isView(op);
    n.contraction = op->hasTrait<OpTrait::ein::EinContraction>();
    n.elementwiseOrReduction =
        op->hasTrait<OpTrait::Elementwise>() || op->hasTrait<OpTrait::ein::EinReduction>();
    n.fusion = groupOf(op);
    if (n.fusion >= 0 && isFusible(op)) {
      auto shape = cast<ShapedType>(op->getResult(0).getType()).getShape();
      auto key = std::make_pair(n.fusion, std::vector<int64_t>(shape.begin(), shape.end()));
      n.cloneKernel = cloneKernels.try_emplace(key, int64_t(cloneKernels.size())).first->second;
    }
    // A contraction's product is written (its epilogue reads it by blocks).
    n.forwardUsersInGroup =
        n.fusion >= 0 && !n.contraction && llvm::all_of(op->getUsers(), [&](Operation *user) {
          return inGroup(user, n.fusion) || (opPhase(user) != "forward" && !isView(user));
        });
    if (auto cost = dyn_cast<CostOpInterface>(op))
      n.flops = cost.getFlops();
    if (options_.seconds)
      n.seconds = options_.seconds(op);
    if (options_.kernels) {
      n.computeSeconds = options_.kernels->computeSeconds(op);
      n.resultBytes = valueBytes(op->getResult(0).getType(), width);
      for (Value operand : op->getOperands()) {
        auto it = valueNode.find(operand);
        // A view is read where it is stored (a broadcast reads its source),
        // a free value (an iota, a constant) is computed in the kernel.
        Value stored = operand;
        while (Operation *def = stored.getDefiningOp()) {
          auto at = valueNode.find(stored);
          if (at != valueNode.end() && nodes_[at->second].free) {
            stored = Value();
            break;
          }
          if (!isViewOp(def) || def->getNumOperands() != 1)
            break;
          stored = def->getOperand(0);
        }
        n.reads.push_back({it == valueNode.end() ? -1 : it->second,
                           stored ? valueBytes(stored.getType(), width) : 0});
      }
    }
    if (auto lets = op->getAttrOfType<ArrayAttr>("ein.let"))
      for (Attribute a : lets)
        if (auto name = dyn_cast<StringAttr>(a))
          n.lets.push_back(name.getValue().str());
    if (auto layer = op->getAttrOfType<StringAttr>("ein.layer")) {
      auto [it, inserted] = iterationIndex.try_emplace(layer.getValue(), iterations_.size());
      if (inserted)
        iterations_.push_back(layer.getValue().str());
      n.iteration = it->second;
    }
    int32_t index = int32_t(nodes_.size());
    for (Value operand : op->getOperands())
      if (auto it = valueNode.find(operand); it != valueNode.end())
        if (!llvm::is_contained(n.operands, it->second))
          n.operands.push_back(it->second);
    bool fromFree =
        !n.operands.empty() && llvm::all_of(n.operands, [&](int32_t u) { return nodes_[u].free; });
    n.free = isa<ConstantOp, IotaOp>(op) ||
             (isa<BroadcastOp, ReshapeOp, SliceOp>(op) && op->getNumOperands() == 1 && fromFree);
    if (n.view)
      n.root = n.operands.empty()
                   ? -1
                   : (nodes_[n.operands[0]].view ? nodes_[n.operands[0]].root : n.operands[0]);
    else
      n.root = index;
    if (!n.view && !isa<ConstantOp>(op))
      for (Value r : op->getResults())
        n.bytes += valueBytes(r.getType(), width);
    for (Value r : op->getResults())
      valueNode[r] = index;
    nodeIndex_[op] = index;
    nodes_.push_back(std::move(node));
  }
  users_.assign(nodes_.size(), {});

  // Values of later phases seen through their views: a reshape or folded
  // broadcast of a later phase extends the life of what it views. A later
  // view of a forward node is its own root here: its uses are the node's
  // late uses.
  llvm::DenseMap<Value, Value> viewRoot; // later view result -> its root
  auto rootOf = [&](Value v) {
    auto it = viewRoot.find(v);
    return it == viewRoot.end() ? v : it->second;
  };
  llvm::DenseMap<Value, std::pair<int64_t, int64_t>> useRange; // root -> [first, last] use
  llvm::DenseSet<Value> pinned;
  for (Operation *op : ops_) {
    if (nodeIndex_.count(op))
      continue;
    if (computed.count(op))
      continue;
    if (isViewOp(op)) {
      Value in = op->getOperand(0);
      viewRoot[op->getResult(0)] = valueNode.count(in) ? op->getResult(0) : rootOf(in);
      continue;
    }
    int64_t p = position[op];
    for (Value operand : op->getOperands()) {
      auto [it, inserted] = useRange.try_emplace(rootOf(operand), p, p);
      if (!inserted) {
        it->second.first = std::min(it->second.first, p);
        it->second.second = std::max(it->second.second, p);
      }
    }
  }
  Operation *terminator = body.empty() ? nullptr : &body.back();
  if (terminator && terminator->hasTrait<OpTrait::IsTerminator>())
    for (Value v : terminator->getOperands())
      pinned.insert(rootOf(v));

  // Uses of the forward nodes.
  for (Operation *op : ops_) {
    int64_t p = position[op];
    auto self = nodeIndex_.find(op);
    bool forward = self != nodeIndex_.end();
    for (Value operand : op->getOperands()) {
      auto it = valueNode.find(operand);
      if (it == valueNode.end())
        continue;
      int32_t u = it->second;
      RematNode &n = nodes_[u];
      if (forward) {
        if (!llvm::is_contained(users_[u], self->second))
          users_[u].push_back(self->second);
        if (!nodes_[self->second].view)
          n.lastForwardUse = std::max(n.lastForwardUse, p);
        continue;
      }
      // A later phase's view reads the node where it stands (a clone must
      // come before it) and for as long as the view is read.
      int64_t first = p, last = p;
      if (isViewOp(op))
        if (auto range = useRange.find(op->getResult(0)); range != useRange.end())
          last = std::max(last, range->second.second);
      n.firstLateUse = n.firstLateUse < 0 ? first : std::min(n.firstLateUse, first);
      n.lastLateUse = std::max(n.lastLateUse, last);
    }
  }
  for (RematNode &n : nodes_)
    for (Value r : n.op->getResults())
      if (pinned.contains(rootOf(r)))
        n.pinned = true;
  // A returned view pins what it views.
  for (RematNode &n : nodes_)
    if (n.pinned && n.view && n.root >= 0)
      nodes_[n.root].pinned = true;

  // Resident: arguments, results, constants. Fixed temporaries: the values
  // of later phases.
  // Each resident buffer is 64-byte aligned, as the runtime places them.
  auto residentBuffer = [&](Value v) {
    resident_ += einrt::alignArena(valueBytes(v.getType(), width));
  };
  for (BlockArgument arg : body.getArguments())
    residentBuffer(arg);
  for (Value v : pinned)
    if (!isa<BlockArgument>(v))
      residentBuffer(v);
  // A concat's inputs written in place (passes/ConcatInPlace.h) are rows of
  // its storage: it is live from the first of them to its or their last use.
  llvm::DenseMap<Value, Value> intoConcat; // input's storage -> the concat
  llvm::DenseMap<Value, std::pair<int64_t, int64_t>> concatExtent;
  for (Operation *op : ops_)
    if (auto concat = dyn_cast<ConcatOp>(op); concat && !nodeIndex_.count(op))
      for (auto [input, inPlace] : llvm::zip(concat.getInputs(), concatInputsInPlace(concat)))
        if (inPlace)
          intoConcat[storageValue(input)] = concat.getResult();
  for (Operation *op : ops_) {
    if (isa<ConstantOp>(op)) {
      if (!pinned.contains(op->getResult(0)))
        residentBuffer(op->getResult(0));
      continue;
    }
    if (nodeIndex_.count(op) || isView(op))
      continue;
    int64_t p = position[op];
    int64_t g = groupOf(op);
    for (Value r : op->getResults()) {
      if (pinned.contains(r))
        continue;
      // Read only inside its fused kernel: never in memory (but for a
      // contraction's product, which its epilogue reads by blocks).
      if (g >= 0 && !r.use_empty() && !op->hasTrait<OpTrait::ein::EinContraction>() &&
          llvm::all_of(r.getUsers(), [&](Operation *user) { return inGroup(user, g); }))
        continue;
      auto range = useRange.find(r);
      int64_t first = p, last = range == useRange.end() ? p : std::max(p, range->second.second);
      if (auto into = intoConcat.find(r); into != intoConcat.end()) {
        auto [extent, fresh] = concatExtent.try_emplace(into->second, first, last);
        extent->second = {std::min(extent->second.first, first),
                          std::max(extent->second.second, last)};
        continue;
      }
      if (auto extent = concatExtent.find(r); extent != concatExtent.end()) {
        first = std::min(first, extent->second.first);
        last = std::max(last, extent->second.second);
      }
      fixed_.push_back(Interval{runEnd_[first], runEnd_[last], valueBytes(r.getType(), width)});
    }
  }
}

int32_t RematGraph::nodeOf(Operation *op) const {
  auto it = nodeIndex_.find(op);
  return it == nodeIndex_.end() ? -1 : it->second;
}

bool RematGraph::available(const std::vector<char> &keep, int32_t node) const {
  const RematNode &n = nodes_[node];
  if (n.free || n.pinned || !n.recomputable)
    return true;
  if (n.view)
    return n.root < 0 || available(keep, n.root);
  return keep[node];
}

double RematGraph::runSeconds(const std::vector<int32_t> &run, const std::vector<char> &clone,
                              const std::vector<int32_t> &runOf) const {
  const RematKernelPricing &k = *options_.kernels;
  int32_t self = run.front();
  auto inRun = [&](int32_t u) { return u >= 0 && clone[u] && runOf[u] == self; };
  double compute = 0;
  int64_t bytes = 0;
  bool kernel = false;
  for (int32_t i : run) {
    const RematNode &node = nodes_[i];
    if (node.view)
      continue; // no kernel of its own
    kernel = true;
    compute += node.computeSeconds;
    for (auto [from, read] : node.reads)
      if (!inRun(from))
        bytes += read;
    // Written out unless only clones of this run read it.
    bool escapes = node.firstLateUse >= 0;
    for (int32_t u : users_[i])
      escapes |= clone[u] && !inRun(u);
    if (escapes)
      bytes += node.resultBytes;
  }
  if (!kernel)
    return 0;
  double memory = k.bandwidth > 0 ? double(bytes) / k.bandwidth : 0;
  return std::max(compute, memory) + k.latency;
}

RematCost RematGraph::evaluate(const std::vector<char> &keep, RematSchedule *schedule,
                               const RematEvalOptions &eval) const {
  const int64_t count = int64_t(nodes_.size());
  const int64_t n = int64_t(ops_.size());
  std::vector<char> avail(count), clone(count, 0);
  for (int32_t i = 0; i < count; ++i)
    avail[i] = available(keep, i);

  // The clones: values read late that are not available, and what they
  // need in turn; each placed before its first late use or before the
  // first clone reading it, whichever comes first, and before the whole
  // fused kernel of that use.
  std::vector<int64_t> need(count, kNever);
  for (int32_t i = int32_t(count) - 1; i >= 0; --i) {
    const RematNode &node = nodes_[i];
    if (!avail[i] && node.firstLateUse >= 0) {
      clone[i] = 1;
      need[i] = std::min(need[i], runStart_[size_t(node.firstLateUse)]);
    }
    if (!clone[i])
      continue;
    for (int32_t u : node.operands)
      if (!avail[u]) {
        clone[u] = 1;
        need[u] = std::min(need[u], need[i]);
      }
  }

  // Schedule positions with the clones inserted; an op of a fused kernel
  // is at its kernel's step (the kernel's last op), and so is a clone of a
  // run of clones of one group placed before the same op.
  RematCost cost;
  std::vector<int64_t> before(n + 1, 0); // clones placed before each position
  for (int32_t i = 0; i < count; ++i)
    if (clone[i]) {
      ++before[need[i]];
      ++cost.recomputedOps;
      cost.recomputeFlops += nodes_[i].flops;
      if (!options_.kernels)
        cost.recomputeSeconds += nodes_[i].seconds;
    }
  std::vector<int64_t> slot(n + 1, 0); // schedule index of the first clone before p
  int64_t shift = 0;
  for (int64_t p = 0; p <= n; ++p) {
    slot[p] = p + shift;
    shift += before[p];
  }
  auto at = [&](int64_t p) { return slot[runEnd_[p]] + before[runEnd_[p]]; };
  std::vector<int64_t> cloneAt(count, -1);
  std::vector<int32_t> runOf(count, -1); // per clone: its run's first clone
  {
    std::vector<int64_t> placed(n + 1, 0);
    std::vector<int32_t> run; // the clones of the run being placed
    auto close = [&] {
      for (int32_t j : run) { // the run's step is its last clone's
        cloneAt[j] = cloneAt[run.back()];
        runOf[j] = run.front();
      }
      if (options_.kernels && !run.empty())
        cost.recomputeSeconds += runSeconds(run, clone, runOf);
      run.clear();
    };
    for (int32_t i = 0; i < count; ++i) {
      if (!clone[i])
        continue;
      cloneAt[i] = slot[need[i]] + placed[need[i]]++;
      bool joins = !run.empty() && nodes_[i].cloneKernel >= 0 &&
                   nodes_[i].cloneKernel == nodes_[run[0]].cloneKernel && need[i] == need[run[0]];
      if (!joins)
        close();
      run.push_back(i);
    }
    close();
  }

  const int64_t length = n + cost.recomputedOps;
  // Temporaries as live ranges in schedule positions (ids in creation order).
  std::vector<einrt::LiveRange> ranges;
  ranges.reserve(fixed_.size() + size_t(count));
  auto live = [&](int64_t first, int64_t last, int64_t bytes) {
    ranges.push_back(einrt::LiveRange{int32_t(ranges.size()), bytes, first, std::max(first, last)});
  };
  for (const Interval &f : fixed_)
    live(slot[f.first] + before[f.first], slot[f.last] + before[f.last], f.bytes);

  // Forward values and clones, by the node whose storage they are.
  // A value read only inside its fused kernel has no storage: an original
  // whose readers are all in its group once nothing later reads it, a clone
  // whose readers are all clones of its run.
  std::vector<int64_t> lastOriginal(count, -1), lastClone(count, -1);
  std::vector<char> readLate(count, 0), viewed(count, 0), cloneEscapes(count, 0);
  for (int32_t w = 0; w < count; ++w) {
    const RematNode &node = nodes_[w];
    int32_t r = node.root;
    if (r < 0)
      continue;
    if (r != w)
      viewed[r] = 1;
    if (node.lastForwardUse >= 0)
      lastOriginal[r] = std::max(lastOriginal[r], at(node.lastForwardUse));
    int64_t &last = clone[w] ? lastClone[r] : lastOriginal[r];
    if (node.lastLateUse >= 0) {
      last = std::max(last, at(node.lastLateUse));
      if (!clone[w])
        readLate[r] = 1;
      else
        cloneEscapes[r] = 1;
    }
    for (int32_t u : users_[w])
      if (clone[u]) {
        last = std::max(last, cloneAt[u]);
        if (!clone[w])
          readLate[r] = 1;
        else if (r != w || node.cloneKernel < 0 || nodes_[u].cloneKernel != node.cloneKernel ||
                 need[u] != need[w])
          cloneEscapes[r] = 1;
      }
  }
  cost.savedByIteration.assign(iterations_.size() + 1, 0);
  for (int32_t r = 0; r < count; ++r) {
    const RematNode &node = nodes_[r];
    if (node.view || node.pinned || node.bytes == 0)
      continue;
    int64_t def = at(node.position);
    bool internal = node.forwardUsersInGroup && !readLate[r] && !viewed[r];
    if (!internal)
      live(def, lastOriginal[r], node.bytes);
    if (clone[r] && (node.cloneKernel < 0 || cloneEscapes[r] || viewed[r]))
      live(cloneAt[r], lastClone[r], node.bytes);
    if (readLate[r] && !node.free) {
      cost.savedBytes += node.bytes;
      ++cost.keptCount;
      cost.savedByIteration[node.iteration < 0 ? iterations_.size() : size_t(node.iteration)] +=
          node.bytes;
    }
  }

  // The most bytes live at once, overall and in each window.
  std::vector<int64_t> delta(length + 1, 0);
  for (const einrt::LiveRange &r : ranges) {
    delta[r.first] += r.bytes;
    delta[r.last + 1] -= r.bytes;
  }
  std::vector<int64_t> liveAt(length, 0);
  int64_t running = 0;
  for (int64_t t = 0; t < length; ++t) {
    liveAt[t] = running += delta[t];
    cost.liveBytes = std::max(cost.liveBytes, running);
  }
  if (eval.windows)
    for (auto [first, last] : *eval.windows) {
      int64_t most = 0;
      for (int64_t t = slot[runStart_[first]]; t <= at(last) && t < length; ++t)
        most = std::max(most, liveAt[t]);
      cost.windowLive.push_back(most);
    }
  if (eval.arena) {
    std::vector<int64_t> offsets(ranges.size(), 0);
    cost.arenaBytes = einrt::placeFirstFit(ranges, offsets);
  }
  cost.peakBytes = resident_ + options_.extraResident +
                   (cost.arenaBytes >= 0 ? cost.arenaBytes : cost.liveBytes);

  if (schedule) {
    schedule->recompute = std::move(clone);
    schedule->need = std::move(need);
  }
  return cost;
}

} // namespace mlir::ein
