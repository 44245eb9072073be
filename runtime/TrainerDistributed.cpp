//===- TrainerDistributed.cpp - The micro-batches of N ranks --------------===//
//
// One optimizer step's gradients over N > 1 ranks (Trainer.h's data
// parallelism): this rank's `accumulate` micro-batches of the global
// N·accumulate, then the sum over all ranks, handed to @apply_update.
//
//===----------------------------------------------------------------------===//
#include "runtime/HostDevice.h"
#include "runtime/OrderedSum.h"
#include "runtime/Trainer.h"
#include "runtime/TrainerImpl.h"

#include <chrono>
#include <cstring>

namespace einrt {
namespace trainer_detail {

bool gather(const Executor &ex, size_t buffer, float *out, std::string &error) {
  const int64_t n = ex.elementCount(buffer);
  if (ex.storageOf(buffer) != StorageType::F32) {
    error = "a data-parallel step sums float32 gradients; '" + ex.program().buffers[buffer].name +
            "' is stored otherwise on the " + ex.device().name() + " device";
    return false;
  }
  if (dynamic_cast<const HostDevice *>(&ex.device())) {
    if (n > 0)
      std::memcpy(out, ex.deviceData(buffer), size_t(n) * sizeof(float));
    return true;
  }
  std::vector<double> values;
  if (!ex.read(buffer, values, error))
    return false;
  for (int64_t i = 0; i < n; ++i)
    out[i] = float(values[size_t(i)]);
  return true;
}

} // namespace trainer_detail

using trainer_detail::gather;

bool Trainer::distributedMicroBatches(double &loss, std::string &error) {
  Impl &I = *impl;
  Communicator &comm = *cfg.comm;
  const int64_t n = comm.size(), me = comm.rank(), k = cfg.accumulate;
  const int64_t t = curStep + 1;
  Executor &g = *progs.accumulate;
  const Program &ap = g.program();
  auto where = [&](int64_t m) {
    return "step " + std::to_string(t) + ", micro-batch " + std::to_string(m + 1) + " (rank " +
           std::to_string(me) + "): ";
  };
  for (auto [result, arg] : I.accumulators)
    if (!g.zeroBuffer(size_t(ap.arguments[arg]), error))
      return false;

  std::vector<float> contribution(size_t(I.accCount));
  auto gatherAll = [&](bool results) {
    for (size_t a = 0; a < I.accumulators.size(); ++a) {
      auto [result, arg] = I.accumulators[a];
      size_t buffer = results ? size_t(ap.results[result]) : size_t(ap.arguments[arg]);
      if (!gather(g, buffer, contribution.data() + I.accOffsets[a], error))
        return false;
    }
    return true;
  };

  using Clock = std::chrono::steady_clock;
  double summing = 0; // seconds in the cross-rank sum
  OrderedSum ordered(comm, I.accCount, std::max<int64_t>(1, cfg.bucketBytes / 4));
  for (int64_t j = 0; j < k; ++j) {
    // Round j: the global micro-batches j·N .. j·N + N − 1, this rank's
    // the (me)th of them.
    trainSampler->skip(me);
    if (!trainSampler->feed(g, error))
      return false;
    trainSampler->skip(n - 1 - me);
    if (!g.run(error)) {
      error = where(j * n + me) + error;
      return false;
    }
    if (cfg.fastSum) { // compiled accumulation of this rank's own, summed below
      for (auto [result, arg] : I.accumulators)
        if (!g.copyFrom(size_t(ap.arguments[arg]), g, size_t(ap.results[result]), error))
          return false;
      continue;
    }
    // The accumulators stay zero: the results are 0 + g/(N·k), the addends.
    if (!gatherAll(/*results=*/true))
      return false;
    auto start = Clock::now();
    if (!ordered.addRound(contribution.data(), j, k, error)) {
      error = where(j * n + me) + error;
      return false;
    }
    summing += std::chrono::duration<double>(Clock::now() - start).count();
  }
  auto start = Clock::now();
  if (cfg.fastSum) {
    if (!gatherAll(/*results=*/false) ||
        !comm.sumFloats(contribution.data(), int64_t(contribution.size()), error))
      return false;
    gradientSum = std::move(contribution);
  } else {
    if (!ordered.finish(error))
      return false;
    gradientSum = std::move(ordered.sum());
  }
  sumSeconds += summing + std::chrono::duration<double>(Clock::now() - start).count();
  ++sumSteps;

  loss = gradientSum.empty() ? 0 : gradientSum[0];
  for (size_t p = 0; p < I.paramCount; ++p) {
    size_t a = 0;
    while (I.accumulators[a].second != size_t(I.slots[p].sumArg))
      ++a;
    size_t count = size_t(ap.buffers[ap.arguments[I.accumulators[a].second]].elementCount());
    if (!I.holder->setArgument(size_t(I.slots[p].applyGradArg),
                               gradientSum.data() + I.accOffsets[a], count, error))
      return false;
  }
  return true;
}

} // namespace einrt
