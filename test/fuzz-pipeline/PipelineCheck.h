//===- PipelineCheck.h - One program through every pass combination -*- C++ -*-===//
//
// checkProgram runs a model through einc's own stages (tools/driver/Stages.h:
// the front end, @grad, @train_step from its train settings, fusion, remat),
// with the verifier after every pass, under the combination of settings
// drawn for it (Combinations.h: precision, fp8, remat, fusion, optimizer):
// @grad and @train_step with the combination's fusion and without, the step
// under the whole combination, and the step with the combination's
// optimizer. Then it holds the results to what the project claims:
//
//   - @grad against central differences of @forward, float64, reference
//     backend (runtime/core/GradCheck.h);
//   - the CPU backend against the reference backend: @forward's loss, every
//     gradient, two @train_step steps (loss, grad norm, params, optimizer
//     state) with the program's optimizer and with the combination's, and
//     @apply_update after accumulated micro-batches;
//   - fused against unfused CPU programs, and the reference backend on the
//     fused function order against program order: bit for bit;
//   - @train_step under the whole combination against the same precision,
//     fp8 and optimizer without fusion and remat: bit for bit, on both
//     backends;
//   - @apply_update on @grad's gradients against @train_step (float64).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_FUZZ_PIPELINE_PIPELINECHECK_H
#define EINC_TEST_FUZZ_PIPELINE_PIPELINECHECK_H

#include "Combinations.h"

#include <cstdint>
#include <optional>
#include <string>

namespace einc::pipelinefuzz {

struct CheckOptions {
  uint64_t seed = 0; // params, inputs and the gradient check's samples
  int threads = 1;   // CPU backend threads
  bool gradcheck = true;
  bool cpu = true; // false: the reference backend only (no JIT compiling: fast)
  /// The settings to check under; none: drawCombination(seed, ...).
  std::optional<Combination> combination;
};

struct CheckStats {
  int combinations = 0;    // pass pipelines built and verified after each pass
  int64_t passesRun = 0;   // passes the verifier checked after
  int64_t gradEntries = 0; // gradient entries held against finite differences
  int kinkSkips = 0;       // gradient checks skipped at a kink (relu, max, ...)
  int64_t tensorsCompared = 0;
  int oneStepOnly = 0;         // adaptive-optimizer runs compared for one step (see checkSteps)
  int combinationRuns = 0;     // @train_step under its whole combination, held to the plain one
  int64_t kernelsCompiled = 0; // CPU kernels JIT-compiled (not from the process cache)
  double compileSeconds = 0;   // and the time that took
};

struct CheckResult {
  bool ok = true;
  bool frontEndRejected = false; // a generator (or front-end) bug: einc check fails
  bool nonFinite = false;        // the float64 reference itself is not finite
  std::string combination;       // e.g. "@train_step, fusion all, optimizer adamw"
  Combination drawn;             // the settings it was checked under
  std::string what;              // the check that failed and what differed
  CheckStats stats;
};

CheckResult checkProgram(const std::string &source, const CheckOptions &options);

} // namespace einc::pipelinefuzz

#endif // EINC_TEST_FUZZ_PIPELINE_PIPELINECHECK_H
