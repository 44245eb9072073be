//===- ProgressTest.cpp - The progress line and the JSON-lines log --------===//
#include "runtime/train/Progress.h"
#include "TrainerTestUtil.h"

#include <cmath>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <vector>

using namespace einrt;
using namespace einrt::test;

namespace {

TEST(Metrics, JsonLine) {
  StepMetrics m;
  m.step = 12;
  m.loss = 2.5;
  m.lr = 0.001;
  m.gradNorm = 0.75;
  m.tokensPerSecond = 1000;
  EXPECT_EQ(metricsJson(m), "{\"step\":12,\"loss\":2.5,\"lr\":0.001,"
                            "\"grad_norm\":0.75,\"tokens_per_second\":1000}");
  m.valLoss = 2.75;
  m.gradNorm = NAN;
  EXPECT_EQ(metricsJson(m), "{\"step\":12,\"loss\":2.5,\"lr\":0.001,\"grad_norm\":null,"
                            "\"tokens_per_second\":1000,\"val_loss\":2.75}");
  // 9 significant digits: a float32 loss reads back exactly, without the
  // 17 digits of its double.
  m.loss = double(2.3451f);
  m.valLoss.reset();
  m.gradNorm = 1e-30;
  EXPECT_EQ(metricsJson(m), "{\"step\":12,\"loss\":2.34509993,\"lr\":0.001,\"grad_norm\":1e-30,"
                            "\"tokens_per_second\":1000}");
  EXPECT_EQ(float(2.34509993), 2.3451f);
}

TEST(Metrics, LossScalerByName) {
  StepMetrics m;
  m.step = 3;
  m.loss = 2.5;
  m.lr = 0.001;
  m.gradNorm = NAN; // a skipped step
  m.scaler = StepMetrics::Scaler{32768, 0, 1};
  EXPECT_EQ(metricsJson(m), "{\"step\":3,\"loss\":2.5,\"lr\":0.001,\"grad_norm\":null,"
                            "\"tokens_per_second\":0,\"loss_scale\":32768,\"good_steps\":0,"
                            "\"skipped_steps\":1}");
}

TEST(Metrics, LogWritesAndAppends) {
  TempDir d;
  std::string path = d.file("log.jsonl");
  StepMetrics m;
  {
    MetricsLog log;
    ASSERT_TRUE(log.open(path, false).ok());
    m.step = 1;
    ASSERT_TRUE(log.write(m).ok());
    m.step = 2;
    ASSERT_TRUE(log.write(m).ok());
  }
  {
    MetricsLog log;
    ASSERT_TRUE(log.open(path, true).ok());
    m.step = 3;
    ASSERT_TRUE(log.write(m).ok());
  }
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    EXPECT_EQ(line.rfind("{\"step\":" + std::to_string(n) + ",", 0), 0u) << line;
  }
  EXPECT_EQ(n, 3);
  MetricsLog bad;
  Status opened = bad.open("/nonexistent/dir/log", false);
  EXPECT_EQ(opened.code(), StatusCode::Io);
  EXPECT_NE(opened.message().find("/nonexistent/dir/log"), std::string::npos) << opened.message();
}

// A resume cuts the log back to the checkpoint's step: lines are read as
// JSON, so a log written before the format turned compact still resumes.
TEST(Metrics, ResumedLogKeepsTheStepsUpToTheCheckpoint) {
  TempDir d;
  std::string path = d.file("log.jsonl");
  {
    std::ofstream out(path);
    out << "{\"step\": 1, \"loss\": 2.5}\n{\"step\": 2, \"loss\": 2.4}\n"
        << "{\"step\":3,\"loss\":2.3}\n{\"step\":4,\"loss\":2.2}\n{\"step\":5,\"lo";
  }
  MetricsLog log;
  ASSERT_TRUE(log.openResumed(path, 3).ok());
  StepMetrics m;
  m.step = 4;
  ASSERT_TRUE(log.write(m).ok());
  log.close();
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "{\"step\": 1, \"loss\": 2.5}");
  EXPECT_EQ(lines[2], "{\"step\":3,\"loss\":2.3}");
  EXPECT_EQ(lines[3].rfind("{\"step\":4,\"loss\":0,", 0), 0u) << lines[3];
  // A line that is not a step object ends what is kept.
  {
    std::ofstream out(path);
    out << "{\"step\":1}\nnot json\n{\"step\":2}\n";
  }
  ASSERT_TRUE(log.openResumed(path, 5).ok());
  log.close();
  std::ifstream again(path);
  std::string all((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all, "{\"step\":1}\n");
}

TEST(Progress, PlainLines) {
  std::ostringstream out;
  ProgressOptions o;
  o.out = &out;
  o.totalSteps = 100;
  o.flopsPerStep = 1e9;
  o.peakFlops = 1e11;
  o.predictedStepSeconds = 0.05;
  o.predictedMfu = 0.25;
  Progress p(o);
  EXPECT_FALSE(p.live()); // not a terminal
  StepMetrics m;
  m.step = 10;
  m.loss = 1.23456;
  m.lr = 1e-3;
  m.gradNorm = 0.5;
  m.stepSeconds = 0.1;
  m.tokensPerSecond = 20480;
  p.report(m);
  std::string s = out.str();
  EXPECT_EQ(s.find('\r'), std::string::npos);
  EXPECT_NE(s.find("step 10/100 loss 1.2346 lr 1.00e-03 gnorm 0.5 20.5k tok/s"), std::string::npos)
      << s;
  EXPECT_NE(s.find("MFU 10.0% (predicted 0.05 s/step at MFU 25.0%; measured 0.1 s/step)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("ETA 9s"), std::string::npos) << s; // 90 steps × 0.1 s
  EXPECT_EQ(s.back(), '\n');
}

TEST(Progress, LineShowsTheLossScaler) {
  ProgressOptions o;
  o.style = ProgressStyle::Plain;
  Progress p(o);
  StepMetrics m;
  m.step = 7;
  m.loss = 1.25;
  m.gradNorm = 0.5;
  EXPECT_EQ(p.line(m).find("scale"), std::string::npos);
  m.scaler = StepMetrics::Scaler{131072, 12, 3};
  EXPECT_NE(p.line(m).find(" gnorm 0.5 scale 131072 (good 12, skipped 3)"), std::string::npos)
      << p.line(m);
}

TEST(Progress, MeasuredAbovePeakSaysToRecalibrate) {
  std::ostringstream out;
  ProgressOptions o;
  o.out = &out;
  o.totalSteps = 100;
  o.flopsPerStep = 4e9;
  o.peakFlops = 1e10; // a profile measured on a busy machine
  Progress p(o);
  StepMetrics m;
  m.step = 1;
  m.stepSeconds = 0.2; // 20 GFLOP/s measured: 200% of the profile
  p.report(m);
  EXPECT_NE(out.str().find("MFU 200.0% (above the profile's peak: rerun einc calibrate)"),
            std::string::npos)
      << out.str();
}

TEST(Progress, LiveLineUsesCarriageReturnAndBar) {
  std::ostringstream out;
  ProgressOptions o;
  o.out = &out;
  o.style = ProgressStyle::Live;
  o.totalSteps = 10;
  Progress p(o);
  StepMetrics m;
  m.step = 5;
  p.report(m);
  m.step = 6;
  p.report(m);
  p.message("hello");
  std::string s = out.str();
  EXPECT_EQ(s.rfind("\rstep 5/10 [##########..........]", 0), 0u) << s;
  EXPECT_NE(s.find("\rstep 6/10"), std::string::npos);
  EXPECT_NE(s.find("\nhello\n"), std::string::npos) << s;
  EXPECT_EQ(s.find("MFU"), std::string::npos); // no flops given
}

TEST(Progress, QuietPrintsNothing) {
  std::ostringstream out;
  ProgressOptions o;
  o.out = &out;
  o.style = ProgressStyle::Quiet;
  Progress p(o);
  p.report(StepMetrics());
  p.message("x");
  EXPECT_EQ(out.str(), "");
}

TEST(Progress, Durations) {
  EXPECT_EQ(formatDuration(12.4), "12s");
  EXPECT_EQ(formatDuration(185), "3m05s");
  EXPECT_EQ(formatDuration(3720), "1h02m");
  EXPECT_EQ(formatDuration(NAN), "?");
}

} // namespace
