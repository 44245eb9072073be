//===- Broadcast.cpp - Elementwise operators, broadcasting by axis name ---===//
#include "dsl/ElaboratorImpl.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace mlir;

namespace ein::dsl {

std::optional<Tensor> Elaborator::broadcastTo(const Tensor &x, const Axes &target, SourceLoc loc,
                                              llvm::StringRef spelling) {
  // Match each of x's axes to the target axis of the same name, in order of
  // occurrence (so [d, d] works as expected).
  llvm::SmallVector<int64_t> position;
  std::vector<bool> used(target.size(), false);
  for (const Axis &a : x.axes) {
    int64_t found = -1;
    for (size_t j = 0; j < target.size(); ++j)
      if (!used[j] && target[j].name == a.name) {
        found = j;
        break;
      }
    if (found < 0) {
      diags.error(loc, "operands of '" + spelling + "' do not broadcast: " + formatTensor(x) +
                           " has axis '" + a.name + "', which " + formatAxes(target) +
                           " lacks (broadcasting is by axis name: one operand's "
                           "axes must be a subset of the other's)");
      return std::nullopt;
    }
    if (target[found].size != a.size) {
      diags.error(loc, "operands of '" + spelling + "' disagree on axis '" + a.name +
                           "': " + formatTensor(x) + " and " + formatAxes(target));
      return std::nullopt;
    }
    used[found] = true;
    position.push_back(found);
  }
  // Transpose x so its axes come in the target's order, then broadcast.
  llvm::SmallVector<int64_t> order(position.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::sort(order, [&](int64_t l, int64_t r) { return position[l] < position[r]; });
  Tensor sorted = emit.transpose(x, order);
  llvm::SmallVector<int64_t> dims(position);
  llvm::sort(dims);
  return emit.broadcast(sorted, target, dims);
}

std::optional<std::pair<Tensor, Tensor>> Elaborator::broadcastByName(llvm::StringRef spelling,
                                                                     SourceLoc loc,
                                                                     const Tensor &lhs,
                                                                     const Tensor &rhs) {
  if (lhs.elementType() != rhs.elementType()) {
    diags.error(loc, "operands of '" + spelling + "' have different element types: " +
                         formatTensor(lhs) + " and " + formatTensor(rhs));
    return std::nullopt;
  }
  bool rhsIsBigger = rhs.rank() > lhs.rank();
  const Tensor &big = rhsIsBigger ? rhs : lhs;
  const Tensor &small = rhsIsBigger ? lhs : rhs;
  auto grown = broadcastTo(small, big.axes, loc, spelling);
  if (!grown) {
    diags.note(loc, "the operands are " + formatTensor(lhs) + " and " + formatTensor(rhs));
    return std::nullopt;
  }
  if (rhsIsBigger)
    return std::make_pair(*grown, big);
  return std::make_pair(big, *grown);
}

/// The predicate of a comparison operator; std::nullopt for arithmetic.
static std::optional<mlir::ein::CmpPredicate> comparisonPredicate(llvm::StringRef spelling) {
  using P = mlir::ein::CmpPredicate;
  return llvm::StringSwitch<std::optional<P>>(spelling)
      .Case("<", P::lt)
      .Case("<=", P::le)
      .Case(">", P::gt)
      .Case(">=", P::ge)
      .Case("==", P::eq)
      .Case("!=", P::ne)
      .Default(std::nullopt);
}

std::optional<Value> Elaborator::binaryOp(llvm::StringRef spelling, SourceLoc loc, const Value &lhs,
                                          const Value &rhs) {
  std::optional<mlir::ein::CmpPredicate> comparison = comparisonPredicate(spelling);
  if (comparison && !lhs.isTensor() && !rhs.isTensor()) {
    diags.error(loc, "'" + spelling +
                         "' compares tensors (its result is an i1 mask); both "
                         "operands here are numbers");
    return std::nullopt;
  }
  if (!lhs.isTensor() && !rhs.isTensor()) {
    double a = lhs.number, b = rhs.number, r = 0;
    bool integer = lhs.isInteger && rhs.isInteger;
    if (spelling == "+")
      r = a + b;
    else if (spelling == "-")
      r = a - b;
    else if (spelling == "*")
      r = a * b;
    else if (spelling == "/") {
      if (b == 0) {
        diags.error(loc, "division by zero in a constant expression");
        return std::nullopt;
      }
      r = a / b;
      integer = integer && std::fmod(a, b) == 0;
    } else if (spelling == "**")
      r = std::pow(a, b);
    else if (spelling == "max")
      r = std::max(a, b);
    else if (spelling == "min")
      r = std::min(a, b);
    if (!std::isfinite(r)) {
      diags.error(loc, "constant expression is not finite");
      return std::nullopt;
    }
    return Value::ofNumber(r, integer);
  }
  emit.setLoc(mlirLoc(loc));
  auto asTensor = [&](const Value &v, const Value &other) -> std::optional<Tensor> {
    if (v.isTensor())
      return v.tensor;
    if (auto ft = dyn_cast<FloatType>(other.tensor.elementType())) {
      llvm::APFloat f(v.number);
      bool lost = false;
      f.convert(ft.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
      if (f.isInfinity()) {
        diags.error(loc,
                    "the constant " + formatNumber(v.number) + " overflows " +
                        formatTensor(other.tensor).substr(0, formatTensor(other.tensor).find('[')));
        return std::nullopt;
      }
    }
    return emit.constant(v.number, other.tensor.elementType(), other.tensor.axes);
  };
  for (const Value *v : {&lhs, &rhs}) {
    if (!v->isTensor())
      continue;
    Type t = v->tensor.elementType();
    if (comparison ? !isa<FloatType>(t) && !t.isInteger(32) : !isa<FloatType>(t)) {
      diags.error(loc, "operands of '" + spelling + "' must be " +
                           (comparison ? "float or i32" : "float") + " tensors, got " +
                           formatTensor(v->tensor));
      return std::nullopt;
    }
  }
  auto l = asTensor(lhs, rhs);
  auto r = l ? asTensor(rhs, lhs) : std::nullopt;
  if (!l || !r)
    return std::nullopt;
  auto pair = broadcastByName(spelling, loc, *l, *r);
  if (!pair)
    return std::nullopt;
  emit.setLoc(mlirLoc(loc));
  auto &[a, b] = *pair;
  if (comparison)
    return Value::ofTensor(emit.cmp(*comparison, a, b));
  if (spelling == "+")
    return Value::ofTensor(emit.binary<mlir::ein::AddOp>(a, b));
  if (spelling == "-")
    return Value::ofTensor(emit.binary<mlir::ein::SubOp>(a, b));
  if (spelling == "*")
    return Value::ofTensor(emit.binary<mlir::ein::MulOp>(a, b));
  if (spelling == "/")
    return Value::ofTensor(emit.binary<mlir::ein::DivOp>(a, b));
  if (spelling == "**")
    return Value::ofTensor(emit.binary<mlir::ein::PowOp>(a, b));
  if (spelling == "max")
    return Value::ofTensor(emit.binary<mlir::ein::MaxOp>(a, b));
  if (spelling == "min")
    return Value::ofTensor(emit.binary<mlir::ein::MinOp>(a, b));
  diags.error(loc, "unknown operator '" + spelling + "'");
  return std::nullopt;
}

bool Elaborator::checkAxisName(llvm::StringRef patternName, SourceLoc loc, const Axis &operandAxis,
                               const Tensor &operand, unsigned operandIndex) {
  auto declared = dims.lookup(patternName);
  if (!declared)
    return true; // a local name: sizes are checked by the caller
  std::string which = operandIndex == 0 ? "the operand" : "operand " + std::to_string(operandIndex);
  if (operandAxis.name != patternName && dims.isDeclared(operandAxis.name)) {
    diags.error(loc, "axis '" + patternName + "' does not match " + which + "'s axis '" +
                         operandAxis.name + "' at this position: " + which + " is " +
                         formatTensor(operand));
    return false;
  }
  if (operandAxis.size != *declared) {
    diags.error(loc, "axis '" + patternName + "' is " + std::to_string(*declared) + " but " +
                         which + "'s axis '" + operandAxis.name + "' is " +
                         std::to_string(operandAxis.size) + ": " + which + " is " +
                         formatTensor(operand));
    return false;
  }
  return true;
}

} // namespace ein::dsl
