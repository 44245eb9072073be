//===- FusedCosts.cpp - The byte ledger after elementwise fusion ----------===//
//
// applyFusionToCosts (passes/Analysis.h): what each kernel of a fusing
// backend reads and writes, given the groups ein-fuse-elementwise marked.
// The reads in place follow the rules the CPU backend compiles
// (classifyBroadcastRead, FusionSplit).
//
//===----------------------------------------------------------------------===//
#include "passes/Analysis.h"
#include "passes/FuseElementwise.h"
#include "passes/FuseRows.h"
#include "passes/StepKernels.h"

#include "ir/EinOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::ein {

namespace {

/// The kernels that compute elementwise or by rows (passes/StepKernels.h),
/// an epilogue with its contraction: what the byte rules below price.
std::vector<StepKernel> kernelsOf(const std::vector<StepKernel> &all) {
  std::vector<StepKernel> kernels;
  for (const StepKernel &k : all)
    if (k.kind == KernelKind::Fused || k.kind == KernelKind::Rows ||
        k.kind == KernelKind::Epilogue ||
        (k.kind == KernelKind::Op && isFusible(k.members.front())))
      kernels.push_back(k);
  return kernels;
}

} // namespace

namespace {

/// One kernel of a fusing backend and what it moves.
struct KernelIO {
  SmallVector<Operation *> members;
  int64_t read = 0, written = 0; // bytes under the width
  SmallVector<Value> outputs;    // member results read after the kernel
};

/// The products contractions hand to their epilogues, by fusion group.
llvm::DenseMap<int64_t, Value> epilogueProducts(Block &body) {
  llvm::DenseMap<int64_t, Value> products;
  for (Operation &op : body.without_terminator())
    if (auto id = op.getAttrOfType<IntegerAttr>(kEpilogueAttr))
      products[id.getInt()] = op.getResult(0);
  return products;
}

/// Every kernel of `body` (kernelsOf) with its reads and writes; `inPlace`
/// gets every operand read in place through a broadcast. An operand the
/// kernel computes from its index (computesIndex) moves nothing. An
/// epilogue's reads of its product come from cache: `fromCache` gets their
/// bytes.
std::vector<KernelIO> kernelIO(Block &body, const std::vector<StepKernel> &all,
                               const ByteWidth &width, llvm::DenseSet<OpOperand *> &inPlace,
                               int64_t *fromCache = nullptr) {
  std::vector<KernelIO> out;
  const llvm::DenseMap<int64_t, Value> products = epilogueProducts(body);
  for (const StepKernel &kernel : kernelsOf(all)) {
    KernelIO io;
    io.members.assign(kernel.elementwiseMembers().begin(), kernel.elementwiseMembers().end());
    Value product;
    if (auto id = io.members.front()->getAttrOfType<IntegerAttr>(kFusionAttr))
      product = products.lookup(id.getInt());
    llvm::SmallPtrSet<Operation *, 16> members(io.members.begin(), io.members.end());
    FusionSplit split;
    split.elements = cast<ShapedType>(io.members.front()->getResult(0).getType()).getNumElements();
    // A row kernel reads by its row shape (rowOperandRead), not by a split.
    std::optional<RowShape> rows;
    if (io.members.front()->hasAttr(kRowsAttr))
      for (Operation *op : io.members)
        if (!rows)
          rows = rowReductionShape(op);
    llvm::SmallSetVector<Value, 16> inputs;
    for (Operation *op : io.members) {
      for (OpOperand &use : op->getOpOperands()) {
        Operation *def = use.get().getDefiningOp();
        if (def && members.count(def))
          continue;
        if (computesIndex(kernel, use))
          continue;
        Value source = use.get();
        bool through = false;
        if (rows) {
          through = !isa<ReduceOp>(op) &&
                    rowOperandRead(use.get(), rowLevel(op, *rows), *rows) != BroadcastRead::Full;
        } else {
          BroadcastReadInfo info = classifyBroadcastRead(use.get());
          through = info.read != BroadcastRead::Full && split.admit(info);
        }
        if (through) {
          source = use.get().getDefiningOp<BroadcastOp>().getInput();
          inPlace.insert(&use);
          if (Operation *src = source.getDefiningOp(); src && members.count(src))
            continue; // a per-row value the kernel computes
        }
        if (!inputs.insert(source))
          continue;
        if (product && source == product) {
          if (fromCache)
            *fromCache += valueBytes(source.getType(), width);
          continue;
        }
        io.read += valueBytes(source.getType(), width);
      }
      if (llvm::any_of(op->getUsers(), [&](Operation *u) { return !members.count(u); })) {
        // A row kernel writes a broadcast's input (a per-row value) for the
        // readers after it (codegen/CpuRowsKernel.cpp).
        Value written = rows && isa<BroadcastOp>(op) ? op->getOperand(0) : op->getResult(0);
        if (!llvm::is_contained(io.outputs, written)) {
          io.written += valueBytes(written.getType(), width);
          io.outputs.push_back(written);
        }
      }
    }
    out.push_back(std::move(io));
  }
  return out;
}

/// Broadcasts of `body` whose every use is in `inPlace`.
SmallVector<Operation *> foldedBroadcastsOf(Block &body,
                                            const llvm::DenseSet<OpOperand *> &inPlace) {
  SmallVector<Operation *> folded;
  for (Operation &op : body.without_terminator())
    if (isa<BroadcastOp>(op) && !op.use_empty() &&
        llvm::all_of(op.getUses(), [&](OpOperand &use) { return inPlace.count(&use); }))
      folded.push_back(&op);
  return folded;
}

} // namespace

FusionSummary applyFusionToCosts(func::FuncOp fn, std::vector<OpCost> &costs,
                                 const ByteWidth &width) {
  FusionSummary summary;
  llvm::DenseMap<Operation *, size_t> indexOf;
  for (size_t i = 0; i < costs.size(); ++i) {
    indexOf[costs[i].op] = i;
    summary.bytesUnfused += costs[i].bytesRead + costs[i].bytesWritten;
  }
  if (fn.isExternal() || !fn.getBody().hasOneBlock()) {
    summary.bytes = summary.bytesUnfused;
    return summary;
  }
  Block &body = fn.getBody().front();
  const std::vector<StepKernel> all = stepKernels(body);
  llvm::DenseSet<OpOperand *> inPlace;
  summary.epilogues = int64_t(epilogueProducts(body).size());
  for (const KernelIO &kernel : kernelIO(body, all, width, inPlace, &summary.epilogueBytes)) {
    if (kernel.members.size() > 1 && kernel.members.front()->hasAttr(kRowsAttr)) {
      ++summary.rowKernels;
      summary.rowOps += static_cast<int64_t>(kernel.members.size());
    } else if (kernel.members.size() > 1) {
      ++summary.fusedKernels;
      summary.fusedOps += static_cast<int64_t>(kernel.members.size());
    }
    // Share the kernel's bytes among its ops, by their unfused bytes.
    int64_t unfused = 0;
    for (Operation *op : kernel.members)
      if (auto it = indexOf.find(op); it != indexOf.end())
        unfused += costs[it->second].bytesRead + costs[it->second].bytesWritten;
    int64_t givenRead = 0, givenWritten = 0;
    for (size_t k = 0; k < kernel.members.size(); ++k) {
      auto it = indexOf.find(kernel.members[k]);
      if (it == indexOf.end())
        continue;
      OpCost &c = costs[it->second];
      bool last = k + 1 == kernel.members.size();
      double share = unfused > 0 ? double(c.bytesRead + c.bytesWritten) / double(unfused)
                                 : 1.0 / double(kernel.members.size());
      c.bytesRead =
          last ? kernel.read - givenRead : static_cast<int64_t>(double(kernel.read) * share);
      c.bytesWritten = last ? kernel.written - givenWritten
                            : static_cast<int64_t>(double(kernel.written) * share);
      givenRead += c.bytesRead;
      givenWritten += c.bytesWritten;
    }
  }
  // Broadcasts nobody materialises.
  for (Operation *op : foldedBroadcastsOf(body, inPlace)) {
    ++summary.foldedBroadcasts;
    if (auto it = indexOf.find(op); it != indexOf.end())
      costs[it->second].bytesRead = costs[it->second].bytesWritten = 0;
  }
  // Iotas every reader computes from its index.
  for (Operation *op : computedIndexOps(all)) {
    summary.indexOpsComputed += isa<IotaOp>(op);
    if (auto it = indexOf.find(op); it != indexOf.end())
      costs[it->second].bytesRead = costs[it->second].bytesWritten = 0;
  }
  for (const OpCost &c : costs)
    summary.bytes += c.bytesRead + c.bytesWritten;
  return summary;
}

FusedValues fusedValues(func::FuncOp fn) {
  FusedValues values;
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return values;
  Block &body = fn.getBody().front();
  const std::vector<StepKernel> all = stepKernels(body);
  llvm::DenseSet<OpOperand *> inPlace;
  for (const KernelIO &kernel : kernelIO(body, all, irByteWidth, inPlace))
    for (Operation *op : kernel.members)
      if (!llvm::is_contained(kernel.outputs, op->getResult(0)))
        values.internal.insert(op->getResult(0));
  for (Operation *op : foldedBroadcastsOf(body, inPlace))
    values.foldedBroadcasts.insert(op->getResult(0));
  for (Operation *op : computedIndexOps(all))
    values.computedIndices.insert(op->getResult(0));
  return values;
}

} // namespace mlir::ein
