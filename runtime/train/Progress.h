//===- Progress.h - The live progress line and the JSON-lines log ---------===//
//
// Progress prints one line per reported step: on a terminal (isatty, and
// not a rank of an MPI launcher, whose pseudo-terminal may lead to a file)
// it is rewritten in place with a carriage return and carries a bar;
// otherwise (a pipe, a log file) each report is a plain line without \r or
// escapes. A line shows
//   step 120/1000 [####......] loss 2.3451 lr 6.00e-04 gnorm 0.812
//   12.3k tok/s MFU 21.0% (predicted 0.041 s/step, measured 0.045,
//   MFU 24.0%) ETA 1m48s                                  (one line)
// MFU is measured as flops_per_step / step_seconds / peak_flops; the
// predicted step time and MFU are the caller's (the report's cpu profile).
// With loss scaling the line also shows the loss scaler's state after the
// step, `scale 65536 (good 12, skipped 1)`, after gnorm.
// Terms without data (zero flops, no prediction) are left out.
//
// MetricsLog writes one JSON object per logged step (nlohmann::json, compact):
//   {"step":120,"loss":2.3451,"lr":0.0006,"grad_norm":0.812,
//    "tokens_per_second":12345.6,"val_loss":2.41,
//    "loss_scale":65536,"good_steps":12,"skipped_steps":1}
// (`val_loss` only where evaluated; the loss scaler's state, named as its
// buffers (runtime/base/LossScaleState.h), only with loss scaling, a skipped step
// with a null grad_norm; numbers to 9 significant digits, whole numbers
// without a fraction, non-finite numbers as null).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_PROGRESS_H
#define EINC_RUNTIME_PROGRESS_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace einrt {

struct StepMetrics {
  int64_t step = 0;
  double loss = 0;
  double lr = 0;
  double gradNorm = 0;
  double stepSeconds = 0;     // training wall time per step (no eval/ckpt)
  double tokensPerSecond = 0; // predicted tokens / step time
  std::optional<double> valLoss;
  /// At an evaluation: the mean of each other scalar output of @forward
  /// (an `output` such as accuracy, the cross_entropy term of an objective),
  /// in the function's result order.
  std::vector<std::pair<std::string, double>> valMetrics;
  /// Loss scaling: the loss scaler's state after the step.
  struct Scaler {
    double scale = 0;
    int64_t goodSteps = 0, skippedSteps = 0;
  };
  std::optional<Scaler> scaler;
};

/// One JSON object, no newline.
std::string metricsJson(const StepMetrics &m);

class MetricsLog {
public:
  MetricsLog() = default;
  ~MetricsLog();
  MetricsLog(const MetricsLog &) = delete;
  MetricsLog &operator=(const MetricsLog &) = delete;
  /// Opens `path` (truncating, or appending when `append`); i/o when it cannot.
  Status open(const std::string &path, bool append);
  /// Opens `path` to append after a resume from `step`: the lines of later
  /// steps (logged by the run that went past its last checkpoint) and a
  /// partial last line are cut off first, so each step is logged once.
  Status openResumed(const std::string &path, int64_t step);
  bool isOpen() const { return file != nullptr; }
  /// Writes one line and flushes.
  Status write(const StepMetrics &m);
  void close();

private:
  std::FILE *file = nullptr;
  std::string filePath;
};

enum class ProgressStyle { Auto, Live, Plain, Quiet };

struct ProgressOptions {
  std::ostream *out = nullptr; // null: std::cout
  /// Auto: Live when `out` is std::cout/std::cerr, that fd is a terminal and
  /// no MPI launcher started this process.
  ProgressStyle style = ProgressStyle::Auto;
  int64_t totalSteps = 0;          // where the run stops
  double flopsPerStep = 0;         // model flops of one optimizer step (0: no MFU)
  double peakFlops = 0;            // the device's peak flop/s (0: no MFU)
  double predictedStepSeconds = 0; // 0: no prediction shown
  double predictedMfu = 0;         // fraction, 0..1
};

class Progress {
public:
  explicit Progress(ProgressOptions options);
  /// Reports a step. `m.stepSeconds` is the mean training time of the steps
  /// since the previous report; the ETA uses the mean over all reports.
  void report(const StepMetrics &m);
  /// A message on its own line (ends a live line first).
  void message(const std::string &text);
  /// Ends a live line.
  void finish();
  bool live() const { return isLive; }
  /// The text of the line for `m` (without \r or \n), for tests.
  std::string line(const StepMetrics &m) const;

private:
  ProgressOptions opts;
  std::ostream *out;
  bool isLive = false;
  bool quiet = false;
  bool lineOpen = false;
  double secondsSum = 0; // training seconds of reported steps
  int64_t stepsTimed = 0;
};

/// "1h02m", "3m05s", "12s".
std::string formatDuration(double seconds);

} // namespace einrt

#endif // EINC_RUNTIME_PROGRESS_H
