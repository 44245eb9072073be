//===- EinDialect.h - The ein dialect ---------------------------*- C++ -*-===//

#ifndef EIN_IR_EINDIALECT_H
#define EIN_IR_EINDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ir/EinDialect.h.inc"

#endif // EIN_IR_EINDIALECT_H
