//===- StepPrediction.cpp - Each step's roofline beside its measured time -===//
#include "runtime/core/StepPrediction.h"

#include "runtime/core/StepProfile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace einrt {

StepPrediction predictStep(const Program &program, size_t index, const StepRoofline &roofline) {
  const Step &s = program.steps[index];
  std::set<int32_t> touched(s.inputs.begin(), s.inputs.end());
  for (int32_t out : s.outputs())
    touched.insert(out);
  if (const auto *g = std::get_if<GemmDesc>(&s.payload))
    touched.insert(g->post.operands.begin(), g->post.operands.end());
  StepPrediction p;
  for (int32_t b : touched)
    if (b >= 0 && size_t(b) < program.buffers.size())
      p.bytes +=
          program.buffers[size_t(b)].elementCount() * dtypeSize(program.buffers[size_t(b)].dtype);
  // An accumulating GEMM reads C as well as writing it.
  if (const auto *g = std::get_if<GemmDesc>(&s.payload);
      g && g->epilogue == GemmEpilogue::Accumulate)
    p.bytes += program.buffers[size_t(s.output)].elementCount() *
               dtypeSize(program.buffers[size_t(s.output)].dtype);
  p.flops = matmulFlops(s);
  const double memory = roofline.bandwidth > 0 ? double(p.bytes) / roofline.bandwidth : 0;
  const double compute = roofline.matrixFlops > 0 ? double(p.flops) / roofline.matrixFlops : 0;
  p.seconds = std::max(memory, compute);
  p.computeBound = compute > memory;
  return p;
}

std::string formatPredictedProfile(const Program &program, const std::vector<double> &seconds,
                                   int64_t runs, const StepRoofline &roofline, int top) {
  const double perRun = runs > 0 ? 1e3 / double(runs) : 0; // seconds summed -> ms per run
  struct Row {
    double predicted = 0, measured = 0;
    int64_t steps = 0;
  };
  std::map<std::string, Row> groups;
  std::vector<std::pair<double, size_t>> misplaced; // |measured - predicted| ms, step
  Row total;
  std::vector<StepPrediction> predictions;
  for (size_t i = 0; i < program.steps.size() && i < seconds.size(); ++i) {
    StepPrediction p = predictStep(program, i, roofline);
    predictions.push_back(p);
    Row &g = groups[stepGroup(program.steps[i])];
    const double measured = seconds[i] * perRun, predicted = 1e3 * p.seconds;
    g.predicted += predicted;
    g.measured += measured;
    ++g.steps;
    total.predicted += predicted;
    total.measured += measured;
    misplaced.push_back({std::fabs(measured - predicted), i});
  }
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line,
                "predicted (roofline: %.4g TFLOP/s matrix, %.4g GB/s) beside measured, ms per run "
                "(mean of %lld):\n",
                roofline.matrixFlops / 1e12, roofline.bandwidth / 1e9, (long long)runs);
  out += line;
  std::snprintf(line, sizeof line, "  %-22s %6s %11s %11s %8s\n", "group", "steps", "predicted",
                "measured", "meas/pred");
  out += line;
  std::vector<std::pair<std::string, Row>> sorted(groups.begin(), groups.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto &a, const auto &b) { return a.second.measured > b.second.measured; });
  auto ratio = [](double m, double p) { return p > 0 ? m / p : 0.0; };
  for (const auto &[name, g] : sorted) {
    std::snprintf(line, sizeof line, "  %-22s %6lld %11.3f %11.3f %8.2f\n", name.c_str(),
                  (long long)g.steps, g.predicted, g.measured, ratio(g.measured, g.predicted));
    out += line;
  }
  std::snprintf(line, sizeof line, "  %-22s %6zu %11.3f %11.3f %8.2f\n", "the whole run",
                predictions.size(), total.predicted, total.measured,
                ratio(total.measured, total.predicted));
  out += line;
  std::sort(misplaced.begin(), misplaced.end(), std::greater<>());
  out += "  worst predicted (|measured - predicted|):\n";
  for (int n = 0; n < top && size_t(n) < misplaced.size(); ++n) {
    size_t i = misplaced[size_t(n)].second;
    const StepPrediction &p = predictions[i];
    const double measured = seconds[i] * perRun, predicted = 1e3 * p.seconds;
    std::snprintf(line, sizeof line,
                  "    %5zu %9.3f ms measured %9.3f predicted %7.2fx %-7s %9.2f MiB  ", i, measured,
                  predicted, ratio(measured, predicted), p.computeBound ? "compute" : "memory",
                  double(p.bytes) / 1048576.0);
    out += line + program.steps[i].note + "\n";
  }
  return out;
}

} // namespace einrt
