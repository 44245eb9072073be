//===- GeneratorCore.cpp - Dims, declarations, scopes and leaves ----------===//
#include "GeneratorCore.h"

#include <sstream>

namespace einc::pipelinefuzz {

Range hull(Range a, Range b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }
Range operator+(Range a, Range b) { return {a.lo + b.lo, a.hi + b.hi}; }
Range operator*(Range a, Range b) {
  double p[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
}
Range scaled(Range a, double k) {
  return k >= 0 ? Range{a.lo * k, a.hi * k} : Range{a.hi * k, a.lo * k};
}

std::string literal(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v;
  std::string s = os.str();
  return v < 0 ? "(" + s + ")" : s;
}

std::string side(const Axes &axes) {
  std::string s;
  for (const std::string &a : axes)
    s += (s.empty() ? "" : " ") + a;
  return s;
}

namespace {
// Names of dims; none is within one edit of another's usual local names
// ("k1", "s", "e"), which are one or two letters (docs/language.md §4 rule 4).
const std::vector<std::string> kDimNames = {"batch", "seq",    "d",  "hidden", "heads",
                                            "ctx",   "embed",  "n",  "m",      "width",
                                            "chan",  "groups", "hd", "ff"};
} // namespace

Gen::Gen(uint64_t seed) : rng(seed ^ 0x9e3779b97f4a7c15ull) {
  // 3..6 dims of sizes 1..5 (size 1 on purpose), then vocab.
  std::vector<std::string> names = kDimNames;
  shuffle(names);
  int count = 3 + below(4);
  for (int i = 0; i < count; ++i) {
    static const std::vector<int> sizeWeights = {0, 2, 4, 4, 3, 2}; // sizes 0..5
    dims.push_back({names[size_t(i)], int64_t(weighted(sizeWeights)), ""});
  }
  // Sometimes a dim computed from another (`dim ff = 2 * d`, `dim hd = d / 2`).
  if (chance(0.3)) {
    const Dim base = dims[size_t(below(count))];
    std::string name = names[size_t(count)];
    if (base.size % 2 == 0 && chance(0.5))
      dims.push_back({name, base.size / 2, base.name + " / 2"});
    else if (base.size <= 3)
      dims.push_back({name, 2 * base.size, "2 * " + base.name});
  }
  vocab = "vocab";
  dims.push_back({vocab, 2 + below(4), ""});
}

int Gen::weighted(const std::vector<int> &weights) {
  int total = 0;
  for (int w : weights)
    total += w;
  int r = below(total);
  for (size_t i = 0; i < weights.size(); ++i) {
    if (r < weights[i])
      return int(i);
    r -= weights[i];
  }
  return int(weights.size()) - 1;
}

bool Gen::isDim(const std::string &axis) const {
  return std::any_of(dims.begin(), dims.end(), [&](const Dim &d) { return d.name == axis; });
}

int64_t Gen::sizeOf(const std::string &axis) const {
  for (const Dim &d : dims)
    if (d.name == axis)
      return d.size;
  if (!axis.empty() && axis.front() == '(') { // a composite "(a b)"
    std::istringstream in(axis.substr(1, axis.size() - 2));
    int64_t n = 1;
    for (std::string part; in >> part;)
      n *= sizeOf(part);
    return n;
  }
  return std::stoll(axis); // an integer axis ("1", "2")
}

int64_t Gen::elements(const Axes &axes) const {
  int64_t n = 1;
  for (const std::string &a : axes)
    n *= sizeOf(a);
  return n;
}

bool Gen::allDims(const Axes &axes) const {
  return std::all_of(axes.begin(), axes.end(), [&](const std::string &a) { return isDim(a); });
}

std::vector<std::string> Gen::dimsNotIn(const Axes &axes) const {
  std::vector<std::string> out;
  for (const Dim &d : dims)
    if (std::find(axes.begin(), axes.end(), d.name) == axes.end())
      out.push_back(d.name);
  return out;
}

Axes Gen::randomAxes(int rank) {
  Axes all;
  for (const Dim &d : dims)
    all.push_back(d.name);
  shuffle(all);
  all.resize(std::min<size_t>(all.size(), size_t(std::max(rank, 0))));
  return all;
}

Axes Gen::statementAxes() {
  std::vector<const Var *> vars = visible();
  // Patterns can write every axis but a composite holding a number, such as
  // the "(2 d)" of a projection that tuple unpacking splits: einops takes
  // numbers on the left only as `1` (and in reduce).
  auto writable = [&](const Axes &axes) {
    return std::all_of(axes.begin(), axes.end(), [&](const std::string &a) {
      return a.front() != '(' || a.find_first_of("0123456789") == std::string::npos;
    });
  };
  vars.erase(std::remove_if(vars.begin(), vars.end(),
                            [&](const Var *v) { return v->tokens || !writable(v->axes); }),
             vars.end());
  if (!vars.empty() && chance(0.4))
    return pick(vars)->axes;
  Axes axes = randomAxes(weighted({1, 6, 8, 5}));
  // Now and then a composite or a size-1 integer axis (declared shapes have them).
  if (axes.size() >= 2 && chance(0.12)) {
    std::string merged = "(" + axes[0] + " " + axes[1] + ")";
    axes.erase(axes.begin(), axes.begin() + 2);
    axes.insert(axes.begin() + below(int(axes.size()) + 1), merged);
  } else if (!axes.empty() && chance(0.08)) {
    axes.insert(axes.begin() + below(int(axes.size()) + 1), "1");
  }
  return axes;
}

void Gen::emit(const std::string &line) { scopes.back().lines.push_back(indent() + line); }

std::string Gen::indent() const {
  // A fn body is at top level whatever scope asked for the function.
  size_t first = 0;
  for (size_t i = 0; i < scopes.size(); ++i)
    if (scopes[i].function)
      first = i;
  int depth = 0;
  for (size_t i = first; i < scopes.size(); ++i)
    depth += scopes[i].function || !scopes[i].loopVar.empty();
  return std::string(size_t(4 * depth), ' ');
}

std::vector<const Var *> Gen::visible() const {
  std::vector<const Var *> out;
  for (const Var &v : globals)
    out.push_back(&v);
  // A fn body sees top-level params and inputs and its own scope only.
  size_t first = 0;
  for (size_t i = 0; i < scopes.size(); ++i)
    if (scopes[i].function)
      first = i;
  for (size_t i = first; i < scopes.size(); ++i)
    for (const Var &v : scopes[i].vars)
      out.push_back(&v);
  return out;
}

std::string Gen::fresh(const std::string &prefix) { return prefix + std::to_string(counter++); }

bool Gen::inFunction() const {
  return std::any_of(scopes.begin(), scopes.end(), [](const Scope &s) { return s.function; });
}

const Gen::Scope *Gen::innermostLoop() const {
  for (size_t i = scopes.size(); i-- > 0;) {
    if (scopes[i].function)
      return nullptr;
    if (!scopes[i].loopVar.empty())
      return &scopes[i];
  }
  return nullptr;
}

namespace {
std::string shapeText(const Axes &axes) {
  std::string s = "[";
  for (size_t i = 0; i < axes.size(); ++i)
    s += (i ? ", " : "") + axes[i];
  return s + "]";
}
} // namespace

Val Gen::newParam(const Axes &axes) {
  std::string name = fresh("w");
  const Scope *loop = innermostLoop();
  // The initialiser, every form of docs/language.md §3.3; its range of values.
  std::string init;
  Range range;
  switch (weighted({6, 3, 2, 2, 1})) {
  case 0: { // normal(std, clip, mean)
    double std = 0;
    std::string stdText;
    switch (below(4)) {
    case 0:
      std = 0.5, stdText = "0.5";
      break;
    case 1:
      std = 1, stdText = "1";
      break;
    case 2: {
      std::string d = pick(dims).name;
      std = 1 / std::sqrt(double(sizeOf(d))), stdText = "1/sqrt(" + d + ")";
      break;
    }
    default:
      if (loop) { // std shrinking with depth, as gpt.ein's residual projections
        std = 0.5, stdText = "0.5 / (" + loop->loopVar + " + 1)";
      } else {
        std::string d = pick(dims).name;
        std = 0.3 / std::sqrt(2.0 * double(sizeOf(d))), stdText = "0.3/sqrt(2*" + d + ")";
      }
    }
    bool clip = chance(0.5), mean = chance(0.25);
    double clipValue = clip ? 2 + below(2) : 4, meanValue = mean ? 0.5 : 0;
    bool keywords = chance(0.6);
    if (keywords) {
      init = "normal(std=" + stdText + (clip ? ", clip=" + literal(clipValue) : "") +
             (mean ? ", mean=0.5" : "") + ")";
    } else {
      init = "normal(" + stdText + (clip || mean ? ", " + literal(clipValue) : "") +
             (mean ? ", 0.5" : "") + ")";
    }
    range = {meanValue - clipValue * std, meanValue + clipValue * std};
    break;
  }
  case 1: { // uniform(low, high)
    static const double lows[] = {-1, -0.5, 0.1, -0.25};
    static const double widths[] = {0.5, 1, 2};
    double low = lows[below(4)], high = low + widths[below(3)];
    init = chance(0.5) ? "uniform(" + literal(low) + ", " + literal(high) + ")"
                       : "uniform(low=" + literal(low) + ", high=" + literal(high) + ")";
    range = {low, high};
    break;
  }
  case 2:
    init = "zeros", range = {0, 0};
    break;
  case 3:
    init = "ones", range = {1, 1};
    break;
  default: // omitted: normal(std=0.02)
    range = {-0.08, 0.08};
  }
  std::string line = "param " + name + ": " + (chance(0.15) ? "f32" : "") + shapeText(axes) +
                     (init.empty() ? "" : " ~ " + init);
  Var v{name, axes, range, false};
  if (loop) {
    note("param in a loop");
    emit(line);
    scopes.back().vars.push_back(v);
  } else {
    decls.push_back(line);
    globals.push_back(v);
  }
  return {name, axes, range};
}

Val Gen::newInput(const Axes &axes) {
  std::string name = fresh("x");
  decls.push_back("input " + name + ": f32" + shapeText(axes));
  globals.push_back({name, axes, {-4, 4}, false}); // filled with N(0, 1)
  return {name, axes, {-4, 4}};
}

std::string Gen::tokens(const Axes &axes) {
  for (const Var &v : globals)
    if (v.tokens && v.axes == axes && chance(0.8))
      return v.name;
  std::string name = fresh("t");
  decls.push_back("input " + name + ": i32" + shapeText(axes));
  globals.push_back({name, axes, {0, double(sizeOf(vocab) - 1)}, true});
  note("i32 input");
  return name;
}

Val Gen::leaf(const Axes &want) {
  std::vector<const Var *> same;
  for (const Var *v : visible())
    if (!v->tokens && v->axes == want)
      same.push_back(v);
  if (!same.empty() && chance(0.75)) {
    const Var *v = pick(same);
    return {v->name, v->axes, v->range};
  }
  if (chance(0.3) && !innermostLoop())
    return newInput(want);
  return newParam(want);
}

Val Gen::positive(Val v, double floor) {
  if (v.range.lo >= floor)
    return v;
  note("positive wrapper");
  switch (below(4)) {
  case 0: {
    Val t = bounded(v, 3);
    return {"exp(tanh(" + t.text + "))", v.axes, {std::exp(-1.0), std::exp(1.0)}};
  }
  case 1: {
    double m = v.range.mag();
    return {"(" + v.text + " * " + v.text + " + 0.5)", v.axes, {0.5, m * m + 0.5}};
  }
  case 2:
    return {"(sigmoid(" + v.text + ") + 0.5)", v.axes, {0.5, 1.5}};
  default:
    return {"(abs(" + v.text + ") + 0.5)", v.axes, {0.5, v.range.mag() + 0.5}};
  }
}

Val Gen::bounded(Val v, double limit) {
  if (v.range.mag() <= limit)
    return v;
  if (chance(0.5)) {
    double k = std::ceil(v.range.mag() / limit);
    return {"(" + v.text + " / " + literal(k) + ")", v.axes, scaled(v.range, 1 / k)};
  }
  double k = std::min(limit, 1.0);
  if (k == 1)
    return {"tanh(" + v.text + ")", v.axes, {-1, 1}};
  return {"(" + literal(k) + " * tanh(" + v.text + "))", v.axes, {-k, k}};
}

std::string Gen::number(double &value) {
  switch (weighted({5, 2, 2, 1, 2})) {
  case 0: {
    static const double values[] = {0.5, 2, 0.25, 1.5, 3, 0.1};
    value = values[below(6)];
    return literal(value);
  }
  case 1: {
    const Dim &d = pick(dims);
    value = double(d.size);
    return d.name;
  }
  case 2: {
    const Dim &d = pick(dims);
    value = std::sqrt(double(d.size));
    return "sqrt(" + d.name + ")";
  }
  case 3: // number variables are top-level names: not read from fn bodies
    if (!numberVars.empty() && !inFunction()) {
      const auto &[name, v] = pick(numberVars);
      value = v;
      return name;
    }
    value = 2;
    return "2";
  default:
    if (const Scope *loop = innermostLoop()) {
      note("loop variable");
      value = double(loop->loopCount); // the largest of 1 .. count
      return "(" + loop->loopVar + " + 1)";
    }
    value = 0.5;
    return "0.5";
  }
}

GeneratedProgram Gen::run() {
  scopes.push_back({});
  if (chance(0.3)) {
    std::string name = fresh("c");
    double v = 0.5 + below(4);
    emit(name + " = " + literal(v) + " / 2");
    numberVars.push_back({name, v / 2});
    note("number variable");
  }
  // Now and then a large program: more values for fusion to group and
  // schedule around each other (issue 9's class needs a tangled graph).
  bool large = chance(0.12);
  int statements = large ? 8 + below(7) : 2 + below(5);
  if (large)
    note("large program");
  for (int i = 0; i < statements; ++i)
    statement(3);
  // Outputs: a few variables (also after the loss's own terms).
  std::set<std::string> outputs;
  for (const Var &v : std::vector<Var>(scopes.back().vars))
    if (chance(0.2) && outputs.insert(v.name).second) {
      emit("output " + v.name);
      note("output");
    }
  if (chance(0.1)) { // an output of an expression: named output<i>
    budget = 4;
    // A bare name is an output of that name, which may be taken.
    std::string text = expr(statementAxes(), 2).text;
    if (text.find_first_of("([") == std::string::npos && !outputs.insert(text).second)
      text = "(" + text + " * 2)";
    emit("output " + text);
    note("output of an expression");
  }
  int terms = 1 + weighted({5, 3, 2});
  std::string loss;
  for (int t = 0; t < terms; ++t) {
    Range r;
    budget = 14;
    std::string term = lossTerm(3, r);
    if (t == 0) {
      loss = term;
      continue;
    }
    double k = 0;
    std::string coefficient = number(k);
    loss += (chance(0.3) ? " - " : " + ") + coefficient + " * " + term;
  }
  if (terms > 1)
    note("several loss terms");
  emit("minimize " + loss);

  std::ostringstream out;
  for (const Dim &d : dims)
    out << "dim " << d.name << " = " << (d.expr.empty() ? std::to_string(d.size) : d.expr) << "\n";
  for (const std::string &line : decls)
    out << line << "\n";
  for (const std::string &fn : fnDefs)
    out << fn;
  for (const std::string &line : scopes.back().lines)
    out << line << "\n";
  if (chance(0.85))
    out << trainSection();
  return {out.str(), features};
}

GeneratedProgram generateProgram(uint64_t seed) { return Gen(seed).run(); }

} // namespace einc::pipelinefuzz
