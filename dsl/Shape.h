//===- Shape.h - Tensor shapes with named axes -------------------*- C++ -*-===//
//
// Every tensor in the language carries named axes: the names come from its
// declaration (`[batch, window]`) or from the output side of the pattern that
// made it. Declared `dim` names are checked against operands; other names are
// local and only their sizes are checked (see docs/language.md, "Named axes").
//
//===----------------------------------------------------------------------===//
#ifndef EINC_DSL_SHAPE_H
#define EINC_DSL_SHAPE_H

#include "dsl/SourceLoc.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ein::dsl {

struct Axis {
  std::string name;
  int64_t size = 0;
  bool operator==(const Axis &o) const { return name == o.name && size == o.size; }
};

using Axes = std::vector<Axis>;

/// `[batch=256, window=8]`; the empty shape prints as `[]` (a scalar).
std::string formatAxes(llvm::ArrayRef<Axis> axes);

/// A number as a user would write it: 0.02, 1e-05, 3.
std::string formatNumber(double v);

/// "1 axis", "3 axes": a count with its noun.
std::string countOf(int64_t n, const char *one, const char *many);

/// Product of the sizes; std::nullopt on int64 overflow.
std::optional<int64_t> elementCount(llvm::ArrayRef<Axis> axes);

/// Edit distance with adjacent transpositions (optimal string alignment, a
/// restricted Damerau-Levenshtein distance): "hiddn" and "hdiden" are both 1
/// from "hidden". Distances above `limit` are returned as `limit + 1` (and
/// cost less to find).
unsigned typoDistance(llvm::StringRef a, llvm::StringRef b, unsigned limit = ~0u - 1);

/// The declared `dim`s of a program, in declaration order.
class DimTable {
public:
  /// `declaredAt` is the dim's name in its `dim` statement (for notes).
  void set(const std::string &name, int64_t size, SourceLoc declaredAt = {});
  std::optional<int64_t> lookup(llvm::StringRef name) const;
  bool isDeclared(llvm::StringRef name) const { return lookup(name).has_value(); }
  SourceLoc declaredAt(llvm::StringRef name) const;
  const std::vector<std::pair<std::string, int64_t>> &ordered() const { return ordered_; }

  /// The dim that `name`, itself not a dim, is probably a misspelling of
  /// (docs/language.md section 4, "Misspelt dims"): the closest dim within
  /// typoDistance 1 (2 when both names have 8 characters or more), where both
  /// names have at least 3 characters and they do not differ only in trailing
  /// digits and '_' ("hidden2" is a deliberate second name for a [hidden,
  /// hidden] weight's axis). Ties go to the dim declared first. The search
  /// has a work budget per table that only crafted programs exhaust; past it
  /// the answer is std::nullopt.
  std::optional<std::string> misspeltDim(llvm::StringRef name) const;

private:
  std::map<std::string, int64_t, std::less<>> sizes_;
  std::map<std::string, SourceLoc, std::less<>> locs_;
  std::vector<std::pair<std::string, int64_t>> ordered_;
  std::vector<uint64_t> characterSets_; // of ordered_'s names, for misspeltDim
  mutable llvm::StringMap<std::optional<std::string>> misspeltCache_;
  mutable uint64_t searchCells_ = 0; // work misspeltDim spent, for its budget
};

/// Checked int64 arithmetic for sizes: std::nullopt on overflow.
std::optional<int64_t> checkedMul(int64_t a, int64_t b);
std::optional<int64_t> checkedAdd(int64_t a, int64_t b);

/// The largest element count a tensor may have (2^40): keeps byte counts and
/// index arithmetic far from int64 overflow.
constexpr int64_t kMaxElements = int64_t(1) << 40;

} // namespace ein::dsl

#endif // EINC_DSL_SHAPE_H
