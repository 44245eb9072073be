//===- TrainerDistributed.cpp - The micro-batches of N ranks --------------===//
//
// One optimizer step's gradients over N > 1 ranks (Trainer.h's data
// parallelism): this rank's `accumulate` micro-batches of the global
// N·accumulate, then the sum over all ranks, handed to @apply_update.
//
//===----------------------------------------------------------------------===//
#include "runtime/DeviceOrderedSum.h"
#include "runtime/HostDevice.h"
#include "runtime/OrderedSum.h"
#include "runtime/Trainer.h"
#include "runtime/TrainerImpl.h"

#include <chrono>
#include <cstring>
#include <thread>

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

/// "step 3, micro-batch 5 (rank 1): " of global micro-batch m (from 0).
std::string microBatchWhere(int64_t step, int64_t m, int64_t rank) {
  return "step " + std::to_string(step) + ", micro-batch " + std::to_string(m + 1) + " (rank " +
         std::to_string(rank) + "): ";
}

} // namespace trainer_detail

using trainer_detail::gather;
using trainer_detail::microBatchWhere;

bool Trainer::microBatch(int64_t j, std::string &error) {
  Impl &I = *impl;
  const int64_t n = ranks(), me = cfg.comm ? cfg.comm->rank() : 0;
  Executor &g = *progs.accumulate;
  const Program &ap = g.program();
  // Round j: the global micro-batches j·N .. j·N + N − 1, this rank's the
  // (me)th of them.
  trainSampler->skip(me);
  if (!trainSampler->feed(g, error))
    return false;
  trainSampler->skip(n - 1 - me);
  if (!g.run(error)) {
    error = microBatchWhere(curStep + 1, j * n + me, me) + error;
    return false;
  }
  if (cfg.fastSum) // this rank's own micro-batches summed in compiled code
    for (auto [result, arg] : I.accumulators)
      if (!g.copyFrom(size_t(ap.arguments[arg]), g, size_t(ap.results[result]), error))
        return false;
  return true;
}

bool Trainer::distributedMicroBatches(double &loss, std::string &error) {
  if (cfg.collectives)
    return deviceMicroBatches(loss, error);
  Impl &I = *impl;
  Communicator &comm = *cfg.comm;
  const int64_t n = comm.size(), me = comm.rank(), k = cfg.accumulate;
  const int64_t t = curStep + 1;
  Executor &g = *progs.accumulate;
  const Program &ap = g.program();
  auto where = [&](int64_t m) { return microBatchWhere(t, m, me); };
  for (auto [result, arg] : I.accumulators)
    if (!g.zeroBuffer(size_t(ap.arguments[arg]), error))
      return false;

  // Two contribution buffers: round j's travels the ring (on its own
  // thread) while this one runs round j + 1's micro-batch into the other.
  std::vector<float> contributions[2] = {std::vector<float>(size_t(I.accCount)),
                                         std::vector<float>(size_t(I.accCount))};
  auto gatherAll = [&](bool results, std::vector<float> &into) {
    for (size_t a = 0; a < I.accumulators.size(); ++a) {
      auto [result, arg] = I.accumulators[a];
      size_t buffer = results ? size_t(ap.results[result]) : size_t(ap.arguments[arg]);
      if (!gather(g, buffer, into.data() + I.accOffsets[a], error))
        return false;
    }
    return true;
  };

  using Clock = std::chrono::steady_clock;
  double exposed = 0; // seconds this thread waited for the cross-rank sum
  OrderedSum ordered(comm, I.accCount, std::max<int64_t>(1, cfg.bucketBytes / 4));
  // The ring's thread; MPI is called by one thread at a time (SERIALIZED):
  // this one makes no MPI call while the ring runs.
  struct Ring {
    std::thread thread;
    bool ok = true;
    std::string error;
    ~Ring() {
      if (thread.joinable())
        thread.join();
    }
  } ring;
  auto joinRing = [&] {
    auto start = Clock::now();
    if (ring.thread.joinable())
      ring.thread.join();
    exposed += std::chrono::duration<double>(Clock::now() - start).count();
    if (!ring.ok)
      error = ring.error;
    return ring.ok;
  };
  for (int64_t j = 0; j < k; ++j) {
    if (!microBatch(j, error))
      return false;
    if (cfg.fastSum)
      continue; // summed below
    // The accumulators stay zero: the results are 0 + g/(N·k), the addends.
    // (Buffer j % 2 was round j − 2's, whose ring the last join ended.)
    std::vector<float> &mine = contributions[j % 2];
    if (!gatherAll(/*results=*/true, mine) || !joinRing())
      return false;
    ring.thread = std::thread([&ring, &ordered, &mine, j, k, what = where(j * n + me)] {
      if (!ordered.addRound(mine.data(), j, k, ring.error)) {
        ring.ok = false;
        ring.error = what + ring.error;
      }
    });
  }
  auto start = Clock::now();
  if (cfg.fastSum) {
    std::vector<float> &own = contributions[0];
    if (!gatherAll(/*results=*/false, own) ||
        !comm.sumFloats(own.data(), int64_t(own.size()), error))
      return false;
    gradientSum = std::move(own);
  } else {
    if (!joinRing() || !ordered.finish(error))
      return false;
    gradientSum = std::move(ordered.sum());
  }
  sumSeconds += exposed + std::chrono::duration<double>(Clock::now() - start).count();
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

// The same step with the device's collectives: the contributions, the sum
// and the apply step's gradients stay in device memory, and every call is
// ordered on the device (the cuda device's stream) with the micro-batches.
bool Trainer::deviceMicroBatches(double &loss, std::string &error) {
  Impl &I = *impl;
  Collectives &coll = *cfg.collectives;
  const int64_t n = coll.size(), me = coll.rank(), k = cfg.accumulate;
  const int64_t t = curStep + 1;
  Executor &g = *progs.accumulate;
  const Program &ap = g.program();
  Device &dev = g.device();
  auto where = [&](int64_t m) { return microBatchWhere(t, m, me); };
  // Each gradient accumulator's buffer and @apply_update's argument for it
  // (the loss has none), checked once: f32 storage on the one device.
  struct Piece {
    size_t result, argument;
    int64_t offset, count;
    int64_t applyArg = -1;
  };
  std::vector<Piece> pieces;
  for (size_t a = 0; a < I.accumulators.size(); ++a) {
    auto [result, arg] = I.accumulators[a];
    Piece p{size_t(ap.results[result]), size_t(ap.arguments[arg]), I.accOffsets[a],
            g.elementCount(size_t(ap.results[result]))};
    for (size_t q = 0; q < I.paramCount; ++q)
      if (I.slots[q].sumArg == int64_t(arg))
        p.applyArg = I.slots[q].applyGradArg;
    if (g.storageOf(p.result) != StorageType::F32 ||
        (p.applyArg >= 0 &&
         I.holder->storageOf(size_t(I.holder->program().arguments[size_t(p.applyArg)])) !=
             StorageType::F32)) {
      error = "a data-parallel step sums float32 gradients; '" + ap.buffers[p.result].name +
              "' is stored otherwise on the " + dev.name() + " device";
      return false;
    }
    pieces.push_back(p);
  }
  if (!deviceSum && !(deviceSum = DeviceOrderedSum::create(coll, I.accCount, error)))
    return false;
  float *mine = deviceSum->contribution();
  auto pack = [&](bool results) {
    for (const Piece &p : pieces)
      if (!dev.copy(mine + p.offset, g.deviceData(results ? p.result : p.argument),
                    p.count * int64_t(sizeof(float)), error))
        return false;
    return true;
  };

  for (auto [result, arg] : I.accumulators)
    if (!g.zeroBuffer(size_t(ap.arguments[arg]), error))
      return false;
  for (int64_t j = 0; j < k; ++j) {
    if (!microBatch(j, error))
      return false;
    if (cfg.fastSum)
      continue; // summed below
    // The accumulators stay zero: the results are 0 + g/(N·k), the addends.
    if (!pack(/*results=*/true) || !deviceSum->addRound(j, error)) {
      error = where(j * n + me) + error;
      return false;
    }
  }
  // What runs after the last micro-batch: its round, the all-gather (or
  // the all-reduce), the copies; reading the loss waits for all of it.
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  if (cfg.fastSum ? !pack(/*results=*/false) || !deviceSum->sumUnordered(error)
                  : !deviceSum->finish(error)) {
    error = "step " + std::to_string(t) + " (rank " + std::to_string(me) + "): " + error;
    return false;
  }
  for (const Piece &p : pieces)
    if (p.applyArg >= 0 &&
        !dev.copy(I.holder->deviceData(size_t(I.holder->program().arguments[size_t(p.applyArg)])),
                  deviceSum->sum() + p.offset, p.count * int64_t(sizeof(float)), error))
      return false;
  float first = 0;
  if (deviceSum->count() > 0 &&
      !dev.download(&first, deviceSum->sum(), int64_t(sizeof(float)), error))
    return false;
  loss = first;
  sumSeconds += std::chrono::duration<double>(Clock::now() - start).count();
  ++sumSteps;
  return true;
}

} // namespace einrt
