//===- Perturb.cpp - The reference with the CPU's ulps of exp, log, tanh --===//
#include "Perturb.h"

#include "ir/EinOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>
#include <random>
#include <vector>

using namespace mlir;

namespace einc::pipelinefuzz {

OwningOpRef<ModuleOp> nudgeTranscendentals(ModuleOp module, UlpNudge how, uint64_t seed) {
  OwningOpRef<ModuleOp> copy = module.clone();
  std::mt19937_64 rng(seed);
  const float ulp = std::ldexp(1.0f, -23);
  std::vector<Operation *> ops;
  copy->walk([&](Operation *op) {
    if (isa<ein::ExpOp, ein::LogOp, ein::TanhOp, ein::PowOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    Value y = op->getResult(0);
    auto type = dyn_cast<RankedTensorType>(y.getType());
    if (!type || !type.getElementType().isF32() || !type.hasStaticShape())
      continue;
    std::vector<float> factors(size_t(type.getNumElements()));
    for (float &f : factors)
      f = 1 + ulp * (how == UlpNudge::Up     ? 1.0f
                     : how == UlpNudge::Down ? -1.0f
                                             : (rng() & 1 ? 1.0f : -1.0f));
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    auto axes = op->getAttrOfType<ArrayAttr>("axes");
    Value c = b.create<ein::ConstantOp>(
        op->getLoc(), type, DenseElementsAttr::get(type, llvm::ArrayRef(factors)), axes);
    auto mul = b.create<ein::MulOp>(op->getLoc(), type, y, c, axes);
    y.replaceAllUsesExcept(mul.getResult(), mul);
  }
  return copy;
}

} // namespace einc::pipelinefuzz
