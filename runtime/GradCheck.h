//===- GradCheck.h - Gradients against central finite differences -*- C++ -*-===//
//
// Holds a gradient program (loss and one gradient per param) against the
// forward program it was derived from: for sampled entries of every param,
// the five-point central difference of the forward's loss beside the gradient the
// backward computed. Run both executors in Precision::F64.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_GRADCHECK_H
#define EINC_RUNTIME_GRADCHECK_H

#include "runtime/Executor.h"

#include <string>
#include <vector>

namespace einrt {

struct GradCheckOptions {
  int samplesPerParam = 8; // entries checked per param (all when fewer)
  double step = 1e-4;      // h of the five-point stencil
  /// Relative error = |analytic − numeric| / max(|analytic|, |numeric|, floor):
  /// below the floor, where rounding in the loss (about 1e-16 · loss / h)
  /// dominates the difference quotient, errors are measured against it.
  double floor = 1e-4;
  uint64_t seed = 0;
};

struct GradCheckEntry {
  std::string param;
  int64_t index = 0;
  double analytic = 0, numeric = 0, relativeError = 0;
};

struct GradCheckReport {
  int64_t checked = 0;
  GradCheckEntry worst; // the entry with the largest relative error
};

/// `forward` and `grad` must take the same arguments (inputs, params) with
/// their values already set; grad's results are (loss, d loss/d param...) in
/// param-argument order. Returns false with `error` on a run failure.
bool gradCheck(Executor &forward, Executor &grad, const GradCheckOptions &options,
               GradCheckReport &report, std::string &error);

} // namespace einrt

#endif // EINC_RUNTIME_GRADCHECK_H
