//===- Builtins.cpp - The built-in functions, as a table ------------------===//
//
// One row per built-in: its name, how many arguments it takes, and the rule
// that elaborates it. Composites (softmax, gelu, cross_entropy, ...) decompose
// here into primitive `ein` ops, so autodiff and fusion only see primitives.
//
//===----------------------------------------------------------------------===//
#include "dsl/ElaboratorImpl.h"
#include "dsl/PatternTypos.h"

#include "runtime/base/ScalarOps.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace ein::dsl {
namespace {

using Rule = std::optional<Value> (*)(Elaborator &, const Expr &);

struct Builtin {
  const char *name;
  int arity; // -1: checked by the rule itself
  const char *usage;
  Rule rule;
};

/// A unary math function: folds on numbers, emits `OpT` on float tensors.
template <typename OpT, double (*Fold)(double)>
std::optional<Value> unaryMath(Elaborator &E, const Expr &call) {
  auto v = E.expr(*call.args[0]);
  if (!v)
    return std::nullopt;
  if (!v->isTensor()) {
    double r = Fold(v->number);
    if (!std::isfinite(r)) {
      E.diags.error(call.calleeLoc,
                    call.callee + "(" + formatNumber(v->number) + ") is not a finite number");
      return std::nullopt;
    }
    return Value::ofNumber(r, false);
  }
  if (!isa<FloatType>(v->tensor.elementType())) {
    E.diags.error(call.args[0]->loc,
                  "'" + call.callee + "' needs a float tensor, got " + formatTensor(v->tensor));
    return std::nullopt;
  }
  E.emit.setLoc(E.mlirLoc(call.calleeLoc));
  return Value::ofTensor(E.emit.unary<OpT>(v->tensor));
}

/// The unary math built-ins: runtime/base/ElementwiseOps.def's Builtin rows,
/// folding numbers with the reference kernel's expression at double.
namespace fold {
using namespace einrt::ref;
using T = double;
#define EIN_FOLD_Operator(Kind, Ref)
#define EIN_FOLD_Builtin(Kind, Ref)                                                                \
  double Kind(double x) { return Ref; }
#define EIN_UNARY_OP(Kind, name, Types, Rounding, Dsl, Ref, CudaF32, CudaI32, CpuF32, CpuI32)      \
  EIN_FOLD_##Dsl(Kind, Ref)
#include "runtime/base/ElementwiseOps.def"
} // namespace fold

#define EIN_BUILTIN_Operator(Kind, name)
#define EIN_BUILTIN_Builtin(Kind, name) {name, 1, "x", unaryMath<mlir::ein::Kind##Op, fold::Kind>},

/// The float tensor argument `i` of a composite.
std::optional<Tensor> floatArg(Elaborator &E, const Expr &call, size_t i) {
  auto t = E.floatTensorOf(*call.args[i], "'" + call.callee + "'");
  if (t)
    E.emit.setLoc(E.mlirLoc(call.calleeLoc));
  return t;
}

Tensor scalarLike(Elaborator &E, double v, const Tensor &like) {
  return E.emit.constant(v, like.elementType(), like.axes);
}

std::optional<Value> relu(Elaborator &E, const Expr &call) {
  auto x = floatArg(E, call, 0);
  if (!x)
    return std::nullopt;
  return Value::ofTensor(E.emit.binary<mlir::ein::MaxOp>(*x, scalarLike(E, 0.0, *x)));
}

Tensor sigmoidOf(Elaborator &E, const Tensor &x) {
  // 1 / (1 + exp(-x))
  Tensor e = E.emit.unary<mlir::ein::ExpOp>(E.emit.unary<mlir::ein::NegOp>(x));
  Tensor denom = E.emit.binary<mlir::ein::AddOp>(scalarLike(E, 1.0, x), e);
  return E.emit.binary<mlir::ein::DivOp>(scalarLike(E, 1.0, x), denom);
}

std::optional<Value> sigmoid(Elaborator &E, const Expr &call) {
  auto x = floatArg(E, call, 0);
  if (!x)
    return std::nullopt;
  return Value::ofTensor(sigmoidOf(E, *x));
}

std::optional<Value> silu(Elaborator &E, const Expr &call) {
  auto x = floatArg(E, call, 0);
  if (!x)
    return std::nullopt;
  return Value::ofTensor(E.emit.binary<mlir::ein::MulOp>(*x, sigmoidOf(E, *x)));
}

/// GELU, tanh form (as GPT-2):
/// 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))
std::optional<Value> gelu(Elaborator &E, const Expr &call) {
  auto x = floatArg(E, call, 0);
  if (!x)
    return std::nullopt;
  auto &em = E.emit;
  Tensor x3 = em.binary<mlir::ein::MulOp>(em.binary<mlir::ein::MulOp>(*x, *x), *x);
  Tensor inner =
      em.binary<mlir::ein::AddOp>(*x, em.binary<mlir::ein::MulOp>(scalarLike(E, 0.044715, *x), x3));
  Tensor scaled = em.binary<mlir::ein::MulOp>(scalarLike(E, std::sqrt(2.0 / M_PI), *x), inner);
  Tensor onePlus =
      em.binary<mlir::ein::AddOp>(scalarLike(E, 1.0, *x), em.unary<mlir::ein::TanhOp>(scaled));
  Tensor half = em.binary<mlir::ein::MulOp>(scalarLike(E, 0.5, *x), *x);
  return Value::ofTensor(em.binary<mlir::ein::MulOp>(half, onePlus));
}

std::optional<Value> maxOrMin(Elaborator &E, const Expr &call) {
  auto a = E.expr(*call.args[0]);
  if (!a)
    return std::nullopt;
  auto b = E.expr(*call.args[1]);
  if (!b)
    return std::nullopt;
  return E.binaryOp(call.callee, call.calleeLoc, *a, *b);
}

/// The position of the axis named by string argument `i`.
std::optional<int64_t> axisArg(Elaborator &E, const Expr &call, size_t i, const Tensor &x) {
  const Expr &arg = *call.args[i];
  if (arg.kind != ExprKind::String) {
    E.diags.error(arg.loc, "'" + call.callee + "' needs an axis name as a string, e.g. \"s\"");
    return std::nullopt;
  }
  llvm::StringRef name = llvm::StringRef(arg.text).trim();
  int64_t found = -1;
  for (size_t d = 0; d < x.axes.size(); ++d)
    if (x.axes[d].name == name) {
      if (found >= 0) {
        E.diags.error(arg.loc, "axis '" + name + "' is ambiguous in " + formatTensor(x));
        return std::nullopt;
      }
      found = d;
    }
  if (found < 0) {
    E.diags.error(arg.loc, "no axis named '" + name + "' in " + formatTensor(x));
    return std::nullopt;
  }
  return found;
}

/// `f(x, "axis")`: the float tensor x and the position of its axis.
std::optional<std::pair<Tensor, int64_t>> tensorAndAxisArgs(Elaborator &E, const Expr &call) {
  auto x = floatArg(E, call, 0);
  if (!x)
    return std::nullopt;
  auto axis = axisArg(E, call, 1, *x);
  if (!axis)
    return std::nullopt;
  return std::make_pair(*x, *axis);
}

/// x's axes but `axis`: the dims to broadcast a reduction over `axis` back.
llvm::SmallVector<int64_t> otherDims(const Tensor &x, int64_t axis) {
  llvm::SmallVector<int64_t> dims;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (d != axis)
      dims.push_back(d);
  return dims;
}

/// max over `axis`, broadcast back: the shift that keeps exp() finite.
Tensor shiftedByMax(Elaborator &E, const Tensor &x, int64_t axis, Tensor &maxOut) {
  maxOut = E.emit.reduce(x, mlir::ein::ReduceKind::max, {axis});
  Tensor back = E.emit.broadcast(maxOut, x.axes, otherDims(x, axis));
  return E.emit.binary<mlir::ein::SubOp>(x, back);
}

Tensor logsumexpOf(Elaborator &E, const Tensor &x, int64_t axis) {
  Tensor m;
  Tensor shifted = shiftedByMax(E, x, axis, m);
  Tensor sum =
      E.emit.reduce(E.emit.unary<mlir::ein::ExpOp>(shifted), mlir::ein::ReduceKind::sum, {axis});
  return E.emit.binary<mlir::ein::AddOp>(m, E.emit.unary<mlir::ein::LogOp>(sum));
}

std::optional<Value> softmax(Elaborator &E, const Expr &call) {
  auto args = tensorAndAxisArgs(E, call);
  if (!args)
    return std::nullopt;
  const auto &[x, axis] = *args;
  Tensor m;
  Tensor e = E.emit.unary<mlir::ein::ExpOp>(shiftedByMax(E, x, axis, m));
  Tensor sum = E.emit.reduce(e, mlir::ein::ReduceKind::sum, {axis});
  return Value::ofTensor(
      E.emit.binary<mlir::ein::DivOp>(e, E.emit.broadcast(sum, x.axes, otherDims(x, axis))));
}

std::optional<Value> logsumexp(Elaborator &E, const Expr &call) {
  auto args = tensorAndAxisArgs(E, call);
  if (!args)
    return std::nullopt;
  return Value::ofTensor(logsumexpOf(E, args->first, args->second));
}

/// causal(x, "t s"): positions with s > t become -inf.
std::optional<Value> causal(Elaborator &E, const Expr &call) {
  auto x = floatArg(E, call, 0);
  if (!x)
    return std::nullopt;
  const Expr &arg = *call.args[1];
  llvm::SmallVector<llvm::StringRef> names;
  if (arg.kind == ExprKind::String)
    llvm::SplitString(arg.text, names);
  if (arg.kind != ExprKind::String || names.size() != 2) {
    E.diags.error(arg.loc, "'causal' needs two axis names in one string: the query and "
                           "the key axis, e.g. \"t s\"");
    return std::nullopt;
  }
  int64_t t = -1, s = -1;
  for (size_t d = 0; d < x->axes.size(); ++d) {
    if (x->axes[d].name == names[0])
      t = d;
    if (x->axes[d].name == names[1])
      s = d;
  }
  for (auto [pos, name] : {std::pair{t, names[0]}, std::pair{s, names[1]}})
    if (pos < 0) {
      E.diags.error(arg.loc, "no axis named '" + name + "' in " + formatTensor(*x));
      return std::nullopt;
    }
  if (t == s) {
    E.diags.error(arg.loc, "'causal' needs two different axes");
    return std::nullopt;
  }
  if (x->axes[t].size != x->axes[s].size) {
    E.diags.error(arg.loc, "'causal' needs axes of equal size: " + formatTensor(*x));
    return std::nullopt;
  }
  Tensor ti = E.emit.iota(x->axes, t, E.i32());
  Tensor si = E.emit.iota(x->axes, s, E.i32());
  Tensor future = E.emit.cmp(mlir::ein::CmpPredicate::gt, si, ti);
  Tensor ninf = scalarLike(E, -std::numeric_limits<double>::infinity(), *x);
  return Value::ofTensor(E.emit.select(future, ninf, *x));
}

/// arange("t"): the positions 0, 1, ..., t − 1 along the dim t, as f32[t]
/// (an iota cast to f32). It reads no tensor, so no gradient flows into it.
std::optional<Value> arange(Elaborator &E, const Expr &call) {
  const Expr &arg = *call.args[0];
  llvm::StringRef name = llvm::StringRef(arg.text).trim();
  if (arg.kind != ExprKind::String || name.empty() || name.contains(' ')) {
    E.diags.error(arg.loc, "'arange' needs one dim name as a string, e.g. \"t\"");
    return std::nullopt;
  }
  auto size = E.dims.lookup(name);
  if (!size) {
    if (!E.dimFailed(name)) {
      E.diags.error(E.locInString(arg, unsigned(name.data() - arg.text.data())),
                    "'arange' counts along a dim, and there is no dim named '" + name + "'");
      noteMisspeltDim(E, name);
    }
    return std::nullopt;
  }
  E.emit.setLoc(E.mlirLoc(call.calleeLoc));
  Axes axes = {{name.str(), *size}};
  return Value::ofTensor(E.emit.cast(E.emit.iota(axes, 0, E.i32()), E.f32()));
}

/// argmax of x along `axis`: i32, the first position of the largest element
/// or of the first NaN (as torch.argmax). min over the axis of where(x == max
/// or x is NaN, position, size): integer results carry no gradient.
Tensor argmaxOf(Elaborator &E, const Tensor &x, int64_t axis) {
  auto &em = E.emit;
  Tensor m =
      em.broadcast(em.reduce(x, mlir::ein::ReduceKind::max, {axis}), x.axes, otherDims(x, axis));
  Tensor positions = em.iota(x.axes, axis, E.i32());
  Tensor past = em.constant(static_cast<double>(x.axes[axis].size), E.i32(), x.axes);
  Tensor atMax = em.select(em.cmp(mlir::ein::CmpPredicate::eq, x, m), positions, past);
  Tensor atNaN = em.select(em.cmp(mlir::ein::CmpPredicate::ne, x, x), positions, atMax);
  return em.reduce(atNaN, mlir::ein::ReduceKind::min, {axis});
}

/// cross_entropy's keyword arguments, as torch.nn.functional.cross_entropy
/// names them.
struct CrossEntropyOptions {
  std::optional<int64_t> ignoreIndex; ///< targets equal to it add nothing
  double labelSmoothing = 0;          ///< ε: (1−ε)·nll + ε·mean over classes of −log p
};

std::optional<CrossEntropyOptions> crossEntropyOptions(Elaborator &E, const Expr &call) {
  CrossEntropyOptions options;
  for (const KeywordArg &kw : call.kwargs) { // the parser refuses one given twice
    if (kw.name == "ignore_index") {
      auto v = E.constantInteger(*kw.value);
      if (!v)
        return std::nullopt;
      options.ignoreIndex = *v;
    } else if (kw.name == "label_smoothing") {
      auto v = E.constantNumber(*kw.value);
      if (!v)
        return std::nullopt;
      if (!(*v >= 0 && *v <= 1)) {
        E.diags.error(kw.value->loc, "'cross_entropy' label_smoothing must be within [0, 1], got " +
                                         formatNumber(*v));
        return std::nullopt;
      }
      options.labelSmoothing = *v;
    } else {
      E.diags.error(kw.loc, "'cross_entropy' has no argument '" + kw.name +
                                "'; it takes ignore_index= and label_smoothing=");
      return std::nullopt;
    }
  }
  return options;
}

/// Whether `targets` fit `logits` as cross_entropy and accuracy take them:
/// i32, with the logits' axes but the last (the classes).
bool checkTargets(Elaborator &E, const Expr &call, const Tensor &logits, const Tensor &targets) {
  const std::string what = "'" + call.callee + "'";
  if (logits.rank() == 0) {
    E.diags.error(call.args[0]->loc, what + " needs logits with a class axis last");
    return false;
  }
  if (!targets.elementType().isInteger(32)) {
    E.diags.error(call.args[1]->loc, what + " needs i32 targets, got " + formatTensor(targets));
    return false;
  }
  Axes positions(logits.axes.begin(), logits.axes.end() - 1);
  if (targets.axes != positions) {
    E.diags.error(call.args[1]->loc, what +
                                         " targets must have the logits' axes without the last "
                                         "(class) axis: logits " +
                                         formatTensor(logits) + ", targets " +
                                         formatTensor(targets) + ", expected i32" +
                                         formatAxes(positions));
    return false;
  }
  return true;
}

/// The sum of all of x's elements: a scalar.
Tensor sumAll(Elaborator &E, const Tensor &x) {
  llvm::SmallVector<int64_t> all;
  for (int64_t d = 0; d < x.rank(); ++d)
    all.push_back(d);
  return E.emit.reduce(x, mlir::ein::ReduceKind::sum, all);
}

/// cross_entropy(logits [..., V], targets i32[...], ignore_index=, label_smoothing=):
/// the mean over positions of (1−ε)·(logsumexp(logits) − logits[target]) +
/// ε·(logsumexp(logits) − mean(logits)); positions whose target is
/// ignore_index add nothing and are not counted (all ignored: 0/0, NaN, as
/// in torch).
std::optional<Value> crossEntropy(Elaborator &E, const Expr &call) {
  if (call.args.size() != 2) {
    E.diags.error(call.calleeLoc,
                  "'cross_entropy' takes 2 arguments (logits, targets, ignore_index=, "
                  "label_smoothing=), got " +
                      std::to_string(call.args.size()));
    return std::nullopt;
  }
  auto options = crossEntropyOptions(E, call);
  if (!options)
    return std::nullopt;
  auto logits = floatArg(E, call, 0);
  if (!logits)
    return std::nullopt;
  auto targets = E.tensorOf(*call.args[1], "'cross_entropy'");
  if (!targets)
    return std::nullopt;
  E.emit.setLoc(E.mlirLoc(call.calleeLoc));
  if (!checkTargets(E, call, *logits, *targets))
    return std::nullopt;
  auto &em = E.emit;
  const int64_t classAxis = logits->rank() - 1;
  const Axes positions(logits->axes.begin(), logits->axes.end() - 1);
  Tensor lse = logsumexpOf(E, *logits, classAxis);
  // The target's logit: sum over classes of logits where class == target.
  Tensor classes = em.iota(logits->axes, classAxis, E.i32());
  Tensor wanted = em.broadcast(*targets, logits->axes, otherDims(*logits, classAxis));
  Tensor hit = em.cmp(mlir::ein::CmpPredicate::eq, classes, wanted);
  Tensor picked = em.reduce(em.select(hit, *logits, scalarLike(E, 0.0, *logits)),
                            mlir::ein::ReduceKind::sum, {classAxis});
  Tensor perPosition = em.binary<mlir::ein::SubOp>(lse, picked);
  const double eps = options->labelSmoothing;
  if (eps > 0) {
    const double classCount = static_cast<double>(logits->axes.back().size);
    Tensor meanLogit =
        em.binary<mlir::ein::MulOp>(em.reduce(*logits, mlir::ein::ReduceKind::sum, {classAxis}),
                                    scalarLike(E, 1.0 / classCount, lse));
    Tensor smooth = em.binary<mlir::ein::SubOp>(lse, meanLogit);
    perPosition =
        eps == 1
            ? smooth
            : em.binary<mlir::ein::AddOp>(
                  em.binary<mlir::ein::MulOp>(scalarLike(E, 1 - eps, perPosition), perPosition),
                  em.binary<mlir::ein::MulOp>(scalarLike(E, eps, smooth), smooth));
  }
  const int64_t count = elementCount(positions).value_or(1);
  E.recordLossPositions(count);
  Tensor mean = perPosition;
  if (options->ignoreIndex) {
    Tensor ignored = em.constant(static_cast<double>(*options->ignoreIndex), E.i32(), positions);
    Tensor counted = em.cmp(mlir::ein::CmpPredicate::ne, *targets, ignored);
    Tensor total = sumAll(E, em.select(counted, perPosition, scalarLike(E, 0.0, perPosition)));
    Tensor kept = sumAll(
        E, em.select(counted, scalarLike(E, 1.0, perPosition), scalarLike(E, 0.0, perPosition)));
    mean = em.binary<mlir::ein::DivOp>(total, kept);
  } else {
    Tensor total = sumAll(E, perPosition);
    mean = count == 1 ? total
                      : em.binary<mlir::ein::MulOp>(
                            total, scalarLike(E, 1.0 / static_cast<double>(count), total));
  }
  // Nats per (counted) token, bits per byte on byte tokens; a smoothed loss
  // is not.
  if (eps == 0)
    E.recordCrossEntropy(mean.value);
  return Value::ofTensor(mean);
}

/// accuracy(logits [..., V], targets i32[...]): the share of positions whose
/// argmax over the classes is the target, as f32 (a metric: no gradient).
std::optional<Value> accuracy(Elaborator &E, const Expr &call) {
  auto logits = floatArg(E, call, 0);
  if (!logits)
    return std::nullopt;
  auto targets = E.tensorOf(*call.args[1], "'accuracy'");
  if (!targets)
    return std::nullopt;
  E.emit.setLoc(E.mlirLoc(call.calleeLoc));
  if (!checkTargets(E, call, *logits, *targets))
    return std::nullopt;
  auto &em = E.emit;
  Tensor best = argmaxOf(E, *logits, logits->rank() - 1);
  Tensor right = em.cmp(mlir::ein::CmpPredicate::eq, best, *targets);
  Tensor one = em.constant(1.0, E.f32(), targets->axes);
  Tensor zero = em.constant(0.0, E.f32(), targets->axes);
  Tensor total = sumAll(E, em.select(right, one, zero));
  const int64_t count = elementCount(targets->axes).value_or(1);
  return Value::ofTensor(
      em.binary<mlir::ein::MulOp>(total, scalarLike(E, 1.0 / static_cast<double>(count), total)));
}

/// stop_gradient(x): x's value, through which no gradient flows (the
/// autodiff reads ein.stop_gradient; it folds away after). A number or an
/// integer tensor has no gradient: itself.
std::optional<Value> stopGradient(Elaborator &E, const Expr &call) {
  auto v = E.expr(*call.args[0]);
  if (!v || !v->isTensor() || !isa<FloatType>(v->tensor.elementType()))
    return v;
  E.emit.setLoc(E.mlirLoc(call.calleeLoc));
  return Value::ofTensor(E.emit.unary<mlir::ein::StopGradientOp>(v->tensor));
}

/// dropout(x, p): x · keep / (1 − p) while training, keep = u ≥ p for a
/// counter-based draw u per element (passes/Dropout.h); the identity in
/// evaluation and sampling. p is a number in [0, 1); p = 0 is x itself. Each
/// call is a site of its own (its mask differs from every other call's): the
/// dropouts before it in the module are counted.
std::optional<Value> dropout(Elaborator &E, const Expr &call) {
  auto x = floatArg(E, call, 0);
  auto p = E.expr(*call.args[1]);
  if (!x || !p)
    return std::nullopt;
  if (p->isTensor() || !(p->number >= 0 && p->number < 1)) {
    E.diags.error(call.args[1]->loc,
                  "dropout's p must be a number in [0, 1), got " +
                      (p->isTensor() ? formatTensor(p->tensor) : formatNumber(p->number)));
    return std::nullopt;
  }
  if (p->number == 0)
    return Value::ofTensor(*x);
  Operation *scope = E.emit.builder().getInsertionBlock()->getParentOp();
  if (auto module = scope->getParentOfType<ModuleOp>())
    scope = module;
  int64_t site = 0;
  scope->walk([&](mlir::ein::DropoutOp) { ++site; });
  E.emit.setLoc(E.mlirLoc(call.calleeLoc));
  OpBuilder &b = E.emit.builder();
  auto op = b.create<mlir::ein::DropoutOp>(E.emit.loc(), x->value.getType(), x->value,
                                           b.getF64FloatAttr(p->number), b.getI64IntegerAttr(site),
                                           E.emit.axesAttr(x->axes));
  return Value::ofTensor(Tensor{op.getResult(), x->axes});
}

// --- Masks: where, log_softmax, argmax ----------------------------------------

/// where(c, a, b): a where the i1 mask c holds, else b; a and b are tensors of
/// one element type or numbers, and all three broadcast by axis name (§5).
/// The gradient reaches a and b (ein.select's rule), never c.
std::optional<Value> where(Elaborator &E, const Expr &call) {
  auto mask = E.expr(*call.args[0]);
  if (!mask)
    return std::nullopt;
  if (!mask->isTensor() || !mask->tensor.elementType().isInteger(1)) {
    E.diags.error(call.args[0]->loc,
                  "'where' needs a mask (a comparison such as x > 0) first, got " +
                      (mask->isTensor() ? formatTensor(mask->tensor) : "a number"));
    return std::nullopt;
  }
  const Tensor *c = &mask->tensor;
  auto a = E.expr(*call.args[1]);
  if (!a)
    return std::nullopt;
  auto b = E.expr(*call.args[2]);
  if (!b)
    return std::nullopt;
  E.emit.setLoc(E.mlirLoc(call.calleeLoc));
  // A number takes the other branch's element type (f32 when both are numbers).
  Type elem = a->isTensor()   ? a->tensor.elementType()
              : b->isTensor() ? b->tensor.elementType()
                              : E.f32();
  auto asTensor = [&](const Value &v) {
    return v.isTensor() ? v.tensor : E.emit.constant(v.number, elem, c->axes);
  };
  auto pair = E.broadcastByName("where", call.calleeLoc, asTensor(*a), asTensor(*b));
  if (!pair)
    return std::nullopt;
  auto [onTrue, onFalse] = *pair;
  Tensor cond = *c;
  if (cond.rank() >= onTrue.rank()) {
    auto t = E.broadcastTo(onTrue, cond.axes, call.calleeLoc, "where");
    auto f = t ? E.broadcastTo(onFalse, cond.axes, call.calleeLoc, "where") : std::nullopt;
    if (!f)
      return std::nullopt;
    onTrue = *t;
    onFalse = *f;
  } else {
    auto grown = E.broadcastTo(cond, onTrue.axes, call.calleeLoc, "where");
    if (!grown)
      return std::nullopt;
    cond = *grown;
  }
  E.emit.setLoc(E.mlirLoc(call.calleeLoc));
  return Value::ofTensor(E.emit.select(cond, onTrue, onFalse));
}

/// log_softmax(x, "s") = x − logsumexp_s(x): the max-shifted form, so no
/// exp overflows and no softmax underflows to log(0).
std::optional<Value> logSoftmax(Elaborator &E, const Expr &call) {
  auto args = tensorAndAxisArgs(E, call);
  if (!args)
    return std::nullopt;
  const auto &[x, axis] = *args;
  Tensor lse = E.emit.broadcast(logsumexpOf(E, x, axis), x.axes, otherDims(x, axis));
  return Value::ofTensor(E.emit.binary<mlir::ein::SubOp>(x, lse));
}

/// argmax(x, "s"): argmaxOf along s.
std::optional<Value> argmax(Elaborator &E, const Expr &call) {
  auto args = tensorAndAxisArgs(E, call);
  if (!args)
    return std::nullopt;
  return Value::ofTensor(argmaxOf(E, args->first, args->second));
}

/// Exact GELU (PyTorch's default): 0.5 · x · (1 + erf(x / √2)). `gelu` is
/// the tanh form and keeps that meaning.
std::optional<Value> geluExact(Elaborator &E, const Expr &call) {
  auto x = floatArg(E, call, 0);
  if (!x)
    return std::nullopt;
  auto &em = E.emit;
  Tensor erf = em.unary<mlir::ein::ErfOp>(
      em.binary<mlir::ein::MulOp>(scalarLike(E, 1.0 / std::sqrt(2.0), *x), *x));
  Tensor onePlus = em.binary<mlir::ein::AddOp>(scalarLike(E, 1.0, *x), erf);
  Tensor half = em.binary<mlir::ein::MulOp>(scalarLike(E, 0.5, *x), *x);
  return Value::ofTensor(em.binary<mlir::ein::MulOp>(half, onePlus));
}

const Builtin kBuiltins[] = {
    {"einsum", -1, "tensors..., pattern", elaborateEinsum},
    {"rearrange", -1, "tensor, pattern, axis=size...", elaborateRearrange},
    {"reduce", -1, "tensor, pattern, sum|mean|max|min", elaborateReduce},
    {"repeat", -1, "tensor, pattern, axis=size...", elaborateRepeat},
    {"relu", 1, "x", relu},
    {"gelu", 1, "x", gelu},
    {"sigmoid", 1, "x", sigmoid},
    {"silu", 1, "x", silu},
#define EIN_UNARY_OP(Kind, name, Types, Rounding, Dsl, Ref, CudaF32, CudaI32, CpuF32, CpuI32)      \
  EIN_BUILTIN_##Dsl(Kind, name)
#include "runtime/base/ElementwiseOps.def"
    {"max", 2, "a, b", maxOrMin},
    {"min", 2, "a, b", maxOrMin},
    {"softmax", 2, "x, axis", softmax},
    {"logsumexp", 2, "x, axis", logsumexp},
    {"causal", 2, "x, \"t s\"", causal},
    {"arange", 1, "\"t\"", arange},
    {"cross_entropy", -1, "logits, targets, ignore_index=, label_smoothing=", crossEntropy},
    {"accuracy", 2, "logits, targets", accuracy},
    {"stop_gradient", 1, "x", stopGradient},
    {"dropout", 2, "x, p", dropout},
    {"where", 3, "mask, a, b", where},
    {"log_softmax", 2, "x, axis", logSoftmax},
    {"argmax", 2, "x, axis", argmax},
    {"gelu_exact", 1, "x", geluExact},
};

const Builtin *findBuiltin(llvm::StringRef name) {
  for (const Builtin &b : kBuiltins)
    if (name == b.name)
      return &b;
  return nullptr;
}

} // namespace

bool isBuiltinName(llvm::StringRef name) { return findBuiltin(name) != nullptr; }

// --- Misspelt and foreign function names -------------------------------------

namespace {
/// Names other frameworks give a built-in, too far from it to be a typo.
const std::pair<const char *, const char *> kForeignNames[] = {
    {"swish", "silu"},
    {"sum", "reduce"},
    {"mean", "reduce"},
    {"amax", "reduce"},
    {"nll_loss", "cross_entropy"},
    {"matmul", "einsum"},
    {"transpose", "rearrange"},
    {"reshape", "rearrange"},
    {"view", "rearrange"},
};

/// How many edits a misspelt function name may have (the shorter name's
/// length decides): none under 3 characters, where every name is near another.
unsigned functionTypoLimit(size_t shorterLength) {
  if (shorterLength < 3)
    return 0;
  return shorterLength < 6 ? 1 : shorterLength < 10 ? 2 : 3;
}
} // namespace

std::optional<FunctionSuggestion>
suggestFunction(llvm::StringRef name, llvm::ArrayRef<std::pair<llvm::StringRef, SourceLoc>> fns) {
  auto usageOf = [](llvm::StringRef builtin) {
    const Builtin *b = findBuiltin(builtin);
    return FunctionSuggestion{b->name, b->usage, SourceLoc{}};
  };
  for (auto [foreign, builtin] : kForeignNames)
    if (name == foreign)
      return usageOf(builtin);
  std::optional<FunctionSuggestion> best;
  unsigned bestDistance = 0;
  auto consider = [&](llvm::StringRef candidate, auto make) {
    unsigned limit = functionTypoLimit(std::min(candidate.size(), name.size()));
    if (limit == 0 || candidate.size() > 64 || name.size() > 64)
      return;
    unsigned distance = typoDistance(name.lower(), candidate, limit);
    if (distance <= limit && (!best || distance < bestDistance)) {
      best = make();
      bestDistance = distance;
    }
  };
  for (auto [fn, loc] : fns)
    consider(fn, [&] { return FunctionSuggestion{fn.str(), "", loc}; });
  for (const Builtin &b : kBuiltins)
    consider(b.name, [&] { return usageOf(b.name); });
  return best;
}

std::optional<Value> elaborateBuiltin(Elaborator &E, const Expr &call, bool &handled) {
  const Builtin *b = findBuiltin(call.callee);
  handled = b != nullptr;
  if (!b)
    return std::nullopt;
  if (b->arity >= 0) {
    if (!call.kwargs.empty()) {
      E.diags.error(call.kwargs.front().loc, "'" + call.callee + "' takes no keyword arguments");
      return std::nullopt;
    }
    if (call.args.size() != static_cast<size_t>(b->arity)) {
      E.diags.error(call.calleeLoc, "'" + call.callee + "' takes " + std::to_string(b->arity) +
                                        " argument" + (b->arity == 1 ? "" : "s") + " (" + b->usage +
                                        "), got " + std::to_string(call.args.size()));
      return std::nullopt;
    }
  }
  return b->rule(E, call);
}

} // namespace ein::dsl
