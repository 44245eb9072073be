//===- CpuFusedKernel.cpp - A fusion group described as one CPU kernel ----===//
//
// describeFusedKernel: the members of a fusion group (passes/
// FuseElementwise.h) become one KernelSpec of op "ein.fused": its operands
// are the values the group reads from outside (a broadcast whose input is a
// scalar or a leading / trailing block of the result is read in place), its
// body one node per member (and one per iota it computes from the element's
// index instead of reading it), its results the members used outside the
// group.
// The loop nest is generated in CpuKernelGen.cpp.
//
//===----------------------------------------------------------------------===//
#include "codegen/CpuGroupKernel.h"

#include "ir/EinOps.h"
#include "passes/FuseElementwise.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace ein::codegen {

FailureOr<FusedKernel> describeFusedKernel(ArrayRef<Operation *> members) {
  if (members.empty())
    return failure();
  bool readsIndex = llvm::any_of(members[0]->getOperands(), [](Value v) {
    return mlir::ein::classifyIndexRead(v).has_value();
  });
  if (members.size() < 2 && !readsIndex)
    return members[0]->emitError("internal error: a fused kernel needs two or more ops (or one "
                                 "computing an iota)");
  GroupKernelBuilder group("ein.fused", members);
  auto shape = cast<RankedTensorType>(members[0]->getResult(0).getType()).getShape();
  mlir::ein::FusionSplit split;
  split.elements = cast<RankedTensorType>(members[0]->getResult(0).getType()).getNumElements();

  for (Operation *op : members) {
    if (!mlir::ein::isFusible(op) ||
        cast<RankedTensorType>(op->getResult(0).getType()).getShape() != shape)
      return op->emitError("internal error: this op cannot join its fusion group");
    // The op alone: element kinds, predicate and type checks.
    auto own = describeKernel(op);
    if (failed(own))
      return failure();
    FusedNode node = GroupKernelBuilder::nodeFor(*own);
    for (OpOperand &use : op->getOpOperands()) {
      if (group.readMember(use.get(), node) || group.readIndex(use, *own, /*perRow=*/false, node))
        continue;
      mlir::ein::BroadcastReadInfo read = mlir::ein::classifyBroadcastRead(use.get());
      bool through = read.read != mlir::ein::BroadcastRead::Full && split.admit(read);
      Value source =
          through ? use.get().getDefiningOp<mlir::ein::BroadcastOp>().getInput() : use.get();
      group.readOperand(use, source, through ? accessOf(read.read) : Access::Full, through, *own,
                        node);
    }
    group.addMember(op, std::move(node));
  }

  // Results: members read after the group (by later ops or the return).
  for (Operation *op : members)
    if (group.readOutside(op))
      group.addOutput(op);
  FusedKernel &fk = group.fk;
  if (fk.outputs.empty())
    return std::move(fk); // dead code: nothing to compute (the lowering emits no step)
  fk.spec.outer = split.outer;
  fk.spec.inner = split.inner;
  // The signature: element count, split, operands, body, outputs.
  group.writeKey("ein.fused<" + std::to_string(split.elements) + ";" + std::to_string(split.outer) +
                 "x" + std::to_string(split.inner) + ">");
  return std::move(fk);
}

} // namespace ein::codegen
