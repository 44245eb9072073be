//===- EinInterfaces.cpp - Op interfaces of the ein dialect ---------------===//

#include "ir/EinInterfaces.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

int64_t ein::getTensorBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape() || !shaped.getElementType().isIntOrFloat())
    return 0;
  int64_t width = (shaped.getElementType().getIntOrFloatBitWidth() + 7) / 8;
  return shaped.getNumElements() * width;
}

int64_t ein::getTotalBytes(TypeRange types) {
  int64_t total = 0;
  for (Type type : types)
    total += getTensorBytes(type);
  return total;
}

#include "ir/EinInterfaces.cpp.inc"
