//===- DeviceCheckReportTest.cpp - The JSON of `NAME check --json` --------===//
//
// tools/runner/DeviceCheckReport.h: the document scripts/gpucheck reads,
// written from the structs' fields visitors: its members, their order
// within each object (sorted: nlohmann::json) and the derived ones.
//
//===----------------------------------------------------------------------===//
#include "tools/runner/DeviceCheckReport.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace {

using namespace einc::runner;

nlohmann::json written(const CheckSummary &summary, const CheckResult &result) {
  std::string path = testing::TempDir() + "device-check-report.json";
  einrt::Status status = writeJson(path, summary, result);
  EXPECT_TRUE(status.ok()) << status.message();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  return nlohmann::json::parse(text.str());
}

std::vector<std::string> keys(const nlohmann::json &o) {
  std::vector<std::string> out;
  for (auto it = o.begin(); it != o.end(); ++it)
    out.push_back(it.key());
  return out;
}

TEST(DeviceCheckReport, JsonMembers) {
  CheckSummary summary{"mlp", "mlp_lm", "cpu", "the host", "reference", std::nullopt};
  CheckResult result;
  StepResult step;
  step.function = "train_step";
  step.index = 3;
  step.cls = "reduction";
  step.rule.kind = BoundKind::RowSum;
  step.rule.why = "row sums";
  step.outside = 1;
  step.maxError = std::numeric_limits<double>::infinity();
  step.worstRatio = 2.5;
  result.steps.push_back(step);
  FunctionResult f;
  f.name = "train_step";
  f.byClass["data"] = 0.25;
  f.stepsByClass["data"] = 4;
  result.functions.push_back(f);
  result.copy = CopyResult{1024, 0.5, ""};

  nlohmann::json j = written(summary, result);
  EXPECT_EQ(keys(j), (std::vector<std::string>{"copy", "functions", "model", "passed", "prediction",
                                               "reference", "steps", "tested", "tested_description",
                                               "tool"}));
  EXPECT_EQ(j["passed"], false);
  EXPECT_TRUE(j["prediction"].is_null());
  EXPECT_EQ(j["copy"], (nlohmann::json{{"bytes", 1024}, {"seconds", 0.5}, {"error", ""}}));

  const nlohmann::json &s = j["steps"][0];
  EXPECT_EQ(keys(s), (std::vector<std::string>{
                         "bound",     "bound_why", "bytes",       "class",   "compared",
                         "copies",    "differing", "elements",    "error",   "error_over_bound",
                         "flops",     "function",  "index",       "kernel",  "launch",
                         "max_error", "note",      "occurrences", "outside", "passed",
                         "problem",   "result",    "seconds",     "what"}));
  EXPECT_EQ(s["bound"], boundKindName(BoundKind::RowSum));
  EXPECT_EQ(s["bound_why"], "row sums");
  EXPECT_EQ(s["class"], "reduction");
  EXPECT_EQ(s["index"], 3);
  EXPECT_EQ(s["kernel"], -1);
  EXPECT_TRUE(s["max_error"].is_null()); // not finite
  EXPECT_EQ(s["error_over_bound"], 2.5);
  EXPECT_EQ(s["passed"], false);

  const nlohmann::json &fn = j["functions"][0];
  EXPECT_EQ(keys(fn), (std::vector<std::string>{"by_class", "error", "name", "profiled_seconds",
                                                "run_seconds", "steps"}));
  // Every class, in the table's set, with zeros where none ran.
  EXPECT_EQ(keys(fn["by_class"]),
            (std::vector<std::string>{"contraction", "data", "elementwise", "reduction"}));
  EXPECT_EQ(fn["by_class"]["data"], (nlohmann::json{{"seconds", 0.25}, {"steps", 4}}));
  EXPECT_EQ(fn["by_class"]["contraction"], (nlohmann::json{{"seconds", 0}, {"steps", 0}}));
  // Doubles stay doubles (scripts print them as they come): 0.0, not 0.
  EXPECT_TRUE(fn["by_class"]["contraction"]["seconds"].is_number_float());
  EXPECT_TRUE(s["flops"].is_number_float());
}

TEST(DeviceCheckReport, Prediction) {
  Prediction p;
  p.device = "h200";
  p.stepSeconds = 0.125;
  p.byKind["contraction"] = 0.1;
  p.modelFlops = 1e12;
  p.matrixPeak = 9.89e14;
  p.bandwidth = 4.8e12;
  p.tokensPerStep = 2048;
  CheckSummary summary{"gpt", "gpt", "cuda", "H200", "cpu", p};
  nlohmann::json j = written(summary, CheckResult{});
  EXPECT_EQ(j["passed"], true);
  EXPECT_TRUE(j["copy"].is_null());
  EXPECT_EQ(j["prediction"], (nlohmann::json{{"device", "h200"},
                                             {"function", "train_step"},
                                             {"step_seconds", 0.125},
                                             {"by_class", {{"contraction", 0.1}}},
                                             {"model_flops", 1e12},
                                             {"matrix_flops_per_second", 9.89e14},
                                             {"bandwidth_bytes_per_second", 4.8e12},
                                             {"tokens_per_step", 2048}}));
}

} // namespace
