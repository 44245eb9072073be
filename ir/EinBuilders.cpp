//===- EinBuilders.cpp - Small IR-building helpers shared by passes -------===//
#include "ir/EinBuilders.h"
#include "ir/EinOps.h"

namespace mlir::ein {

Value buildSplat(OpBuilder &b, Location loc, Type type, double value, ArrayAttr axes) {
  auto tensorType = cast<RankedTensorType>(type);
  Type elt = tensorType.getElementType();
  auto scalarType = RankedTensorType::get({}, elt);
  Attribute scalar = isa<FloatType>(elt)
                         ? Attribute(b.getFloatAttr(elt, value))
                         : Attribute(b.getIntegerAttr(elt, static_cast<int64_t>(value)));
  Value c = b.create<ConstantOp>(loc, scalarType, DenseElementsAttr::get(scalarType, scalar),
                                 b.getArrayAttr({}));
  if (tensorType.getRank() == 0)
    return c;
  return b.create<BroadcastOp>(loc, type, c, ArrayRef<int64_t>{}, axes);
}

} // namespace mlir::ein
