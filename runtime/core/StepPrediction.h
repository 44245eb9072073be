//===- StepPrediction.h - Each step's roofline beside its measured time -*- C++ -*-===//
//
// Per-kernel truth at run time: a Program step's predicted time on a
// device's roofline — max(FLOPs / matrix peak, bytes / bandwidth) for a
// matmul, bytes / bandwidth for every other step — from what the step
// actually moves (each distinct buffer it reads or writes once, at its
// dtype's width: the epilogue's operands and outputs included) and
// computes (2·M·N·K per matrix), joined to the times an Executor's
// profiling measured (runtime/core/StepProfile.h). The device's figures are the
// report's (`device` in `einc report --format json`), so the table says
// where the static report's model and the run part ways. Plain C++.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_STEPPREDICTION_H
#define EINC_RUNTIME_STEPPREDICTION_H

#include "runtime/core/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace einrt {

/// A device's roofline (FLOP/s of its matrix units at the compute dtype,
/// bytes/s of its memory).
struct StepRoofline {
  double matrixFlops = 0;
  double bandwidth = 0;
};

struct StepPrediction {
  int64_t bytes = 0; // read + written, each distinct buffer once
  int64_t flops = 0; // matmuls: 2·M·N·K per matrix; 0 otherwise
  double seconds = 0;
  bool computeBound = false;
};

/// The prediction of step `index` of `program`.
StepPrediction predictStep(const Program &program, size_t index, const StepRoofline &roofline);

/// Predicted against measured (`seconds`: per step, summed over `runs`
/// runs): per step group, then the `top` steps whose measured time is
/// farthest from the prediction (|measured − predicted|, the time the
/// model misplaces), each with its ratio, bound, bytes and note; then the
/// whole run. Milliseconds per run.
std::string formatPredictedProfile(const Program &program, const std::vector<double> &seconds,
                                   int64_t runs, const StepRoofline &roofline, int top = 10);

} // namespace einrt

#endif // EINC_RUNTIME_STEPPREDICTION_H
