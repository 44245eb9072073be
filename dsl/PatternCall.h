//===- PatternCall.h - One call of an einops operation -----------*- C++ -*-===//
//
// Internal to dsl/: the parsed pattern of an einsum / rearrange / reduce /
// repeat call and its binding to the operands. Einops.cpp implements it (and
// rearrange, reduce, repeat); Einsum.cpp uses it for einsum.
//
// A pattern axis is identified by a key: its name, "...i" for the i-th axis
// an ellipsis stands for, "#i" for an anonymous number on a repeat's right.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_DSL_PATTERNCALL_H
#define EINC_DSL_PATTERNCALL_H

#include "dsl/ElaboratorImpl.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ein::dsl::einops {

/// One elementary axis: its key and the axis (name, size) it becomes.
struct Elem {
  std::string key;
  Axis axis;
};

enum class Mode { Rearrange, Reduce, Repeat };

/// The key of the i-th axis an ellipsis stands for.
std::string ellipsisKey(size_t i);

/// The pattern string of a call, parsed; errors point into the string.
class PatternCall {
public:
  PatternCall(Elaborator &E, const Expr &call, llvm::StringRef fn) : E(E), call(call), fn(fn) {}

  Elaborator &E;
  const Expr &call;
  std::string fn;
  const Expr *text = nullptr;
  std::optional<Pattern> pattern;
  /// Sizes of pattern names: keyword arguments, then sizes bound by operands.
  std::map<std::string, int64_t> known;
  /// einops lets reduce name reduced axes by their size ("(h 2) -> h").
  bool anonymousLeftAllowed = false;
  /// How errors name a single operand ("the operand" when empty).
  std::string operandName;
  unsigned anonymousLeft = 0;

  SourceLoc at(unsigned offset) const { return E.locInString(*text, offset); }

  bool parse(const Expr &arg);

  /// Reads `name=size` keyword arguments; each must name an axis of the pattern.
  bool readSizes();

  std::optional<int64_t> sizeOf(llvm::StringRef name) const;

  /// Binds one operand to one side of the pattern: the elementary axes after
  /// decomposing groups (units dropped), or std::nullopt after reporting.
  std::optional<std::vector<Elem>> bindLeft(const PatternSide &side, const Tensor &x,
                                            unsigned operandIndex);

  struct Right {
    std::vector<Elem> elems; // elementary axes, in output order
    Axes composed;           // the result's axes
  };

  /// Plans the right side given the left's elementary axes.
  std::optional<Right> planRight(const PatternSide &side, const std::vector<Elem> &left, Mode mode);

  /// reshape → (reduce) → transpose → (broadcast) → reshape.
  Tensor lower(const Tensor &x, const std::vector<Elem> &left, const Right &right,
               std::optional<llvm::StringRef> reduction);
};

} // namespace ein::dsl::einops

#endif // EINC_DSL_PATTERNCALL_H
