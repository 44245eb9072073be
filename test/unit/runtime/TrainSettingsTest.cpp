//===- TrainSettingsTest.cpp - The typed train settings and their table ---===//
#include "runtime/base/TrainSettings.h"

#include <gtest/gtest.h>

using einrt::TrainSettings;

TEST(TrainSettings, TextFillsTypedFields) {
  TrainSettings s;
  EXPECT_EQ(einrt::setTrainText(s, "lr", "0.003"), "");
  EXPECT_EQ(einrt::setTrainText(s, "steps", "2000"), "");
  EXPECT_EQ(einrt::setTrainText(s, "optimizer", "sgd"), "");
  EXPECT_EQ(s.lr, 0.003);
  ASSERT_TRUE(s.steps.has_value());
  EXPECT_EQ(*s.steps, 2000);
  EXPECT_EQ(s.optimizer, "sgd");
  EXPECT_FALSE(s.warmup.has_value()); // not given: the trainer's default applies
  EXPECT_TRUE(s.isGiven("lr"));
  EXPECT_FALSE(s.isGiven("beta1"));
}

TEST(TrainSettings, BadTextIsAProblemNamingTheValidOnes) {
  TrainSettings s;
  EXPECT_EQ(einrt::setTrainText(s, "learning_rate", "1"),
            "unknown train setting 'learning_rate'; known settings: " + einrt::trainSettingKeys());
  EXPECT_EQ(einrt::setTrainText(s, "lr", "fast"), "'lr' takes a number");
  EXPECT_EQ(einrt::setTrainText(s, "lr", "1e-3x"), "'lr' takes a number");
  EXPECT_EQ(einrt::setTrainText(s, "lr", "nan"), "'lr' takes a number");
  EXPECT_EQ(einrt::setTrainText(s, "steps", "1.5"), "'steps' takes a whole number, got 1.5");
  EXPECT_EQ(einrt::setTrainText(s, "fusion", "maybe"),
            "'maybe' is not a valid fusion; expected one of: all on elementwise off");
  EXPECT_TRUE(s.given.empty());
}

// `fusion = all` (groups, epilogues, row kernels) is the default.
TEST(TrainSettings, FusionWords) {
  TrainSettings s;
  EXPECT_EQ(s.fusion, "all"); // the default (docs/fusion.md, "Who runs it")
  ASSERT_EQ(einrt::setTrainText(s, "fusion", "on"), "");
  EXPECT_EQ(s.fusion, "on");
  ASSERT_EQ(einrt::setTrainText(s, "fusion", "elementwise"), "");
  EXPECT_EQ(s.fusion, "elementwise");
}

TEST(TrainSettings, DescribePrintsShortestRoundTripInTableOrder) {
  TrainSettings s;
  ASSERT_EQ(einrt::setTrainText(s, "steps", "2000"), "");
  ASSERT_EQ(einrt::setTrainText(s, "lr", "0.003"), "");
  ASSERT_EQ(einrt::setTrainText(s, "beta2", "0.95"), "");
  EXPECT_EQ(s.describe(), "lr=0.003 beta2=0.95 steps=2000");
  EXPECT_EQ(einrt::formatShortest(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(einrt::formatShortest(3e-4), "0.0003");
  EXPECT_EQ(std::stod(einrt::formatShortest(1.0 / 3)), 1.0 / 3);
}

TEST(TrainSettings, EveryPrecisionPolicyIsImplementedForEveryUse) {
  std::string key;
  for (const char *policy : {"fp32", "bf16-mixed", "mixed", "fp16-mixed", "bf16"}) {
    TrainSettings s;
    ASSERT_EQ(einrt::setTrainText(s, "precision", policy), "") << policy;
    for (auto use :
         {einrt::SettingsUse::Check, einrt::SettingsUse::Report, einrt::SettingsUse::Execute})
      EXPECT_EQ(einrt::unsupportedSetting(s, use, key), "") << policy;
  }

  // Every remat policy is implemented for every use.
  TrainSettings r;
  ASSERT_EQ(einrt::setTrainText(r, "remat", "sqrt"), "");
  for (auto use :
       {einrt::SettingsUse::Check, einrt::SettingsUse::Report, einrt::SettingsUse::Execute})
    EXPECT_EQ(einrt::unsupportedSetting(r, use, key), "");
}

TEST(TrainSettings, PrecisionPolicies) {
  // `mixed` is an alias: stored, described and reported as bf16-mixed.
  TrainSettings s;
  ASSERT_EQ(einrt::setTrainText(s, "precision", "mixed"), "");
  EXPECT_EQ(s.precision, "bf16-mixed");
  EXPECT_EQ(s.describe(), "precision=bf16-mixed");
  EXPECT_EQ(einrt::setTrainText(s, "precision", "fp8"),
            "'fp8' is not a valid precision; expected one of: fp32 bf16-mixed fp16-mixed bf16");
  EXPECT_EQ(s.precision, "bf16-mixed");
  // The table the pass reads.
  const einrt::PrecisionPolicy *p = einrt::findPrecisionPolicy("fp16-mixed");
  ASSERT_NE(p, nullptr);
  EXPECT_STREQ(p->narrow, "f16");
  EXPECT_TRUE(p->lossScaling);
  EXPECT_FALSE(p->narrowParams);
  p = einrt::findPrecisionPolicy("bf16");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->narrowParams);
  EXPECT_TRUE(p->stochasticRounding);
  EXPECT_STREQ(einrt::findPrecisionPolicy("fp32")->narrow, "");
  EXPECT_STREQ(einrt::findPrecisionPolicy("mixed")->name, "bf16-mixed");
  EXPECT_EQ(einrt::findPrecisionPolicy("half"), nullptr);
}

// The settings that depend on the optimizer default to torch.optim's
// values (torch 2.15's signatures: AdamW(lr=1e-3, eps=1e-8,
// weight_decay=1e-2), Adam(lr=1e-3, eps=1e-8, weight_decay=0),
// SGD(lr=1e-3, momentum=0, weight_decay=0), Adagrad(lr=1e-2, eps=1e-10,
// weight_decay=0)).
TEST(TrainSettings, OptimizerDefaultsAreTorchs) {
  struct Expected {
    const char *optimizer;
    double lr, eps, weightDecay, momentum;
  };
  const Expected torch[] = {{"adamw", 1e-3, 1e-8, 1e-2, 0},
                            {"adam", 1e-3, 1e-8, 0, 0},
                            {"sgd", 1e-3, 1e-8, 0, 0},
                            {"adagrad", 1e-2, 1e-10, 0, 0}};
  TrainSettings plain; // no optimizer given: adamw's
  EXPECT_EQ(plain.optimizer, "adamw");
  EXPECT_EQ(plain.lr, 1e-3);
  EXPECT_EQ(plain.eps, 1e-8);
  EXPECT_EQ(plain.weightDecay, 1e-2);
  EXPECT_EQ(plain.momentum, 0);
  EXPECT_EQ(plain.beta1, 0.9);
  EXPECT_EQ(plain.beta2, 0.999);
  for (const Expected &e : torch) {
    TrainSettings s;
    ASSERT_EQ(einrt::setTrainText(s, "optimizer", e.optimizer), "");
    EXPECT_EQ(s.lr, e.lr) << e.optimizer;
    if (std::string(e.optimizer) != "sgd") // SGD reads no eps
      EXPECT_EQ(s.eps, e.eps) << e.optimizer;
    EXPECT_EQ(s.weightDecay, e.weightDecay) << e.optimizer;
    EXPECT_EQ(s.momentum, e.momentum) << e.optimizer;
    EXPECT_EQ(s.given, std::vector<std::string>{"optimizer"}) << e.optimizer;
  }
}

// A given value stands whether it comes before or after the optimizer;
// another optimizer later (--set over the model's) brings its own defaults
// for the rest.
TEST(TrainSettings, GivenValuesStandOverOptimizerDefaults) {
  TrainSettings before;
  ASSERT_EQ(einrt::setTrainText(before, "weight_decay", "0.1"), "");
  ASSERT_EQ(einrt::setTrainText(before, "optimizer", "adam"), "");
  EXPECT_EQ(before.weightDecay, 0.1);
  TrainSettings after;
  ASSERT_EQ(einrt::setTrainText(after, "optimizer", "sgd"), "");
  ASSERT_EQ(einrt::setTrainText(after, "momentum", "0.9"), "");
  EXPECT_EQ(after.momentum, 0.9);
  EXPECT_EQ(after.weightDecay, 0);
  ASSERT_EQ(einrt::setTrainText(after, "optimizer", "adagrad"), "");
  EXPECT_EQ(after.momentum, 0.9); // given
  EXPECT_EQ(after.lr, 1e-2);
  EXPECT_EQ(after.eps, 1e-10);
  ASSERT_EQ(einrt::setTrainText(after, "optimizer", "adamw"), "");
  EXPECT_EQ(after.lr, 1e-3);
  EXPECT_EQ(after.weightDecay, 1e-2);
}
