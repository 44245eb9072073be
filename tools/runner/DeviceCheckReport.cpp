//===- DeviceCheckReport.cpp - What `check` found, as Markdown and JSON ---===//
#include "DeviceCheckReport.h"

#include "Runner.h"

#include "runtime/base/FieldsJson.h"
#include "runtime/base/Memory.h"
#include "runtime/core/Safetensors.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace einc::runner {
namespace {

std::string sci(double v) {
  if (v == 0)
    return "0";
  if (!std::isfinite(v))
    return "inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", v);
  return text;
}

/// A Markdown cell: '|' would split it.
std::string cell(std::string s) {
  for (char &c : s)
    if (c == '|')
      c = '/';
  return s;
}

const nlohmann::json *member(const nlohmann::json &j, const char *key) {
  if (!j.is_object())
    return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

double numberAt(const nlohmann::json &j, const char *object, const char *key) {
  const nlohmann::json *o = member(j, object);
  const nlohmann::json *v = o ? member(*o, key) : nullptr;
  return v && v->is_number() ? v->get<double>() : 0.0;
}

} // namespace

bool CheckResult::passed() const {
  for (const StepResult &s : steps)
    if (!s.passed())
      return false;
  for (const FunctionResult &f : functions)
    if (!f.error.empty())
      return false;
  return !copy || copy->error.empty();
}

std::optional<Prediction> predictionOf(const nlohmann::json &report) {
  const nlohmann::json *ops = member(report, "ops");
  if (!ops || !ops->is_array())
    return std::nullopt;
  Prediction p;
  if (const nlohmann::json *d = member(report, "device"))
    if (const nlohmann::json *name = member(*d, "name"); name && name->is_string())
      p.device = name->get<std::string>();
  p.stepSeconds = numberAt(report, "predicted", "step_seconds");
  p.modelFlops = numberAt(report, "model_flops", "total");
  p.matrixPeak = numberAt(report, "device", "matrix_flops_per_second");
  p.bandwidth = numberAt(report, "device", "bandwidth_bytes_per_second");
  if (const nlohmann::json *t = member(report, "tokens_per_step"); t && t->is_number_integer())
    p.tokensPerStep = t->get<int64_t>();
  for (const nlohmann::json &op : *ops) {
    const nlohmann::json *kind = member(op, "kind"), *seconds = member(op, "seconds");
    if (kind && kind->is_string() && seconds && seconds->is_number())
      p.byKind[kind->get<std::string>()] += seconds->get<double>();
  }
  return p;
}

CopyResult measureCopy(einrt::Device &device, int64_t bytes, int repeat) {
  CopyResult r;
  r.bytes = bytes;
  einrt::DeviceMemory from, to;
  einrt::Status status;
  auto copied = [&] {
    status = device.copy(to.data, from.data, bytes);
    if (status.ok())
      status = device.synchronize();
    return status.ok();
  };
  auto allocate = [&](einrt::DeviceMemory &m, const char *what) {
    einrt::Expected<einrt::DeviceMemory> got = device.allocate(bytes, what);
    if (got.ok())
      m = got.take();
    else
      status = got.takeStatus();
    return status.ok();
  };
  if (allocate(from, "the copy check's source") && allocate(to, "the copy check's target") &&
      copied()) {
    std::vector<double> samples;
    for (int i = 0; i < repeat; ++i) {
      auto start = std::chrono::steady_clock::now();
      if (!copied())
        break;
      samples.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(samples.begin(), samples.end());
    if (!samples.empty())
      r.seconds = samples[samples.size() / 2];
  }
  r.error = status.message();
  if (from.data)
    device.release(from);
  if (to.data)
    device.release(to);
  return r;
}

void writeMarkdown(std::ostream &out, const CheckSummary &summary, const CheckResult &result) {
  out << "## " << summary.tool << " check: " << summary.model << " on " << summary.tested << " ("
      << summary.testedDescription << ") against " << summary.reference << "\n\n";
  int64_t kernels = 0, gemms = 0, failed = 0, steps = 0;
  if (!result.steps.empty()) {
    out << "| function | step | kernel | class | × | result | bound | max error | error/bound | "
           "ok | µs | GB/s | TFLOP/s |\n";
    out << "|---|---:|---|---|---:|---|---|---:|---:|---|---:|---:|---:|\n";
  }
  for (const StepResult &s : result.steps) {
    (s.flops > 0 || s.what.rfind("gemm", 0) == 0 ? gemms : kernels)++;
    steps += s.occurrences;
    failed += !s.passed();
    std::string ok = !s.error.empty()  ? "**error**"
                     : s.outside > 0   ? "**no**"
                     : s.differing > 0 ? "yes"
                                       : "yes (same bits)";
    out << "| " << s.function << " | " << s.index << " | " << cell(s.what)
        << (s.launch.empty() ? "" : " (" + s.launch + ")") << " | " << s.cls << " | "
        << s.occurrences << " | " << s.result << " | " << cell(s.rule.why) << " | "
        << sci(s.maxError) << " | " << sci(s.worstRatio) << " | " << ok << " | "
        << (s.seconds > 0 ? fixed(s.seconds * 1e6, 1) : "") << " | "
        << (s.seconds > 0 ? fixed(double(s.bytes) / s.seconds / 1e9, 1) : "") << " | "
        << (s.seconds > 0 && s.flops > 0 ? fixed(s.flops / s.seconds / 1e12, 1) : "") << " |\n";
  }
  if (!result.steps.empty()) {
    out << "\n"
        << result.steps.size() << " distinct steps (" << kernels << " kernels, " << gemms
        << " GEMMs) of " << steps << " Kernel and Matmul steps: ";
    if (failed == 0)
      out << "all within their bounds\n";
    else
      out << failed << " beyond their bounds or failed\n";
    for (const StepResult &s : result.steps)
      if (!s.passed())
        out << "- @" << s.function << " step " << s.index << " " << s.what << " (" << s.note
            << "): " << (s.error.empty() ? s.problem : s.error) << "\n";
  }

  const Prediction *p = summary.prediction ? &*summary.prediction : nullptr;
  for (const FunctionResult &f : result.functions) {
    if (f.runSeconds <= 0 && f.error.empty())
      continue;
    out << "\n@" << f.name << " on " << summary.tested << ": ";
    if (!f.error.empty()) {
      out << "**" << f.error << "**\n";
      continue;
    }
    out << f.steps << " steps, a run " << fixed(f.runSeconds * 1e3, 3)
        << " ms (median), one by one " << fixed(f.profiledSeconds * 1e3, 3) << " ms\n\n";
    bool predicted = p && f.name == "train_step";
    out << "| class | steps | measured ms |"
        << (predicted ? " predicted ms (" + p->device + ") | predicted / measured |" : "") << "\n";
    out << "|---|---:|---:|" << (predicted ? "---:|---:|" : "") << "\n";
    for (const char *c : kStepClasses) {
      auto steps = f.stepsByClass.find(c);
      double measured = f.byClass.count(c) ? f.byClass.at(c) : 0.0;
      double want = predicted && p->byKind.count(c) ? p->byKind.at(c) : 0.0;
      out << "| " << c << " | " << (steps == f.stepsByClass.end() ? 0 : steps->second) << " | "
          << fixed(measured * 1e3, 3) << " |";
      if (predicted)
        out << " " << fixed(want * 1e3, 3) << " | "
            << (measured > 0 ? fixed(want / measured, 2) : "") << " |";
      out << "\n";
    }
    if (predicted) {
      out << "| whole step | " << f.steps << " | " << fixed(f.runSeconds * 1e3, 3) << " | "
          << fixed(p->stepSeconds * 1e3, 3) << " | " << fixed(p->stepSeconds / f.runSeconds, 2)
          << " |\n";
      if (p->matrixPeak > 0 && p->modelFlops > 0)
        out << "\nMFU " << fixed(100 * p->modelFlops / (f.runSeconds * p->matrixPeak), 1)
            << "% (model FLOPs " << sci(p->modelFlops) << " per step, peak " << sci(p->matrixPeak)
            << " FLOP/s of the report's " << p->device << " profile)";
      if (p->tokensPerStep > 0)
        out << (p->matrixPeak > 0 ? ", " : "\n")
            << fixed(double(p->tokensPerStep) / f.runSeconds, 0) << " tokens/s";
      out << "\n";
    }
  }
  if (result.copy) {
    const CopyResult &c = *result.copy;
    out << "\ncopy on " << summary.tested << ": ";
    if (c.error.empty() && c.seconds > 0)
      out << einrt::formatBytes(c.bytes) << " in " << fixed(c.seconds * 1e3, 3) << " ms, "
          << fixed(2.0 * double(c.bytes) / c.seconds / 1e9, 1) << " GB/s (read + written)\n";
    else
      out << "**" << c.error << "**\n";
  }
  out << "\nresult: " << (result.passed() ? "passed" : "FAILED") << "\n";
  out.flush();
}

einrt::Status writeJson(const std::string &path, const CheckSummary &summary,
                        const CheckResult &result) {
  einrt::BasicFieldsWriter<nlohmann::json> writer(einrt::JsonForm::DocumentWithDoubles);
  nlohmann::json j = writer.write(einrt::group([&](auto &&v) {
    v("tool", summary.tool);
    v("model", summary.model);
    v("tested", summary.tested);
    v("tested_description", summary.testedDescription);
    v("reference", summary.reference);
    v("passed", einrt::computed(result.passed()));
    v("steps", result.steps);
    v("functions", result.functions);
    v("prediction", einrt::orNull(summary.prediction));
    v("copy", einrt::orNull(result.copy));
  }));
  std::string text = einrt::dumpJson(j, 1) + "\n";
  return einrt::writeFileAtomically(path, std::vector<uint8_t>(text.begin(), text.end()));
}

} // namespace einc::runner
