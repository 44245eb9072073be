//===- Pattern.h - einops pattern strings ------------------------*- C++ -*-===//
//
// Parses the pattern strings of einsum / rearrange / reduce / repeat:
//
//   "batch k, k hidden -> batch hidden"       two inputs (einsum)
//   "b (h w) c -> b h w c"                    composition
//   "... d -> ..."                            ellipsis
//   "b 1 c -> b c", "h w -> h w 3"            unit axis, anonymous axis
//
// Only the syntax is checked here, with einops' rules: exactly one '->', axis
// names are identifiers that neither start nor end with '_', at most one '...'
// per side (also allowed alone in a group: "(...)"), no nested parentheses,
// balanced parentheses, no duplicate name on one side, anonymous axes > 0,
// ',' only between inputs. An empty side is allowed ("a b ->"). Whether an
// operation accepts a construct (composition in einsum, numbers in rearrange)
// is the elaborator's business.
//
// Offsets are byte offsets inside the pattern text (the string without its
// quotes), so a caret can point at the culprit: column = quote column + 1 +
// offset.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_DSL_PATTERN_H
#define EINC_DSL_PATTERN_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ein::dsl {

struct PatternAxis {
  enum class Kind {
    Name,     // `batch`
    Unit,     // `1`: an anonymous axis of size 1
    Number,   // any other integer literal (`3` in repeat's "h w -> h w 3")
    Group,    // `(h w)`: members are Name / Unit / Number / Ellipsis
    Ellipsis, // `...`
  };
  Kind kind = Kind::Name;
  std::string name;                 // Name
  int64_t number = 0;               // Unit (1) / Number
  std::vector<PatternAxis> members; // Group (may be empty: "()" is a unit axis)
  unsigned offset = 0;              // first byte of the axis (the '(' of a group)
};

struct PatternSide {
  std::vector<PatternAxis> axes;
  unsigned offset = 0; // first byte of the side's text
};

struct Pattern {
  std::vector<PatternSide> inputs; // "a b, b c -> a c" has two
  PatternSide output;
};

/// Parses a full pattern. On error returns std::nullopt and sets `error` (a
/// message without location) and `errorOffset` (byte offset of the culprit).
std::optional<Pattern> parsePattern(llvm::StringRef text, std::string &error,
                                    unsigned &errorOffset);

/// Parses one side without '->' (for axis lists such as causal's "t s" or
/// softmax's "s"). `baseOffset` is added to every recorded offset.
std::optional<PatternSide> parsePatternSide(llvm::StringRef text, std::string &error,
                                            unsigned &errorOffset, unsigned baseOffset = 0);

/// Names on a side, in order, including those inside groups.
std::vector<std::string> patternNames(const PatternSide &side);
/// Appends the names on a side to `names`.
void collectPatternNames(const PatternSide &side, std::vector<std::string> &names);
/// Whether a side has '...' (at top level or inside a group).
bool hasEllipsis(const PatternSide &side);
/// Whether a side has a group `( )`.
bool hasComposition(const PatternSide &side);
/// Whether a side has an anonymous axis (`1` or another number).
bool hasAnonymousAxis(const PatternSide &side);
/// Finds a named axis (top level or in a group); null when absent.
const PatternAxis *findPatternAxis(const PatternSide &side, llvm::StringRef name);

/// Canonical text: "b (h w) 1 ...", and "a b, b c -> a c".
std::string toString(const PatternAxis &axis);
std::string toString(const PatternSide &side);
std::string toString(const Pattern &pattern);

} // namespace ein::dsl

#endif // EINC_DSL_PATTERN_H
