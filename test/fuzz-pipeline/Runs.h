//===- Runs.h - Lowered functions run on given argument values -*- C++ -*-===//
//
// Arguments travel by buffer name (inputs, params, optimizer state, `step`,
// `lr`), so that @forward, @grad, @train_step and @apply_update, on either
// backend and in either precision, all start from the same values.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_FUZZ_PIPELINE_RUNS_H
#define EINC_TEST_FUZZ_PIPELINE_RUNS_H

#include "Compare.h"

#include "codegen/CpuKernels.h"
#include "runtime/core/Executor.h"
#include "runtime/core/Program.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace einc::pipelinefuzz {

using Values = std::map<std::string, std::vector<double>>;

/// Functions of one module lowered for one backend.
struct Lowered {
  std::unique_ptr<ein::codegen::KernelCompiler> kernels; // the CPU backend's
  std::map<std::string, einrt::Program> programs;
  einrt::Expected<einrt::Executor> executor(const std::string &name, einrt::Precision precision,
                                            int threads) const;
};

/// Sets every argument `values` names.
einrt::Status setByName(einrt::Executor &ex, const Values &values);

/// The start: params from their initialisers (einc's initParams), float
/// inputs N(0, 1) and token ids in [0, vocab) (each input its own stream),
/// zero optimizer state, step 1, lr.
einrt::Status initialValues(const Lowered &l, const std::string &name, int32_t vocab, double lr,
                            uint64_t seed, Values &out);
/// `values` with every param of `ex`'s program moved by 0.01 N(0, 1).
Values jittered(const Values &values, const einrt::Executor &ex, uint64_t seed);
/// `values` with every float param and input of `program` scaled by
/// (1 + u 2^-20), u uniform in [-1, 1]: a point a few ulps away, where
/// float32 rounds differently (Compare.h's noise samples).
Values nudged(const Values &values, const einrt::Program &program, uint64_t seed);
/// `count` copies of `values` with fresh inputs (micro-batches).
std::vector<Values> microBatches(const Lowered &l, const std::string &name, const Values &values,
                                 int64_t count, int32_t vocab, uint64_t seed);

/// One run of @name on `values`, its results into `out`.
einrt::Status runOnce(const Lowered &l, const std::string &name, einrt::Precision precision,
                      int threads, const Values &values, RunResults &out);
/// `steps` runs of a training function, its results fed back into the
/// arguments of the same name (params, optimizer state); step = 1, 2, ...
einrt::Status runSteps(const Lowered &l, const std::string &name, einrt::Precision precision,
                       int threads, Values values, int steps, std::vector<RunResults> &out);
/// @apply_update(params, the mean of the gradients of the @grad runs
/// `grads`, optimizer state, step, lr), as the trainer runs it.
einrt::Status runApply(const Lowered &l, einrt::Precision precision, const Values &values,
                       const std::vector<RunResults> &grads, RunResults &out);

/// Whether @forward's loss has a kink at param[index] or within `reach` of
/// it: its slopes across [x - reach, x + reach] (float64) jump once.
bool atKink(einrt::Executor &forward, const std::string &param, int64_t index, double reach);

std::string formatNumber(double v);

} // namespace einc::pipelinefuzz

#endif // EINC_TEST_FUZZ_PIPELINE_RUNS_H
