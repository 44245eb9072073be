//===- EinDialect.cpp - The ein dialect -----------------------------------===//

#include "ir/EinDialect.h"

#include "ir/EinOps.h"

using namespace mlir;
using namespace mlir::ein;

#include "ir/EinDialect.cpp.inc"

void EinDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/EinOps.cpp.inc"
      >();
}

Operation *EinDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                           Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements, /*axes=*/nullptr);
}
