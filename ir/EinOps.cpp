//===- EinOps.cpp - Verifiers and folders of the ein ops ------------------===//
//
// Shapes in messages are printed as `[4, 8]`; element types as `f32`.
// Static shapes and `axes` are checked first, by the EinTensorOp trait.
//
//===----------------------------------------------------------------------===//

#include "ir/EinOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace mlir;
using namespace mlir::ein;

#include "ir/EinEnums.cpp.inc"

/// Formats a shape as `[4, 8]`.
static std::string fmt(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// Emits the common "result shape does not match" error unless equal.
static LogicalResult verifyResultShape(Operation *op, ArrayRef<int64_t> expected) {
  ArrayRef<int64_t> actual = shapeOf(op->getResult(0));
  if (actual == expected)
    return success();
  return op->emitOpError("result shape ")
         << fmt(actual) << " does not match the expected shape " << fmt(expected);
}

/// Checks that `dims` is strictly increasing with entries in [0, rank).
static LogicalResult verifySortedDims(Operation *op, StringRef name, ArrayRef<int64_t> dims,
                                      int64_t rank, StringRef rankName) {
  for (int64_t d : dims)
    if (d < 0 || d >= rank)
      return op->emitOpError() << name << " index " << d << " is out of range for " << rankName
                               << " " << rank;
  for (size_t i = 1; i < dims.size(); ++i)
    if (dims[i] <= dims[i - 1])
      return op->emitOpError() << name << " must be strictly increasing";
  return success();
}

//===----------------------------------------------------------------------===//
// ContractOp
//===----------------------------------------------------------------------===//

LogicalResult ContractOp::verify() {
  Type lhsElt = getLhs().getType().getElementType();
  Type rhsElt = getRhs().getType().getElementType();
  if (lhsElt != rhsElt)
    return emitOpError("operands must have the same element type, got ")
           << lhsElt << " and " << rhsElt;
  if (getLhsBatch().size() != getRhsBatch().size())
    return emitOpError("lhs_batch and rhs_batch must have the same length, "
                       "got ")
           << getLhsBatch().size() << " and " << getRhsBatch().size();
  if (getLhsContract().size() != getRhsContract().size())
    return emitOpError("lhs_contract and rhs_contract must have the same "
                       "length, got ")
           << getLhsContract().size() << " and " << getRhsContract().size();

  ArrayRef<int64_t> lhsShape = shapeOf(getLhs());
  ArrayRef<int64_t> rhsShape = shapeOf(getRhs());

  // Marks the batch and contracting dims of one operand; returns the mask.
  auto markDims = [&](StringRef side, ArrayRef<int64_t> shape, ArrayRef<int64_t> batch,
                      ArrayRef<int64_t> contract, SmallVectorImpl<bool> &used) -> LogicalResult {
    int64_t rank = shape.size();
    used.assign(rank, false);
    for (auto [listName, list] :
         {std::make_pair("_batch", batch), std::make_pair("_contract", contract)})
      for (int64_t d : list) {
        if (d < 0 || d >= rank)
          return emitOpError() << side << listName << " index " << d << " is out of range for "
                               << side << " of rank " << rank;
        if (used[d])
          return emitOpError() << "dimension " << d << " of " << side
                               << " appears more than once in " << side << "_batch and " << side
                               << "_contract";
        used[d] = true;
      }
    return success();
  };
  SmallVector<bool> lhsUsed, rhsUsed;
  if (failed(markDims("lhs", lhsShape, getLhsBatch(), getLhsContract(), lhsUsed)) ||
      failed(markDims("rhs", rhsShape, getRhsBatch(), getRhsContract(), rhsUsed)))
    return failure();

  auto checkPairs = [&](StringRef kind, ArrayRef<int64_t> lhsDims,
                        ArrayRef<int64_t> rhsDims) -> LogicalResult {
    for (auto [l, r] : llvm::zip_equal(lhsDims, rhsDims))
      if (lhsShape[l] != rhsShape[r])
        return emitOpError() << kind << " dimensions lhs[" << l << "] and rhs[" << r
                             << "] have different sizes: " << lhsShape[l] << " vs " << rhsShape[r];
    return success();
  };
  if (failed(checkPairs("batch", getLhsBatch(), getRhsBatch())) ||
      failed(checkPairs("contracting", getLhsContract(), getRhsContract())))
    return failure();

  SmallVector<int64_t> expected;
  for (int64_t d : getLhsBatch())
    expected.push_back(lhsShape[d]);
  for (auto [d, size] : llvm::enumerate(lhsShape))
    if (!lhsUsed[d])
      expected.push_back(size);
  for (auto [d, size] : llvm::enumerate(rhsShape))
    if (!rhsUsed[d])
      expected.push_back(size);
  return verifyResultShape(*this, expected);
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> perm = getPermutation();
  ArrayRef<int64_t> inShape = shapeOf(getInput());
  int64_t rank = inShape.size();
  if (static_cast<int64_t>(perm.size()) != rank)
    return emitOpError("permutation has ")
           << perm.size() << " entries but the input has rank " << rank;
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank)
      return emitOpError("permutation index ") << p << " is out of range for rank " << rank;
    if (seen[p])
      return emitOpError("permutation index ") << p << " appears more than once";
    seen[p] = true;
    expected.push_back(inShape[p]);
  }
  return verifyResultShape(*this, expected);
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = getInput().getType();
  RankedTensorType out = getResult().getType();
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("input shape ")
           << fmt(in.getShape()) << " (" << in.getNumElements() << " elements) and result shape "
           << fmt(out.getShape()) << " (" << out.getNumElements()
           << " elements) have different element counts";
  return success();
}

//===----------------------------------------------------------------------===//
// BroadcastOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  ArrayRef<int64_t> dims = getDimensions();
  ArrayRef<int64_t> inShape = shapeOf(getInput());
  ArrayRef<int64_t> outShape = shapeOf(getResult());
  if (dims.size() != inShape.size())
    return emitOpError("dimensions has ")
           << dims.size() << " entries but the input has rank " << inShape.size();
  if (failed(verifySortedDims(*this, "dimensions", dims, outShape.size(), "result rank")))
    return failure();
  for (auto [i, d] : llvm::enumerate(dims))
    if (inShape[i] != 1 && inShape[i] != outShape[d])
      return emitOpError("input dimension ")
             << i << " has size " << inShape[i] << " but result dimension " << d << " has size "
             << outShape[d] << " (input shape " << fmt(inShape) << ", result shape "
             << fmt(outShape) << "); sizes must be equal or the input size 1";
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  ArrayRef<int64_t> dims = getDimensions();
  ArrayRef<int64_t> inShape = shapeOf(getInput());
  if (failed(verifySortedDims(*this, "dimensions", dims, inShape.size(), "input rank")))
    return failure();
  SmallVector<int64_t> expected;
  for (auto [d, size] : llvm::enumerate(inShape))
    if (!llvm::is_contained(dims, static_cast<int64_t>(d)))
      expected.push_back(size);
  return verifyResultShape(*this, expected);
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// IotaOp
//===----------------------------------------------------------------------===//

LogicalResult IotaOp::verify() {
  int64_t dim = getDimension();
  int64_t rank = getResult().getType().getRank();
  if (dim < 0 || dim >= rank)
    return emitOpError("dimension ") << dim << " is out of range for result rank " << rank;
  return success();
}

//===----------------------------------------------------------------------===//
// SliceOp / ConcatOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  ArrayRef<int64_t> out = shapeOf(getResult());
  if (in.empty())
    return emitOpError("input must have rank at least 1");
  if (out.size() != in.size() || out.drop_front() != in.drop_front())
    return emitOpError("result shape ")
           << fmt(out) << " must be the input shape " << fmt(in)
           << " with another dimension 0 (a slice keeps the other dimensions)";
  int64_t offset = getOffset();
  if (offset < 0 || offset + out.front() > in.front())
    return emitOpError("rows [") << offset << ", " << offset + out.front()
                                 << ") are outside dimension 0 of size " << in.front();
  return success();
}

LogicalResult ConcatOp::verify() {
  ArrayRef<int64_t> out = shapeOf(getResult());
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  if (out.empty())
    return emitOpError("result must have rank at least 1");
  int64_t rows = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    ArrayRef<int64_t> shape = shapeOf(input);
    Type element = cast<RankedTensorType>(input.getType()).getElementType();
    if (element != getResult().getType().getElementType())
      return emitOpError("input ") << i << " has element type " << element << " but the result has "
                                   << getResult().getType().getElementType();
    if (shape.size() != out.size() || shape.drop_front() != out.drop_front())
      return emitOpError("input ")
             << i << " has shape " << fmt(shape) << ", which is not the result shape " << fmt(out)
             << " with another dimension 0";
    rows += shape.front();
  }
  if (rows != out.front())
    return emitOpError("the inputs have ")
           << rows << " rows in all but the result's dimension 0 is " << out.front();
  return success();
}

//===----------------------------------------------------------------------===//
// GatherOp / ScatterAddOp
//===----------------------------------------------------------------------===//

/// indices.shape ++ table.shape[1:].
static SmallVector<int64_t> gatheredShape(ArrayRef<int64_t> indices, ArrayRef<int64_t> table) {
  SmallVector<int64_t> shape(indices);
  llvm::append_range(shape, table.drop_front());
  return shape;
}

LogicalResult GatherOp::verify() {
  ArrayRef<int64_t> table = shapeOf(getTable());
  if (table.empty())
    return emitOpError("table must have rank at least 1");
  return verifyResultShape(*this, gatheredShape(shapeOf(getIndices()), table));
}

LogicalResult ScatterAddOp::verify() {
  ArrayRef<int64_t> result = shapeOf(getResult());
  if (result.empty())
    return emitOpError("result must have rank at least 1");
  ArrayRef<int64_t> updates = shapeOf(getUpdates());
  SmallVector<int64_t> expected = gatheredShape(shapeOf(getIndices()), result);
  if (updates != ArrayRef<int64_t>(expected))
    return emitOpError("updates shape ")
           << fmt(updates) << " does not match the expected shape " << fmt(expected);
  return success();
}

#define GET_OP_CLASSES
#include "ir/EinOps.cpp.inc"

//===----------------------------------------------------------------------===//
// StopGradientOp
//===----------------------------------------------------------------------===//

void mlir::ein::eraseStopGradients(Operation *root) {
  root->walk([](StopGradientOp op) {
    op.getResult().replaceAllUsesWith(op.getInput());
    op->erase();
  });
}

//===----------------------------------------------------------------------===//
// DropoutOp
//===----------------------------------------------------------------------===//

LogicalResult DropoutOp::verify() {
  double p = getP().convertToDouble();
  if (!(p >= 0 && p < 1))
    return emitOpError("p must be in [0, 1), got ") << p;
  if (getSiteAttr().getInt() < 0)
    return emitOpError("site must be >= 0, got ") << getSiteAttr().getInt();
  return success();
}

void mlir::ein::eraseDropouts(Operation *root) {
  root->walk([](DropoutOp op) {
    op.getResult().replaceAllUsesWith(op.getInput());
    op->erase();
  });
}
