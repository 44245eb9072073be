//===- CpuLayoutFolds.cpp - Transposes folded into GEMM layouts -----------===//
#include "codegen/CpuLayoutFolds.h"

#include "passes/FuseElementwise.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/SmallVector.h"

using namespace mlir;

namespace ein::codegen {
namespace {

Dims shapeOf(Value v) {
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  return Dims(shape.begin(), shape.end());
}

/// Collects in `out` the contraction operands reading `v` through
/// reshapes and slices; false where anything else reads it.
bool contractReaders(Value v, function_ref<bool(Operation *)> standalone,
                     SmallVectorImpl<OpOperand *> &out) {
  for (OpOperand &use : v.getUses()) {
    Operation *reader = use.getOwner();
    if (!standalone(reader))
      return false;
    if (isa<mlir::ein::ReshapeOp, mlir::ein::SliceOp>(reader)) {
      if (!contractReaders(reader->getResult(0), standalone, out))
        return false;
      continue;
    }
    if (!isa<mlir::ein::ContractOp>(reader))
      return false;
    out.push_back(&use);
  }
  return true;
}

/// The transposes of `folds` that `v`'s elements come from through
/// reshapes, slices and transposes.
void foldsUnder(Value v, const llvm::DenseSet<Operation *> &folds,
                SmallVectorImpl<Operation *> &out) {
  Operation *def = v.getDefiningOp();
  if (!def || !isa<mlir::ein::ReshapeOp, mlir::ein::SliceOp, mlir::ein::TransposeOp>(def))
    return;
  if (folds.contains(def))
    out.push_back(def);
  foldsUnder(def->getOperand(0), folds, out);
}

/// Whether `contract` is an f32 GEMM: operands and result f32. Narrow
/// operands keep their transposes: the emulating path would widen a
/// strided operand's whole extent, and oneDNN's bf16 brgemm ran gpt's
/// attention GEMMs slower on strided operands than the transposes cost.
bool f32Gemm(mlir::ein::ContractOp contract) {
  return llvm::all_of(contract->getOperandTypes(),
                      [](Type t) { return cast<ShapedType>(t).getElementType().isF32(); }) &&
         cast<ShapedType>(contract->getResult(0).getType()).getElementType().isF32();
}

} // namespace

LayoutFolds::LayoutFolds(Block &body, function_ref<bool(Operation *)> standalone,
                         function_ref<einrt::ContractDims(mlir::ein::ContractOp)> dims) {
  // Write folds: contraction -> reshapes -> transpose, each value read once.
  for (Operation &op : body.without_terminator()) {
    auto t = dyn_cast<mlir::ein::TransposeOp>(op);
    if (!t || !standalone(t))
      continue;
    SmallVector<Operation *> reshapes;
    Value v = t.getInput();
    while (v.hasOneUse() && v.getDefiningOp<mlir::ein::ReshapeOp>() &&
           standalone(v.getDefiningOp())) {
      reshapes.push_back(v.getDefiningOp());
      v = v.getDefiningOp()->getOperand(0);
    }
    auto contract = v.getDefiningOp<mlir::ein::ContractOp>();
    if (!contract || !v.hasOneUse() || !standalone(contract) || !f32Gemm(contract) ||
        contract->hasAttr(mlir::ein::kEpilogueAttr) || contract->hasAttr(mlir::ein::kFusionAttr))
      continue;
    // C as the transpose's input lies in its row-major result.
    StridedLayout out = rowMajorLayout(shapeOf(t.getResult()));
    ArrayRef<int64_t> perm = t.getPermutation();
    StridedLayout c = out;
    for (size_t i = 0; i < perm.size(); ++i) {
      c.shape[perm[i]] = out.shape[i];
      c.strides[perm[i]] = out.strides[i];
    }
    std::optional<StridedLayout> layout = c;
    for (Operation *r : reshapes)
      if (layout)
        layout = reshapeLayout(*layout, shapeOf(r->getOperand(0)));
    if (!layout)
      continue;
    einrt::ContractDims d = dims(contract);
    int64_t lhsRank = cast<RankedTensorType>(contract.getLhs().getType()).getRank();
    int64_t nb = int64_t(d.lhsBatch.size()), nm = lhsRank - nb - int64_t(d.lhsContract.size());
    int64_t n = 1;
    for (size_t i = size_t(nb + nm); i < layout->shape.size(); ++i)
      n *= layout->shape[i];
    if (!resultLd(*layout, nb, nm, n))
      continue;
    writes_.insert(t);
    targets_[contract] = Target{t, *layout};
  }

  // Read folds: every other transpose read by contractions alone, kept
  // while each of them reads it in place (dropping one can only turn
  // another reader's operand back into a row-major buffer).
  SmallVector<std::pair<Operation *, SmallVector<OpOperand *>>> candidates;
  for (Operation &op : body.without_terminator()) {
    auto t = dyn_cast<mlir::ein::TransposeOp>(op);
    SmallVector<OpOperand *> readers;
    if (!t || !standalone(t) || writes_.contains(t) ||
        !contractReaders(t.getResult(), standalone, readers) || readers.empty())
      continue;
    reads_.insert(t);
    candidates.push_back({t, std::move(readers)});
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (auto &[t, readers] : candidates) {
      if (!reads_.contains(t))
        continue;
      for (OpOperand *use : readers) {
        auto contract = cast<mlir::ein::ContractOp>(use->getOwner());
        std::optional<StridedLayout> layouts[2];
        bool ok = f32Gemm(contract), through[2] = {false, false};
        for (int i = 0; i < 2; ++i) {
          Value operand = contract->getOperand(i);
          auto source = trace(operand, through[i]);
          if (through[i] && !source)
            ok = false;
          layouts[i] = source ? source->layout : rowMajorLayout(shapeOf(operand));
        }
        if (ok) {
          ContractPlan plan = planContract(*layouts[0], *layouts[1], dims(contract));
          ok = (!through[0] || plan.a.view) && (!through[1] || plan.b.view);
        }
        if (ok)
          continue;
        SmallVector<Operation *> drop;
        for (int i = 0; i < 2; ++i)
          if (through[i])
            foldsUnder(contract->getOperand(i), reads_, drop);
        for (Operation *d : drop)
          reads_.erase(d);
        changed = true;
      }
    }
  }
}

std::optional<LayoutFolds::Source> LayoutFolds::trace(Value v, bool &throughFold) const {
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto t = dyn_cast<mlir::ein::TransposeOp>(def); t && reads_.contains(def)) {
    bool inner = false;
    auto in = trace(t.getInput(), inner);
    if (inner && !in) {
      throughFold = true;
      return std::nullopt;
    }
    Source s = in ? *in : Source{def, 0, rowMajorLayout(shapeOf(t.getInput()))};
    s.layout = permuteLayout(s.layout, Dims(t.getPermutation().begin(), t.getPermutation().end()));
    throughFold = true;
    return s;
  }
  if (!isa<mlir::ein::ReshapeOp, mlir::ein::SliceOp>(def))
    return std::nullopt;
  bool inner = false;
  auto in = trace(def->getOperand(0), inner);
  if (!inner)
    return std::nullopt;
  throughFold = true;
  if (!in)
    return std::nullopt;
  if (auto slice = dyn_cast<mlir::ein::SliceOp>(def)) {
    in->offset += slice.getOffset() * in->layout.strides[0];
    in->layout.shape[0] = shapeOf(v)[0];
    return in;
  }
  auto layout = reshapeLayout(in->layout, shapeOf(v));
  if (!layout)
    return std::nullopt;
  in->layout = *layout;
  return in;
}

std::optional<LayoutFolds::Source> LayoutFolds::sourceOf(Value operand) const {
  bool through = false;
  return trace(operand, through);
}

std::optional<LayoutFolds::Target> LayoutFolds::targetOf(mlir::ein::ContractOp contract) const {
  auto it = targets_.find(contract);
  if (it == targets_.end())
    return std::nullopt;
  return it->second;
}

} // namespace ein::codegen
