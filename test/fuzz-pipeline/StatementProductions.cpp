//===- StatementProductions.cpp - Statements, loops, functions, losses ----===//
//
// Statements as a table (assignments, rebinding, tuple unpacking, `for`
// loops with params inside, number variables), the loss as a sum of scalar
// terms from a table (reductions, cross_entropy, logsumexp, dot products),
// user functions (concrete ones with generated bodies; layernorm, rmsnorm and
// an MLP over `[..., d]`), and the `train { }` section from a table of keys.
//
//===----------------------------------------------------------------------===//
#include "GeneratorCore.h"

namespace einc::pipelinefuzz {
namespace {

/// Forgets remembered expressions that read `name` (about to be rebound to
/// a value of another range).
void forget(Gen &g, const std::string &name) {
  for (Gen::Scope &s : g.scopes)
    s.memo.erase(
        std::remove_if(s.memo.begin(), s.memo.end(),
                       [&](const Val &v) { return v.text.find(name) != std::string::npos; }),
        s.memo.end());
}

/// Assigned variables of the innermost scope (params and inputs cannot be assigned).
std::vector<Var *> assigned(Gen &g) {
  std::vector<Var *> out;
  for (Var &v : g.scopes.back().vars)
    if (v.name.front() == 'v')
      out.push_back(&v);
  return out;
}

void assign(Gen &g, int depth) {
  Axes axes = g.statementAxes();
  g.budget = 10;
  Val v = g.expr(axes, depth);
  std::string name = g.fresh("v");
  g.emit(name + " = " + v.text);
  g.scopes.back().vars.push_back({name, axes, v.range, false});
}

void rebind(Gen &g, int depth) {
  std::vector<Var *> vars = assigned(g);
  if (vars.empty() || g.innermostLoop())
    return assign(g, depth);
  // A copy: the expression may add variables (an unpacking's pieces) to
  // the scope, moving its vars.
  const Var v = *g.pick(vars);
  g.budget = 8;
  Val e = g.expr(v.axes, depth); // may read v itself
  forget(g, v.name);
  g.emit(v.name + " = " + e.text);
  for (Var &w : g.scopes.back().vars)
    if (w.name == v.name)
      w.range = e.range;
  g.note("rebinding");
}

/// a, b = t: t's first axis has as many entries as names. Either a dim of
/// that size, or gpt's q, k, v: a composite (3 Y) split off a projection.
void unpack(Gen &g, int depth) {
  std::vector<std::string> lead;
  for (const Dim &d : g.dims)
    if (d.size == 2 || d.size == 3)
      lead.push_back(d.name);
  g.budget = 10;
  std::vector<std::string> names;
  Axes parts;
  std::string text;
  Range range;
  if (!lead.empty() && g.chance(0.5)) {
    std::string p = g.pick(lead);
    Axes rest = g.randomAxes(g.below(3));
    rest.erase(std::remove(rest.begin(), rest.end(), p), rest.end());
    Axes whole = rest;
    whole.insert(whole.begin(), p);
    Val t = g.expr(whole, depth);
    for (int64_t i = 0; i < g.sizeOf(p); ++i)
      names.push_back(g.fresh("v"));
    parts = rest, text = t.text, range = t.range;
  } else {
    int64_t n = 2 + g.below(2);
    Axes two = g.randomAxes(2);
    if (two.size() < 2)
      return assign(g, depth);
    std::string x = two[0], y = two[1];
    Axes rest = g.randomAxes(g.below(3));
    rest.erase(std::remove_if(rest.begin(), rest.end(),
                              [&](const std::string &a) { return a == x || a == y; }),
               rest.end());
    Axes src = rest;
    src.push_back(x);
    Val s = g.bounded(g.expr(src, depth - 1), 2);
    Val w = g.newParam({x, "(" + std::to_string(n) + " " + y + ")"});
    Axes projected = rest, split = rest;
    projected.push_back("e");
    split.insert(split.begin(), "kq");
    split.push_back(y);
    std::string restSide = side(rest) + (rest.empty() ? "" : " ");
    text = "rearrange(einsum(" + s.text + ", " + w.text + ", \"" + side(src) + ", " + x + " e -> " +
           side(projected) + "\"), \"" + restSide + "(kq " + y + ") -> " + side(split) +
           "\", kq=" + std::to_string(n) + ")";
    for (int64_t i = 0; i < n; ++i)
      names.push_back(g.fresh("v"));
    parts = rest, parts.push_back(y);
    range = scaled(s.range * w.range, double(g.sizeOf(x)));
    g.note("composite split");
  }
  std::string lhs;
  for (const std::string &n : names)
    lhs += (lhs.empty() ? "" : ", ") + n;
  g.emit(lhs + " = " + text);
  for (const std::string &n : names)
    g.scopes.back().vars.push_back({n, parts, range, false});
  g.note("tuple unpacking");
}

void numberVariable(Gen &g, int) {
  double v = 0;
  std::string value = g.number(v);
  std::string name = g.fresh("c");
  g.emit(name + " = " + value + " * 2");
  g.numberVars.push_back({name, 2 * v});
  g.note("number variable");
}

struct StatementProduction {
  const char *name;
  int weight;
  void (*make)(Gen &, int depth);
};

const StatementProduction kStatements[] = {
    {"assign", 8, assign},         {"rebind", 2, rebind},
    {"unpack", 1, unpack},         {"loop", 2, [](Gen &g, int depth) { g.forLoop(depth); }},
    {"number", 1, numberVariable},
};

// --- loss terms ------------------------------------------------------------

using Term = std::string (*)(Gen &, int depth, Range &);

std::string reduceAll(Gen &g, int depth, Range &r) {
  Axes axes = g.statementAxes();
  if (axes.empty())
    axes = g.randomAxes(1);
  Val x = g.expr(axes, depth);
  static const char *kinds[] = {"mean", "sum", "max", "min"};
  const char *kind = kinds[g.weighted({5, 3, 1, 1})];
  r = std::string(kind) == "sum" ? scaled(x.range, double(g.elements(axes))) : x.range;
  std::string lhs = g.chance(0.2) ? "..." : side(axes);
  return "reduce(" + x.text + ", \"" + lhs + " ->\", " + kind + ")";
}

std::string crossEntropy(Gen &g, int depth, Range &r) {
  Axes axes = g.randomAxes(g.weighted({1, 4, 3}));
  axes.erase(std::remove(axes.begin(), axes.end(), g.vocab), axes.end());
  Axes logits = axes;
  logits.push_back(g.vocab);
  Val x = g.bounded(g.expr(logits, depth), 8);
  r = {0, 2 * x.range.mag() + std::log(double(g.sizeOf(g.vocab)))};
  g.note("cross_entropy");
  // torch's options: a smoothing share, and an ignored class where there are
  // enough positions that not all of them are ignored (0/0).
  std::string options;
  if (g.chance(0.25)) {
    g.note("label_smoothing");
    options += ", label_smoothing=0." + std::to_string(1 + g.below(9));
  }
  if (g.elements(axes) >= 12 && g.chance(0.5)) {
    g.note("ignore_index");
    options += ", ignore_index=" + std::to_string(g.below(g.sizeOf(g.vocab)));
  }
  return "cross_entropy(" + x.text + ", " + g.tokens(axes) + options + ")";
}

std::string dot(Gen &g, int depth, Range &r) {
  Axes axes = g.randomAxes(1 + g.below(2));
  Val a = g.bounded(g.expr(axes, depth), 3), b = g.bounded(g.expr(axes, depth), 3);
  r = scaled(a.range * b.range, double(g.elements(axes)));
  g.note("einsum to a scalar");
  return "einsum(" + a.text + ", " + b.text + ", \"" + side(axes) + ", " + side(axes) + " ->\")";
}

std::string logsumexpAll(Gen &g, int depth, Range &r) {
  Axes axes = g.randomAxes(1);
  Val x = g.expr(axes, depth);
  r = {x.range.lo, x.range.hi + std::log(double(g.elements(axes)))};
  g.note("logsumexp");
  return "logsumexp(" + x.text + ", \"" + axes[0] + "\")";
}

std::string scalarValue(Gen &g, int depth, Range &r) {
  Val x = g.expr({}, depth);
  r = x.range;
  return x.text;
}

const struct {
  const char *name;
  int weight;
  Term make;
} kTerms[] = {
    {"reduce", 6, reduceAll},       {"cross_entropy", 4, crossEntropy}, {"dot", 2, dot},
    {"logsumexp", 1, logsumexpAll}, {"scalar", 1, scalarValue},
};

} // namespace

void Gen::statement(int depth) {
  std::vector<int> weights;
  for (const StatementProduction &s : kStatements)
    weights.push_back(s.weight);
  const StatementProduction &s = kStatements[weighted(weights)];
  if (std::string(s.name) == "loop" && (innermostLoop() || depth < 2))
    return assign(*this, depth);
  s.make(*this, depth);
}

void Gen::forLoop(int depth) {
  // The carried variable, assigned before the loop.
  std::vector<Var *> vars = assigned(*this);
  if (vars.empty() || chance(0.3)) {
    assign(*this, depth);
    vars = assigned(*this);
  }
  Var &h = *vars.back();
  std::string carried = h.name;
  Axes axes = h.axes;
  // The loop's dim: a new one of 1..3 iterations, or an existing small dim.
  std::string over, var = fresh("i");
  int64_t count = 0;
  for (const Dim &d : dims)
    if (d.size <= 3 && d.name != vocab && chance(0.3))
      over = d.name, count = d.size;
  if (over.empty()) {
    over = fresh("layers");
    count = 1 + below(3);
    dims.push_back({over, count, ""});
  }
  // Every iteration's update keeps h in one range: tanh(...) or h + 0.25 tanh(...).
  bool residual = chance(0.5);
  Range inLoop = residual
                     ? Range{h.range.lo - 0.25 * double(count), h.range.hi + 0.25 * double(count)}
                     : hull(h.range, {-1, 1});
  forget(*this, carried);
  h.range = inLoop;
  emit("for " + var + " in " + over + " {");
  scopes.push_back({});
  scopes.back().loopVar = var;
  scopes.back().loopCount = count;
  int statements = 1 + below(3);
  int update = below(statements);
  for (int i = 0; i < statements; ++i) {
    if (i == update) {
      budget = 8;
      Val e = expr(axes, depth - 1);
      emit(carried + " = " +
           (residual ? carried + " + 0.25 * tanh(" + e.text + ")" : "tanh(" + e.text + ")"));
    } else if (depth > 2 && chance(0.15)) {
      forLoop(depth - 1);
      note("nested loop");
    } else {
      assign(*this, depth - 1);
    }
  }
  Scope body = std::move(scopes.back());
  scopes.pop_back();
  for (std::string &line : body.lines)
    scopes.back().lines.push_back(std::move(line));
  emit("}");
  for (Var &v : body.vars) // visible after the loop: the last iteration's
    scopes.back().vars.push_back(std::move(v));
  for (Var &v : scopes.back().vars)
    if (v.name == carried)
      v.range = inLoop;
  note("for");
}

std::string Gen::lossTerm(int depth, Range &range) {
  std::vector<int> weights;
  for (const auto &t : kTerms)
    weights.push_back(t.weight);
  const auto &t = kTerms[weighted(weights)];
  std::string text = t.make(*this, depth, range);
  if (chance(0.1)) {
    note("wrapped loss term");
    return "tanh(" + text + ")";
  }
  return text;
}

const Fn &Gen::newConcreteFn(const Axes &result) {
  Fn fn;
  fn.name = fresh("f");
  fn.kind = "concrete";
  fn.result = result;
  fn.params.push_back(result);
  for (int i = below(3); i > 0; --i)
    fn.params.push_back(chance(0.5) ? randomAxes(below(3)) : result);
  scopes.push_back({});
  scopes.back().function = true;
  std::string header = "fn " + fn.name + "(";
  for (size_t i = 0; i < fn.params.size(); ++i) {
    std::string name = fresh("a");
    std::string shape = "[";
    for (size_t k = 0; k < fn.params[i].size(); ++k)
      shape += (k ? ", " : "") + fn.params[i][k];
    header += (i ? ", " : "") + name + ": " + (chance(0.2) ? "f32" : "") + shape + "]";
    scopes.back().vars.push_back({name, fn.params[i], {-fn.argLimit, fn.argLimit}, false});
  }
  header += ") -> [";
  for (size_t k = 0; k < result.size(); ++k)
    header += (k ? ", " : "") + result[k];
  header += "] {";
  int saved = budget;
  for (int i = below(3); i > 0; --i) {
    Axes axes = randomAxes(below(3));
    budget = 6;
    Val v = expr(axes, 2);
    std::string name = fresh("u");
    emit(name + " = " + v.text);
    scopes.back().vars.push_back({name, axes, v.range, false});
  }
  budget = 8;
  Val ret = expr(result, 3);
  emit("return " + ret.text);
  fn.resultRange = ret.range;
  budget = saved;
  std::string text = header + "\n";
  for (const std::string &line : scopes.back().lines)
    text += line + "\n";
  text += "}\n";
  scopes.pop_back();
  fnDefs.push_back(text);
  fns.push_back(fn);
  note("fn concrete");
  return fns.back();
}

const Fn &Gen::templateFn(const std::string &kind, const std::string &last) {
  for (const Fn &f : fns)
    if (f.kind == kind && f.last == last)
      return f;
  Fn fn;
  fn.kind = kind;
  fn.last = last;
  fn.argLimit = 3;
  const std::string &d = last;
  std::string text;
  if (kind == "layernorm") {
    fn.name = "ln_" + d;
    fn.params = {{d}, {d}};
    text = "fn " + fn.name + "(x: [..., " + d + "], g: [" + d + "], b: [" + d + "]) -> [..., " + d +
           "] {\n" + "    mu = reduce(x, \"... " + d + " -> ...\", mean)\n    xc = x - mu\n" +
           "    var = reduce(xc * xc, \"... " + d + " -> ...\", mean)\n" +
           "    return xc * rsqrt(var + 1e-5) * g + b\n}\n";
  } else if (kind == "rmsnorm") {
    fn.name = "rms_" + d;
    fn.params = {{d}};
    text = "fn " + fn.name + "(x: f32[..., " + d + "], g: [" + d + "]) -> [..., " + d + "] {\n" +
           "    ms = reduce(x * x, \"... " + d + " -> ...\", mean)\n" +
           "    return x * rsqrt(ms + 1e-5) * g\n}\n";
  } else { // an MLP through a second dim
    std::vector<std::string> others = dimsNotIn({d});
    std::string y = others.empty() ? d : pick(others);
    if (y == d) // no second dim: a square MLP, its inner axis read by a local name
      y = "k1";
    fn.name = "mlp_" + d;
    std::string hidden = y == "k1" ? d : y;
    fn.params = {{d, hidden}, {hidden, d}};
    std::string inner = y == "k1" ? "k1" : y;
    text = "fn " + fn.name + "(x: [..., " + d + "], w1: [" + d + ", " + hidden + "], w2: [" +
           hidden + ", " + d + "]) -> [..., " + d + "] {\n" + "    h = gelu(einsum(x, w1, \"... " +
           d + ", " + d + " " + inner + " -> ... " + inner + "\"))\n" +
           "    return einsum(h, w2, \"... " + inner + ", " + inner + " " + d + " -> ... " + d +
           "\")\n}\n";
  }
  fnDefs.push_back(text);
  fns.push_back(fn);
  return fns.back();
}

std::string Gen::trainSection() {
  std::vector<std::string> lines;
  auto word = [&](const std::string &w) { return chance(0.3) ? "\"" + w + "\"" : w; };
  static const std::vector<std::string> optimizers = {"adamw", "adam", "sgd", "adagrad"};
  std::string optimizer = pick(optimizers);
  if (optimizer != "adamw" || chance(0.7))
    lines.push_back("optimizer = " + word(optimizer));
  note("optimizer " + optimizer);
  if (chance(0.7))
    lines.push_back("lr = " +
                    pick(std::vector<std::string>{"1e-3", "0.01", "0.05", "1 / 100", "3e-2"}));
  if (chance(0.2))
    lines.push_back("min_lr = 1e-4");
  if (optimizer.rfind("adam", 0) == 0) {
    if (chance(0.3))
      lines.push_back("beta1 = " + pick(std::vector<std::string>{"0.8", "0.9", "0.95"}));
    if (chance(0.3))
      lines.push_back("beta2 = " + pick(std::vector<std::string>{"0.99", "0.999", "0.95"}));
  }
  if (chance(0.2))
    lines.push_back("eps = " + pick(std::vector<std::string>{"1e-8", "1e-6", "1e-3"}));
  if (chance(0.3))
    lines.push_back("weight_decay = " + pick(std::vector<std::string>{"0", "0.01", "0.1"}));
  if (chance(0.3))
    lines.push_back("decay = " + word(pick(std::vector<std::string>{"matrices", "all"})));
  if (optimizer == "sgd") {
    std::string momentum = pick(std::vector<std::string>{"0", "0.9", "0.5"});
    bool given = chance(0.8); // else torch's default, 0
    if (given)
      lines.push_back("momentum = " + momentum);
    note(given && momentum != "0" ? "sgd with momentum" : "sgd without momentum");
  }
  if (chance(0.5))
    lines.push_back("clip = " + pick(std::vector<std::string>{"0", "0.5", "1", "1e3"}));
  if (chance(0.3))
    lines.push_back("schedule = " + word(pick(std::vector<std::string>{"cosine", "constant"})));
  if (chance(0.3))
    lines.push_back("warmup = " + pick(std::vector<std::string>{"0", "1", "5"}));
  if (chance(0.3))
    lines.push_back("steps = " + pick(std::vector<std::string>{"10", "50", "2 * 5"}));
  if (chance(0.3)) {
    lines.push_back("accumulate = " + pick(std::vector<std::string>{"1", "2", "3"}));
    note("accumulate");
  }
  if (chance(0.1))
    lines.push_back("eval_every = 5");
  if (chance(0.1))
    lines.push_back("eval_steps = 2");
  if (chance(0.2))
    lines.push_back("seed = " + std::to_string(below(100)));
  if (chance(0.1))
    lines.push_back("precision = fp32");
  if (chance(0.1))
    lines.push_back("remat = none");
  if (chance(0.3))
    lines.push_back("fusion = " + word(pick(std::vector<std::string>{"on", "off"})));
  shuffle(lines);
  std::string text = "train {\n";
  for (const std::string &l : lines)
    text += "    " + l + "\n";
  return text + "}\n";
}

} // namespace einc::pipelinefuzz
