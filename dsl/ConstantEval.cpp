//===- ConstantEval.cpp - Compile-time numbers: dims, initialisers --------===//
#include "dsl/ElaboratorImpl.h"

#include <cmath>

using namespace mlir;

namespace ein::dsl {

std::optional<double> Elaborator::constantNumber(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Number:
    return e.number;
  case ExprKind::Name: {
    auto v = lookup(e.text, e.loc);
    if (!v)
      return std::nullopt;
    if (v->isTensor()) {
      diags.error(e.loc, "'" + e.text + "' is a tensor; a constant is needed here");
      return std::nullopt;
    }
    return v->number;
  }
  case ExprKind::Unary: {
    auto v = e.args.empty() ? std::nullopt : constantNumber(*e.args[0]);
    if (!v)
      return std::nullopt;
    return -*v;
  }
  case ExprKind::Binary: {
    if (e.args.size() != 2)
      return std::nullopt;
    auto a = constantNumber(*e.args[0]);
    auto b = a ? constantNumber(*e.args[1]) : std::nullopt;
    if (!b)
      return std::nullopt;
    auto r = binaryOp(e.op == '^' ? "**" : std::string(1, e.op), e.loc, Value::ofNumber(*a, false),
                      Value::ofNumber(*b, false));
    if (!r)
      return std::nullopt;
    return r->number;
  }
  case ExprKind::Call: {
    if (e.args.size() == 1 && e.kwargs.empty() &&
        (e.callee == "sqrt" || e.callee == "exp" || e.callee == "log")) {
      auto v = constantNumber(*e.args[0]);
      if (!v)
        return std::nullopt;
      if ((e.callee == "sqrt" && *v < 0) || (e.callee == "log" && *v <= 0)) {
        diags.error(e.loc, e.callee + "() of " + formatNumber(*v) + " in a constant expression");
        return std::nullopt;
      }
      double r = e.callee == "sqrt"  ? std::sqrt(*v)
                 : e.callee == "exp" ? std::exp(*v)
                                     : std::log(*v);
      if (!std::isfinite(r)) {
        diags.error(e.loc, "constant expression is not finite");
        return std::nullopt;
      }
      return r;
    }
    diags.error(e.loc, "a constant expression may only call sqrt, exp or log");
    return std::nullopt;
  }
  case ExprKind::String:
  case ExprKind::Index:
  case ExprKind::List:
    break;
  }
  diags.error(e.loc, "expected a constant number");
  return std::nullopt;
}

std::optional<int64_t> Elaborator::constantInteger(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Number:
    if (!e.isInteger) {
      diags.error(e.loc, "expected an integer, found '" + e.text + "'");
      return std::nullopt;
    }
    return static_cast<int64_t>(e.number);
  case ExprKind::Name: {
    auto size = dims.lookup(e.text);
    if (!size && dimFailed(e.text))
      return std::nullopt; // reported where it was defined
    if (!size) {
      diags.error(e.loc, "unknown dim '" + e.text + "'");
      return std::nullopt;
    }
    return size;
  }
  case ExprKind::Unary: {
    auto v = e.args.empty() ? std::nullopt : constantInteger(*e.args[0]);
    if (!v)
      return std::nullopt;
    return -*v;
  }
  case ExprKind::Binary: {
    if (e.args.size() != 2)
      return std::nullopt;
    auto a = constantInteger(*e.args[0]);
    auto b = a ? constantInteger(*e.args[1]) : std::nullopt;
    if (!b)
      return std::nullopt;
    int64_t r = 0;
    bool overflow = false;
    switch (e.op) {
    case '+':
      overflow = __builtin_add_overflow(*a, *b, &r);
      break;
    case '-':
      overflow = __builtin_sub_overflow(*a, *b, &r);
      break;
    case '*':
      overflow = __builtin_mul_overflow(*a, *b, &r);
      break;
    case '/':
      if (*b == 0) {
        diags.error(e.loc, "division by zero");
        return std::nullopt;
      }
      if (*a % *b != 0) {
        diags.error(e.loc, std::to_string(*a) + " / " + std::to_string(*b) +
                               " is not exact: dims divide exactly");
        return std::nullopt;
      }
      if (*a == INT64_MIN && *b == -1)
        overflow = true;
      else
        r = *a / *b;
      break;
    case '^': {
      if (*b < 0) {
        diags.error(e.loc, "negative exponent in an integer expression");
        return std::nullopt;
      }
      r = 1;
      if (*a == 0 || *a == 1)
        r = *b == 0 ? 1 : *a;
      else if (*a == -1)
        r = *b % 2 ? -1 : 1;
      else // |a| >= 2 overflows within 64 steps
        for (int64_t i = 0; i < *b && !overflow; ++i)
          overflow = __builtin_mul_overflow(r, *a, &r);
      break;
    }
    default:
      break;
    }
    if (overflow) {
      diags.error(e.loc, "integer overflow in a dim expression");
      return std::nullopt;
    }
    return r;
  }
  case ExprKind::String:
  case ExprKind::Call:
  case ExprKind::Index:
  case ExprKind::List:
    break;
  }
  diags.error(e.loc, "expected an integer expression of numbers and dims");
  return std::nullopt;
}

} // namespace ein::dsl
