//===- StepProfile.h - Where a Program's time goes, step by step -*- C++ -*-===//
//
// Formats the per-step wall times an Executor collects with profiling on
// (Executor::setProfiling) as a table: time per step group (BLAS matmuls,
// then kernels by op, fused kernels together) and the costliest steps with
// their notes (op and source location). Plain C++, no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_STEPPROFILE_H
#define EINC_RUNTIME_STEPPROFILE_H

#include "runtime/core/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace einrt {

/// The group a step's time is counted in: "matmul" for Matmul steps
/// ("matmul+epilogue" with an epilogue, GemmDesc::post), the op
/// name for kernels ("ein.exp"), "fused" for fused kernels, else the kind.
std::string stepGroup(const Step &step);

/// FLOPs of a Matmul step (2·M·N·K per matrix, every batch and outer
/// loop); 0 for other steps.
int64_t matmulFlops(const Step &step);

/// The table for `seconds` (one entry per step, summed over `runs` runs):
/// milliseconds per run by group, largest first, then the `top` costliest
/// steps (matmuls with their GFLOP/s).
std::string formatStepProfile(const Program &program, const std::vector<double> &seconds,
                              int64_t runs, int top = 12);

} // namespace einrt

#endif // EINC_RUNTIME_STEPPROFILE_H
