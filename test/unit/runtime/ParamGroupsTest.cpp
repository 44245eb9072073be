//===- ParamGroupsTest.cpp - no_decay, lr_scale and freeze ----------------===//
#include "runtime/base/ParamGroups.h"
#include "test/unit/StatusTesting.h"

#include <gtest/gtest.h>

namespace {

using einrt::matchesNamePattern;

TEST(ParamGroups, Patterns) {
  EXPECT_TRUE(matchesNamePattern("b1", "b1"));
  EXPECT_FALSE(matchesNamePattern("b1", "b10"));
  EXPECT_TRUE(matchesNamePattern("b*", "b"));
  EXPECT_TRUE(matchesNamePattern("b*", "b10"));
  EXPECT_FALSE(matchesNamePattern("b*", "ab"));
  EXPECT_TRUE(matchesNamePattern("*_b", "ln1_b"));
  EXPECT_TRUE(matchesNamePattern("*ln*_g", "h.ln1_g"));
  EXPECT_FALSE(matchesNamePattern("*ln*_g", "h.ln1_b"));
  EXPECT_TRUE(matchesNamePattern("*", ""));
  EXPECT_TRUE(matchesNamePattern("a*b*c", "aXbYbZc")); // backtracks past the first b
  EXPECT_FALSE(matchesNamePattern("a*b*c", "aXbYbZ"));
}

TEST(ParamGroups, Grammar) {
  EINC_ASSERT_OK_AND_ASSIGN(auto patterns, einrt::parseNamePatterns(" b* , *norm*,wte "));
  EXPECT_EQ(patterns, (std::vector<std::string>{"b*", "*norm*", "wte"}));
  EINC_ASSERT_OK_AND_ASSIGN(auto none, einrt::parseNamePatterns(""));
  EXPECT_TRUE(none.empty());
  EINC_EXPECT_STATUS(einrt::parseNamePatterns("a,,b"), einrt::StatusCode::Invalid, "empty entry");
  EINC_EXPECT_STATUS(einrt::parseNamePatterns("w-1"), einrt::StatusCode::Invalid,
                     "not a name pattern");

  EINC_ASSERT_OK_AND_ASSIGN(auto scales, einrt::parseLrScales("emb*:0.1, head : 2"));
  ASSERT_EQ(scales.size(), 2u);
  EXPECT_EQ(scales[0].pattern, "emb*");
  EXPECT_EQ(scales[0].factor, 0.1);
  EXPECT_EQ(scales[1].pattern, "head");
  EXPECT_EQ(scales[1].factor, 2);
  for (const char *bad : {"head", "head:", "head:x", "head:-1", "head:inf", ":2"})
    EINC_EXPECT_NOT_OK(einrt::parseLrScales(bad)) << bad;
}

TEST(ParamGroups, GroupsOfParams) {
  std::vector<std::string> params = {"wte", "w1", "b1", "ln_g", "head"};
  EINC_ASSERT_OK_AND_ASSIGN(auto groups,
                            einrt::paramGroups(params, "b*, ln_*", "w*:0.5, head:2, wte:0.5"));
  ASSERT_EQ(groups.size(), params.size());
  EXPECT_FALSE(groups[0].noDecay);
  EXPECT_TRUE(groups[2].noDecay);
  EXPECT_TRUE(groups[3].noDecay);
  EXPECT_EQ(groups[0].lrScale, 0.5); // named twice with the same factor: fine
  EXPECT_EQ(groups[1].lrScale, 0.5);
  EXPECT_EQ(groups[2].lrScale, 1);
  EXPECT_EQ(groups[4].lrScale, 2);
  EINC_EXPECT_STATUS_EQ(einrt::paramGroups(params, "x*", ""), einrt::StatusCode::Invalid,
                        "no_decay: 'x*' names no param (the params: wte, w1, b1, ln_g, head)");
  EINC_EXPECT_STATUS(einrt::paramGroups(params, "", "w*:0.5, wte:0.1"), einrt::StatusCode::Invalid,
                     "lr_scale: 'wte' is named by 'w*:0.5' and by 'wte:0.1'");
}

TEST(ParamGroups, FrozenParams) {
  std::vector<std::string> params = {"wte", "w1", "b1", "head"};
  EINC_ASSERT_OK_AND_ASSIGN(auto frozen, einrt::frozenParams(params, " wte , b* "));
  EXPECT_EQ(frozen, (std::vector<bool>{true, false, true, false}));
  EINC_ASSERT_OK_AND_ASSIGN(auto none, einrt::frozenParams(params, ""));
  EXPECT_EQ(none, std::vector<bool>(4, false));
  EINC_EXPECT_STATUS_EQ(einrt::frozenParams(params, "x*"), einrt::StatusCode::Invalid,
                        "freeze: 'x*' names no param (the params: wte, w1, b1, head)");
  EINC_EXPECT_STATUS_EQ(einrt::frozenParams(params, "w*, b1, head"), einrt::StatusCode::Invalid,
                        "freeze: every param is frozen (wte, w1, b1, head): nothing is left to "
                        "train");
  EINC_EXPECT_STATUS(einrt::frozenParams(params, "w-1"), einrt::StatusCode::Invalid,
                     "freeze: 'w-1' is not a name pattern");
}

} // namespace
