//===- CompositeProductions.cpp - einops, composites, functions, repeats --===//
//
// The productions of Productions.h that write patterns or calls: reduce,
// einsum, rearrange (also of a list), repeat, arange; softmax, log_softmax,
// where over a comparison, causal, attention, logsumexp, gathers; user functions; a subexpression
// written again; a value beside a statistic of itself.
//
//===----------------------------------------------------------------------===//
#include "Productions.h"

namespace einc::pipelinefuzz {
namespace {
Range softmaxRange(const Range &x, int64_t n) { return {std::exp(x.lo - x.hi) / double(n), 1}; }

} // namespace

// --- einops ----------------------------------------------------------------

/// reduce(x, "... -> want", kind): the reduced axes are dims `want` lacks.
std::optional<Val> reduce(Gen &g, const Axes &want, int depth) {
  std::vector<std::string> spare = g.dimsNotIn(want);
  if (spare.empty())
    return std::nullopt;
  g.shuffle(spare);
  Axes extra(spare.begin(), spare.begin() + std::min<size_t>(spare.size(), 1 + g.below(2)));
  static const char *kinds[] = {"sum", "mean", "max", "min"};
  const char *kind = kinds[g.weighted({4, 3, 2, 1})];
  int64_t n = g.elements(extra);
  Axes operand;
  std::string lhs, rhs = side(want);
  if (g.chance(0.2)) { // "... e -> ...": the kept axes in order, as an ellipsis
    operand = want;
    operand.insert(operand.end(), extra.begin(), extra.end());
    lhs = "... " + side(extra), rhs = "...";
    g.note("ellipsis");
  } else {
    operand = want;
    operand.insert(operand.end(), extra.begin(), extra.end());
    g.shuffle(operand);
    Axes written = operand;
    // A reduced axis may be written as its size (einops' "b (h 2) -> b h").
    if (g.chance(0.15))
      for (std::string &a : written)
        if (has(extra, a) && g.sizeOf(a) >= 2) {
          a = std::to_string(g.sizeOf(a));
          g.note("reduce by size");
          break;
        }
    lhs = side(written);
  }
  Val x = g.expr(operand, depth - 1);
  if (std::string(kind) != "sum" && std::string(kind) != "mean")
    g.note("kink");
  g.note(std::string("reduce ") + kind);
  Range r = std::string(kind) == "sum" ? scaled(x.range, double(n)) : x.range;
  return Val{"reduce(" + x.text + ", " + quoted(lhs, rhs) + ", " + kind + ")", want, r};
}

/// einsum of two (sometimes three) operands: contracted dims in both,
/// sometimes read by a local name, sometimes an axis summed within one
/// operand (by its dim's name), sometimes a leading `...`.
std::optional<Val> einsum(Gen &g, const Axes &want, int depth) {
  std::vector<std::string> spare = g.dimsNotIn(want);
  g.shuffle(spare);
  size_t contracted = want.empty() ? 1 + size_t(g.below(2)) : size_t(g.below(3));
  contracted = std::min(contracted, spare.size());
  if (want.empty() && contracted == 0)
    return std::nullopt;
  Axes c(spare.begin(), spare.begin() + contracted);
  Axes first = subset(g, want), second = without(want, first);
  for (const std::string &a : first)
    if (g.chance(0.3))
      second.push_back(a);
  first.insert(first.end(), c.begin(), c.end());
  second.insert(second.end(), c.begin(), c.end());
  if (second.empty())
    second.push_back(want.front());
  if (first.empty())
    first.push_back(want.front());
  // An axis only the first operand has, summed before the contraction.
  Axes alone;
  if (spare.size() > contracted && g.chance(0.2)) {
    alone.push_back(spare[contracted]);
    first.push_back(alone.back());
    g.note("einsum sums within an operand");
  }
  std::vector<Axes> ops = {first, second};
  if (g.chance(0.15)) {
    Axes third = subset(g, first);
    if (!third.empty()) {
      ops.push_back(third);
      g.note("einsum of three");
    }
  }
  for (Axes &o : ops)
    g.shuffle(o);
  // The written names: contracted dims sometimes by a local name.
  std::vector<Axes> written = ops;
  Axes out = want;
  for (size_t i = 0; i < c.size(); ++i)
    if (g.chance(0.3)) {
      std::string local = "k" + std::to_string(i + 1);
      for (Axes &w : written)
        std::replace(w.begin(), w.end(), c[i], local);
      g.note("local axis name");
    }
  // A leading ellipsis for the output's first axis, in every operand having it.
  if (!want.empty() && g.chance(0.25)) {
    const std::string lead = want.front();
    for (Axes &w : written)
      if (has(w, lead)) {
        w.erase(std::find(w.begin(), w.end(), lead));
        w.insert(w.begin(), "...");
      }
    for (size_t i = 0; i < ops.size(); ++i) // the operands keep the same order
      if (has(ops[i], lead)) {
        ops[i].erase(std::find(ops[i].begin(), ops[i].end(), lead));
        ops[i].insert(ops[i].begin(), lead);
      }
    out.front() = "...";
    g.note("ellipsis");
  }
  std::string text = "einsum(";
  Range r{1, 1};
  for (size_t i = 0; i < ops.size(); ++i) {
    Val x = g.bounded(g.expr(ops[i], depth - 1), 3);
    r = r * x.range;
    text += x.text + ", ";
  }
  std::string lhs;
  for (size_t i = 0; i < written.size(); ++i)
    lhs += (i ? ", " : "") + side(written[i]);
  r = scaled(r, double(g.elements(c) * g.elements(alone)));
  return Val{text + quoted(lhs, side(out)) + ")", want, r};
}

/// rearrange: a permutation, a merge into / split of a composite, adding or
/// removing a `1`, or an ellipsis rotation.
std::optional<Val> rearrange(Gen &g, const Axes &want, int depth) {
  Axes operand = want;
  std::string extra;
  switch (g.below(5)) {
  case 0: // permutation
    if (want.size() < 2)
      return std::nullopt;
    g.shuffle(operand);
    g.note("rearrange permute");
    break;
  case 1: { // merge: want has a composite of two dims
    auto it = std::find_if(operand.begin(), operand.end(), [](const std::string &a) {
      return a.front() == '(' && a.find(' ') != std::string::npos;
    });
    if (it == operand.end())
      return std::nullopt;
    std::string inner = it->substr(1, it->size() - 2);
    std::string p = inner.substr(0, inner.find(' ')), q = inner.substr(inner.find(' ') + 1);
    if (!g.isDim(p) || !g.isDim(q) || has(want, p) || has(want, q))
      return std::nullopt;
    it = operand.erase(it);
    operand.insert(it, {p, q});
    g.shuffle(operand);
    g.note("rearrange merge");
    break;
  }
  case 2: { // split: want's dims p and q read from one composite axis
    std::vector<size_t> dimsAt;
    for (size_t i = 0; i < want.size(); ++i)
      if (g.isDim(want[i]))
        dimsAt.push_back(i);
    if (dimsAt.size() < 2)
      return std::nullopt;
    g.shuffle(dimsAt);
    std::string merged = "(" + want[dimsAt[0]] + " " + want[dimsAt[1]] + ")";
    operand = without(want, {want[dimsAt[0]], want[dimsAt[1]]});
    operand.insert(operand.begin() + g.below(int(operand.size()) + 1), merged);
    g.note("rearrange split");
    break;
  }
  case 3: { // a `1` added or removed
    auto one = std::find(operand.begin(), operand.end(), "1");
    if (one != operand.end())
      operand.erase(one);
    else
      operand.insert(operand.begin() + g.below(int(operand.size()) + 1), "1");
    g.note("rearrange 1");
    break;
  }
  default: { // "x ... -> ... x"
    if (want.size() < 2)
      return std::nullopt;
    std::string last = want.back();
    Val x = g.expr(
        [&] {
          Axes o = want;
          o.pop_back();
          o.insert(o.begin(), last);
          return o;
        }(),
        depth - 1);
    g.note("ellipsis");
    return Val{"rearrange(" + x.text + ", " + quoted(last + " ...", "... " + last) + ")", want,
               x.range};
  }
  }
  if (operand == want)
    return std::nullopt;
  Val x = g.expr(operand, depth - 1);
  return Val{"rearrange(" + x.text + ", " + quoted(side(operand), side(want)) + extra + ")", want,
             x.range};
}

/// rearrange of a list: 2 or 3 expressions with `want`'s axes stacked along
/// a new axis (an ein.concat), which a reduce then sums or maxes away.
std::optional<Val> stack(Gen &g, const Axes &want, int depth) {
  int n = 2 + g.below(2);
  bool sum = g.chance(0.5);
  std::string list;
  Range r;
  for (int i = 0; i < n; ++i) {
    Val x = g.expr(want, depth - 1);
    list += (i ? ", " : "") + x.text;
    r = i == 0 ? x.range : sum ? r + x.range : hull(r, x.range);
  }
  std::string w = side(want), sep = want.empty() ? "" : " ";
  g.note("rearrange list");
  if (!sum)
    g.note("kink");
  return Val{"reduce(rearrange([" + list + "], " +
                 quoted("stacked" + sep + w, w + sep + "stacked") + "), " +
                 quoted(w + sep + "stacked", w) + (sum ? ", sum)" : ", max)"),
             want, r};
}

/// arange along one of `want`'s dims, scaled into [0, 1), added to an
/// expression (broadcast by name).
std::optional<Val> positions(Gen &g, const Axes &want, int depth) {
  std::vector<std::string> candidates;
  for (const std::string &a : want)
    if (g.isDim(a))
      candidates.push_back(a);
  if (candidates.empty())
    return std::nullopt;
  std::string a = g.pick(candidates);
  Val x = g.expr(want, depth - 1);
  g.note("arange");
  return Val{"(" + x.text + " + arange(\"" + a + "\") / " + std::to_string(g.sizeOf(a)) + ")", want,
             x.range + Range{0, 1}};
}

/// repeat: one dim of `want` is new (its size from the dim, sometimes also
/// given as a keyword); or a number axis made and reduced away again.
std::optional<Val> repeat(Gen &g, const Axes &want, int depth) {
  if (g.chance(0.25)) {
    int64_t n = 2 + g.below(2);
    Val x = g.expr(want, depth - 1);
    std::string made = side(want) + (want.empty() ? "" : " ") + std::to_string(n);
    std::string read = side(want) + (want.empty() ? "" : " ") + "r";
    g.note("repeat by number");
    return Val{"reduce(repeat(" + x.text + ", " + quoted(side(want), made) + "), " +
                   quoted(read, side(want)) + ", max)",
               want, x.range};
  }
  std::vector<std::string> candidates;
  for (const std::string &a : want)
    if (g.isDim(a))
      candidates.push_back(a);
  if (candidates.empty())
    return std::nullopt;
  std::string fresh = g.pick(candidates);
  Axes operand = without(want, {fresh});
  if (g.chance(0.5))
    g.shuffle(operand);
  Val x = g.expr(operand, depth - 1);
  std::string keyword = g.chance(0.3) ? ", " + fresh + "=" + std::to_string(g.sizeOf(fresh)) : "";
  g.note("repeat");
  return Val{"repeat(" + x.text + ", " + quoted(side(operand), side(want)) + keyword + ")", want,
             x.range};
}

// --- composites ------------------------------------------------------------

std::optional<Val> softmax(Gen &g, const Axes &want, int depth) {
  if (want.empty())
    return std::nullopt;
  std::string axis = g.pick(want);
  if (axis.front() == '(')
    return std::nullopt;
  Val x = g.expr(want, depth - 1);
  g.note("softmax");
  return Val{"softmax(" + x.text + ", \"" + axis + "\")", want,
             softmaxRange(x.range, g.sizeOf(axis))};
}

/// log_softmax(x, "s"): x − logsumexp_s x, in [lo − hi − log n, 0].
std::optional<Val> logSoftmax(Gen &g, const Axes &want, int depth) {
  if (want.empty())
    return std::nullopt;
  std::string axis = g.pick(want);
  if (axis.front() == '(')
    return std::nullopt;
  Val x = g.bounded(g.expr(want, depth - 1), 4);
  g.note("log_softmax");
  return Val{"log_softmax(" + x.text + ", \"" + axis + "\")",
             want,
             {x.range.lo - x.range.hi - std::log(double(g.sizeOf(axis))), 0}};
}

/// where(a < b, x, y): a comparison's mask choosing between two values (a
/// kink where a = b, as relu's), the mask's operands over any of `want`'s
/// axes (broadcast by name).
std::optional<Val> where(Gen &g, const Axes &want, int depth) {
  Axes maskAxes = want.empty() || g.chance(0.5) ? want : Axes{g.pick(want)};
  Val a = g.expr(maskAxes, depth - 1), b = g.expr(maskAxes, depth - 1);
  Val x = g.expr(want, depth - 1), y = g.expr(want, depth - 1);
  static const char *kOps[] = {"<", "<=", ">", ">=", "!="};
  const char *op = kOps[g.below(5)];
  g.note("where");
  g.note("kink");
  return Val{"where(" + a.text + " " + op + " " + b.text + ", " + x.text + ", " + y.text + ")",
             want, hull(x.range, y.range)};
}

/// softmax(causal(x, "t s"), ...) over two axes of equal size.
std::optional<Val> causal(Gen &g, const Axes &want, int depth) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const std::string &t : want)
    for (const std::string &s : want)
      if (t != s && g.isDim(t) && g.isDim(s) && g.sizeOf(t) == g.sizeOf(s))
        pairs.push_back({t, s});
  if (pairs.empty())
    return std::nullopt;
  auto [t, s] = g.pick(pairs);
  Val x = g.expr(want, depth - 1);
  std::string along = g.chance(0.7) ? s : t;
  g.note("causal");
  return Val{
      "softmax(causal(" + x.text + ", \"" + t + " " + s + "\"), \"" + along + "\")", want, {0, 1}};
}

/// Attention over axis X of `want`, contracting axis F: the scores read the
/// keys' X by the local name s (causal sometimes), softmax over s, then the
/// values; the result has `want`'s axes again.
std::optional<Val> attention(Gen &g, const Axes &want, int depth) {
  if (want.size() < 2)
    return std::nullopt;
  size_t xi = size_t(g.below(int(want.size()))),
         fi = (xi + 1 + size_t(g.below(int(want.size()) - 1))) % want.size();
  const std::string &x = want[xi], &f = want[fi];
  Axes keys = want;
  keys[xi] = "s";
  Axes scores = without(want, {f});
  scores.push_back("s");
  Val q = g.bounded(g.expr(want, depth - 1), 2), k = g.bounded(g.expr(want, depth - 1), 2);
  Val v = g.expr(want, depth - 1);
  std::string att = "(einsum(" + q.text + ", " + k.text + ", " +
                    quoted(side(want) + ", " + side(keys), side(scores)) + ") / sqrt(" + f + "))";
  if (g.chance(0.6))
    att = "causal(" + att + ", \"" + x + " s\")";
  att = "softmax(" + att + ", \"s\")";
  g.note("attention");
  return Val{"einsum(" + att + ", " + v.text + ", " +
                 quoted(side(scores) + ", " + side(keys), side(want)) + ")",
             want, v.range};
}

std::optional<Val> logsumexp(Gen &g, const Axes &want, int depth) {
  std::vector<std::string> spare = g.dimsNotIn(want);
  if (spare.empty())
    return std::nullopt;
  std::string axis = g.pick(spare);
  Axes operand = want;
  operand.insert(operand.begin() + g.below(int(want.size()) + 1), axis);
  Val x = g.expr(operand, depth - 1);
  g.note("logsumexp");
  return Val{"logsumexp(" + x.text + ", \"" + axis + "\")",
             want,
             {x.range.lo, x.range.hi + std::log(double(g.sizeOf(axis)))}};
}

/// table[ids]: ids' axes, then the table's after its first (vocab).
std::optional<Val> gather(Gen &g, const Axes &want, int depth) {
  size_t k = size_t(g.below(int(want.size()) + 1));
  // The table's axes after vocab must not repeat it (patterns name axes).
  while (k < want.size() && has(Axes(want.begin() + k, want.end()), g.vocab))
    ++k;
  Axes ids(want.begin(), want.begin() + k), table = {g.vocab};
  table.insert(table.end(), want.begin() + k, want.end());
  Val t = g.chance(0.7) ? g.leaf(table) : g.expr(table, depth - 1);
  g.note("gather");
  // The ids themselves through einops (any element type): a transpose of
  // other token ids, or their max over a dim.
  std::string idsText;
  if (ids.size() >= 2 && g.chance(0.15)) {
    Axes source = ids;
    g.shuffle(source);
    idsText = "rearrange(" + g.tokens(source) + ", " + quoted(side(source), side(ids)) + ")";
    g.note("i32 rearrange");
  } else if (std::vector<std::string> spare = g.dimsNotIn(ids); !spare.empty() && g.chance(0.1)) {
    Axes source = ids;
    source.push_back(g.pick(spare));
    idsText = "reduce(" + g.tokens(source) + ", " + quoted(side(source), side(ids)) + ", max)";
    g.note("i32 reduce");
  } else {
    idsText = g.tokens(ids);
  }
  return Val{t.text + "[" + idsText + "]", want, t.range};
}

// --- functions and repeats -------------------------------------------------

namespace {
Range normalised(const Gen &g, const std::string &axis) {
  double n = std::sqrt(double(std::max<int64_t>(g.sizeOf(axis), 1)));
  return {-n, n};
}
} // namespace

/// A call of a user function: an ellipsis template over want's last dim
/// (layernorm, rmsnorm, an MLP), or a concrete function returning `want`.
std::optional<Val> fnCall(Gen &g, const Axes &want, int depth) {
  if (!want.empty() && g.isDim(want.back()) && g.chance(0.6)) {
    static const char *kinds[] = {"layernorm", "rmsnorm", "mlp"};
    const Fn fn = g.templateFn(kinds[g.below(3)], want.back()); // a copy: g.fns may grow
    Val x = g.bounded(g.expr(want, depth - 1), fn.argLimit);
    std::string text = fn.name + "(" + x.text;
    std::vector<Range> args;
    for (const Axes &p : fn.params) {
      Val a = g.bounded(g.leaf(p), 1);
      args.push_back(a.range);
      text += ", " + a.text;
    }
    Range r;
    if (fn.kind == "mlp") {
      Range h = x.range * args[0];
      h = scaled(h, double(g.sizeOf(want.back())));
      r = scaled(Range{-0.17, std::max(h.hi, 0.0)} * args[1], double(g.sizeOf(fn.params[0][1])));
    } else {
      r = normalised(g, want.back()) * args[0];
      if (fn.kind == "layernorm")
        r = r + args[1];
    }
    g.note("fn " + fn.kind);
    return Val{text + ")", want, r};
  }
  if (!g.allDims(want))
    return std::nullopt;
  const Fn *fn = nullptr;
  for (const Fn &f : g.fns)
    if (f.kind == "concrete" && f.result == want && g.chance(0.7))
      fn = &f;
  if (!fn) {
    if (g.inFunction())
      return std::nullopt;
    fn = &g.newConcreteFn(want);
  }
  std::string text = fn->name + "(";
  std::vector<Axes> params = fn->params; // newConcreteFn may grow g.fns
  double limit = fn->argLimit;
  Range r = fn->resultRange;
  for (size_t i = 0; i < params.size(); ++i)
    text += (i ? ", " : "") + g.bounded(g.expr(params[i], depth - 1), limit).text;
  g.note("fn call");
  return Val{text + ")", want, r};
}

/// An expression written earlier, written again verbatim (CSE makes one value
/// of the two, read by both consumers: issue 9's second reproducer).
std::optional<Val> again(Gen &g, const Axes &want, int) {
  std::vector<const Val *> same;
  size_t first = 0;
  for (size_t i = 0; i < g.scopes.size(); ++i)
    if (g.scopes[i].function)
      first = i;
  for (size_t i = first; i < g.scopes.size(); ++i)
    for (const Val &v : g.scopes[i].memo)
      if (v.axes == want)
        same.push_back(&v);
  if (same.empty())
    return std::nullopt;
  g.note("repeated subexpression");
  return *g.pick(same);
}

/// x op reduce(f(x)): a value beside a statistic of itself (layernorm's and
/// softmax's shape, where fusion must not make a cycle).
std::optional<Val> besideStatistic(Gen &g, const Axes &want, int depth) {
  if (want.empty() || !g.allDims(want))
    return std::nullopt;
  Val x = g.expr(want, depth - 1);
  Axes kept = subset(g, want);
  if (kept.size() == want.size())
    kept.pop_back();
  bool squashed = g.chance(0.5);
  std::string inner = squashed ? "tanh(" + x.text + ")" : x.text;
  Range ir = squashed ? Range{-1, 1} : x.range;
  static const char *kinds[] = {"mean", "max", "sum"};
  const char *kind = kinds[g.below(3)];
  Range sr = std::string(kind) == "sum"
                 ? scaled(hull(ir, x.range), double(g.elements(without(want, kept))))
                 : hull(ir, x.range);
  std::string stat = "reduce(" + inner + ", " + quoted(side(want), side(kept)) + ", " + kind + ")";
  g.note("value beside its statistic");
  if (g.chance(0.5))
    return Val{"(" + x.text + " - " + stat + ")", want, x.range + scaled(sr, -1)};
  Val xs = g.bounded(x, 3);
  return Val{"(" + xs.text + " * tanh(" + stat + "))", want, xs.range * Range{-1, 1}};
}

} // namespace einc::pipelinefuzz
