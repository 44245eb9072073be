//===- GradCheck.h - Gradients against central finite differences -*- C++ -*-===//
//
// Holds a gradient program (loss and one gradient per param) against the
// forward program it was derived from: for sampled entries of every param,
// the five-point central difference of the forward's loss beside the gradient the
// backward computed. Both executors must be Precision::F64.
//
// bf16/f16. gradCheck runs both executors with setRoundLowPrecision(false)
// (restored on return): bf16/f16 buffers hold float64 values, so a step of
// h = 1e-4 is not rounded away (bf16 has 8 bits of mantissa: 1 + 1e-4 rounds
// to 1), and a cast to bf16/f16 inside a program is the identity. What is
// checked is the model's function in float64, which is what the gradient
// rules differentiate; a difference quotient across rounding steps measures
// the rounding, not the gradient (docs/decisions.md). The report counts the
// buffers and casts this affects.
//
// The bound. With L the loss and ε = 2^-52, each computed loss is
// L(1 + δ) with |δ| ≤ κε, κ the growth of rounding error through the forward
// (a few units for a sum of many positive terms, more where the forward
// cancels large intermediates, as a layer norm does). The stencil
// (−L₊₂ + 8L₊₁ − 8L₋₁ + L₋₂) / 12h adds (1 + 8 + 8 + 1) / 12 = 1.5 such errors
// per 1/h, so the numeric gradient carries an absolute noise of up to
//     noise = 1.5 κ ε |L| / h = noiseFactor · ε · |L| / h.
// (Truncation is h⁴/30 · |∂⁵L/∂p⁵| = 3e-18 · |∂⁵L/∂p⁵| at h = 1e-4, and
// rounding the step p ± h costs ε|p|/h relative: both far below the
// tolerance.) An entry
// passes when
//     |analytic − numeric| < tolerance · max(|analytic|, |numeric|, floor)
//     floor = max(options.floor, noise / tolerance),
// i.e. within `tolerance` relatively, or within max(tolerance · options.floor,
// noise) absolutely: a true zero beside a large loss (a shift-invariant bias,
// a vanishing softmax probability) passes on its noise, while an error larger
// than the noise still fails. |L| is the largest of the entry's four stencil
// losses. noiseFactor = 32 is κ ≈ 21: the largest difference measured on
// large-loss models (test/unit/pipeline/GradCheckBoundTest.cpp: cross
// entropy ×100, sums of 2048 squares, a mean ×1e4, a layer norm ×100; losses
// 1e2 to 1e5) was 8.4 ε|L|/h, from the layer norm (0.8 for cross entropy).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_GRADCHECK_H
#define EINC_RUNTIME_GRADCHECK_H

#include "runtime/core/Executor.h"

#include <string>
#include <vector>

namespace einrt {

struct GradCheckOptions {
  int samplesPerParam = 8; // entries checked per param (all when fewer)
  double step = 1e-4;      // h of the five-point stencil
  /// The smallest floor of the relative error (see the bound above).
  double floor = 1e-4;
  /// c in the finite-difference noise c · ε · |L| / h.
  double noiseFactor = 32;
  /// An entry passes with a relative error below this.
  double tolerance = 1e-6;
  uint64_t seed = 0;
};

struct GradCheckEntry {
  std::string param;
  int64_t index = 0;
  double analytic = 0, numeric = 0, relativeError = 0;
  double floor = 0; // the floor this entry's error was measured against
  double loss = 0;  // the largest |L| of its stencil
};

struct GradCheckReport {
  int64_t checked = 0;
  GradCheckEntry worst; // the entry with the largest relative error
  double tolerance = 0; // options.tolerance
  bool passed = false;  // every relative error below the tolerance
  /// Where the check differs from the programs as written: bf16/f16 buffers
  /// held unrounded (forward and grad), casts to bf16/f16 taken as identity.
  int64_t unroundedBuffers = 0;
  int64_t identityCasts = 0;
  /// fp8 fake quantisations in the forward: their gradient is
  /// straight-through (the identity), the finite differences see the
  /// rounding, so the two disagree by design.
  int64_t quantizations = 0;
};

/// `forward` and `grad` must take the same arguments (inputs, params) with
/// their values already set; grad's results are (loss, d loss/d param...) in
/// param-argument order. The failure of a run (or of programs that do not
/// fit together); a failed check is a report with passed == false.
Expected<GradCheckReport> gradCheck(Executor &forward, Executor &grad,
                                    const GradCheckOptions &options);

} // namespace einrt

#endif // EINC_RUNTIME_GRADCHECK_H
