//===- Declarations.cpp - dim shapes, inputs, params and initialisers -----===//
#include "dsl/ElaboratorImpl.h"

#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace ein::dsl {

std::optional<Type> Elaborator::elementType(llvm::StringRef name, SourceLoc loc) {
  Type t = llvm::StringSwitch<Type>(name)
               .Case("f32", builder_.getF32Type())
               .Case("bf16", builder_.getBF16Type())
               .Case("f16", builder_.getF16Type())
               .Case("i32", builder_.getI32Type())
               .Case("i1", builder_.getI1Type())
               .Default(Type());
  if (!t) {
    diags.error(loc,
                "unknown element type '" + name + "'; expected one of f32, bf16, f16, i32, i1");
    return std::nullopt;
  }
  return t;
}

std::optional<Axes> Elaborator::declaredShape(llvm::ArrayRef<AxisSpec> specs, bool allowEllipsis) {
  Axes axes;
  bool ok = true;
  auto sizeOf = [&](const AxisSpec &a) -> std::optional<int64_t> {
    if (a.kind == AxisSpec::Kind::Number) {
      if (a.number <= 0) {
        diags.error(a.loc, "axis size must be positive, got " + std::to_string(a.number));
        return std::nullopt;
      }
      return a.number;
    }
    auto size = dims.lookup(a.name);
    if (!size)
      diags.error(a.loc, "unknown dim '" + a.name + "' in shape; declare it with 'dim " + a.name +
                             " = ...'");
    return size;
  };
  for (const AxisSpec &spec : specs) {
    switch (spec.kind) {
    case AxisSpec::Kind::Ellipsis:
      if (!allowEllipsis) {
        diags.error(spec.loc, "'...' is only allowed in function parameter shapes");
        ok = false;
      }
      break;
    case AxisSpec::Kind::Name:
    case AxisSpec::Kind::Number: {
      auto size = sizeOf(spec);
      if (!size) {
        ok = false;
        break;
      }
      axes.push_back(
          {spec.kind == AxisSpec::Kind::Name ? spec.name : std::to_string(spec.number), *size});
      break;
    }
    case AxisSpec::Kind::Group: {
      std::string name = "(";
      int64_t size = 1;
      for (const AxisSpec &m : spec.members) {
        auto s = sizeOf(m);
        if (!s) {
          ok = false;
          continue;
        }
        auto prod = checkedMul(size, *s);
        if (!prod || *prod > kMaxElements) {
          diags.error(spec.loc, "axis size overflows");
          return std::nullopt;
        }
        size = *prod;
        if (name.size() > 1)
          name += " ";
        name += m.kind == AxisSpec::Kind::Name ? m.name : std::to_string(m.number);
      }
      axes.push_back({name + ")", size});
      break;
    }
    }
  }
  if (!ok)
    return std::nullopt;
  auto count = elementCount(axes);
  if (!count || *count > kMaxElements) {
    diags.error(specs.empty() ? SourceLoc{} : specs.front().loc,
                "tensor " + formatAxes(axes) + " has too many elements");
    return std::nullopt;
  }
  return axes;
}

void Elaborator::declareInput(const Stmt &s) {
  if (argumentNames_.count(s.name) || lookup(s.name, {}).has_value()) {
    diags.error(s.nameLoc, "'" + s.name + "' is already defined");
    return;
  }
  auto type = elementType(s.dtype.empty() ? "f32" : s.dtype, s.dtypeLoc);
  auto axes = declaredShape(s.shape, /*allowEllipsis=*/false);
  if (!type || !axes) {
    scopes_.front()[s.name] = Value::poison();
    return;
  }
  unsigned position = inputs_.size();
  BlockArgument arg =
      body_->insertArgument(position, emit.tensorType(*axes, *type), mlirLoc(s.nameLoc));
  inputs_.push_back({s.name, false, false, *axes, {}});
  argumentNames_[s.name] = s.nameLoc;
  scopes_.front()[s.name] = Value::ofTensor({arg, *axes});
}

void Elaborator::declareParam(const Stmt &s) {
  std::string fullName;
  for (const std::string &p : loopPrefix_)
    fullName += p + ".";
  fullName += s.name;
  const char *what = s.buffer ? "buffer" : "param";
  if (dims.isDeclared(s.name)) {
    diags.error(s.nameLoc, "'" + s.name + "' is a dim and cannot name a " + what);
    return;
  }
  if (argumentNames_.count(fullName) || (loopPrefix_.empty() && lookup(s.name, {}).has_value())) {
    diags.error(s.nameLoc, "'" + fullName + "' is already defined");
    return;
  }
  auto type = elementType(s.dtype.empty() ? "f32" : s.dtype, s.dtypeLoc);
  if (type && !isa<FloatType>(*type)) {
    diags.error(s.dtypeLoc,
                std::string(what) + " '" + s.name + "' must have a float type, not " + s.dtype);
    return;
  }
  auto axes = declaredShape(s.shape, /*allowEllipsis=*/false);
  auto init = type && axes ? initializer(s) : std::nullopt;
  if (!init) {
    scopes_.back()[s.name] = Value::poison();
    return;
  }
  BlockArgument arg = body_->addArgument(emit.tensorType(*axes, *type), mlirLoc(s.nameLoc));
  params_.push_back({fullName, true, s.buffer, *axes, *init});
  argumentNames_[fullName] = s.nameLoc;
  if (s.buffer)
    bufferNames_.insert(fullName);
  scopes_.back()[s.name] = Value::ofTensor({arg, *axes});
}

std::optional<DictionaryAttr> Elaborator::initializer(const Stmt &s) {
  llvm::SmallVector<NamedAttribute> fields;
  auto field = [&](llvm::StringRef k, Attribute v) {
    fields.push_back(builder_.getNamedAttr(k, v));
  };
  if (!s.value) { // the default, as GPT-2 initialises its weights
    field("kind", builder_.getStringAttr("normal"));
    field("std", builder_.getF64FloatAttr(0.02));
    return builder_.getDictionaryAttr(fields);
  }
  const Expr &e = *s.value;
  if (e.kind == ExprKind::Name && (e.text == "zeros" || e.text == "ones")) {
    field("kind", builder_.getStringAttr(e.text));
    return builder_.getDictionaryAttr(fields);
  }
  if (e.kind != ExprKind::Call || (e.callee != "normal" && e.callee != "uniform")) {
    diags.error(e.loc, "unknown initialiser; expected normal(std=, clip=), "
                       "uniform(low, high), zeros or ones");
    return std::nullopt;
  }
  field("kind", builder_.getStringAttr(e.callee));
  // Positional and keyword arguments, by name.
  llvm::SmallVector<llvm::StringRef> names =
      e.callee == "normal" ? llvm::SmallVector<llvm::StringRef>{"std", "clip", "mean"}
                           : llvm::SmallVector<llvm::StringRef>{"low", "high"};
  std::map<std::string, double> values;
  if (e.args.size() > names.size()) {
    diags.error(e.args[names.size()]->loc, "'" + e.callee + "' takes at most " +
                                               std::to_string(names.size()) + " arguments (" +
                                               llvm::join(names, ", ") + ")");
    return std::nullopt;
  }
  for (size_t i = 0; i < e.args.size(); ++i) {
    auto v = constantNumber(*e.args[i]);
    if (!v)
      return std::nullopt;
    values[names[i].str()] = *v;
  }
  for (const KeywordArg &kw : e.kwargs) {
    if (!llvm::is_contained(names, kw.name)) {
      diags.error(kw.loc, "'" + e.callee + "' has no argument '" + kw.name + "'; it takes " +
                              llvm::join(names, ", "));
      return std::nullopt;
    }
    if (values.count(kw.name)) {
      diags.error(kw.loc, "argument '" + kw.name + "' is given twice");
      return std::nullopt;
    }
    auto v = constantNumber(*kw.value);
    if (!v)
      return std::nullopt;
    values[kw.name] = *v;
  }
  if (e.callee == "normal") {
    if (!values.count("std")) {
      diags.error(e.loc, "normal() needs std=");
      return std::nullopt;
    }
    if (!(values["std"] > 0)) {
      diags.error(e.loc, "normal(): std must be positive");
      return std::nullopt;
    }
    if (values.count("clip") && !(values["clip"] > 0)) {
      diags.error(e.loc, "normal(): clip must be positive (in standard deviations)");
      return std::nullopt;
    }
  } else {
    if (values.size() != 2) {
      diags.error(e.loc, "uniform() needs both bounds: uniform(low, high)");
      return std::nullopt;
    }
    if (!(values["low"] < values["high"])) {
      diags.error(e.loc, "uniform(): low must be below high");
      return std::nullopt;
    }
  }
  for (auto &[k, v] : values)
    field(k, builder_.getF64FloatAttr(v));
  return builder_.getDictionaryAttr(fields);
}

} // namespace ein::dsl
