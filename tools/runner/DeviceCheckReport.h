//===- DeviceCheckReport.h - What `check` found, as Markdown and JSON -*- C++ -*-===//
//
// The results of `NAME check` (DeviceCheck.cpp) and their two forms: a
// Markdown table on stdout and a JSON document (--json FILE) that
// scripts/gpu-check reads. The JSON's members are listed once, in the
// structs' `fields` visitors (runtime/base/Fields.h), written by
// einrt::BasicFieldsWriter as a document.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_RUNNER_DEVICECHECKREPORT_H
#define EINC_TOOLS_RUNNER_DEVICECHECKREPORT_H

#include "CheckCompare.h"

#include "runtime/base/Fields.h"
#include "runtime/core/Device.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace einc::runner {

/// The classes of steps, in the order the table and the JSON list them.
inline const char *const kStepClasses[] = {"contraction", "reduction", "elementwise", "data"};

/// One distinct Kernel or Matmul step.
struct StepResult {
  std::string function;    // where it was first seen
  int64_t index = 0;       // its step index there
  int64_t occurrences = 1; // steps of the checked functions that are this computation
  int64_t kernel = -1;     // a Kernel step's kernel
  std::string what;        // the CUDA kernel's name, "kernel N", or "gemm BxMxNxK ..."
  std::string launch;      // the CUDA launch kind ("" for GEMMs and host devices)
  std::string note;        // the ops and their .ein locations
  std::string cls;         // contraction, reduction, elementwise, data
  std::string result;      // "f32[2048x256]"
  int64_t bytes = 0;       // read + written (each buffer once)
  double flops = 0;        // GEMMs
  StepRule rule;
  bool compared = false;
  int64_t elements = 0, differing = 0, outside = 0;
  double maxError = 0, worstRatio = 0;
  std::string problem; // the first element beyond the bound
  double seconds = 0;  // on the device under test, per step (0: not timed)
  int copies = 0;      // the step repeated this many times per timed run
  std::string error;   // a run failed
  bool passed() const { return error.empty() && outside == 0; }

  template <class Self, class Visit> static void fields(Self &s, Visit &&visit) {
    visit("function", s.function);
    visit("index", s.index);
    visit("occurrences", s.occurrences);
    visit("kernel", s.kernel);
    visit("what", s.what);
    visit("launch", s.launch);
    visit("note", s.note);
    visit("class", s.cls);
    visit("result", s.result);
    visit("bytes", s.bytes);
    visit("flops", s.flops);
    visit("bound", einrt::computed(boundKindName(s.rule.kind)));
    visit("bound_why", s.rule.why);
    visit("compared", s.compared);
    visit("elements", s.elements);
    visit("differing", s.differing);
    visit("outside", s.outside);
    visit("max_error", s.maxError);
    visit("error_over_bound", s.worstRatio);
    visit("problem", s.problem);
    visit("seconds", s.seconds);
    visit("copies", s.copies);
    visit("error", s.error);
    visit("passed", einrt::computed(s.passed()));
  }
};

/// One function run whole on the device under test.
struct FunctionResult {
  std::string name;
  int64_t steps = 0;
  double runSeconds = 0;      // median of --repeat runs (the cuda device replays a graph)
  double profiledSeconds = 0; // the steps one by one, each synchronised
  std::map<std::string, double> byClass;       // profiled seconds per class
  std::map<std::string, int64_t> stepsByClass; // steps per class
  std::string error;

  template <class Self, class Visit> static void fields(Self &f, Visit &&visit) {
    visit("name", f.name);
    visit("steps", f.steps);
    visit("run_seconds", f.runSeconds);
    visit("profiled_seconds", f.profiledSeconds);
    visit("by_class", einrt::group([&](auto &&v) {
            for (const char *c : kStepClasses) {
              auto seconds = f.byClass.find(c);
              auto steps = f.stepsByClass.find(c);
              v(c, einrt::group([&](auto &&w) {
                  w("seconds", einrt::computed(seconds == f.byClass.end() ? 0.0 : seconds->second));
                  w("steps", einrt::computed(steps == f.stepsByClass.end() ? 0 : steps->second));
                }));
            }
          }));
    visit("error", f.error);
  }
};

/// Device-to-device copy bandwidth (Device::copy).
struct CopyResult {
  int64_t bytes = 0; // copied (read and written once each)
  double seconds = 0;
  std::string error;

  template <class Self, class Visit> static void fields(Self &c, Visit &&visit) {
    visit("bytes", c.bytes);
    visit("seconds", c.seconds);
    visit("error", c.error);
  }
};

struct CheckResult {
  std::vector<StepResult> steps;
  std::vector<FunctionResult> functions;
  std::optional<CopyResult> copy;
  bool passed() const;
};

/// What the bundle's report predicts for @train_step.
struct Prediction {
  std::string device;                   // the profile's name ("h200")
  double stepSeconds = 0;               // predicted.step_seconds
  std::map<std::string, double> byKind; // Σ ops[].seconds per kind
  double modelFlops = 0;                // model_flops.total
  double matrixPeak = 0;                // device.matrix_flops_per_second
  double bandwidth = 0;                 // device.bandwidth_bytes_per_second
  int64_t tokensPerStep = 0;

  template <class Self, class Visit> static void fields(Self &p, Visit &&visit) {
    visit("device", p.device);
    visit("function", einrt::computed("train_step"));
    visit("step_seconds", p.stepSeconds);
    visit("by_class", p.byKind);
    visit("model_flops", p.modelFlops);
    visit("matrix_flops_per_second", p.matrixPeak);
    visit("bandwidth_bytes_per_second", p.bandwidth);
    visit("tokens_per_step", p.tokensPerStep);
  }
};
std::optional<Prediction> predictionOf(const nlohmann::json &report);

struct CheckSummary {
  std::string tool, model;
  std::string tested, testedDescription, reference;
  std::optional<Prediction> prediction;
};

/// Copies of `bytes` between two buffers of `device`, median of `repeat`.
CopyResult measureCopy(einrt::Device &device, int64_t bytes, int repeat);

void writeMarkdown(std::ostream &out, const CheckSummary &summary, const CheckResult &result);
einrt::Status writeJson(const std::string &path, const CheckSummary &summary,
                        const CheckResult &result);

} // namespace einc::runner

#endif // EINC_TOOLS_RUNNER_DEVICECHECKREPORT_H
