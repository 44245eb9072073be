//===- Schedule.h - Learning-rate schedules -------------------------------===//
//
// lr(t) for the 1-based step t (the `lr` argument of @train_step):
//   constant: lr(t) = lr                                    (after warmup)
//   cosine:   lr(t) = min_lr + ½ (lr − min_lr) (1 + cos(π · p)),
//             p = clamp((t − warmup) / (total − warmup), 0, 1)
// Both warm up linearly first: lr(t) = lr · t / warmup for t ≤ warmup.
// After `total` the cosine schedule stays at min_lr. `total` is the length
// from the training settings, not where a run stops, so a run stopped at 20
// and resumed to 40 sees the same rates as one run to 40.
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
  enum class Kind { Constant, Cosine };
  Kind kind = Kind::Constant;
  double lr = 1e-3;
  double minLr = 0;   // cosine
  int64_t warmup = 0; // steps of linear warmup
  int64_t total = 0;  // cosine: the step where it reaches min_lr

  double at(int64_t step) const;
  /// "" or the problem (negative values, cosine without total > warmup, ...).
  std::string validate() const;
  /// One line, e.g. "cosine lr=0.001 min_lr=0.0001 warmup=100 total=5000"
  /// (full precision; parse() reads it back).
  std::string describe() const;
  /// describe() without the length: what a resume must keep (the length may
  /// change explicitly, e.g. to extend a finished schedule).
  std::string describeShape() const;
  /// The schedule describe() wrote; invalid for any other text.
  static Expected<Schedule> parse(const std::string &text);
  static const char *kindName(Kind k); // "constant", "cosine"
};

} // namespace einrt

#endif // EINC_RUNTIME_SCHEDULE_H
