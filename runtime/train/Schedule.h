//===- Schedule.h - Learning-rate schedules -------------------------------===//
//
// lr(t) for the 1-based step t (the `lr` argument of @train_step). Every
// schedule warms up linearly first, lr(t) = lr · t / warmup for t ≤ warmup;
// after it, with p = clamp((t − warmup) / (total − warmup), 0, 1):
//   constant:     lr(t) = lr
//   cosine:       lr(t) = min_lr + ½ (lr − min_lr) (1 + cos(π · p))
//   linear:       lr(t) = lr + (min_lr − lr) · p
//   wsd:          warmup-stable-decay: lr until the last `cooldown` fraction
//                 of the steps after warmup, then linear to min_lr at total
//   inverse_sqrt: lr(t) = lr · √(max(warmup, 1) / t)
// Those with an end (cosine, linear, wsd) stay at min_lr after `total`.
// `total` is the length from the training settings, not where a run stops,
// so a run stopped at 20 and resumed to 40 sees the same rates as one run
// to 40. Kinds are rows of one table (Schedule.cpp): the name, whether the
// schedule ends at min_lr, whether it has a cooldown.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_SCHEDULE_H
#define EINC_RUNTIME_SCHEDULE_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <optional>
#include <string>

namespace einrt {

struct Schedule {
  enum class Kind { Constant, Cosine, Linear, Wsd, InverseSqrt };
  Kind kind = Kind::Constant;
  double lr = 1e-3;
  double minLr = 0;      // where the schedules with an end arrive
  int64_t warmup = 0;    // steps of linear warmup
  int64_t total = 0;     // with an end: the step where it reaches min_lr
  double cooldown = 0.2; // wsd: the fraction of the steps after warmup spent decaying

  double at(int64_t step) const;
  /// Whether the schedule ends at min_lr at `total` (cosine, linear, wsd).
  bool ends() const;
  /// The first step of wsd's decay (total − the cooldown's steps).
  int64_t decayStart() const;
  /// "" or the problem (negative values, an end without total > warmup, ...).
  std::string validate() const;
  /// One line, e.g. "cosine lr=0.001 min_lr=0.0001 warmup=100 total=5000"
  /// (full precision; parse() reads it back).
  std::string describe() const;
  /// describe() without the length: what a resume must keep (the length may
  /// change explicitly, e.g. to extend a finished schedule).
  std::string describeShape() const;
  /// The schedule describe() wrote; invalid for any other text.
  static Expected<Schedule> parse(const std::string &text);
  static const char *kindName(Kind k); // "constant", "cosine", ...
  /// The kind named `name` (the `schedule` setting's words), or nullopt.
  static std::optional<Kind> kindNamed(const std::string &name);
  /// The names, space-separated: "constant cosine linear wsd inverse_sqrt".
  static const char *kindNames();
};

} // namespace einrt

#endif // EINC_RUNTIME_SCHEDULE_H
