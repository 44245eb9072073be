//===- Einops.cpp - rearrange, reduce and repeat ---------------------------===//
//
// einops semantics, lowered onto primitive ops:
//   rearrange: reshape (decompose) → transpose → reshape (compose)
//   reduce:    reshape → reduce → transpose → reshape   (mean = sum × 1/n)
//   repeat:    reshape → transpose → broadcast → reshape
// and PatternCall, which einsum (Einsum.cpp) shares.
//
//===----------------------------------------------------------------------===//
#include "dsl/PatternCall.h"
#include "dsl/PatternTypos.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <set>

using namespace mlir;

namespace ein::dsl {
namespace einops {

std::string ellipsisKey(size_t i) { return "..." + std::to_string(i); }

namespace {

llvm::StringRef modeName(Mode m) {
  switch (m) {
  case Mode::Rearrange:
    return "rearrange";
  case Mode::Reduce:
    return "reduce";
  case Mode::Repeat:
    return "repeat";
  }
  return "";
}

Axes axesOf(llvm::ArrayRef<Elem> elems) {
  Axes out;
  for (const Elem &e : elems)
    out.push_back(e.axis);
  return out;
}

} // namespace

bool PatternCall::parse(const Expr &arg) {
  if (arg.kind != ExprKind::String) {
    E.diags.error(arg.loc, "'" + fn + "' needs its pattern as a string here, e.g. \"a b -> b a\"");
    return false;
  }
  text = &arg;
  std::string error;
  unsigned offset = 0;
  pattern = parsePattern(arg.text, error, offset);
  if (!pattern) {
    E.diags.error(at(offset), error);
    return false;
  }
  return true;
}

bool PatternCall::readSizes() {
  std::vector<std::string> names;
  for (const PatternSide &s : pattern->inputs)
    collectPatternNames(s, names);
  collectPatternNames(pattern->output, names);
  for (const KeywordArg &kw : call.kwargs) {
    if (!llvm::is_contained(names, kw.name)) {
      E.diags.error(kw.loc, "axis '" + kw.name + "' is not used in the pattern");
      return false;
    }
    auto v = E.constantInteger(*kw.value);
    if (!v)
      return false;
    if (*v <= 0 || *v > kMaxElements) {
      E.diags.error(kw.value->loc,
                    "axis size " + kw.name + "=" + std::to_string(*v) + " must be positive");
      return false;
    }
    auto declared = E.dims.lookup(kw.name);
    if (declared && *declared != *v) {
      E.diags.error(kw.loc, "axis '" + kw.name + "' is a dim of size " + std::to_string(*declared) +
                                ", not " + std::to_string(*v));
      return false;
    }
    known[kw.name] = *v;
  }
  return true;
}

std::optional<int64_t> PatternCall::sizeOf(llvm::StringRef name) const {
  auto it = known.find(name.str());
  if (it != known.end())
    return it->second;
  return E.dims.lookup(name);
}

std::optional<std::vector<Elem>> PatternCall::bindLeft(const PatternSide &side, const Tensor &x,
                                                       unsigned operandIndex) {
  size_t fixed = 0;
  bool hasEllipsis = false;
  for (const PatternAxis &a : side.axes) {
    if (a.kind == PatternAxis::Kind::Ellipsis)
      hasEllipsis = true;
    else
      ++fixed;
  }
  size_t rank = x.axes.size();
  std::string which = operandIndex != 0     ? "operand " + std::to_string(operandIndex)
                      : operandName.empty() ? std::string("the operand")
                                            : operandName;
  if (hasEllipsis ? rank < fixed : rank != fixed) {
    E.diags.error(at(side.offset), "the pattern names " + countOf(fixed, "axis", "axes") +
                                       (hasEllipsis ? " or more" : "") + " but " + which + " has " +
                                       std::to_string(rank) + ": " + formatTensor(x));
    return std::nullopt;
  }
  size_t ellipsisCount = rank - fixed;
  std::vector<Elem> elems;
  size_t d = 0;
  for (const PatternAxis &a : side.axes) {
    switch (a.kind) {
    case PatternAxis::Kind::Ellipsis:
      for (size_t i = 0; i < ellipsisCount; ++i)
        elems.push_back({ellipsisKey(i), x.axes[d++]});
      break;
    case PatternAxis::Kind::Unit:
      if (x.axes[d].size != 1) {
        E.diags.error(at(a.offset), "'1' needs an axis of size 1, but " + which + "'s axis '" +
                                        x.axes[d].name + "' is " + std::to_string(x.axes[d].size) +
                                        ": " + formatTensor(x));
        return std::nullopt;
      }
      ++d;
      break;
    case PatternAxis::Kind::Number: {
      if (!anonymousLeftAllowed) {
        E.diags.error(at(a.offset), "only '1' may stand for an anonymous axis on the left side");
        return std::nullopt;
      }
      const Axis &axis = x.axes[d++];
      if (axis.size != a.number) {
        E.diags.error(at(a.offset), "'" + std::to_string(a.number) + "' needs an axis of size " +
                                        std::to_string(a.number) + ", but " + which + "'s axis '" +
                                        axis.name + "' is " + std::to_string(axis.size));
        return std::nullopt;
      }
      elems.push_back(
          {"#left" + std::to_string(anonymousLeft++), {std::to_string(a.number), a.number}});
      break;
    }
    case PatternAxis::Kind::Name: {
      const Axis &axis = x.axes[d++];
      if (!checkNotMisspeltDim(E, a.name, at(a.offset), NameRole::Reads, &x, &axis, operandIndex) ||
          !E.checkAxisName(a.name, at(a.offset), axis, x, operandIndex))
        return std::nullopt;
      auto size = sizeOf(a.name);
      if (size && *size != axis.size) {
        E.diags.error(at(a.offset), "axis '" + a.name + "' is " + std::to_string(*size) +
                                        " elsewhere but " + which + "'s axis '" + axis.name +
                                        "' is " + std::to_string(axis.size) + ": " +
                                        formatTensor(x));
        return std::nullopt;
      }
      known[a.name] = axis.size;
      elems.push_back({a.name, {a.name, axis.size}});
      break;
    }
    case PatternAxis::Kind::Group: {
      const Axis &axis = x.axes[d++];
      int64_t product = 1;
      const PatternAxis *unknown = nullptr;
      for (const PatternAxis &m : a.members) {
        if (m.kind == PatternAxis::Kind::Ellipsis) {
          E.diags.error(at(m.offset), "'...' inside parentheses is only allowed on the right side");
          return std::nullopt;
        }
        if (m.kind == PatternAxis::Kind::Number) {
          if (!anonymousLeftAllowed) {
            E.diags.error(at(m.offset),
                          "only '1' may stand for an anonymous axis on the left side");
            return std::nullopt;
          }
          product = checkedMul(product, m.number).value_or(kMaxElements + 1);
          continue;
        }
        if (m.kind != PatternAxis::Kind::Name)
          continue;
        if (!checkNotMisspeltDim(E, m.name, at(m.offset), NameRole::Splits, &x, &axis,
                                 operandIndex))
          return std::nullopt;
        if (auto s = sizeOf(m.name)) {
          product = checkedMul(product, *s).value_or(kMaxElements + 1);
        } else if (unknown) {
          E.diags.error(at(a.offset), "cannot split axis '" + axis.name + "' of size " +
                                          std::to_string(axis.size) + ": both '" + unknown->name +
                                          "' and '" + m.name +
                                          "' have unknown sizes; give one as a keyword "
                                          "argument, e.g. " +
                                          m.name + "=...");
          return std::nullopt;
        } else {
          unknown = &m;
        }
      }
      if (unknown) {
        if (axis.size % product != 0) {
          E.diags.error(at(a.offset), "cannot split axis '" + axis.name + "' of size " +
                                          std::to_string(axis.size) + " into " +
                                          std::to_string(product) + " × '" + unknown->name +
                                          "': not divisible");
          return std::nullopt;
        }
        known[unknown->name] = axis.size / product;
      } else if (product != axis.size) {
        E.diags.error(at(a.offset), "cannot split axis '" + axis.name + "' of size " +
                                        std::to_string(axis.size) + " into a group of size " +
                                        std::to_string(product) + ": " + formatTensor(x));
        return std::nullopt;
      }
      for (const PatternAxis &m : a.members) {
        if (m.kind == PatternAxis::Kind::Name)
          elems.push_back({m.name, {m.name, *sizeOf(m.name)}});
        else if (m.kind == PatternAxis::Kind::Number)
          elems.push_back(
              {"#left" + std::to_string(anonymousLeft++), {std::to_string(m.number), m.number}});
      }
      break;
    }
    }
  }
  return elems;
}

std::optional<PatternCall::Right> PatternCall::planRight(const PatternSide &side,
                                                         const std::vector<Elem> &left, Mode mode) {
  std::map<std::string, Axis> available;
  std::vector<Elem> ellipsis;
  bool leftHasEllipsis = false;
  for (const Elem &e : left) {
    available[e.key] = e.axis;
    if (llvm::StringRef(e.key).starts_with("...")) {
      ellipsis.push_back(e);
    }
  }
  for (const PatternAxis &a : pattern->inputs.front().axes)
    leftHasEllipsis |= a.kind == PatternAxis::Kind::Ellipsis;

  Right right;
  bool rightHasEllipsis = false;
  unsigned anonymous = 0;
  // Appends one elementary axis named on the right; returns its axis.
  auto element = [&](const PatternAxis &a) -> std::optional<std::vector<Elem>> {
    switch (a.kind) {
    case PatternAxis::Kind::Ellipsis:
      rightHasEllipsis = true;
      if (!leftHasEllipsis) {
        E.diags.error(at(a.offset), "'...' appears on the right side only");
        return std::nullopt;
      }
      return ellipsis;
    case PatternAxis::Kind::Unit:
      return std::vector<Elem>{};
    case PatternAxis::Kind::Number: {
      if (mode != Mode::Repeat) {
        E.diags.error(at(a.offset), "only '1' may stand for an anonymous axis in " +
                                        modeName(mode) + "; numbers name new axes in repeat");
        return std::nullopt;
      }
      std::string n = std::to_string(a.number);
      return std::vector<Elem>{{"#" + std::to_string(anonymous++), {n, a.number}}};
    }
    case PatternAxis::Kind::Name: {
      auto it = available.find(a.name);
      if (it != available.end())
        return std::vector<Elem>{{a.name, it->second}};
      if (mode == Mode::Repeat) {
        auto size = sizeOf(a.name);
        if (!size) {
          E.diags.error(at(a.offset), "the size of new axis '" + a.name +
                                          "' is unknown: pass it as " + a.name + "=N");
          noteMisspeltDim(E, a.name);
          return std::nullopt;
        }
        if (!checkNotMisspeltDim(E, a.name, at(a.offset), NameRole::Creates, nullptr, nullptr, 0))
          return std::nullopt;
        return std::vector<Elem>{{a.name, {a.name, *size}}};
      }
      E.diags.error(at(a.offset), "axis '" + a.name + "' appears on the right side only" +
                                      (mode == Mode::Reduce ? "; reduce cannot create axes" : ""));
      noteMisspeltDim(E, a.name);
      return std::nullopt;
    }
    case PatternAxis::Kind::Group:
      break;
    }
    return std::vector<Elem>{};
  };

  for (const PatternAxis &a : side.axes) {
    if (a.kind != PatternAxis::Kind::Group) {
      auto elems = element(a);
      if (!elems)
        return std::nullopt;
      right.elems.insert(right.elems.end(), elems->begin(), elems->end());
      if (a.kind == PatternAxis::Kind::Unit)
        right.composed.push_back({"1", 1});
      else
        for (const Elem &e : *elems)
          right.composed.push_back(e.axis);
      continue;
    }
    std::string name;
    int64_t size = 1;
    for (const PatternAxis &m : a.members) {
      auto elems = element(m);
      if (!elems)
        return std::nullopt;
      for (const Elem &e : *elems) {
        right.elems.push_back(e);
        name += (name.empty() ? "" : " ") + e.axis.name;
        size = checkedMul(size, e.axis.size).value_or(kMaxElements + 1);
      }
    }
    right.composed.push_back({"(" + name + ")", size});
  }
  if (leftHasEllipsis && !rightHasEllipsis && mode != Mode::Reduce) {
    E.diags.error(at(side.offset), "'...' appears on the left side only");
    return std::nullopt;
  }
  // Every left axis must reappear, except in reduce (where it is reduced).
  if (mode != Mode::Reduce) {
    for (const Elem &e : left) {
      bool used = llvm::any_of(right.elems, [&](const Elem &r) { return r.key == e.key; });
      if (!used) {
        E.diags.error(at(side.offset),
                      "axis '" + e.key + "' appears on the left side only" +
                          (mode == Mode::Rearrange ? "; use reduce to remove an axis" : ""));
        return std::nullopt;
      }
    }
  }
  auto count = elementCount(right.composed);
  if (!count || *count > kMaxElements) {
    E.diags.error(at(side.offset),
                  "the result " + formatAxes(right.composed) + " has too many elements");
    return std::nullopt;
  }
  return right;
}

Tensor PatternCall::lower(const Tensor &x, const std::vector<Elem> &left, const Right &right,
                          std::optional<llvm::StringRef> reduction) {
  Tensor t = E.emit.reshape(x, axesOf(left));
  std::vector<Elem> remaining;
  if (reduction) {
    llvm::SmallVector<int64_t> dims;
    int64_t count = 1;
    for (size_t i = 0; i < left.size(); ++i) {
      bool kept = llvm::any_of(right.elems, [&](const Elem &r) { return r.key == left[i].key; });
      if (kept) {
        remaining.push_back(left[i]);
      } else {
        dims.push_back(i);
        count *= left[i].axis.size;
      }
    }
    mlir::ein::ReduceKind kind = *reduction == "max"   ? mlir::ein::ReduceKind::max
                                 : *reduction == "min" ? mlir::ein::ReduceKind::min
                                                       : mlir::ein::ReduceKind::sum;
    t = E.emit.reduce(t, kind, dims);
    if (*reduction == "mean" && count != 1)
      t = E.emit.binary<mlir::ein::MulOp>(
          t, E.emit.constant(1.0 / static_cast<double>(count), t.elementType(), t.axes));
  } else {
    remaining = left;
  }
  // Transpose the kept axes into the order they take on the right.
  llvm::SmallVector<int64_t> perm, positions;
  for (size_t r = 0; r < right.elems.size(); ++r)
    for (size_t i = 0; i < remaining.size(); ++i)
      if (remaining[i].key == right.elems[r].key) {
        perm.push_back(i);
        positions.push_back(r);
      }
  t = E.emit.transpose(t, perm);
  if (positions.size() != right.elems.size())
    t = E.emit.broadcast(t, axesOf(right.elems), positions);
  return E.emit.reshape(t, right.composed);
}

} // namespace einops

using einops::Mode;
using einops::PatternCall;

namespace {

bool expectArity(Elaborator &E, const Expr &call, size_t n, llvm::StringRef usage) {
  if (call.args.size() == n)
    return true;
  E.diags.error(call.calleeLoc, "'" + call.callee + "' takes " + std::to_string(n) +
                                    " arguments (" + usage + "), got " +
                                    std::to_string(call.args.size()));
  return false;
}

/// rearrange's list operand, as einops: the members, of one element type
/// and the same axes, stacked along a new leading axis (named by its size,
/// as repeat's numbers): a reshape of each to a leading axis of 1, then one
/// ein.concat, whose gradient is a slice per member.
std::optional<Tensor> stackList(Elaborator &E, const Expr &list) {
  if (list.args.empty()) {
    E.diags.error(list.loc, "'rearrange' needs at least one tensor in the list");
    return std::nullopt;
  }
  std::vector<Tensor> members;
  for (const ExprPtr &item : list.args) {
    auto t = E.tensorOf(*item, "a list member of 'rearrange'");
    if (!t)
      return std::nullopt;
    if (!members.empty() &&
        (t->axes != members.front().axes || t->elementType() != members.front().elementType())) {
      E.diags.error(item->loc, "list member " + std::to_string(members.size() + 1) + " is " +
                                   formatTensor(*t) + " but member 1 is " +
                                   formatTensor(members.front()) +
                                   ": rearrange stacks tensors of one type and shape");
      return std::nullopt;
    }
    members.push_back(*t);
  }
  E.emit.setLoc(E.mlirLoc(list.loc));
  std::vector<Tensor> rows;
  for (const Tensor &m : members) {
    Axes one = {Axis{"1", 1}};
    one.insert(one.end(), m.axes.begin(), m.axes.end());
    rows.push_back(E.emit.reshape(m, one));
  }
  int64_t n = int64_t(rows.size());
  return n == 1 ? rows.front() : E.emit.concat(rows, Axis{std::to_string(n), n});
}

std::optional<Value> patternOp(Elaborator &E, const Expr &call, Mode mode, size_t patternArg,
                               std::optional<std::string> reduction) {
  PatternCall pc(E, call, call.callee);
  pc.anonymousLeftAllowed = mode == Mode::Reduce;
  const Expr &operand = *call.args[0];
  std::optional<Tensor> x;
  if (operand.kind == ExprKind::List && mode == Mode::Rearrange) {
    x = stackList(E, operand);
    pc.operandName = "the stacked list";
  } else {
    x = E.tensorOf(operand, "'" + call.callee + "'");
  }
  if (!x || !pc.parse(*call.args[patternArg]) || !pc.readSizes())
    return std::nullopt;
  if (pc.pattern->inputs.size() != 1) {
    E.diags.error(pc.at(pc.pattern->inputs[1].offset),
                  "'" + call.callee + "' takes one operand, but the pattern has " +
                      countOf(pc.pattern->inputs.size(), "input", "inputs"));
    return std::nullopt;
  }
  auto left = pc.bindLeft(pc.pattern->inputs.front(), *x, 0);
  if (!left)
    return std::nullopt;
  auto right = pc.planRight(pc.pattern->output, *left, mode);
  if (!right)
    return std::nullopt;
  if (reduction && *reduction == "mean" && !isa<FloatType>(x->elementType())) {
    E.diags.error(call.args[0]->loc, "mean needs a float tensor, got " + formatTensor(*x));
    return std::nullopt;
  }
  E.emit.setLoc(E.mlirLoc(call.calleeLoc));
  std::optional<llvm::StringRef> r;
  if (reduction)
    r = *reduction;
  return Value::ofTensor(pc.lower(*x, *left, *right, r));
}

} // namespace

std::optional<Value> elaborateRearrange(Elaborator &E, const Expr &call) {
  if (!expectArity(E, call, 2, "tensor, pattern"))
    return std::nullopt;
  return patternOp(E, call, Mode::Rearrange, 1, std::nullopt);
}

std::optional<Value> elaborateRepeat(Elaborator &E, const Expr &call) {
  if (!expectArity(E, call, 2, "tensor, pattern"))
    return std::nullopt;
  return patternOp(E, call, Mode::Repeat, 1, std::nullopt);
}

std::optional<Value> elaborateReduce(Elaborator &E, const Expr &call) {
  if (!expectArity(E, call, 3, "tensor, pattern, sum|mean|max|min"))
    return std::nullopt;
  const Expr &how = *call.args[2];
  std::string name = how.text;
  if ((how.kind != ExprKind::Name && how.kind != ExprKind::String) ||
      (name != "sum" && name != "mean" && name != "max" && name != "min")) {
    E.diags.error(how.loc, "unknown reduction" +
                               (how.kind == ExprKind::Name || how.kind == ExprKind::String
                                    ? " '" + name + "'"
                                    : std::string()) +
                               "; expected sum, mean, max or min");
    return std::nullopt;
  }
  return patternOp(E, call, Mode::Reduce, 1, name);
}

} // namespace ein::dsl
