//===- MemoryAnalysis.cpp - Memory ledger and live bytes of a function ----===//
//
// analyzeMemory (passes/Analysis.h): params, gradients, optimizer state and
// inputs from the signature's `ein.kind` attributes; the activations saved
// for backward (forward-phase values a backward-phase op reads); and the
// live bytes over the op order with their peak. One pass over the ops and
// their uses. The rules are in docs/analyses.md.
//
//===----------------------------------------------------------------------===//
#include "passes/Analysis.h"

#include "ir/EinOps.h"
#include "passes/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::ein {

namespace {

StringRef kindOf(DictionaryAttr attrs) {
  if (!attrs)
    return "";
  if (auto kind = attrs.getAs<StringAttr>("ein.kind"))
    return kind.getValue();
  return "";
}

} // namespace

/// Constants, iotas and broadcasts / reshapes / slices of them: known without
/// running the forward, so not activations (a backend materialises them at no
/// cost, or computes an iota in the kernel reading it).
static bool isConstantDerived(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<ConstantOp, IotaOp>(def))
    return true;
  if (isa<BroadcastOp, ReshapeOp, SliceOp>(def))
    return isConstantDerived(def->getOperand(0));
  return false;
}

MemoryLedger analyzeMemory(func::FuncOp fn, const ByteWidth &width, const FusedValues *fused) {
  MemoryLedger m;
  if (fn.isExternal())
    return m;
  Block &body = fn.front();

  // The signature.
  bool anyGradResult = false, anyParamResult = false;
  int64_t trainedBytes = 0; // the params a gradient is computed for (not frozen)
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    StringRef kind = kindOf(fn.getArgAttrDict(i));
    Type type = fn.getArgument(i).getType();
    int64_t bytes = valueBytes(type, width);
    if (kind == "param") {
      if (auto shaped = dyn_cast<ShapedType>(type); shaped && shaped.hasStaticShape())
        m.paramCount += shaped.getNumElements();
      m.params += bytes;
      if (!fn.getArgAttr(i, kFrozenParam))
        trainedBytes += bytes;
    } else if (kind == "opt_state") {
      m.optimizerState += bytes;
    } else if (kind == "input") {
      m.inputs += bytes;
    }
  }
  for (unsigned i = 0; i < fn.getNumResults(); ++i) {
    StringRef kind = kindOf(fn.getResultAttrDict(i));
    if (kind == "grad") {
      anyGradResult = true;
      m.grads += valueBytes(fn.getResultTypes()[i], width);
    } else if (kind == "param") {
      anyParamResult = true;
    }
  }
  // A @train_step returns new params, not gradients: it computes one
  // gradient per trained param, shaped like the param.
  if (!anyGradResult && anyParamResult)
    m.grads = trainedBytes;

  // The ops in order; a reshape or slice result aliases the root of its
  // operand (a view).
  // (ein ops have no regions: every use is an operand of a listed op or of
  // the terminator.)
  SmallVector<Operation *> ops;
  for (Operation &op : body)
    if (!op.hasTrait<OpTrait::IsTerminator>())
      ops.push_back(&op);
  int64_t n = ops.size();
  DenseMap<Value, Value> aliasOf; // reshape / slice result -> root
  auto root = [&](Value v) {
    auto it = aliasOf.find(v);
    return it == aliasOf.end() ? v : it->second;
  };

  // Activations: distinct roots of forward-phase op results (constants and
  // arguments aside) that a backward-phase op reads.
  DenseSet<Value> saved;
  DenseSet<Value> savedArgs;
  // Liveness: the last use of every root (-1: none yet).
  DenseMap<Value, int64_t> lastUse;
  DenseSet<Value> pinned; // live for the whole function
  for (BlockArgument arg : body.getArguments())
    pinned.insert(arg);
  for (int64_t i = 0; i < n; ++i) {
    Operation *op = ops[i];
    // The backward and the recompute clones (ein-remat) read saved values.
    StringRef phase = opPhase(op);
    bool backward = phase == "backward" || phase == "recompute";
    for (Value operand : op->getOperands()) {
      Value r = root(operand);
      // A row kernel's broadcast read after it is written as its input,
      // the per-row value (passes/FusedCosts.cpp): that is what is kept.
      if (fused && fused->internal.count(r))
        if (auto b = r.getDefiningOp<BroadcastOp>())
          r = root(b.getInput());
      int64_t &last = lastUse[r];
      last = std::max(last, i);
      if (!backward)
        continue;
      if (auto arg = dyn_cast<BlockArgument>(r)) {
        if (arg.getOwner() == &body)
          savedArgs.insert(r);
        continue;
      }
      Operation *def = r.getDefiningOp();
      if (def && !isConstantDerived(r) && opPhase(def) == "forward")
        saved.insert(r);
    }
    bool view = isa<ReshapeOp, SliceOp>(op) ||
                (fused && isa<BroadcastOp>(op) && fused->foldedBroadcasts.count(op->getResult(0)));
    if (view && op->getNumOperands() == 1 && op->getNumResults() == 1)
      aliasOf[op->getResult(0)] = root(op->getOperand(0));
    else
      for (Value result : op->getResults())
        lastUse.try_emplace(result, i);
  }
  Operation *terminator = body.empty() ? nullptr : &body.back();
  if (terminator && terminator->hasTrait<OpTrait::IsTerminator>())
    for (Value v : terminator->getOperands())
      pinned.insert(root(v));

  for (Value v : saved) {
    int64_t bytes = valueBytes(v.getType(), width);
    // A precision policy's working copy of a param (a cast of the param
    // argument) is counted apart: it is the param at the compute width.
    auto copy = dyn_cast_or_null<CastOp>(v.getDefiningOp());
    auto arg = copy ? dyn_cast<BlockArgument>(copy.getInput()) : BlockArgument();
    if (arg && arg.getOwner() == &body &&
        kindOf(fn.getArgAttrDict(arg.getArgNumber())) == "param") {
      m.paramCopies += bytes;
      continue;
    }
    m.activations += bytes;
    ++m.activationCount;
    std::string dtype;
    llvm::raw_string_ostream os(dtype);
    os << getElementTypeOrSelf(v.getType());
    m.activationsByDtype[os.str()] += bytes;
  }
  for (Value v : savedArgs)
    if (kindOf(fn.getArgAttrDict(cast<BlockArgument>(v).getArgNumber())) == "input")
      m.savedInputs += valueBytes(v.getType(), width);

  // Live bytes: the pinned roots throughout; every other root from its
  // defining op to its last use, both included (an op's operands and
  // results coexist while it runs).
  int64_t base = 0;
  for (Value v : pinned)
    base += valueBytes(v.getType(), width);
  std::vector<int64_t> delta(n + 1, 0);
  for (int64_t i = 0; i < n; ++i)
    for (Value result : ops[i]->getResults()) {
      if (aliasOf.count(result) || pinned.contains(result) ||
          (fused && (fused->internal.count(result) || fused->computedIndices.count(result))))
        continue;
      int64_t bytes = valueBytes(result.getType(), width);
      int64_t last = lastUse.lookup(result);
      delta[i] += bytes;
      delta[last + 1] -= bytes;
    }
  m.liveAfter.resize(n);
  int64_t live = base;
  m.peak = base;
  for (int64_t i = 0; i < n; ++i) {
    live += delta[i];
    m.liveAfter[i] = live;
    if (live > m.peak || m.peakOpIndex < 0) {
      m.peak = live;
      m.peakOpIndex = i;
    }
  }
  if (m.peakOpIndex >= 0) {
    Operation *op = ops[m.peakOpIndex];
    m.peakOp = op->getName().getStringRef().str();
    std::string loc = opLocation(op);
    if (!loc.empty())
      m.peakOp += " at " + loc;
  }
  return m;
}

} // namespace mlir::ein
