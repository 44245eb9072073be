//===- CpuGroupKernel.cpp - A group of ops described as one kernel --------===//
#include "codegen/CpuGroupKernel.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace ein::codegen {

GroupKernelBuilder::GroupKernelBuilder(llvm::StringRef op, ArrayRef<Operation *> members)
    : inGroup_(members.begin(), members.end()) {
  fk.spec.op = op.str();
}

FusedNode GroupKernelBuilder::nodeFor(const KernelSpec &own) {
  FusedNode node;
  node.op = own.op;
  node.kind = own.kind;
  node.elem = own.result.elem;
  node.operandElem = own.operands[0].elem;
  return node;
}

int32_t GroupKernelBuilder::memberNode(Value v) const {
  Operation *def = v.getDefiningOp();
  auto it = def ? nodeOf_.find(def) : nodeOf_.end();
  return it == nodeOf_.end() ? -1 : it->second;
}

bool GroupKernelBuilder::readMember(Value v, FusedNode &node) {
  int32_t k = memberNode(v);
  if (k < 0)
    return false;
  node.args.push_back(-(k + 1));
  return true;
}

bool GroupKernelBuilder::readIndex(OpOperand &use, const KernelSpec &own, bool perRow,
                                   FusedNode &node) {
  auto index = mlir::ein::classifyIndexRead(use.get());
  if (!index)
    return false;
  KernelSpec &spec = fk.spec;
  auto [it, fresh] = indexNodeOf_.try_emplace(use.get(), int32_t(spec.body.size()));
  if (fresh) {
    FusedNode n;
    n.op = "ein.iota";
    n.elem = n.operandElem = own.operands[use.getOperandNumber()].elem;
    n.stride = index->stride;
    n.size = index->size;
    n.perRow = perRow;
    spec.body.push_back(std::move(n));
  }
  node.args.push_back(-(it->second + 1));
  fk.indexReads.push_back(&use);
  return true;
}

void GroupKernelBuilder::readOperand(OpOperand &use, Value source, Access access, bool through,
                                     const KernelSpec &own, FusedNode &node) {
  KernelSpec &spec = fk.spec;
  if (through)
    fk.inPlaceReads.push_back(&use);
  auto [it, fresh] = operandOf_.try_emplace({source, int(access)}, int32_t(spec.operands.size()));
  if (fresh) {
    KernelTensor t = own.operands[use.getOperandNumber()];
    t.access = access;
    auto type = cast<RankedTensorType>(source.getType());
    t.shape.assign(type.getShape().begin(), type.getShape().end());
    spec.operands.push_back(std::move(t));
    fk.inputUses.push_back(&use);
    fk.throughBroadcast.push_back(through);
  }
  node.args.push_back(it->second);
}

void GroupKernelBuilder::addMember(Operation *op, FusedNode node) {
  nodeOf_[op] = int32_t(fk.spec.body.size());
  fk.spec.body.push_back(std::move(node));
}

bool GroupKernelBuilder::readOutside(Operation *op) const {
  return llvm::any_of(op->getUsers(), [&](Operation *u) { return !inGroup_.count(u); });
}

void GroupKernelBuilder::addOutput(Operation *op) {
  KernelSpec &spec = fk.spec;
  int32_t node = nodeOf_.lookup(op);
  KernelTensor t;
  t.elem = spec.body[node].elem;
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  if (fk.outputs.empty())
    spec.result = t;
  else
    spec.extraResults.push_back(t);
  spec.outputNodes.push_back(node);
  fk.outputs.push_back(op);
}

void GroupKernelBuilder::writeKey(const std::string &header) {
  KernelSpec &spec = fk.spec;
  llvm::raw_string_ostream os(spec.key);
  os << header << "(";
  static const char *accessNames[] = {"", "scalar:", "prefix:", "suffix:"};
  for (const KernelTensor &t : spec.operands)
    os << accessNames[int(t.access)] << t.count() << elemName(t.elem) << ",";
  os << "){";
  for (const FusedNode &n : spec.body) {
    os << (n.perRow ? "row:" : "") << n.op << "." << n.kind << ":" << elemName(n.elem)
       << elemName(n.operandElem) << "(";
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
}

} // namespace ein::codegen
