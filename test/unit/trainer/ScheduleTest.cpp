//===- ScheduleTest.cpp - Learning-rate schedules -------------------------===//
#include "runtime/train/Schedule.h"
#include "runtime/base/TrainSettings.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <set>
#include <sstream>

using namespace einrt;

namespace {

TEST(Schedule, Constant) {
  Schedule s;
  s.lr = 3e-4;
  EXPECT_EQ(s.at(1), 3e-4);
  EXPECT_EQ(s.at(1000000), 3e-4);
  s.warmup = 10;
  EXPECT_DOUBLE_EQ(s.at(1), 3e-5);
  EXPECT_DOUBLE_EQ(s.at(5), 1.5e-4);
  EXPECT_EQ(s.at(10), 3e-4);
  EXPECT_EQ(s.at(11), 3e-4);
}

TEST(Schedule, WarmupThenCosine) {
  Schedule s;
  s.kind = Schedule::Kind::Cosine;
  s.lr = 1e-3;
  s.minLr = 1e-4;
  s.warmup = 100;
  s.total = 1100;
  EXPECT_DOUBLE_EQ(s.at(1), 1e-5);
  EXPECT_DOUBLE_EQ(s.at(50), 5e-4);
  EXPECT_DOUBLE_EQ(s.at(100), 1e-3);
  EXPECT_DOUBLE_EQ(s.at(600), 0.5 * (1e-3 + 1e-4)); // halfway: cos = 0
  EXPECT_DOUBLE_EQ(s.at(1100), 1e-4);
  EXPECT_DOUBLE_EQ(s.at(5000), 1e-4); // past the end: min_lr
  double q = 1e-4 + 0.5 * 9e-4 * (1 + std::cos(M_PI * 0.25));
  EXPECT_DOUBLE_EQ(s.at(350), q);
  for (int64_t t = 101; t < 1100; ++t)
    EXPECT_LE(s.at(t + 1), s.at(t)) << t; // decays monotonically
}

TEST(Schedule, CosineWithoutWarmup) {
  Schedule s;
  s.kind = Schedule::Kind::Cosine;
  s.lr = 1;
  s.total = 4;
  EXPECT_DOUBLE_EQ(s.at(0), 1);
  EXPECT_NEAR(s.at(2), 0.5, 1e-15);
  EXPECT_NEAR(s.at(4), 0, 1e-15);
}

TEST(Schedule, DescribeAndParseRoundTrip) {
  Schedule s;
  s.kind = Schedule::Kind::Cosine;
  s.lr = 0.1 + 0.2; // not a short decimal
  s.minLr = 1e-5;
  s.warmup = 7;
  s.total = 99;
  std::string text = s.describe();
  Expected<Schedule> back = Schedule::parse(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->kind, s.kind);
  EXPECT_EQ(back->lr, s.lr);
  EXPECT_EQ(back->minLr, s.minLr);
  EXPECT_EQ(back->warmup, 7);
  EXPECT_EQ(back->total, 99);
  EXPECT_EQ(Schedule().describe(), "constant lr=0.001 warmup=0");
}

TEST(Schedule, LinearDecay) {
  Schedule s;
  s.kind = Schedule::Kind::Linear;
  s.lr = 1;
  s.minLr = 0.1;
  s.warmup = 10;
  s.total = 110;
  EXPECT_DOUBLE_EQ(s.at(5), 0.5);
  EXPECT_DOUBLE_EQ(s.at(10), 1);
  EXPECT_DOUBLE_EQ(s.at(60), 0.55); // halfway from lr to min_lr
  EXPECT_DOUBLE_EQ(s.at(35), 1 - 0.9 * 0.25);
  EXPECT_DOUBLE_EQ(s.at(110), 0.1);
  EXPECT_DOUBLE_EQ(s.at(500), 0.1);
  for (int64_t t = 11; t < 110; ++t) // equal steps down
    EXPECT_NEAR(s.at(t) - s.at(t + 1), 0.009, 1e-12) << t;
}

TEST(Schedule, WarmupStableDecay) {
  Schedule s;
  s.kind = Schedule::Kind::Wsd;
  s.lr = 2;
  s.minLr = 0;
  s.warmup = 100;
  s.total = 1100;
  s.cooldown = 0.2; // 200 of the 1000 steps after warmup
  EXPECT_EQ(s.decayStart(), 900);
  EXPECT_DOUBLE_EQ(s.at(50), 1);
  for (int64_t t : {100, 101, 500, 899, 900})
    EXPECT_EQ(s.at(t), 2) << t; // stable
  EXPECT_DOUBLE_EQ(s.at(1000), 1);
  EXPECT_DOUBLE_EQ(s.at(950), 1.5);
  EXPECT_DOUBLE_EQ(s.at(1100), 0);
  EXPECT_DOUBLE_EQ(s.at(2000), 0);
  // A cooldown of every step is the linear schedule.
  Schedule all = s, linear = s;
  all.cooldown = 1;
  linear.kind = Schedule::Kind::Linear;
  for (int64_t t = 1; t <= 1200; t += 7)
    EXPECT_DOUBLE_EQ(all.at(t), linear.at(t)) << t;
  // A cooldown too short for one step still decays over one.
  s.cooldown = 1e-6;
  EXPECT_EQ(s.decayStart(), 1099);
  EXPECT_EQ(s.at(1099), 2);
  EXPECT_EQ(s.at(1100), 0);
}

TEST(Schedule, InverseSquareRoot) {
  Schedule s;
  s.kind = Schedule::Kind::InverseSqrt;
  s.lr = 1;
  s.warmup = 4;
  EXPECT_DOUBLE_EQ(s.at(2), 0.5);
  EXPECT_DOUBLE_EQ(s.at(4), 1);
  EXPECT_DOUBLE_EQ(s.at(16), 0.5);
  EXPECT_DOUBLE_EQ(s.at(400), 0.1);
  EXPECT_FALSE(s.ends());
  s.warmup = 0; // lr / sqrt(t)
  EXPECT_DOUBLE_EQ(s.at(1), 1);
  EXPECT_DOUBLE_EQ(s.at(100), 0.1);
}

TEST(Schedule, EveryKindDescribesAndParsesBack) {
  std::istringstream names(Schedule::kindNames());
  std::string name;
  int kinds = 0;
  while (names >> name) {
    std::optional<Schedule::Kind> kind = Schedule::kindNamed(name);
    ASSERT_TRUE(kind) << name;
    EXPECT_EQ(Schedule::kindName(*kind), name);
    Schedule s;
    s.kind = *kind;
    s.lr = 0.3;
    s.minLr = 0.01;
    s.warmup = 3;
    s.total = 50;
    s.cooldown = 0.25;
    ASSERT_EQ(s.validate(), "") << name;
    Expected<Schedule> back = Schedule::parse(s.describe());
    ASSERT_TRUE(back.ok()) << s.describe() << ": " << back.status().message();
    EXPECT_EQ(back->describe(), s.describe());
    for (int64_t t = 1; t <= 60; ++t)
      EXPECT_EQ(back->at(t), s.at(t)) << name << " at " << t;
    ++kinds;
  }
  EXPECT_EQ(kinds, 5);
}

// The `schedule` setting admits exactly the schedules' names (the settings
// live below runtime/train and cannot include this table).
TEST(Schedule, SettingChoicesAreTheKinds) {
  for (const SettingInfo &info : trainSettingTable())
    if (std::strcmp(info.key, "schedule") == 0)
      EXPECT_STREQ(info.choices, "cosine constant linear wsd inverse_sqrt");
  std::istringstream settings("cosine constant linear wsd inverse_sqrt");
  std::string name;
  std::set<std::string> fromSettings, fromTable;
  while (settings >> name)
    fromSettings.insert(name);
  std::istringstream table(Schedule::kindNames());
  while (table >> name)
    fromTable.insert(name);
  EXPECT_EQ(fromSettings, fromTable);
}

TEST(Schedule, Errors) {
  EXPECT_FALSE(Schedule::parse("exponential lr=1").ok());
  Schedule wsd;
  wsd.kind = Schedule::Kind::Wsd;
  wsd.total = 100;
  for (double bad : {0.0, -0.5, 1.5, double(NAN)}) {
    wsd.cooldown = bad;
    EXPECT_NE(wsd.validate().find("cooldown"), std::string::npos) << bad;
  }
  wsd.cooldown = 0.2;
  wsd.minLr = 1; // above lr 1e-3
  EXPECT_NE(wsd.validate().find("the wsd schedule would climb"), std::string::npos)
      << wsd.validate();
  EXPECT_FALSE(Schedule::parse("constant lr=abc").ok());
  EXPECT_FALSE(Schedule::parse("constant rate=1").ok());
  Expected<Schedule> tooShort = Schedule::parse("cosine lr=1 warmup=10 total=10");
  ASSERT_FALSE(tooShort.ok());
  EXPECT_EQ(tooShort.status().code(), StatusCode::Invalid);
  EXPECT_NE(tooShort.status().message().find("above its warmup"), std::string::npos)
      << tooShort.status().message();
  Schedule s;
  s.lr = -1;
  EXPECT_NE(s.validate(), "");
  s.lr = NAN;
  EXPECT_NE(s.validate(), "");
}

} // namespace
