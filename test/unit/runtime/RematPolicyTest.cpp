//===- RematPolicyTest.cpp - The `remat` setting's grammar ----------------===//
#include "runtime/RematPolicy.h"
#include "runtime/TrainSettings.h"

#include <gtest/gtest.h>

namespace {

using einrt::RematPolicy;

RematPolicy parse(const std::string &text) {
  std::string error;
  auto p = einrt::parseRematPolicy(text, error);
  EXPECT_TRUE(p.has_value()) << text << ": " << error;
  return p.value_or(RematPolicy{});
}

std::string problem(const std::string &text) {
  std::string error;
  EXPECT_FALSE(einrt::parseRematPolicy(text, error).has_value()) << text;
  return error;
}

TEST(RematPolicy, NamedPolicies) {
  EXPECT_EQ(parse("none").kind, RematPolicy::Kind::None);
  EXPECT_EQ(parse("full").kind, RematPolicy::Kind::Full);
  EXPECT_EQ(parse("sqrt").kind, RematPolicy::Kind::Sqrt);
  EXPECT_EQ(parse("selective").kind, RematPolicy::Kind::Selective);
  RematPolicy every = parse("every:4");
  EXPECT_EQ(every.kind, RematPolicy::Kind::Every);
  EXPECT_EQ(every.every, 4);
  EXPECT_STREQ(every.kindName(), "every");
  RematPolicy names = parse("names:h,att_1,_x");
  EXPECT_EQ(names.kind, RematPolicy::Kind::Names);
  EXPECT_EQ(names.names, (std::vector<std::string>{"h", "att_1", "_x"}));
}

TEST(RematPolicy, ErrorsListTheValidForms) {
  std::string unknown = problem("layer");
  EXPECT_EQ(unknown, "unknown policy 'layer'; valid: none, full, every:K, sqrt, selective, "
                     "names:a,b,...");
  EXPECT_EQ(problem(""), "unknown policy ''; valid: none, full, every:K, sqrt, selective, "
                         "names:a,b,...");
  EXPECT_EQ(problem("every:0"), "every:K takes a whole number of iterations K >= 1, got '0'");
  EXPECT_EQ(problem("every:2.5"), "every:K takes a whole number of iterations K >= 1, got '2.5'");
  EXPECT_EQ(problem("every"), "'every' needs an argument (every:K)");
  EXPECT_EQ(problem("names"), "'names' needs an argument (names:a,b)");
  EXPECT_EQ(problem("names:"), "names: '' is not a name (names:a,b lists let-bound names)");
  EXPECT_EQ(problem("names:a,,b"), "names: '' is not a name (names:a,b lists let-bound names)");
  EXPECT_EQ(problem("names:a-b"), "names: 'a-b' is not a name (names:a,b lists let-bound names)");
  EXPECT_EQ(problem("full:2"), "'full' takes no argument, got 'full:2'");
}

TEST(RematPolicy, TheSettingsTableChecksWithIt) {
  einrt::TrainSettings s;
  EXPECT_EQ(einrt::setTrainText(s, "remat", "every:3"), "");
  EXPECT_EQ(s.remat, "every:3");
  EXPECT_TRUE(s.isGiven("remat"));
  EXPECT_EQ(einrt::setTrainText(s, "remat", "every:x"),
            "remat 'every:x': every:K takes a whole number of iterations K >= 1, got 'x'");
  EXPECT_EQ(s.remat, "every:3"); // a bad value changes nothing
  // The last listed form is a valid value (test/unit/bundle relies on it).
  const einrt::SettingInfo *info = einrt::findTrainSetting("remat");
  ASSERT_NE(info, nullptr);
  std::string choices = info->choices;
  EXPECT_EQ(einrt::setTrainText(s, "remat", choices.substr(choices.rfind(' ') + 1)), "");
}

} // namespace
