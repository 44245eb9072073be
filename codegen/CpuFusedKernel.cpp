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
#include "codegen/CpuKernelGen.h"

#include "ir/EinOps.h"
#include "passes/FuseElementwise.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace ein::codegen {

namespace {

const char *elemName(ElemKind k) {
  static const char *names[] = {"f32", "i32", "i1", "bf16", "f16"};
  return names[int(k)];
}

} // namespace

FusedNode indexNode(const mlir::ein::IndexRead &index, ElemKind elem) {
  FusedNode n;
  n.op = "ein.iota";
  n.elem = n.operandElem = elem;
  n.stride = index.stride;
  n.size = index.size;
  return n;
}

FailureOr<FusedKernel> describeFusedKernel(ArrayRef<Operation *> members) {
  if (members.empty())
    return failure();
  bool readsIndex = llvm::any_of(members[0]->getOperands(), [](Value v) {
    return mlir::ein::classifyIndexRead(v).has_value();
  });
  if (members.size() < 2 && !readsIndex)
    return members[0]->emitError("internal error: a fused kernel needs two or more ops (or one "
                                 "computing an iota)");
  FusedKernel fk;
  KernelSpec &spec = fk.spec;
  spec.op = "ein.fused";
  auto shape = cast<RankedTensorType>(members[0]->getResult(0).getType()).getShape();
  mlir::ein::FusionSplit split;
  split.elements = cast<RankedTensorType>(members[0]->getResult(0).getType()).getNumElements();

  llvm::DenseMap<Operation *, int32_t> nodeOf;
  llvm::DenseMap<std::pair<Value, int>, int32_t> operandOf;
  llvm::DenseMap<Value, int32_t> indexNodeOf; // iotas computed in the kernel
  for (Operation *op : members) {
    if (!mlir::ein::isFusible(op) ||
        cast<RankedTensorType>(op->getResult(0).getType()).getShape() != shape)
      return op->emitError("internal error: this op cannot join its fusion group");
    // The op alone: element kinds, predicate and type checks.
    auto own = describeKernel(op);
    if (failed(own))
      return failure();
    FusedNode node;
    node.op = own->op;
    node.kind = own->kind;
    node.elem = own->result.elem;
    node.operandElem = own->operands[0].elem;
    for (OpOperand &use : op->getOpOperands()) {
      Operation *def = use.get().getDefiningOp();
      if (def && nodeOf.count(def)) {
        node.args.push_back(-(nodeOf[def] + 1));
        continue;
      }
      if (auto index = mlir::ein::classifyIndexRead(use.get())) {
        auto [it, fresh] = indexNodeOf.try_emplace(use.get(), int32_t(spec.body.size()));
        if (fresh)
          spec.body.push_back(indexNode(*index, own->operands[use.getOperandNumber()].elem));
        node.args.push_back(-(it->second + 1));
        fk.indexReads.push_back(&use);
        continue;
      }
      mlir::ein::BroadcastReadInfo read = mlir::ein::classifyBroadcastRead(use.get());
      bool through = read.read != mlir::ein::BroadcastRead::Full && split.admit(read);
      Value source =
          through ? use.get().getDefiningOp<mlir::ein::BroadcastOp>().getInput() : use.get();
      Access access = through ? accessOf(read.read) : Access::Full;
      if (through)
        fk.inPlaceReads.push_back(&use);
      auto [it, fresh] =
          operandOf.try_emplace({source, int(access)}, int32_t(spec.operands.size()));
      if (fresh) {
        KernelTensor t = own->operands[use.getOperandNumber()];
        t.access = access;
        t.shape.assign(cast<RankedTensorType>(source.getType()).getShape().begin(),
                       cast<RankedTensorType>(source.getType()).getShape().end());
        spec.operands.push_back(std::move(t));
        fk.inputUses.push_back(&use);
        fk.throughBroadcast.push_back(through);
      }
      node.args.push_back(it->second);
    }
    nodeOf[op] = int32_t(spec.body.size());
    spec.body.push_back(std::move(node));
  }

  // Results: members read after the group (by later ops or the return).
  llvm::SmallPtrSet<Operation *, 16> inGroup(members.begin(), members.end());
  for (Operation *op : members) {
    bool outside = llvm::any_of(op->getUsers(), [&](Operation *u) { return !inGroup.count(u); });
    if (!outside)
      continue;
    KernelTensor t;
    t.elem = spec.body[nodeOf[op]].elem;
    t.shape.assign(shape.begin(), shape.end());
    if (fk.outputs.empty())
      spec.result = t;
    else
      spec.extraResults.push_back(t);
    spec.outputNodes.push_back(nodeOf[op]);
    fk.outputs.push_back(op);
  }
  if (fk.outputs.empty())
    return fk; // dead code: nothing to compute (the lowering emits no step)
  spec.outer = split.outer;
  spec.inner = split.inner;

  // The signature: element count, split, operands, body, outputs.
  llvm::raw_string_ostream os(spec.key);
  os << "ein.fused<" << split.elements << ";" << spec.outer << "x" << spec.inner << ">(";
  static const char *accessNames[] = {"", "scalar:", "prefix:", "suffix:"};
  for (const KernelTensor &t : spec.operands)
    os << accessNames[int(t.access)] << t.count() << elemName(t.elem) << ",";
  os << "){";
  for (const FusedNode &n : spec.body) {
    os << n.op << "." << n.kind << ":" << elemName(n.elem) << elemName(n.operandElem) << "(";
    if (n.op == "ein.iota")
      os << n.stride << "%" << n.size;
    for (int32_t a : n.args)
      os << a << ",";
    os << ");";
  }
  os << "}->(";
  for (int32_t n : spec.outputNodes)
    os << n << ",";
  os << ")";
  os.flush();
  return fk;
}

} // namespace ein::codegen
