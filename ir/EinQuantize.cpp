//===- EinQuantize.cpp - ein.quantize: verifier, cost and gradient --------===//
//
// Fake quantisation to scaled fp8 (the semantics are in ir/EinOps.td; the
// formats and the kernel in runtime/core/Fp8.h, runtime/core/Fp8Quantize.h). Its
// FLOPs (also in docs/ir.md): 4 per element when it quantises (the group's
// |x| maximum, the division by the scale, the rounding, the multiplication
// back), 0 when `format` is none (the result is the input).
//
//===----------------------------------------------------------------------===//

#include "ir/EinOps.h"

using namespace mlir;
using namespace mlir::ein;

LogicalResult QuantizeOp::verify() {
  Fp8Format grad = getGradFormat().value_or(Fp8Format::none);
  if (getFormat() == Fp8Format::none && grad == Fp8Format::none)
    return emitOpError("quantizes neither the value nor its gradient (format and grad are "
                       "both none): use the input itself");
  int64_t block = static_cast<int64_t>(getBlock()), axis = static_cast<int64_t>(getAxis());
  int64_t rank = getInput().getType().getRank();
  if (block < 0)
    return emitOpError("block must be 0 (one scale per tensor) or a block size > 0, got ") << block;
  if (block > 0 && rank == 0)
    return emitOpError("block scaling needs a tensor of rank >= 1 (use block 0 for a scalar)");
  if (block > 0 && (axis < 0 || axis >= rank))
    return emitOpError("axis ") << axis << " is out of range for a tensor of rank " << rank;
  if (block == 0 && axis != 0)
    return emitOpError("block 0 is one scale per tensor and takes axis 0, got axis ") << axis;
  return success();
}

int64_t QuantizeOp::getFlops() {
  if (getFormat() == Fp8Format::none)
    return 0;
  return 4 * cast<ShapedType>(getType()).getNumElements();
}

// quantize → straight through: the result's gradient, quantised with
// grad_format (same block and axis) when one is given.
LogicalResult QuantizeOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                        SmallVectorImpl<Value> &grads) {
  grads.assign(1, Value());
  if (!need[0])
    return success();
  Fp8Format grad = getGradFormat().value_or(Fp8Format::none);
  if (grad == Fp8Format::none) {
    grads[0] = dY;
    return success();
  }
  grads[0] = b.create<QuantizeOp>(getLoc(), dY, grad, Fp8Format::none,
                                  static_cast<int64_t>(getBlock()), static_cast<int64_t>(getAxis()),
                                  GradientOpInterface::getAxisNames(getInput()));
  return success();
}
