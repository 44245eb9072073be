//===- Progress.cpp - The live progress line and the JSON-lines log -------===//
#include "runtime/train/Progress.h"
#include "runtime/base/LossScaleState.h"
#include "runtime/base/StrictJson.h"
#include "runtime/base/TerminalText.h"
#include "runtime/dist/MpiCommunicator.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace einrt {

namespace {

std::string fmt(const char *format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

/// A metric as the log writes it: 9 significant digits (every float32
/// reads back exactly, and the log stays short), null when not finite.
nlohmann::ordered_json metric(double v) {
  return jsonNumber(std::isfinite(v) ? std::strtod(fmt("%.9g", v).c_str(), nullptr) : v);
}

std::string humanRate(double v) {
  if (v >= 1e9)
    return fmt("%.2fG", v / 1e9);
  if (v >= 1e6)
    return fmt("%.2fM", v / 1e6);
  if (v >= 1e3)
    return fmt("%.1fk", v / 1e3);
  return fmt("%.0f", v);
}

} // namespace

std::string metricsJson(const StepMetrics &m) {
  nlohmann::ordered_json j;
  j["step"] = m.step;
  j["loss"] = metric(m.loss);
  j["lr"] = metric(m.lr);
  j["grad_norm"] = metric(m.gradNorm);
  j["tokens_per_second"] = metric(m.tokensPerSecond);
  if (m.valLoss)
    j["val_loss"] = metric(*m.valLoss);
  for (const auto &[name, value] : m.valMetrics)
    j["val_" + name] = metric(value);
  if (m.scaler) {
    j[kLossScaleName] = metric(m.scaler->scale);
    j[kGoodStepsName] = m.scaler->goodSteps;
    j[kSkippedStepsName] = m.scaler->skippedSteps;
  }
  return dumpJson(j);
}

MetricsLog::~MetricsLog() { close(); }

Status MetricsLog::open(const std::string &path, bool append) {
  close();
  file = std::fopen(path.c_str(), append ? "a" : "w");
  if (!file)
    return Status(StatusCode::Io,
                  "cannot open the log " + einrt::quoted(path) + ": " + std::strerror(errno));
  filePath = path;
  return {};
}

Status MetricsLog::openResumed(const std::string &path, int64_t step) {
  std::ifstream in(path, std::ios::binary);
  int64_t keep = 0; // bytes of the whole lines up to `step`
  for (std::string line; in.good();) {
    if (!std::getline(in, line) || in.eof())
      break; // no more lines, or a partial last line (no newline)
    Expected<nlohmann::json> j = parseStrictJson(line.data(), line.size());
    int64_t s = 0;
    if (!j.ok() || !j->is_object() || !j->contains("step") || !jsonToIndex((*j)["step"], s) ||
        s > step)
      break;
    keep += int64_t(line.size()) + 1;
  }
  in.close();
  if (::truncate(path.c_str(), off_t(keep)) != 0 && errno != ENOENT)
    return Status(StatusCode::Io, "cannot cut the log " + einrt::quoted(path) + " back to step " +
                                      std::to_string(step) + ": " + std::strerror(errno));
  return open(path, /*append=*/true);
}

Status MetricsLog::write(const StepMetrics &m) {
  if (!file)
    return {};
  std::string line = metricsJson(m) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file) != line.size() || std::fflush(file) != 0)
    return Status(StatusCode::Io,
                  "cannot write the log " + einrt::quoted(filePath) + ": " + std::strerror(errno));
  return {};
}

void MetricsLog::close() {
  if (file)
    std::fclose(file);
  file = nullptr;
}

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    return "?";
  long long s = (long long)std::llround(seconds);
  char buf[48];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, (s / 60) % 60);
  else if (s >= 60)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%llds", s);
  return buf;
}

Progress::Progress(ProgressOptions options) : opts(options) {
  out = opts.out ? opts.out : &std::cout;
  switch (opts.style) {
  case ProgressStyle::Live:
    isLive = true;
    break;
  case ProgressStyle::Quiet:
    quiet = true;
    break;
  case ProgressStyle::Plain:
    break;
  case ProgressStyle::Auto: {
    // Only a terminal gets \r and escapes. Under an MPI launcher a rank's
    // stdout is the launcher's pseudo-terminal even when mpirun's own output
    // goes to a file or a pipe: plain lines there.
    int fd = out == &std::cout                        ? STDOUT_FILENO
             : out == &std::cerr || out == &std::clog ? STDERR_FILENO
                                                      : -1;
    isLive = fd >= 0 && isatty(fd) && !launchedByMpi();
    break;
  }
  }
}

std::string Progress::line(const StepMetrics &m) const {
  std::string s = "step " + std::to_string(m.step);
  if (opts.totalSteps > 0)
    s += "/" + std::to_string(opts.totalSteps);
  if (isLive && opts.totalSteps > 0) {
    constexpr int kWidth = 20;
    double frac = std::min(1.0, double(m.step) / double(opts.totalSteps));
    int filled = int(frac * kWidth);
    s += " [" + std::string(size_t(filled), '#') + std::string(size_t(kWidth - filled), '.') + "]";
  }
  s += " loss " + fmt("%.4f", m.loss);
  if (m.valLoss)
    s += " val " + fmt("%.4f", *m.valLoss);
  for (const auto &[name, value] : m.valMetrics)
    s += " " + name + " " + fmt("%.4f", value);
  s += " lr " + fmt("%.2e", m.lr);
  s += " gnorm " + fmt("%.3g", m.gradNorm);
  if (m.scaler)
    s += " scale " + fmt("%.6g", m.scaler->scale) + " (good " +
         std::to_string(m.scaler->goodSteps) + ", skipped " +
         std::to_string(m.scaler->skippedSteps) + ")";
  if (m.tokensPerSecond > 0)
    s += " " + humanRate(m.tokensPerSecond) + " tok/s";
  if (opts.flopsPerStep > 0 && opts.peakFlops > 0 && m.stepSeconds > 0) {
    double mfu = opts.flopsPerStep / m.stepSeconds / opts.peakFlops;
    s += " MFU " + fmt("%.1f%%", 100 * mfu);
    // Faster than the profile's peak: the profile was measured on a busy
    // machine (or another one). Say so rather than let 220% stand unexplained.
    if (mfu > 1)
      s += " (above the profile's peak: rerun einc calibrate)";
  }
  if (opts.predictedStepSeconds > 0) {
    // The prediction's MFU beside its step time, apart from the measured.
    s += " (predicted " + fmt("%.3g", opts.predictedStepSeconds) + " s/step";
    if (opts.predictedMfu > 0)
      s += " at MFU " + fmt("%.1f%%", 100 * opts.predictedMfu);
    if (m.stepSeconds > 0)
      s += "; measured " + fmt("%.3g", m.stepSeconds) + " s/step";
    s += ")";
  }
  if (opts.totalSteps > 0 && stepsTimed > 0 && m.step < opts.totalSteps)
    s += " ETA " +
         formatDuration(secondsSum / double(stepsTimed) * double(opts.totalSteps - m.step));
  return s;
}

void Progress::report(const StepMetrics &m) {
  if (m.stepSeconds > 0) {
    secondsSum += m.stepSeconds;
    ++stepsTimed;
  }
  if (quiet)
    return;
  std::string text = line(m);
  if (isLive) {
    // Pad over a longer previous line.
    *out << '\r' << text << "\x1b[K" << std::flush;
    lineOpen = true;
    if (m.valLoss) { // keep evaluated steps on screen
      *out << '\n' << std::flush;
      lineOpen = false;
    }
  } else {
    *out << text << '\n' << std::flush;
  }
}

void Progress::message(const std::string &text) {
  if (quiet)
    return;
  finish();
  *out << text << '\n' << std::flush;
}

void Progress::finish() {
  if (lineOpen)
    *out << '\n' << std::flush;
  lineOpen = false;
}

} // namespace einrt
