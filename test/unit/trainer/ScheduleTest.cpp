//===- ScheduleTest.cpp - Learning-rate schedules -------------------------===//
#include "runtime/train/Schedule.h"

#include <cmath>
#include <gtest/gtest.h>

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

TEST(Schedule, Errors) {
  EXPECT_FALSE(Schedule::parse("linear lr=1").ok());
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
