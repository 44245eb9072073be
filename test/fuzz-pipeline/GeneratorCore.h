//===- GeneratorCore.h - The generator's state, shared by its productions -*- C++ -*-===//
//
// Gen holds what a program under construction has declared (dims, inputs,
// params, functions), the scopes of the statements being written (top level,
// `for` bodies, `fn` bodies), and the random engine. Expressions are Vals:
// source text that is atomic (a name, a call, a literal or parenthesised), the
// axis names of its value (as the front end names them: a dim, "1", or a
// composite "(a b)") and an interval of its values.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_FUZZ_PIPELINE_GENERATORCORE_H
#define EINC_TEST_FUZZ_PIPELINE_GENERATORCORE_H

#include "ProgramGenerator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace einc::pipelinefuzz {

using Axes = std::vector<std::string>;

/// An interval holding every value of a tensor.
struct Range {
  double lo = 0, hi = 0;
  double mag() const { return std::max(std::fabs(lo), std::fabs(hi)); }
};
Range hull(Range a, Range b);
Range operator+(Range a, Range b);
Range operator*(Range a, Range b);
Range scaled(Range a, double k);

struct Val {
  std::string text; // atomic: a name, a call, a literal or "( ... )"
  Axes axes;
  Range range;
};

/// A name statements can read: an input, a param or an assigned variable.
struct Var {
  std::string name;
  Axes axes;
  Range range;
  bool tokens = false; // an i32 input (token ids or targets)
};

struct Dim {
  std::string name;
  int64_t size;
  std::string expr; // its `dim` expression ("" : the size)
};

/// A user function the program defines. Concrete ones have fixed parameter
/// and result shapes; the others take `[..., last]` as their first argument
/// and keep its axes (layernorm and friends).
struct Fn {
  std::string name;
  std::vector<Axes> params; // concrete: every parameter; ellipsis: params 1..
  Axes result;              // concrete only
  std::string last;         // ellipsis: the dim after `...`
  std::string kind;         // the template ("layernorm", ...) or "concrete"
  double argLimit = 2;      // arguments are bounded to [-argLimit, argLimit]
  Range resultRange;
};

class Gen {
public:
  explicit Gen(uint64_t seed);
  GeneratedProgram run();

  // Randomness.
  std::mt19937_64 rng;
  int below(int n) { return n <= 1 ? 0 : int(rng() % uint64_t(n)); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
  template <class T> const T &pick(const std::vector<T> &v) {
    return v[size_t(below(int(v.size())))];
  }
  template <class T> void shuffle(std::vector<T> &v) { std::shuffle(v.begin(), v.end(), rng); }
  /// One of `weights.size()` choices, by weight.
  int weighted(const std::vector<int> &weights);

  // Dims and axes.
  std::vector<Dim> dims;
  std::string vocab; // the dim every gather table and cross_entropy's classes use
  bool isDim(const std::string &axis) const;
  int64_t sizeOf(const std::string &axis) const;
  int64_t elements(const Axes &axes) const;
  bool allDims(const Axes &axes) const;
  /// Dims not in `axes` (in declaration order).
  std::vector<std::string> dimsNotIn(const Axes &axes) const;
  /// `rank` distinct dims in random order (fewer when there are fewer dims).
  Axes randomAxes(int rank);
  /// A shape for a new statement: often one a variable already has.
  Axes statementAxes();

  // Declarations and scopes.
  struct Scope {
    std::vector<std::string> lines;
    std::vector<Var> vars;
    bool function = false; // a fn body: sees its params, its locals, top-level params/inputs
    std::string loopVar;   // a for body: the loop variable
    int64_t loopCount = 0;
    std::vector<Val> memo; // expressions written here, for repeating one verbatim
  };
  std::vector<std::string> decls;  // top-level inputs and params
  std::vector<Var> globals;        // what decls declare
  std::vector<std::string> fnDefs; // definitions, each after the ones it calls
  std::vector<Fn> fns;
  std::vector<Scope> scopes; // innermost last
  void emit(const std::string &line);
  std::string indent() const;
  /// Every name an expression in the innermost scope may read.
  std::vector<const Var *> visible() const;
  std::string fresh(const std::string &prefix);
  bool inFunction() const;
  /// The innermost enclosing `for` body (null outside loops and in fns).
  const Scope *innermostLoop() const;

  /// Declares a param with `axes` (in the innermost loop, else at top level).
  Val newParam(const Axes &axes);
  /// Declares an f32 input with `axes`.
  Val newInput(const Axes &axes);
  /// An i32 input with exactly `axes`, existing or new (ids in [0, vocab)).
  std::string tokens(const Axes &axes);

  // Expressions (ExprProductions.cpp).
  /// A float tensor expression with exactly the axes `want`, in order.
  Val expr(const Axes &want, int depth);
  /// A name with axes `want` (a visible variable or a new param/input).
  Val leaf(const Axes &want);
  /// `v` made positive, at least `floor` (wrapped when its range needs it).
  Val positive(Val v, double floor = 0.2);
  /// `v` made to lie within [-limit, limit].
  Val bounded(Val v, double limit);
  /// A number to scale with: a literal, a dim, sqrt of a dim, a number
  /// variable or the loop variable; its value in `value`.
  std::string number(double &value);
  /// `e` with the ops that are not smooth everywhere noted.
  void note(const std::string &feature) { features.insert(feature); }

  // Statements (StatementProductions.cpp).
  void statement(int depth);
  void forLoop(int depth);
  std::string lossTerm(int depth, Range &range);
  std::string trainSection();
  /// A concrete function with the given result axes (defined now).
  const Fn &newConcreteFn(const Axes &result);
  /// The ellipsis function `kind` over dim `last` (defined on first use).
  const Fn &templateFn(const std::string &kind, const std::string &last);

  std::set<std::string> features;
  std::vector<std::pair<std::string, double>> numberVars; // name = value
  int counter = 0;
  int budget = 0; // expression nodes left for the current statement
};

/// A decimal literal for `v` that reads back close to it ("0.25", "1e-3").
std::string literal(double v);
/// "a b c": the axes as a pattern side.
std::string side(const Axes &axes);

} // namespace einc::pipelinefuzz

#endif // EINC_TEST_FUZZ_PIPELINE_GENERATORCORE_H
