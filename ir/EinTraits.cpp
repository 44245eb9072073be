//===- EinTraits.cpp - Verification shared by all ein ops -----------------===//

#include "ir/EinTraits.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

static LogicalResult verifyStatic(Operation *op, Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (shaped && !shaped.hasStaticShape())
    return op->emitOpError("dynamic dimensions are not supported, got ") << type;
  return success();
}

LogicalResult mlir::ein::detail::verifyEinTensorOp(Operation *op) {
  for (Type type : op->getOperandTypes())
    if (failed(verifyStatic(op, type)))
      return failure();
  for (Type type : op->getResultTypes())
    if (failed(verifyStatic(op, type)))
      return failure();

  auto axes = op->getAttrOfType<ArrayAttr>("axes");
  if (!axes || op->getNumResults() != 1)
    return success();
  int64_t rank = cast<ShapedType>(op->getResult(0).getType()).getRank();
  if (static_cast<int64_t>(axes.size()) != rank)
    return op->emitOpError("axes has ") << axes.size() << " names but the result has rank " << rank;
  return success();
}
