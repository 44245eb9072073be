//===- ViewProductions.cpp - Views read by every kind of consumer ---------===//
//
// Issue 25, item 2: the CPU backend read the second piece of a split
// composite one element in, and the tester never drew such a piece read by a
// kernel. `viewRead` draws a consumer from one table and the view it reads
// from another, so that every view kind meets every consumer:
//
//   views:     a piece of an unpacking (`a, b = t`: a slice) of a computed
//              value, of an argument, of a split composite (a slice of a
//              reshape: `(two m) n -> two m n`, or the whole value flat), of
//              a transposed split (gpt's q, k, v), of a piece; a transpose;
//              a broadcast (repeat);
//   consumers: an elementwise kernel, a row kernel (softmax), a reduction,
//              either operand of a GEMM (einsum), a GEMM's epilogue (a
//              residual added to a contraction), a copy (the view unpacked
//              again: the gradient's concat copies parts).
//
// An unpacking is a statement: it is emitted before the statement whose
// expression reads it, and its pieces stay visible as variables.
//
//===----------------------------------------------------------------------===//
#include "Productions.h"

namespace einc::pipelinefuzz {
namespace {

/// Whether dim `name` is one of `axes` or inside one of its composites.
bool mentions(const Axes &axes, const std::string &name) {
  return std::any_of(axes.begin(), axes.end(), [&](const std::string &a) {
    if (a == name)
      return true;
    if (a.front() != '(')
      return false;
    std::string words = " " + a.substr(1, a.size() - 2) + " ";
    return words.find(" " + name + " ") != std::string::npos;
  });
}

/// Dims of size 2 or 3 that `axes` lacks: the leading axis of an unpacking.
std::vector<std::string> pieceDims(const Gen &g, const Axes &axes) {
  std::vector<std::string> out;
  for (const Dim &d : g.dims)
    if ((d.size == 2 || d.size == 3) && !mentions(axes, d.name))
      out.push_back(d.name);
  return out;
}

/// `names = text` (as many names as `count`), the names visible as
/// variables with `axes`; returns one of them, rarely the first (whose
/// offset is 0).
std::string unpackInto(Gen &g, const std::string &text, int64_t count, const Axes &axes,
                       Range range) {
  std::vector<std::string> names;
  std::string lhs;
  for (int64_t i = 0; i < count; ++i) {
    names.push_back(g.fresh("v"));
    lhs += (i ? ", " : "") + names.back();
  }
  g.emit(lhs + " = " + text);
  for (const std::string &n : names)
    g.scopes.back().vars.push_back({n, axes, range, false});
  g.note("tuple unpacking");
  return g.chance(0.2) ? names.front() : names[size_t(1 + g.below(int(count) - 1))];
}

// --- views -----------------------------------------------------------------

/// A value with exactly `axes` made by a view; its text (atomic) and range.
using MakeView = std::optional<Val> (*)(Gen &, const Axes &, int depth);

/// A piece of an unpacking of `[p, axes...]`: of a computed value or a leaf.
std::optional<Val> piece(Gen &g, const Axes &axes, int depth, bool computed) {
  std::vector<std::string> lead = pieceDims(g, axes);
  if (lead.empty())
    return std::nullopt;
  std::string p = g.pick(lead);
  Axes whole = axes;
  whole.insert(whole.begin(), p);
  Val t = computed ? g.expr(whole, depth - 1) : g.leaf(whole);
  return Val{unpackInto(g, t.text, g.sizeOf(p), axes, t.range), axes, t.range};
}

/// A piece of a split composite: `rearrange(t, "(p a) b -> p a b")`, or the
/// whole value flat, `"(p a b) -> p a b"` (issue 25's program). Without a
/// dim of size 2 or 3, the composite holds the number 2 (a leaf: patterns
/// do not write numbers in composites).
std::optional<Val> splitPiece(Gen &g, const Axes &axes, int depth) {
  if (axes.empty() || !g.allDims(axes))
    return std::nullopt;
  std::vector<std::string> lead = pieceDims(g, axes);
  bool flat = g.chance(0.5);
  Axes split = axes;
  std::string p = lead.empty() ? "k1" : g.pick(lead);
  split.insert(split.begin(), p);
  std::string inner = flat ? side(split) : p + " " + axes[0];
  Axes source = flat ? Axes{} : Axes(axes.begin() + 1, axes.end());
  Val t;
  std::string keyword;
  if (lead.empty()) {
    source.insert(source.begin(), "(2 " + side(flat ? axes : Axes{axes[0]}) + ")");
    t = g.leaf(source);
    if (g.chance(0.5))
      t = {"tanh(" + t.text + ")", t.axes, {-1, 1}};
    keyword = ", k1=2";
  } else {
    source.insert(source.begin(), "(" + inner + ")");
    t = g.expr(source, depth - 1);
  }
  Axes written = source;
  written.front() = "(" + inner + ")";
  std::string text =
      "rearrange(" + t.text + ", " + quoted(side(written), side(split)) + keyword + ")";
  g.note(flat ? "view split flat" : "view split");
  return Val{unpackInto(g, text, lead.empty() ? 2 : g.sizeOf(p), axes, t.range), axes, t.range};
}

/// gpt's q, k, v: `rearrange(t, "a (p b) -> p a b")`, a transpose then a slice.
std::optional<Val> transposedSplitPiece(Gen &g, const Axes &axes, int depth) {
  std::vector<std::string> lead = pieceDims(g, axes);
  if (axes.empty() || !g.allDims(axes) || lead.empty())
    return std::nullopt;
  std::string p = g.pick(lead);
  Axes source(axes.begin(), axes.end() - 1), split = axes;
  source.push_back("(" + p + " " + axes.back() + ")");
  split.insert(split.begin(), p);
  Val t = g.expr(source, depth - 1);
  std::string text = "rearrange(" + t.text + ", " + quoted(side(source), side(split)) + ")";
  return Val{unpackInto(g, text, g.sizeOf(p), axes, t.range), axes, t.range};
}

/// A piece of a piece: `a, b = t` then `c, d = b` (a view of a view).
std::optional<Val> pieceOfPiece(Gen &g, const Axes &axes, int depth) {
  std::vector<std::string> lead = pieceDims(g, axes);
  if (lead.size() < 2)
    return std::nullopt;
  g.shuffle(lead);
  Axes inner = axes, outer = axes;
  inner.insert(inner.begin(), lead[1]);
  outer.insert(outer.begin(), lead[1]);
  outer.insert(outer.begin(), lead[0]);
  Val t = g.chance(0.5) ? g.expr(outer, depth - 1) : g.leaf(outer);
  std::string first = unpackInto(g, t.text, g.sizeOf(lead[0]), inner, t.range);
  return Val{unpackInto(g, first, g.sizeOf(lead[1]), axes, t.range), axes, t.range};
}

std::optional<Val> transposed(Gen &g, const Axes &axes, int depth) {
  if (axes.size() < 2)
    return std::nullopt;
  Axes source = axes;
  while (source == axes)
    g.shuffle(source);
  Val t = g.expr(source, depth - 1);
  return Val{"rearrange(" + t.text + ", " + quoted(side(source), side(axes)) + ")", axes, t.range};
}

std::optional<Val> broadcast(Gen &g, const Axes &axes, int depth) {
  std::vector<std::string> dims;
  for (const std::string &a : axes)
    if (g.isDim(a))
      dims.push_back(a);
  if (dims.empty())
    return std::nullopt;
  Axes source = without(axes, {g.pick(dims)});
  Val t = g.expr(source, depth - 1);
  return Val{"repeat(" + t.text + ", " + quoted(side(source), side(axes)) + ")", axes, t.range};
}

const struct {
  const char *name;
  MakeView make;
} kViews[] = {
    {"piece", [](Gen &g, const Axes &a, int d) { return piece(g, a, d, true); }},
    {"argument piece", [](Gen &g, const Axes &a, int d) { return piece(g, a, d, false); }},
    {"split piece", splitPiece},
    {"transposed split piece", transposedSplitPiece},
    {"piece of a piece", pieceOfPiece},
    {"transpose", transposed},
    {"broadcast", broadcast},
};

/// A view with exactly `axes`, of a kind drawn from kViews (the next that
/// can make `axes` when the one drawn cannot); noted as read by `consumer`.
std::optional<Val> view(Gen &g, const Axes &axes, int depth, const std::string &consumer) {
  int n = int(std::size(kViews)), first = g.below(n);
  for (int i = 0; i < n; ++i) {
    const auto &kind = kViews[(first + i) % n];
    if (std::optional<Val> v = kind.make(g, axes, depth)) {
      g.note(std::string("view ") + kind.name + " read by " + consumer);
      return v;
    }
  }
  return std::nullopt;
}

// --- consumers -------------------------------------------------------------

std::optional<Val> kernel(Gen &g, const Axes &want, int depth) {
  std::optional<Val> v = view(g, want, depth, "a kernel");
  if (!v)
    return std::nullopt;
  if (g.chance(0.5))
    return Val{"tanh(" + v->text + ")", want, {std::tanh(v->range.lo), std::tanh(v->range.hi)}};
  Val a = g.bounded(*v, 3), b = g.bounded(g.expr(subset(g, want), depth - 1), 3);
  return Val{"(" + a.text + " * " + b.text + ")", want, a.range * b.range};
}

std::optional<Val> rowKernel(Gen &g, const Axes &want, int depth) {
  std::vector<std::string> dims;
  for (const std::string &a : want)
    if (g.isDim(a))
      dims.push_back(a);
  if (dims.empty())
    return std::nullopt;
  std::string axis = g.pick(dims);
  std::optional<Val> v = view(g, want, depth, "a row kernel");
  if (!v)
    return std::nullopt;
  Val x = g.bounded(*v, 8);
  g.note("softmax");
  return Val{"softmax(" + x.text + ", \"" + axis + "\")",
             want,
             {std::exp(x.range.lo - x.range.hi) / double(g.sizeOf(axis)), 1}};
}

std::optional<Val> reduction(Gen &g, const Axes &want, int depth) {
  std::vector<std::string> spare = g.dimsNotIn(want);
  if (spare.empty() || !g.allDims(want))
    return std::nullopt;
  std::string extra = g.pick(spare);
  Axes operand = want;
  operand.insert(operand.begin() + g.below(int(want.size()) + 1), extra);
  std::optional<Val> v = view(g, operand, depth, "a reduction");
  if (!v)
    return std::nullopt;
  static const char *kinds[] = {"sum", "mean", "max"};
  std::string kind = kinds[g.below(3)];
  if (kind == "max")
    g.note("kink");
  Range r = kind == "sum" ? scaled(v->range, double(g.sizeOf(extra))) : v->range;
  return Val{"reduce(" + v->text + ", " + quoted(side(operand), side(want)) + ", " + kind + ")",
             want, r};
}

/// The operands' axes of einsum(a, b, "a, b -> want") over a dim `c` that
/// `want` lacks.
struct Contraction {
  Axes a, b;
  std::string c;
};
std::optional<Contraction> contraction(Gen &g, const Axes &want) {
  std::vector<std::string> spare = g.dimsNotIn(want);
  if (spare.empty() || !g.allDims(want))
    return std::nullopt;
  Contraction k;
  k.c = g.pick(spare);
  k.a = subset(g, want);
  k.b = without(want, k.a);
  k.a.insert(k.a.begin() + g.below(int(k.a.size()) + 1), k.c);
  k.b.insert(k.b.begin() + g.below(int(k.b.size()) + 1), k.c);
  return k;
}

std::optional<Val> gemm(Gen &g, const Axes &want, int depth) {
  std::optional<Contraction> k = contraction(g, want);
  if (!k)
    return std::nullopt;
  bool viewFirst = g.chance(0.5);
  std::optional<Val> v =
      view(g, viewFirst ? k->a : k->b, depth, viewFirst ? "a GEMM (lhs)" : "a GEMM (rhs)");
  if (!v)
    return std::nullopt;
  Val x = g.bounded(*v, 3), o = g.bounded(g.expr(viewFirst ? k->b : k->a, depth - 1), 3);
  const Val &a = viewFirst ? x : o, &b = viewFirst ? o : x;
  return Val{"einsum(" + a.text + ", " + b.text + ", " +
                 quoted(side(k->a) + ", " + side(k->b), side(want)) + ")",
             want, scaled(a.range * b.range, double(g.sizeOf(k->c)))};
}

/// A residual added to a contraction: ein-fuse-epilogues makes it the GEMM's
/// epilogue, which reads the view.
std::optional<Val> epilogue(Gen &g, const Axes &want, int depth) {
  std::optional<Contraction> k = contraction(g, want);
  if (!k)
    return std::nullopt;
  std::optional<Val> v = view(g, want, depth, "an epilogue");
  if (!v)
    return std::nullopt;
  Val a = g.bounded(g.expr(k->a, depth - 1), 3), b = g.bounded(g.expr(k->b, depth - 1), 3);
  Range r = scaled(a.range * b.range, double(g.sizeOf(k->c))) + v->range;
  std::string sum = "(einsum(" + a.text + ", " + b.text + ", " +
                    quoted(side(k->a) + ", " + side(k->b), side(want)) + ") + " + v->text + ")";
  if (g.chance(0.5))
    return Val{"relu" + sum, want, {std::max(r.lo, 0.0), std::max(r.hi, 0.0)}};
  return Val{sum, want, r};
}

/// The view unpacked again: its gradient is a concat whose parts (the zeros
/// of the pieces not read, the buffer a piece's pieces view) are copied.
std::optional<Val> copy(Gen &g, const Axes &want, int depth) {
  std::vector<std::string> lead = pieceDims(g, want);
  if (lead.empty())
    return std::nullopt;
  std::string p = g.pick(lead);
  Axes whole = want;
  whole.insert(whole.begin(), p);
  std::optional<Val> v = view(g, whole, depth, "a copy");
  if (!v)
    return std::nullopt;
  return Val{unpackInto(g, v->text, g.sizeOf(p), want, v->range), want, v->range};
}

const struct {
  const char *name;
  std::optional<Val> (*make)(Gen &, const Axes &, int depth);
} kConsumers[] = {
    {"kernel", kernel}, {"row kernel", rowKernel}, {"reduction", reduction},
    {"gemm", gemm},     {"epilogue", epilogue},    {"copy", copy},
};

} // namespace

std::optional<Val> viewRead(Gen &g, const Axes &want, int depth) {
  return kConsumers[g.below(int(std::size(kConsumers)))].make(g, want, depth);
}

} // namespace einc::pipelinefuzz
