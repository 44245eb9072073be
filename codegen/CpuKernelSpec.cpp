//===- CpuKernelSpec.cpp - Describing an op as a CPU kernel ---------------===//
//
// describeKernel: an op's operands, result, attributes and dedupe signature;
// operandAccess: which broadcasts a kernel reads in place. The loop nests
// are generated in CpuKernelGen.cpp.
//
//===----------------------------------------------------------------------===//
//
// Semantics follow runtime/core/ReferenceKernels.cpp, operation for operation:
// elementwise results and data movement are bit-identical to the reference
// backend's; f32 sum reductions may be reassociated (vectorised partial
// sums: equal up to rounding), bf16/f16 sums fold in order as the
// reference's, and float max / min are IEEE maximum / minimum (equal up to
// the sign of a zero). Where the reference reports a
// data-dependent error the kernel cannot report, it does something defined
// instead (documented at each place): a gather index out of range gives a
// zero row, a scatter_add index out of range adds nothing, an integer
// division by zero gives 0.
//
//===----------------------------------------------------------------------===//
#include "codegen/CpuKernelGen.h"

#include "ir/EinOps.h"
#include "passes/FuseElementwise.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <limits>

using namespace mlir;

namespace ein::codegen {

//===----------------------------------------------------------------------===//
// Describing an op
//===----------------------------------------------------------------------===//

namespace {

FailureOr<KernelTensor> tensorOf(Operation *op, Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return op->emitError("the CPU backend needs statically shaped tensors, got ") << v.getType();
  KernelTensor t;
  Type e = type.getElementType();
  if (e.isF32())
    t.elem = ElemKind::F32;
  else if (e.isBF16())
    t.elem = ElemKind::BF16;
  else if (e.isF16())
    t.elem = ElemKind::F16;
  else if (e.isInteger(32))
    t.elem = ElemKind::I32;
  else if (e.isInteger(1))
    t.elem = ElemKind::I1;
  else
    return op->emitError("the CPU backend's kernels support f32, bf16, f16, i32 and i1 "
                         "element types, got ")
           << e;
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  return t;
}

} // namespace

namespace {
/// The access an operand would have on its own (ignoring the one-per-op rule).
Access ownAccess(Operation *op, unsigned index) {
  llvm::StringRef n = op->getName().getStringRef();
  if (!isBinary(n) && !isa<mlir::ein::CmpOp, mlir::ein::SelectOp, mlir::ein::StochasticRoundOp>(op))
    return Access::Full;
  return accessOf(mlir::ein::classifyBroadcastRead(op->getOperand(index)).read);
}
} // namespace

Access accessOf(mlir::ein::BroadcastRead read) {
  switch (read) {
  case mlir::ein::BroadcastRead::Scalar:
    return Access::Scalar;
  case mlir::ein::BroadcastRead::Prefix:
    return Access::Prefix;
  case mlir::ein::BroadcastRead::Suffix:
    return Access::Suffix;
  case mlir::ein::BroadcastRead::Full:
    break;
  }
  return Access::Full;
}

Access operandAccess(Operation *op, unsigned index) {
  Access a = ownAccess(op, index);
  if (a != Access::Prefix && a != Access::Suffix)
    return a;
  for (unsigned k = 0; k < index; ++k) {
    Access earlier = ownAccess(op, k);
    if (earlier == Access::Prefix || earlier == Access::Suffix)
      return Access::Full; // one blocked operand per kernel
  }
  return a;
}

FailureOr<KernelSpec> describeKernel(Operation *op) {
  KernelSpec spec;
  spec.op = op->getName().getStringRef().str();
  llvm::StringRef name = spec.op;
  if (isa<mlir::ein::ContractOp>(op))
    return op->emitError("contractions are not kernels: the CPU backend runs "
                         "them as BLAS calls");
  if (isa<mlir::ein::ConstantOp>(op))
    return op->emitError("constants are not kernels: they stay Constant "
                         "buffers");
  if (op->getNumResults() != 1)
    return op->emitError("a kernel op must have one result");
  for (OpOperand &use : op->getOpOperands()) {
    auto t = tensorOf(op, use.get());
    if (failed(t))
      return failure();
    t->access = operandAccess(op, use.getOperandNumber());
    if (t->access != Access::Full) { // the broadcast's input is read instead
      auto b = use.get().getDefiningOp<mlir::ein::BroadcastOp>();
      auto in = tensorOf(op, b.getInput());
      if (failed(in))
        return failure();
      t->shape = in->shape;
    }
    spec.operands.push_back(*t);
  }
  auto r = tensorOf(op, op->getResult(0));
  if (failed(r))
    return failure();
  spec.result = *r;

  auto needNumeric = [&](ElemKind k) -> LogicalResult {
    if (k == ElemKind::I1)
      return op->emitError("'") << name << "' needs f32 or i32 elements";
    return success();
  };
  auto needFloat = [&](ElemKind k) -> LogicalResult {
    if (!isFloatKind(k))
      return op->emitError("'") << name << "' needs float elements";
    return success();
  };

  if (auto o = dyn_cast<mlir::ein::TransposeOp>(op)) {
    spec.dims.assign(o.getPermutation().begin(), o.getPermutation().end());
  } else if (auto o = dyn_cast<mlir::ein::BroadcastOp>(op)) {
    spec.dims.assign(o.getDimensions().begin(), o.getDimensions().end());
  } else if (auto o = dyn_cast<mlir::ein::ReduceOp>(op)) {
    spec.dims.assign(o.getDimensions().begin(), o.getDimensions().end());
    spec.kind = mlir::ein::stringifyReduceKind(o.getKind()).str();
    if (failed(needNumeric(spec.result.elem)))
      return failure();
  } else if (auto o = dyn_cast<mlir::ein::CmpOp>(op)) {
    spec.kind = mlir::ein::stringifyCmpPredicate(o.getPredicate()).str();
  } else if (auto o = dyn_cast<mlir::ein::IotaOp>(op)) {
    spec.scalar = static_cast<int64_t>(o.getDimension());
    if (failed(needNumeric(spec.result.elem)))
      return failure();
  } else if (isUnary(name)) {
    ElemKind k = spec.result.elem;
    if (name == "ein.neg" || name == "ein.abs") {
      if (failed(needNumeric(k)))
        return failure();
    } else if (failed(needFloat(k))) {
      return failure();
    }
  } else if (isBinary(name)) {
    if (failed(name == "ein.pow" ? needFloat(spec.result.elem) : needNumeric(spec.result.elem)))
      return failure();
  } else if (isa<mlir::ein::ReshapeOp, mlir::ein::SelectOp, mlir::ein::CastOp,
                 mlir::ein::StochasticRoundOp>(op)) {
  } else if (isa<mlir::ein::GatherOp>(op)) {
    if (spec.operands[0].shape.empty())
      return op->emitError("gather needs a table of rank >= 1");
  } else if (isa<mlir::ein::ScatterAddOp>(op)) {
    if (spec.result.shape.empty())
      return op->emitError("scatter_add needs a result of rank >= 1");
    if (failed(needNumeric(spec.result.elem)))
      return failure();
  } else {
    return op->emitError("the CPU backend has no kernel for '") << name << "'";
  }

  // The signature: name, attributes other than `axes` and `ein.*`, types.
  // Ops that map elements one to one (and reshape, a copy) run on flat
  // buffers, so for them only the element types and the element count
  // matter: [4, 8, 16] and [32, 16] share a kernel.
  bool flat = isUnary(name) || isBinary(name) ||
              isa<mlir::ein::CmpOp, mlir::ein::SelectOp, mlir::ein::CastOp, mlir::ein::ReshapeOp,
                  mlir::ein::StochasticRoundOp>(op);
  auto typeKey = [&](Value v) {
    std::string t;
    llvm::raw_string_ostream ts(t);
    if (flat)
      ts << "flat<" << spec.result.count() << "x"
         << cast<RankedTensorType>(v.getType()).getElementType() << ">";
    else
      ts << v.getType();
    return t;
  };
  std::string key;
  llvm::raw_string_ostream os(key);
  os << name << "{";
  for (NamedAttribute a : op->getAttrs()) {
    llvm::StringRef an = a.getName().getValue();
    if (an == "axes" || an.starts_with("ein."))
      continue;
    os << an << "=";
    a.getValue().print(os);
    os << ";";
  }
  os << "}(";
  for (OpOperand &use : op->getOpOperands()) {
    static const char *names[] = {"", "scalar:", "prefix", "suffix"};
    const KernelTensor &t = spec.operands[use.getOperandNumber()];
    os << names[int(t.access)];
    if (t.access == Access::Prefix || t.access == Access::Suffix)
      os << t.count() << ":";
    os << typeKey(use.get()) << ",";
  }
  os << ")->" << typeKey(op->getResult(0));
  os.flush();
  spec.key = std::move(key);
  return spec;
}

} // namespace ein::codegen
