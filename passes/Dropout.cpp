//===- Dropout.cpp - ein.dropout's mask in @train_step --------------------===//
//
// The mask comes from ein.stochastic_round, whose counter-based hash every
// backend already computes bit for bit (runtime/core/FloatFormats.h), so
// the mask is one piece of code everywhere. Rounding v = p · 2^-24 (exact in
// f32) to f16 stochastically with bits b: v is below f16's smallest
// subnormal 2^-24, so the gap is 2^-24, v / gap = p, and the result is 2^-24
// when u = (b >> 8) · 2^-24 < p, else 0 (stochasticRoundF16). Then
//   factor = (2^-24 − r) · (2^24 / (1 − p))
// is 1 / (1 − p) (rounded to f32) where u ≥ p and 0 elsewhere, exactly: the
// difference is 2^-24 or 0 and the power of two scales exactly.
//
//===----------------------------------------------------------------------===//
#include "passes/Dropout.h"
#include "ir/EinOps.h"
#include "passes/Optimizers.h"

#include "mlir/IR/Builders.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::ein;

namespace {

/// An odd 32-bit constant as the i32 of the same bits.
int32_t bitsI32(uint32_t v) { return static_cast<int32_t>(v); }

} // namespace

bool mlir::ein::hasDropout(Operation *root) {
  bool found = false;
  root->walk([&](DropoutOp) {
    found = true;
    return WalkResult::interrupt();
  });
  return found;
}

void mlir::ein::expandDropouts(Block &body, Value step, Value seed,
                               SmallVectorImpl<Value> &results) {
  SmallVector<DropoutOp> dropouts;
  for (Operation &op : body)
    if (auto d = dyn_cast<DropoutOp>(op))
      dropouts.push_back(d);
  if (dropouts.empty())
    return;

  Value runKey; // the run's part of the key: (seed · φ + t) · C1, wrapping
  for (DropoutOp d : dropouts) {
    Operation *before = d->getPrevNode();
    OpBuilder b(d);
    train::Emitter e(b, d.getLoc());
    ArrayAttr none = e.noAxes(), axes = d.getAxesAttr();
    if (!runKey) // before the first dropout, the forward's first
      runKey = e.mul(e.add(e.mul(seed, e.constantI32(bitsI32(0x9E3779B1u)), none),
                           e.castTo(step, b.getI32Type(), none), none),
                     e.constantI32(bitsI32(0x85EBCA6Bu)), none);
    auto type = cast<RankedTensorType>(d.getType());
    auto f32Type = type.clone(b.getF32Type());
    double p = d.getP().convertToDouble();
    uint32_t siteBits = uint32_t(uint64_t(d.getSite()) * 0xC2B2AE35u);
    Value keys =
        e.broadcastTo(e.add(runKey, e.constantI32(bitsI32(siteBits)), none), type.getShape(), axes);
    Value v = e.splat(e.constant(std::ldexp(p, -24)), f32Type, axes);
    Value r = e.castTo(e.stochasticRound(v, keys, b.getF16Type(), axes), b.getF32Type(), axes);
    Value keep = e.sub(e.splat(e.constant(std::ldexp(1.0, -24)), f32Type, axes), r, axes);
    Value scale = e.splat(e.constant(std::ldexp(1.0 / (1.0 - p), 24)), f32Type, axes);
    Value factor = e.castTo(e.mul(keep, scale, axes), type.getElementType(), axes);
    Value y = e.mul(d.getInput(), factor, axes);
    // The ops made take the dropout's phase and layer.
    for (Operation *op = before ? before->getNextNode() : &body.front(); op != d.getOperation();
         op = op->getNextNode())
      for (NamedAttribute a : d->getDiscardableAttrs())
        op->setAttr(a.getName(), a.getValue());
    std::replace(results.begin(), results.end(), Value(d.getResult()), y);
    d.getResult().replaceAllUsesWith(y);
    d->erase();
  }
}
