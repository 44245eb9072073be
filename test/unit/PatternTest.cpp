//===- PatternTest.cpp - einops pattern strings ---------------------------===//

#include "dsl/Pattern.h"

#include "gtest/gtest.h"

using namespace ein::dsl;
using AK = PatternAxis::Kind;

namespace {

Pattern ok(llvm::StringRef text) {
  std::string error;
  unsigned offset = 0;
  std::optional<Pattern> p = parsePattern(text, error, offset);
  EXPECT_TRUE(p.has_value()) << text.str() << ": " << error << " at " << offset;
  return p ? *p : Pattern();
}

struct Failure {
  std::string error;
  unsigned offset = ~0u;
};

Failure bad(llvm::StringRef text) {
  Failure f;
  std::optional<Pattern> p = parsePattern(text, f.error, f.offset);
  EXPECT_FALSE(p.has_value()) << text.str();
  return f;
}

TEST(PatternTest, SimpleRearrange) {
  Pattern p = ok("batch window embed -> batch (window embed)");
  ASSERT_EQ(p.inputs.size(), 1u);
  ASSERT_EQ(p.inputs[0].axes.size(), 3u);
  EXPECT_EQ(p.inputs[0].axes[1].kind, AK::Name);
  EXPECT_EQ(p.inputs[0].axes[1].name, "window");
  EXPECT_EQ(p.inputs[0].axes[1].offset, 6u);
  ASSERT_EQ(p.output.axes.size(), 2u);
  const PatternAxis &group = p.output.axes[1];
  EXPECT_EQ(group.kind, AK::Group);
  EXPECT_EQ(group.offset, 28u);
  ASSERT_EQ(group.members.size(), 2u);
  EXPECT_EQ(group.members[0].name, "window");
  EXPECT_EQ(group.members[1].name, "embed");
  EXPECT_EQ(group.members[1].offset, 36u);
  EXPECT_EQ(p.output.offset, 22u);
  EXPECT_TRUE(hasComposition(p.output));
  EXPECT_FALSE(hasComposition(p.inputs[0]));
  EXPECT_EQ(toString(p), "batch window embed -> batch (window embed)");
}

TEST(PatternTest, EinsumInputs) {
  Pattern p = ok("batch heads t hd, batch heads s hd -> batch heads t s");
  ASSERT_EQ(p.inputs.size(), 2u);
  EXPECT_EQ(p.inputs[1].offset, 18u);
  EXPECT_EQ(p.inputs[1].axes[2].name, "s");
  EXPECT_EQ(p.inputs[1].axes[2].offset, 30u);
  EXPECT_EQ(patternNames(p.output), (std::vector<std::string>{"batch", "heads", "t", "s"}));
  EXPECT_EQ(toString(p), "batch heads t hd, batch heads s hd -> batch heads t s");
  // The same name in two inputs is a contraction, not a duplicate.
  ok("i j, j k, k l -> i l");
}

TEST(PatternTest, Ellipsis) {
  Pattern p = ok("... d -> ...");
  EXPECT_TRUE(hasEllipsis(p.inputs[0]));
  EXPECT_TRUE(hasEllipsis(p.output));
  EXPECT_EQ(p.inputs[0].axes[0].kind, AK::Ellipsis);
  EXPECT_EQ(p.output.axes.size(), 1u);

  Pattern grouped = ok("b ... c -> b (...) c");
  const PatternAxis &g = grouped.output.axes[1];
  ASSERT_EQ(g.kind, AK::Group);
  ASSERT_EQ(g.members.size(), 1u);
  EXPECT_EQ(g.members[0].kind, AK::Ellipsis);
  EXPECT_TRUE(hasEllipsis(grouped.output));
  EXPECT_FALSE(hasEllipsis(ok("a b -> b a").inputs[0]));
  ok("a...b -> a b ...");
}

TEST(PatternTest, UnitAndAnonymousAxes) {
  Pattern p = ok("b 1 c -> (b 1) c 1");
  EXPECT_EQ(p.inputs[0].axes[1].kind, AK::Unit);
  EXPECT_EQ(p.inputs[0].axes[1].number, 1);
  Pattern r = ok("h w -> (h 2) w 3");
  EXPECT_EQ(r.output.axes[2].kind, AK::Number);
  EXPECT_EQ(r.output.axes[2].number, 3);
  EXPECT_EQ(r.output.axes[0].members[1].kind, AK::Number);
  EXPECT_TRUE(hasAnonymousAxis(r.output));
  EXPECT_FALSE(hasAnonymousAxis(r.inputs[0]));
  EXPECT_EQ(toString(r), "h w -> (h 2) w 3");
  // `1` may repeat: it is not a name.
  ok("1 a 1 -> a");
}

TEST(PatternTest, EmptySidesAndGroups) {
  Pattern all = ok("a b ->");
  EXPECT_TRUE(all.output.axes.empty());
  EXPECT_EQ(toString(all), "a b ->");
  ok("a b -> ");
  Pattern scalar = ok(" -> a");
  EXPECT_TRUE(scalar.inputs[0].axes.empty());
  Pattern unit = ok("a () -> a");
  EXPECT_EQ(unit.inputs[0].axes[1].kind, AK::Group);
  EXPECT_TRUE(unit.inputs[0].axes[1].members.empty());
}

TEST(PatternTest, WhitespaceIsFlexible) {
  Pattern p = ok("  a(b c)  d->(a b)c d");
  EXPECT_EQ(toString(p), "a (b c) d -> (a b) c d");
  EXPECT_EQ(p.inputs[0].offset, 2u);
}

TEST(PatternTest, Helpers) {
  Pattern p = ok("b (h w) c -> b h w c");
  EXPECT_EQ(patternNames(p.inputs[0]), (std::vector<std::string>{"b", "h", "w", "c"}));
  std::vector<std::string> names = {"x"};
  collectPatternNames(p.output, names);
  EXPECT_EQ(names.size(), 5u);
  const PatternAxis *w = findPatternAxis(p.inputs[0], "w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->offset, 5u);
  EXPECT_EQ(findPatternAxis(p.inputs[0], "z"), nullptr);
}

TEST(PatternTest, AxisList) {
  std::string error;
  unsigned offset = 0;
  std::optional<PatternSide> side = parsePatternSide("t s", error, offset, 10);
  ASSERT_TRUE(side.has_value());
  ASSERT_EQ(side->axes.size(), 2u);
  EXPECT_EQ(side->axes[1].offset, 12u);
  EXPECT_EQ(side->offset, 10u);
  EXPECT_FALSE(parsePatternSide("t t", error, offset, 10).has_value());
  EXPECT_EQ(error, "duplicate axis 't' in the axis list");
  EXPECT_EQ(offset, 12u);
  EXPECT_FALSE(parsePatternSide("a -> b", error, offset).has_value());
  EXPECT_EQ(offset, 2u);
}

TEST(PatternTest, Errors) {
  struct Case {
    const char *text;
    const char *error;
    unsigned offset;
  } cases[] = {
      {"a b", "pattern must contain '->'", 0},
      {"a -> b -> c", "pattern must contain exactly one '->'", 7},
      {"a a -> a", "duplicate axis 'a' on the left side", 2},
      {"a (b a) -> a b", "duplicate axis 'a' on the left side", 5},
      {"a b -> b b", "duplicate axis 'b' on the right side", 9},
      {"i j, j j -> i", "duplicate axis 'j' in input 2", 7},
      {"... a ... -> a", "'...' may appear only once on the left side", 6},
      {"a -> ... (...)", "'...' may appear only once on the right side", 10},
      {"a . b -> a", "'.' is only allowed as part of '...'", 2},
      {"a .. -> a", "'.' is only allowed as part of '...'", 2},
      {"(a (b)) -> a b", "nested parentheses are not allowed in a pattern", 3},
      {"(a b -> a b", "unclosed '(' in pattern", 0},
      {"a b) -> a b", "unmatched ')' in pattern", 3},
      {"a -> (a", "unclosed '(' in pattern", 5},
      {"a -> a, b", "',' may only separate the inputs, on the left of '->'", 6},
      {"2a -> a", "invalid axis name '2a' (names are identifiers)", 0},
      {"_a -> _a", "axis name '_a' must not start or end with '_'", 0},
      {"a_ -> a_", "axis name 'a_' must not start or end with '_'", 0},
      {"_ -> ", "axis name '_' must not start or end with '_'", 0},
      {"a 0 -> a", "anonymous axis must have a positive size, found '0'", 2},
      {"a -> a 99999999999999999999", "anonymous axis size '99999999999999999999' is too large", 7},
      {"a - b -> a", "unexpected '-' in pattern (the arrow is '->')", 2},
      {"a > b -> a", "unexpected '>' in pattern (the arrow is '->')", 2},
      {"a $ -> a", "unexpected character '$' in pattern", 2},
      {"a \xff -> a", "unexpected character '\\xff' in pattern", 2},
  };
  for (const Case &c : cases) {
    Failure f = bad(c.text);
    EXPECT_EQ(f.error, c.error) << c.text;
    EXPECT_EQ(f.offset, c.offset) << c.text;
  }
}

TEST(PatternTest, NoCrashOnAnyBytes) {
  unsigned seed = 99;
  for (int round = 0; round < 5000; ++round) {
    std::string text;
    int n = (seed = seed * 1103515245 + 12345) % 24;
    for (int i = 0; i < n; ++i) {
      seed = seed * 1103515245 + 12345;
      const char alphabet[] = "ab1 ().,->_9\x80";
      text += (round % 3 == 0) ? char(seed >> 16) : alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
    }
    std::string error;
    unsigned offset = 0;
    std::optional<Pattern> p = parsePattern(text, error, offset);
    if (!p) {
      EXPECT_FALSE(error.empty());
      EXPECT_LE(offset, text.size());
    } else {
      // What prints re-parses to the same thing.
      std::string again = toString(*p);
      std::optional<Pattern> q = parsePattern(again, error, offset);
      ASSERT_TRUE(q.has_value()) << again;
      EXPECT_EQ(toString(*q), again);
    }
  }
}

} // namespace
