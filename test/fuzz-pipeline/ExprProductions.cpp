//===- ExprProductions.cpp - Tensor expressions, as a table of productions ===//
//
// Each production makes a float tensor expression with exactly the axes it
// is asked for (in order), or declines (std::nullopt) when it cannot; Gen::expr
// picks productions by weight and falls back to a leaf. Unary and binary ops
// are tables of their own, each row with the rule for its range of values.
//
//===----------------------------------------------------------------------===//
#include "Productions.h"

namespace einc::pipelinefuzz {

Axes without(const Axes &axes, const Axes &drop) {
  Axes out;
  for (const std::string &a : axes)
    if (std::find(drop.begin(), drop.end(), a) == drop.end())
      out.push_back(a);
  return out;
}

bool has(const Axes &axes, const std::string &a) {
  return std::find(axes.begin(), axes.end(), a) != axes.end();
}

/// A random subset of `axes`, in random order.
Axes subset(Gen &g, const Axes &axes) {
  Axes out;
  for (const std::string &a : axes)
    if (g.chance(0.5))
      out.push_back(a);
  g.shuffle(out);
  return out;
}

std::string quoted(const std::string &lhs, const std::string &rhs) {
  return "\"" + lhs + " -> " + rhs + "\"";
}

namespace {

using Make = std::optional<Val> (*)(Gen &, const Axes &, int depth);

struct Production {
  const char *name;
  int weight;
  bool dimsOnly; // only for axes that are all dims (patterns name them)
  Make make;
};

// --- unary ops -------------------------------------------------------------

struct Unary {
  const char *name;
  int weight;
  Val (*apply)(Gen &, Val);
};

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

Val call(const std::string &f, const Val &x, Range r) {
  return {f + "(" + x.text + ")", x.axes, r};
}

const Unary kUnary[] = {
    {"tanh", 4,
     [](Gen &, Val x) { return call("tanh", x, {std::tanh(x.range.lo), std::tanh(x.range.hi)}); }},
    {"exp", 3,
     [](Gen &g, Val x) {
       x = g.bounded(x, 3);
       return call("exp", x, {std::exp(x.range.lo), std::exp(x.range.hi)});
     }},
    {"log", 2,
     [](Gen &g, Val x) {
       x = g.positive(x);
       return call("log", x, {std::log(x.range.lo), std::log(x.range.hi)});
     }},
    {"sqrt", 1,
     [](Gen &g, Val x) {
       x = g.positive(x);
       return call("sqrt", x, {std::sqrt(x.range.lo), std::sqrt(x.range.hi)});
     }},
    {"rsqrt", 1,
     [](Gen &g, Val x) {
       x = g.positive(x);
       return call("rsqrt", x, {1 / std::sqrt(x.range.hi), 1 / std::sqrt(x.range.lo)});
     }},
    {"abs", 1,
     [](Gen &g, Val x) {
       g.note("kink");
       double lo = x.range.lo > 0 ? x.range.lo : x.range.hi < 0 ? -x.range.hi : 0;
       return call("abs", x, {lo, x.range.mag()});
     }},
    {"relu", 3,
     [](Gen &g, Val x) {
       g.note("kink");
       return call("relu", x, {std::max(x.range.lo, 0.0), std::max(x.range.hi, 0.0)});
     }},
    {"sigmoid", 2,
     [](Gen &, Val x) { return call("sigmoid", x, {sigmoid(x.range.lo), sigmoid(x.range.hi)}); }},
    {"silu", 1, [](Gen &, Val x) { return call("silu", x, {-0.28, std::max(x.range.hi, 0.0)}); }},
    {"gelu", 2, [](Gen &, Val x) { return call("gelu", x, {-0.17, std::max(x.range.hi, 0.0)}); }},
    {"neg", 2,
     [](Gen &, Val x) { return Val{"(-" + x.text + ")", x.axes, {-x.range.hi, -x.range.lo}}; }},
    {"sin", 1, [](Gen &, Val x) { return call("sin", x, {-1, 1}); }},
    {"cos", 1, [](Gen &, Val x) { return call("cos", x, {-1, 1}); }},
    {"erf", 1, [](Gen &, Val x) { return call("erf", x, {-1, 1}); }},
    {"dropout", 1,
     [](Gen &g, Val x) {
       // Masked in @train_step only (CPU and reference draw the same mask);
       // the identity in @forward and @grad, which the gradient check reads.
       double p = 0.1 * double(1 + g.below(5));
       double k = 1 / (1 - p);
       return Val{"dropout(" + x.text + ", " + std::to_string(p).substr(0, 3) + ")",
                  x.axes,
                  {std::min(x.range.lo * k, 0.0), std::max(x.range.hi * k, 0.0)}};
     }},
    {"gelu_exact", 1,
     [](Gen &, Val x) { return call("gelu_exact", x, {-0.17, std::max(x.range.hi, 0.0)}); }},
};

std::optional<Val> unary(Gen &g, const Axes &want, int depth) {
  std::vector<int> weights;
  for (const Unary &u : kUnary)
    weights.push_back(u.weight);
  const Unary &u = kUnary[g.weighted(weights)];
  g.note(u.name);
  return u.apply(g, g.expr(want, depth - 1));
}

// --- binary ops ------------------------------------------------------------

/// Two operands with the result's axes `want`: the larger keeps `want`'s
/// order, the other has a subset of its axes (a permutation when equal in
/// rank: broadcasting by name transposes it).
std::pair<Val, Val> operands(Gen &g, const Axes &want, int depth, bool &swapped) {
  Val a = g.expr(want, depth - 1);
  Axes small = g.chance(0.5) ? want : subset(g, want);
  if (small.size() == want.size() && g.chance(0.5))
    g.shuffle(small);
  if (small != want)
    g.note(small.size() < want.size() ? "broadcast by name" : "transpose by name");
  Val b = g.expr(small, depth - 1);
  // The left operand fixes the order when ranks are equal.
  swapped = small.size() < want.size() && g.chance(0.5);
  return {a, b};
}

struct Binary {
  const char *name;
  int weight;
  std::optional<Val> (*make)(Gen &, const Axes &, int);
};

std::string infix(const Val &a, const char *op, const Val &b, bool swapped) {
  return swapped ? "(" + b.text + " " + op + " " + a.text + ")"
                 : "(" + a.text + " " + op + " " + b.text + ")";
}

std::optional<Val> arith(Gen &g, const Axes &want, int depth, const char *op) {
  bool swapped = false;
  auto [a, b] = operands(g, want, depth, swapped);
  Range r = *op == '+'   ? a.range + b.range
            : *op == '*' ? a.range * b.range
            : swapped    ? b.range + scaled(a.range, -1)
                         : a.range + scaled(b.range, -1);
  return Val{infix(a, op, b, swapped), want, r};
}

const Binary kBinary[] = {
    {"+", 5, [](Gen &g, const Axes &w, int d) { return arith(g, w, d, "+"); }},
    {"-", 4, [](Gen &g, const Axes &w, int d) { return arith(g, w, d, "-"); }},
    {"*", 5,
     [](Gen &g, const Axes &w, int d) {
       bool swapped = false;
       auto [a, b] = operands(g, w, d, swapped);
       a = g.bounded(a, 5), b = g.bounded(b, 5);
       return std::optional<Val>(Val{infix(a, "*", b, swapped), w, a.range * b.range});
     }},
    {"/", 3,
     [](Gen &g, const Axes &w, int d) {
       // The denominator is positive; it may be either the larger operand or the smaller.
       bool swapped = false;
       auto [a, b] = operands(g, w, d, swapped);
       Val &den = swapped ? a : b, &num = swapped ? b : a;
       den = g.positive(den);
       Range r = num.range * Range{1 / den.range.hi, 1 / den.range.lo};
       return std::optional<Val>(Val{infix(a, "/", b, swapped), w, r});
     }},
    {"max", 2,
     [](Gen &g, const Axes &w, int d) {
       g.note("kink");
       bool swapped = false;
       auto [a, b] = operands(g, w, d, swapped);
       std::string args = swapped ? b.text + ", " + a.text : a.text + ", " + b.text;
       return std::optional<Val>(
           Val{"max(" + args + ")",
               w,
               {std::max(a.range.lo, b.range.lo), std::max(a.range.hi, b.range.hi)}});
     }},
    {"min", 2,
     [](Gen &g, const Axes &w, int d) {
       g.note("kink");
       bool swapped = false;
       auto [a, b] = operands(g, w, d, swapped);
       std::string args = swapped ? b.text + ", " + a.text : a.text + ", " + b.text;
       return std::optional<Val>(
           Val{"min(" + args + ")",
               w,
               {std::min(a.range.lo, b.range.lo), std::min(a.range.hi, b.range.hi)}});
     }},
    {"**", 2,
     [](Gen &g, const Axes &w, int d) {
       Val a = g.bounded(g.expr(w, d - 1), 3);
       switch (g.below(4)) {
       case 0: { // x ** 2, any sign
         double m = a.range.mag(), lo = a.range.lo > 0   ? a.range.lo
                                        : a.range.hi < 0 ? -a.range.hi
                                                         : 0;
         return std::optional<Val>(Val{"(" + a.text + " ** 2)", w, {lo * lo, m * m}});
       }
       case 1: // x ** 3, any sign
         return std::optional<Val>(
             Val{"(" + a.text + " ** 3)", w, {std::pow(a.range.lo, 3), std::pow(a.range.hi, 3)}});
       case 2: { // positive ** -1 or 0.5
         a = g.positive(a);
         bool inverse = g.chance(0.5);
         Range r = inverse ? Range{1 / a.range.hi, 1 / a.range.lo}
                           : Range{std::sqrt(a.range.lo), std::sqrt(a.range.hi)};
         return std::optional<Val>(Val{"(" + a.text + (inverse ? " ** -1)" : " ** 0.5)"), w, r});
       }
       default: { // positive ** bounded tensor (broadcast by name)
         a = g.positive(a);
         Val b = g.bounded(g.expr(subset(g, w), d - 1), 1.5);
         double c[] = {std::pow(a.range.lo, b.range.lo), std::pow(a.range.lo, b.range.hi),
                       std::pow(a.range.hi, b.range.lo), std::pow(a.range.hi, b.range.hi)};
         return std::optional<Val>(Val{"(" + a.text + " ** " + b.text + ")",
                                       w,
                                       {*std::min_element(c, c + 4), *std::max_element(c, c + 4)}});
       }
       }
     }},
};

std::optional<Val> binary(Gen &g, const Axes &want, int depth) {
  std::vector<int> weights;
  for (const Binary &b : kBinary)
    weights.push_back(b.weight);
  const Binary &b = kBinary[g.weighted(weights)];
  g.note(std::string("binary ") + b.name);
  return b.make(g, want, depth);
}

/// A number and a tensor: n * x, x + n, n - x, x / n, n / x.
std::optional<Val> withNumber(Gen &g, const Axes &want, int depth) {
  double v = 0;
  std::string n = g.number(v);
  Range nr{std::min(v, 1.0), std::max(v, 1.0)};
  Val x = g.expr(want, depth - 1);
  switch (g.below(5)) {
  case 0:
    return Val{"(" + n + " * " + x.text + ")", want, x.range * nr};
  case 1:
    return Val{"(" + x.text + " + " + n + ")", want, x.range + nr};
  case 2:
    return Val{"(" + n + " - " + x.text + ")", want, nr + scaled(x.range, -1)};
  case 3:
    return Val{"(" + x.text + " / " + n + ")", want, x.range * Range{1 / nr.hi, 1 / nr.lo}};
  default:
    x = g.positive(x);
    return Val{"(" + n + " / " + x.text + ")", want, nr * Range{1 / x.range.hi, 1 / x.range.lo}};
  }
}

const Production kProductions[] = {
    {"leaf", 3, false, [](Gen &g, const Axes &w, int) { return std::optional<Val>(g.leaf(w)); }},
    {"unary", 8, false, unary},
    {"binary", 9, false, binary},
    {"number", 3, false, withNumber},
    {"reduce", 4, true, reduce},
    {"einsum", 4, true, einsum},
    {"rearrange", 3, false, rearrange},
    {"stack", 1, false, stack},
    {"arange", 1, false, positions},
    {"repeat", 2, true, repeat},
    {"softmax", 2, true, softmax},
    {"log_softmax", 1, true, logSoftmax},
    {"where", 1, false, where},
    {"causal", 1, true, causal},
    {"attention", 1, true, attention},
    {"logsumexp", 2, true, logsumexp},
    {"gather", 2, true, gather},
    {"fn", 2, false, fnCall},
    {"again", 2, false, again},
    {"statistic", 2, false, besideStatistic},
    {"view", 4, false, viewRead},
};

} // namespace

Val Gen::expr(const Axes &want, int depth) {
  if (depth <= 0 || budget <= 0)
    return leaf(want);
  --budget;
  std::vector<int> weights;
  for (const Production &p : kProductions)
    weights.push_back(p.weight);
  for (int attempt = 0; attempt < 8; ++attempt) {
    const Production &p = kProductions[weighted(weights)];
    if (p.dimsOnly && !allDims(want))
      continue;
    std::optional<Val> v = p.make(*this, want, depth);
    if (!v)
      continue;
    // Keep magnitudes where float32 and the gradient check stay meaningful.
    Val out = v->range.mag() > 50 ? bounded(*v, 10) : *v;
    scopes.back().memo.push_back(out);
    return out;
  }
  return leaf(want);
}

} // namespace einc::pipelinefuzz
