//===- RematPolicyTest.cpp - The `remat` setting's grammar ----------------===//
#include "runtime/base/RematPolicy.h"
#include "runtime/base/TrainSettings.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace {

using einrt::RematPolicy;

RematPolicy parse(const std::string &text) {
  auto p = einrt::parseRematPolicy(text);
  EXPECT_TRUE(p.ok()) << text << ": " << p.status().message();
  return p.ok() ? *p : RematPolicy{};
}

std::string problem(const std::string &text) {
  auto p = einrt::parseRematPolicy(text);
  EXPECT_FALSE(p.ok()) << text;
  EXPECT_EQ(p.status().code(), einrt::StatusCode::Invalid) << text;
  return p.status().message();
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
  const std::string forms = "none, full, every:K, sqrt, selective, names:a,b,..., budget:BYTES "
                            "(2GiB, 512MiB, 1e9) or budget:N% of the device's memory";
  EXPECT_EQ(unknown, "unknown policy 'layer'; valid: " + forms);
  EXPECT_EQ(problem(""), "unknown policy ''; valid: " + forms);
  EXPECT_EQ(problem("every:0"), "every:K takes a whole number of iterations K >= 1, got '0'");
  EXPECT_EQ(problem("every:2.5"), "every:K takes a whole number of iterations K >= 1, got '2.5'");
  EXPECT_EQ(problem("every"), "'every' needs an argument (every:K)");
  EXPECT_EQ(problem("names"), "'names' needs an argument (names:a,b)");
  EXPECT_EQ(problem("names:"), "names: '' is not a name (names:a,b lists let-bound names)");
  EXPECT_EQ(problem("names:a,,b"), "names: '' is not a name (names:a,b lists let-bound names)");
  EXPECT_EQ(problem("names:a-b"), "names: 'a-b' is not a name (names:a,b lists let-bound names)");
  EXPECT_EQ(problem("full:2"), "'full' takes no argument, got 'full:2'");
  EXPECT_EQ(problem("budget"), "'budget' needs an argument (budget:2GiB)");
  EXPECT_EQ(problem("budget:0"),
            "budget: '0' is not a positive size (e.g. 2GiB, 512MiB, 1e9, 60%)");
  EXPECT_EQ(problem("budget:-1GB"),
            "budget: '-1GB' is not a positive size (e.g. 2GiB, 512MiB, 1e9, 60%)");
  EXPECT_EQ(problem("budget:1ZB"), "budget: unknown unit 'ZB' in '1ZB' (B, KB, MB, GB, TB, KiB, "
                                   "MiB, GiB, TiB, or % of the device's memory)");
  EXPECT_EQ(problem("budget:101%"), "budget: 101% is more than the device's memory (at most 100%)");
  EXPECT_EQ(problem("budget:0.5B"), "budget: '0.5B' is less than a byte");
}

TEST(RematPolicy, Budgets) {
  RematPolicy gib = parse("budget:2GiB");
  EXPECT_EQ(gib.kind, RematPolicy::Kind::Budget);
  EXPECT_EQ(gib.budgetBytes, 2.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(gib.budgetOn(8e10), 2.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(parse("budget:512MiB").budgetBytes, 512.0 * 1024 * 1024);
  EXPECT_EQ(parse("budget:1e9").budgetBytes, 1e9);
  EXPECT_EQ(parse("budget:2.5GB").budgetBytes, 2.5e9);
  EXPECT_EQ(parse("budget:100KB").budgetBytes, 1e5);
  RematPolicy pct = parse("budget:60%");
  EXPECT_EQ(pct.budgetPercent, 60);
  EXPECT_EQ(pct.budgetOn(8e10), 4.8e10);
  EXPECT_STREQ(pct.kindName(), "budget");
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

// The table is the one list of policy names: every row parses back to its
// kind (with an argument where it takes one, and says so where it is
// missing), and the plain plans are those that take none.
TEST(RematPolicy, EveryTableRowParsesToItsKind) {
  std::set<RematPolicy::Kind> kinds;
  for (const einrt::RematPolicyForm &f : einrt::rematPolicyTable()) {
    EXPECT_TRUE(kinds.insert(f.kind).second) << f.name << " is listed twice";
    if (f.argument) {
      auto bare = einrt::parseRematPolicy(f.name);
      EXPECT_FALSE(bare.ok());
      EXPECT_NE(bare.status().message().find(f.argument), std::string::npos)
          << bare.status().message();
    }
    std::string valid = f.name;
    if (f.argument)
      valid += f.kind == RematPolicy::Kind::Every   ? ":2"
               : f.kind == RematPolicy::Kind::Names ? ":x,y"
                                                    : ":1GiB";
    auto p = einrt::parseRematPolicy(valid);
    ASSERT_TRUE(p.ok()) << f.name << ": " << p.status().message();
    EXPECT_EQ(p->kind, f.kind);
    EXPECT_STREQ(p->kindName(), f.name);
    EXPECT_EQ(einrt::rematKindNamed(f.name), f.kind);
    EXPECT_NE(std::string(einrt::rematPolicyForms()).find(f.form), std::string::npos);
  }
  EXPECT_EQ(kinds.size(), 7u);
  EXPECT_FALSE(einrt::rematKindNamed("every:2"));
  std::vector<std::string> plain;
  for (const char *name : einrt::rematPlainPolicies())
    plain.push_back(name);
  EXPECT_EQ(plain, (std::vector<std::string>{"none", "full", "sqrt", "selective"}));
  EXPECT_STREQ(einrt::rematKindNames(), "none, full, every, sqrt, selective, names, budget");
}

} // namespace
