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

bool isZeroSplat(Value v) {
  if (auto broadcast = v.getDefiningOp<BroadcastOp>())
    v = broadcast.getInput();
  auto constant = v.getDefiningOp<ConstantOp>();
  auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
  if (!dense || !dense.isSplat())
    return false;
  if (isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().isZero();
  return dense.getSplatValue<APInt>().isZero();
}

namespace {
/// A concat's non-zero inputs: first row, rows, value.
struct Part {
  int64_t first, rows;
  Value value;
};

SmallVector<Part> nonZeroParts(ConcatOp op) {
  SmallVector<Part> parts;
  int64_t row = 0;
  for (Value input : op.getInputs()) {
    int64_t rows = cast<RankedTensorType>(input.getType()).getDimSize(0);
    if (!isZeroSplat(input))
      parts.push_back({row, rows, input});
    row += rows;
  }
  return parts;
}

} // namespace

/// One concat of `x`'s and `y`'s non-zero inputs when they cover disjoint
/// rows (zeros in the rows neither covers); null otherwise.
static Value mergeConcats(OpBuilder &b, Location loc, ConcatOp x, ConcatOp y, ArrayAttr axes) {
  if (!x || !y || x == y)
    return nullptr;
  SmallVector<Part> parts = nonZeroParts(x);
  llvm::append_range(parts, nonZeroParts(y));
  llvm::sort(parts, [](const Part &p, const Part &q) { return p.first < q.first; });
  for (size_t i = 1; i < parts.size(); ++i)
    if (parts[i - 1].first + parts[i - 1].rows > parts[i].first)
      return nullptr;
  auto type = x.getResult().getType();
  auto zeros = [&](int64_t rows) {
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = rows;
    return buildSplat(b, loc, type.clone(shape), 0.0, axes);
  };
  SmallVector<Value> inputs;
  int64_t row = 0;
  for (const Part &p : parts) {
    if (p.first > row)
      inputs.push_back(zeros(p.first - row));
    inputs.push_back(p.value);
    row = p.first + p.rows;
  }
  if (row < type.getDimSize(0))
    inputs.push_back(zeros(type.getDimSize(0) - row));
  return b.create<ConcatOp>(loc, type, inputs, axes).getResult();
}

Value buildGradientSum(OpBuilder &b, Location loc, Value a, Value c, ArrayAttr axes) {
  auto concat = c.getDefiningOp<ConcatOp>();
  if (Value merged = mergeConcats(b, loc, a.getDefiningOp<ConcatOp>(), concat, axes))
    return merged;
  // `other + concat` so far (a value also used otherwise): the new concat
  // joins the old one.
  if (auto add = a.getDefiningOp<AddOp>();
      add && concat && add->use_empty() && add.getLhs() != add.getRhs())
    for (auto [mine, other] :
         {std::pair(add.getRhs(), add.getLhs()), std::pair(add.getLhs(), add.getRhs())}) {
      auto old = mine.getDefiningOp<ConcatOp>();
      if (!old || !old->hasOneUse())
        continue;
      if (Value merged = mergeConcats(b, loc, old, concat, axes))
        return b.create<AddOp>(loc, a.getType(), other, merged, axes).getResult();
    }
  return b.create<AddOp>(loc, a.getType(), a, c, axes).getResult();
}

} // namespace mlir::ein
