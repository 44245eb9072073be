//===- Functions.cpp - User functions: shape-checked, inlined calls -------===//
#include "dsl/ElaboratorImpl.h"

using namespace mlir;

namespace ein::dsl {

namespace {
constexpr unsigned kMaxCallDepth = 64;
constexpr unsigned kMaxCallNotes = 4;
} // namespace

bool Elaborator::bindFnParam(const FnParam &p, const Tensor &arg, const Expr &argExpr,
                             std::optional<Axes> &ellipsis, const std::string &fnName,
                             bool isResult) {
  auto fail = [&](const llvm::Twine &why) {
    std::string what = isResult ? "the result of '" + fnName + "'"
                                : "argument '" + p.name + "' of '" + fnName + "'";
    diags.error(
        argExpr.loc, what + " is " + formatTensor(arg) + ", which does not match [" + [&] {
          std::string s;
          for (size_t i = 0; i < p.shape.size(); ++i) {
            const AxisSpec &a = p.shape[i];
            if (i)
              s += ", ";
            if (a.kind == AxisSpec::Kind::Ellipsis)
              s += "...";
            else if (a.kind == AxisSpec::Kind::Number)
              s += std::to_string(a.number);
            else if (a.kind == AxisSpec::Kind::Name)
              s += a.name;
            else {
              s += "(";
              for (size_t j = 0; j < a.members.size(); ++j)
                s += (j ? " " : "") + (a.members[j].kind == AxisSpec::Kind::Name
                                           ? a.members[j].name
                                           : std::to_string(a.members[j].number));
              s += ")";
            }
          }
          return s;
        }() + "]: " + why);
    return false;
  };
  if (!p.dtype.empty()) {
    auto t = elementType(p.dtype, p.loc);
    if (!t)
      return false;
    if (*t != arg.elementType())
      return fail("the element type must be " + p.dtype);
  }
  size_t ellipsisAt = p.shape.size();
  for (size_t i = 0; i < p.shape.size(); ++i)
    if (p.shape[i].kind == AxisSpec::Kind::Ellipsis)
      ellipsisAt = i;
  size_t fixed = p.shape.size() - (ellipsisAt < p.shape.size() ? 1 : 0);
  size_t rank = arg.axes.size();
  if (ellipsisAt == p.shape.size() ? rank != fixed : rank < fixed)
    return fail("it has " + countOf(rank, "axis", "axes"));
  size_t bound = rank - fixed;
  // The named axes first, then what '...' stands for: a mismatch in a named
  // axis is the more telling message.
  std::optional<Axes> part;
  size_t a = 0;
  for (size_t i = 0; i < p.shape.size(); ++i) {
    const AxisSpec &spec = p.shape[i];
    if (spec.kind == AxisSpec::Kind::Ellipsis) {
      part = Axes(arg.axes.begin() + a, arg.axes.begin() + a + bound);
      a += bound;
      continue;
    }
    const Axis &axis = arg.axes[a++];
    if (spec.kind == AxisSpec::Kind::Name) {
      auto size = dims.lookup(spec.name);
      if (!size) {
        diags.error(spec.loc, "unknown dim '" + spec.name + "' in shape");
        return false;
      }
      if (axis.name != spec.name && dims.isDeclared(axis.name))
        return fail("axis '" + axis.name + "' is not '" + spec.name + "'");
      if (axis.size != *size)
        return fail("axis '" + axis.name + "' has size " + std::to_string(axis.size) + ", not " +
                    std::to_string(*size));
      continue;
    }
    auto expected = declaredShape(llvm::ArrayRef<AxisSpec>(spec), false);
    if (!expected)
      return false;
    if (expected->front().size != axis.size)
      return fail("axis '" + axis.name + "' has size " + std::to_string(axis.size) + ", not " +
                  std::to_string(expected->front().size));
  }
  if (part) {
    if (ellipsis && *ellipsis != *part)
      return fail("'...' stands for " + formatAxes(*part) + " here but for " +
                  formatAxes(*ellipsis) +
                  (isResult ? " in the arguments" : " in an earlier argument"));
    ellipsis = part;
  }
  return true;
}

std::optional<Value> Elaborator::callUser(const Expr &e, const Stmt &fn) {
  if (!e.kwargs.empty()) {
    diags.error(e.kwargs.front().loc, "function '" + fn.name + "' takes no keyword arguments");
    return std::nullopt;
  }
  if (e.args.size() != fn.params.size()) {
    diags.error(e.calleeLoc, "function '" + fn.name + "' takes " +
                                 countOf(fn.params.size(), "argument", "arguments") + ", got " +
                                 std::to_string(e.args.size()));
    return std::nullopt;
  }
  if (callDepth_ >= kMaxCallDepth) {
    diags.error(e.calleeLoc, "calls nest more than " + std::to_string(kMaxCallDepth) +
                                 " deep (is '" + fn.name + "' recursive?)");
    return std::nullopt;
  }
  std::map<std::string, Value> scope;
  std::optional<Axes> ellipsis;
  for (size_t i = 0; i < e.args.size(); ++i) {
    auto arg = tensorOf(*e.args[i], "argument '" + fn.params[i].name + "'");
    if (!arg)
      return std::nullopt;
    if (!bindFnParam(fn.params[i], *arg, *e.args[i], ellipsis, fn.name))
      return std::nullopt;
    scope[fn.params[i].name] = Value::ofTensor(*arg);
  }

  unsigned before = diags.errorCount();
  scopes_.push_back(std::move(scope));
  ++callDepth_;
  std::optional<Value> result;
  const Stmt *returnStmt = nullptr;
  for (const StmtPtr &s : fn.body) {
    if (diags.errorCount() != before)
      break;
    if (returnStmt) {
      diags.error(s->loc, "this statement follows 'return' and is never run");
      break;
    }
    if (s->kind == StmtKind::Return) {
      returnStmt = s.get();
      if (s->value)
        result = expr(*s->value);
      continue;
    }
    if (s->kind == StmtKind::Assign)
      assign(*s);
    else
      diags.error(s->loc, "only assignments and 'return' are allowed in a function body");
  }
  --callDepth_;
  scopes_.pop_back();
  if (diags.errorCount() != before) {
    if (callDepth_ < kMaxCallNotes) // a recursion would print one per level
      diags.note(e.calleeLoc, "in this call to '" + fn.name + "'");
    return std::nullopt;
  }
  if (!returnStmt) {
    diags.error(fn.nameLoc, "function '" + fn.name + "' has no 'return'");
    return std::nullopt;
  }
  if (!result)
    return std::nullopt;
  if (!result->isTensor())
    return result;
  // The declared result shape, with '...' as bound by the arguments.
  FnParam declared{"result", fn.nameLoc, "", fn.resultShape};
  const Expr &at = *returnStmt->value;
  if (!bindFnParam(declared, result->tensor, at, ellipsis, fn.name, /*isResult=*/true)) {
    diags.note(e.calleeLoc, "in this call to '" + fn.name + "'");
    return std::nullopt;
  }
  return result;
}

} // namespace ein::dsl
