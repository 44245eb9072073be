//===- SoftmaxGradient.cpp - The softmax's gradient from its output --------===//
//
// matchSoftmax / buildSoftmaxGradient (passes/SoftmaxGradient.h), called by
// ein-autodiff for every ein.div. docs/autodiff.md, "Composite rules".
//
//===----------------------------------------------------------------------===//
#include "passes/SoftmaxGradient.h"

#include "ir/EinInterfaces.h"
#include "ir/EinOps.h"

namespace mlir::ein {

namespace {

bool onlyReadBy(Value v, Operation *reader) {
  return llvm::all_of(v.getUsers(), [&](Operation *u) { return u == reader; });
}

/// Whether `b` broadcasts a value of the kept dims back over `dims`: its
/// input dims are exactly `kept`, in order.
bool restores(BroadcastOp b, ArrayRef<int64_t> kept) {
  return b && llvm::equal(b.getDimensions(), kept);
}

} // namespace

std::optional<SoftmaxMatch> matchSoftmax(Operation *op) {
  auto div = dyn_cast<DivOp>(op);
  if (!div)
    return std::nullopt;
  auto exp = div.getLhs().getDefiningOp<ExpOp>();
  auto denominator = div.getRhs().getDefiningOp<BroadcastOp>();
  if (!exp || !denominator || !onlyReadBy(denominator.getResult(), div))
    return std::nullopt;
  // The sum, possibly widened before and rounded after.
  Value sumValue = denominator.getInput();
  auto rounded = sumValue.getDefiningOp<CastOp>();
  if (rounded) {
    if (!onlyReadBy(sumValue, denominator))
      return std::nullopt;
    sumValue = rounded.getInput();
  }
  auto sum = sumValue.getDefiningOp<ReduceOp>();
  if (!sum || sum.getKind() != ReduceKind::sum ||
      !onlyReadBy(sumValue, rounded ? rounded : denominator.getOperation()))
    return std::nullopt;
  Value summed = sum.getInput();
  Operation *sumReader = sum;
  if (auto widened = summed.getDefiningOp<CastOp>()) {
    if (!onlyReadBy(summed, sum))
      return std::nullopt;
    sumReader = widened;
    summed = widened.getInput();
  }
  if (summed != exp.getResult())
    return std::nullopt;
  for (Operation *user : exp->getUsers())
    if (user != div && user != sumReader)
      return std::nullopt;

  SoftmaxMatch m;
  m.output = div.getResult();
  m.dims.assign(sum.getDimensions().begin(), sum.getDimensions().end());
  for (int64_t d = 0; d < div.getType().getRank(); ++d)
    if (!llvm::is_contained(m.dims, d))
      m.kept.push_back(d);
  if (!restores(denominator, m.kept))
    return std::nullopt;
  m.input = exp.getInput();
  // A shift constant along the dims (the max) drops out.
  if (auto shifted = exp.getInput().getDefiningOp<SubOp>())
    if (onlyReadBy(shifted.getResult(), exp))
      if (auto shift = shifted.getRhs().getDefiningOp<BroadcastOp>(); restores(shift, m.kept))
        m.input = shifted.getLhs();
  return m;
}

Value buildSoftmaxGradient(OpBuilder &b, Location loc, const SoftmaxMatch &softmax, Value dp) {
  Value p = softmax.output;
  auto type = cast<RankedTensorType>(p.getType());
  ArrayAttr names = GradientOpInterface::getAxisNames(p);
  ArrayAttr rowNames;
  if (names) {
    SmallVector<Attribute> kept;
    for (int64_t d : softmax.kept)
      kept.push_back(names[d]);
    rowNames = b.getArrayAttr(kept);
  }
  Value product = b.create<MulOp>(loc, type, dp, p, names);
  // Σ dp·p over the normalised dims, in f32 for a narrow float.
  Type element = type.getElementType();
  Type wideElement = cast<FloatType>(element).getWidth() < 32 ? b.getF32Type() : element;
  if (wideElement != element)
    product = b.create<CastOp>(loc, type.clone(wideElement), product, names);
  SmallVector<int64_t> rowShape;
  for (int64_t d : softmax.kept)
    rowShape.push_back(type.getDimSize(d));
  Value rows = b.create<ReduceOp>(loc, RankedTensorType::get(rowShape, wideElement), product,
                                  ReduceKind::sum, softmax.dims, rowNames);
  if (wideElement != element)
    rows = b.create<CastOp>(loc, RankedTensorType::get(rowShape, element), rows, rowNames);
  Value back = b.create<BroadcastOp>(loc, type, rows, softmax.kept, names);
  Value centred = b.create<SubOp>(loc, type, dp, back, names);
  return b.create<MulOp>(loc, type, p, centred, names);
}

} // namespace mlir::ein
