//===- TrainerDistributed.cpp - The micro-batches of N ranks --------------===//
//
// One optimizer step's gradients over N > 1 ranks (Trainer.h's data
// parallelism): this rank's `accumulate` micro-batches of the global
// N·accumulate, then the sum over all ranks, handed to @apply_update.
//
//===----------------------------------------------------------------------===//
#include "runtime/base/StatusOut.h"
#include "runtime/core/HostDevice.h"
#include "runtime/dist/DeviceOrderedSum.h"
#include "runtime/dist/OrderedSum.h"
#include "runtime/train/Trainer.h"
#include "runtime/train/TrainerImpl.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
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
  if (!statusOut(ex.read(buffer), values, error))
    return false;
  for (int64_t i = 0; i < n; ++i)
    out[i] = float(values[size_t(i)]);
  return true;
}

void layOutByReadiness(Trainer::Impl &I, const Executor &g) {
  const Program &ap = g.program();
  const size_t count = I.accumulators.size();
  // The step after which each result is final: the last one writing any
  // of its bytes (a result may be written through a view of it).
  std::vector<size_t> last(count, 0);
  for (size_t a = 0; a < count; ++a) {
    const size_t buffer = size_t(ap.results[I.accumulators[a].first]);
    const auto *begin = static_cast<const char *>(g.deviceData(buffer));
    const auto *end = begin + g.elementCount(buffer) * storageBytes(g.storageOf(buffer));
    for (size_t i = 0; i < ap.steps.size() && begin; ++i)
      for (int32_t o : ap.steps[i].outputs()) {
        const auto *at = static_cast<const char *>(g.deviceData(size_t(o)));
        const int64_t bytes = g.elementCount(size_t(o)) * storageBytes(g.storageOf(size_t(o)));
        if (at && at < end && begin < at + bytes)
          last[a] = i;
      }
  }
  std::vector<size_t> order(count);
  for (size_t a = 0; a < count; ++a)
    order[a] = a;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return last[x] < last[y]; });
  I.accOffsets.assign(count, 0);
  I.finishedBy.assign(std::max<size_t>(1, ap.steps.size()), {});
  I.finalPrefix.assign(I.finishedBy.size(), 0);
  int64_t offset = 0;
  for (size_t a : order) {
    I.accOffsets[a] = offset;
    offset += g.elementCount(size_t(ap.results[I.accumulators[a].first]));
    I.finishedBy[last[a]].push_back(a);
    I.finalPrefix[last[a]] = offset;
  }
  for (size_t i = 1; i < I.finalPrefix.size(); ++i)
    I.finalPrefix[i] = std::max(I.finalPrefix[i], I.finalPrefix[i - 1]);
  I.accCount = offset;
}

bool zeroAccumulators(const Trainer::Impl &I, Executor &g, std::string &error) {
  for (auto [result, arg] : I.accumulators)
    if (!statusOut(g.zeroBuffer(size_t(g.program().arguments[arg])), error))
      return false;
  return true;
}

std::string collectivesProblem(const TrainConfig &c, const TrainPrograms &programs,
                               int64_t global) {
  if (!c.collectives)
    return "";
  if (!c.comm || c.collectives->size() != c.comm->size() || c.collectives->rank() != c.comm->rank())
    return "the device's collectives (" + c.collectives->describe() + ", rank " +
           std::to_string(c.collectives->rank()) + " of " + std::to_string(c.collectives->size()) +
           ") are not the ranks of the run";
  for (Executor *ex : {programs.accumulate, programs.apply})
    if (global > 1 && ex && &ex->device() != &c.collectives->device())
      return "the device's collectives (" + c.collectives->describe() +
             ") move another device's memory than the " + ex->device().name() +
             " device the programs run on";
  return "";
}

/// "step 3, micro-batch 5 (rank 1): " of global micro-batch m (from 0).
std::string microBatchWhere(int64_t step, int64_t m, int64_t rank) {
  return "step " + std::to_string(step) + ", micro-batch " + std::to_string(m + 1) + " (rank " +
         std::to_string(rank) + "): ";
}

} // namespace trainer_detail

using trainer_detail::gather;
using trainer_detail::microBatchWhere;

bool Trainer::microBatch(int64_t j, std::string &error,
                         const std::function<void(size_t)> &afterStep) {
  Impl &I = *impl;
  const int64_t n = ranks(), me = cfg.comm ? cfg.comm->rank() : 0;
  Executor &g = *progs.accumulate;
  const Program &ap = g.program();
  // Round j: the global micro-batches j·N .. j·N + N − 1, this rank's the
  // (me)th of them.
  trainSampler->skip(me);
  if (!statusOut(trainSampler->feed(g), error))
    return false;
  trainSampler->skip(n - 1 - me);
  if (!statusOut(g.run(afterStep), error)) {
    error = microBatchWhere(curStep + 1, j * n + me, me) + error;
    return false;
  }
  if (cfg.fastSum) // this rank's own micro-batches summed in compiled code
    for (auto [result, arg] : I.accumulators)
      if (!statusOut(g.copyFrom(size_t(ap.arguments[arg]), g, size_t(ap.results[result])), error))
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
  if (!trainer_detail::zeroAccumulators(I, g, error))
    return false;

  // Two contribution buffers: round j's fills buffer j % 2 while its
  // micro-batch runs, accumulator by accumulator as the step finishing each
  // one completes (the observer below; the layout follows that order), and
  // the ring's thread adds each bucket as soon as this rank's part of it is
  // there: round j's sum runs beside micro-batch j's backward and the next
  // micro-batch. MPI is called by one thread at a time (SERIALIZED): the
  // ring's, until it is joined.
  std::vector<float> contributions[2] = {std::vector<float>(size_t(I.accCount)),
                                         std::vector<float>(size_t(I.accCount))};
  struct Feed {
    std::mutex m;
    std::condition_variable changed;
    int64_t round[2] = {-1, -1}; // which round each buffer holds
    int64_t final[2] = {0, 0};   // its leading elements in place
    int64_t summed = -1;         // the last round the ring finished
    bool failed = false;         // either side gave up
  } feed;
  using Lock = std::unique_lock<std::mutex>;

  using Clock = std::chrono::steady_clock;
  double exposed = 0; // seconds this thread waited for the cross-rank sum
  OrderedSum ordered(comm, I.accCount, std::max<int64_t>(1, cfg.bucketBytes / 4));
  struct Ring {
    std::thread thread;
    bool ok = true;
    std::string error;
    std::function<void()> stop;
    ~Ring() {
      if (thread.joinable()) {
        stop();
        thread.join();
      }
    }
  } ring;
  ring.stop = [&] {
    Lock lock(feed.m);
    feed.failed = true;
    feed.changed.notify_all();
  };
  if (!cfg.fastSum)
    ring.thread = std::thread([&] {
      for (int64_t j = 0; j < k && ring.ok; ++j) {
        const int b = int(j % 2);
        auto ready = [&](int64_t end) {
          Lock lock(feed.m);
          feed.changed.wait(
              lock, [&] { return feed.failed || (feed.round[b] == j && feed.final[b] >= end); });
          return !feed.failed;
        };
        if (!succeeded(ordered.addRound(contributions[b].data(), j, k, ready), ring.error)) {
          ring.ok = false;
          ring.error = where(j * n + me) + ring.error;
        }
        Lock lock(feed.m);
        feed.summed = j;
        feed.failed = feed.failed || !ring.ok;
        feed.changed.notify_all();
      }
    });
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
    if (cfg.fastSum) {
      if (!microBatch(j, error))
        return false;
      continue; // summed below
    }
    // Buffer j % 2 held round j − 2, which the ring must have finished.
    const int b = int(j % 2);
    {
      auto start = Clock::now();
      Lock lock(feed.m);
      feed.changed.wait(lock, [&] { return feed.failed || feed.summed >= j - 2; });
      exposed += std::chrono::duration<double>(Clock::now() - start).count();
      if (feed.failed)
        break; // the ring's error, below
      feed.round[b] = j;
      feed.final[b] = 0;
    }
    // The accumulators stay zero: the results are 0 + g/(N·k), the addends.
    bool copied = true;
    auto afterStep = [&](size_t step) {
      if (step >= I.finishedBy.size() || !copied)
        return;
      for (size_t a : I.finishedBy[step])
        copied = copied && gather(g, size_t(ap.results[I.accumulators[a].first]),
                                  contributions[b].data() + I.accOffsets[a], error);
      if (!I.finishedBy[step].empty() && copied) {
        Lock lock(feed.m);
        feed.final[b] = I.finalPrefix[step];
        feed.changed.notify_all();
      }
    };
    if (!microBatch(j, error, afterStep) || !copied) {
      ring.stop();
      return false;
    }
    Lock lock(feed.m);
    feed.final[b] = I.accCount; // every result, whatever the observer saw
    feed.changed.notify_all();
  }
  auto start = Clock::now();
  if (cfg.fastSum) {
    std::vector<float> &own = contributions[0];
    for (size_t a = 0; a < I.accumulators.size(); ++a)
      if (!gather(g, size_t(ap.arguments[I.accumulators[a].second]), own.data() + I.accOffsets[a],
                  error))
        return false;
    if (!succeeded(comm.sumFloats(own.data(), int64_t(own.size())), error))
      return false;
    gradientSum = std::move(own);
  } else {
    if (!joinRing() || !succeeded(ordered.finish(), error))
      return false;
    gradientSum = std::move(ordered.sum());
  }
  sumSeconds += exposed + std::chrono::duration<double>(Clock::now() - start).count();
  ++sumSteps;

  loss = gradientSum.empty() ? 0 : gradientSum[size_t(I.accOffsets[0])];
  for (size_t p = 0; p < I.paramCount; ++p) {
    size_t a = 0;
    while (I.accumulators[a].second != size_t(I.slots[p].sumArg))
      ++a;
    size_t count = size_t(ap.buffers[ap.arguments[I.accumulators[a].second]].elementCount());
    if (!statusOut(I.holder->setArgument(size_t(I.slots[p].applyGradArg),
                                         gradientSum.data() + I.accOffsets[a], count),
                   error))
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
  if (!deviceSum) {
    Expected<std::unique_ptr<DeviceOrderedSum>> created =
        DeviceOrderedSum::create(coll, I.accCount);
    if (!succeeded(created.status(), error))
      return false;
    deviceSum = created.take();
  }
  float *mine = deviceSum->contribution();
  auto pack = [&](bool results) {
    for (const Piece &p : pieces)
      if (!statusOut(dev.copy(mine + p.offset, g.deviceData(results ? p.result : p.argument),
                              p.count * int64_t(sizeof(float))),
                     error))
        return false;
    return true;
  };

  if (!trainer_detail::zeroAccumulators(I, g, error))
    return false;
  for (int64_t j = 0; j < k; ++j) {
    if (!microBatch(j, error))
      return false;
    if (cfg.fastSum)
      continue; // summed below
    // The accumulators stay zero: the results are 0 + g/(N·k), the addends.
    if (!pack(/*results=*/true) || !succeeded(deviceSum->addRound(j), error)) {
      error = where(j * n + me) + error;
      return false;
    }
  }
  // What runs after the last micro-batch: its round, the all-gather (or
  // the all-reduce), the copies; reading the loss waits for all of it.
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  if (cfg.fastSum ? !pack(/*results=*/false) || !succeeded(deviceSum->sumUnordered(), error)
                  : !succeeded(deviceSum->finish(), error)) {
    error = "step " + std::to_string(t) + " (rank " + std::to_string(me) + "): " + error;
    return false;
  }
  for (const Piece &p : pieces)
    if (p.applyArg >= 0 &&
        !statusOut(dev.copy(I.holder->deviceData(
                                size_t(I.holder->program().arguments[size_t(p.applyArg)])),
                            deviceSum->sum() + p.offset, p.count * int64_t(sizeof(float))),
                   error))
      return false;
  float first = 0; // the loss
  if (deviceSum->count() > 0 &&
      !statusOut(dev.download(&first, deviceSum->sum() + I.accOffsets[0], int64_t(sizeof(float))),
                 error))
    return false;
  loss = first;
  sumSeconds += std::chrono::duration<double>(Clock::now() - start).count();
  ++sumSteps;
  return true;
}

bool Trainer::stopAgreed(bool &stop, std::string &error) {
  stop = false;
  if (!cfg.stopRequested)
    return true;
  stop = cfg.stopRequested();
  if (ranks() == 1)
    return true;
  // Every rank asks after every step, so this sum pairs up across them: a
  // rank told to stop stops the others after the same step (none waits in
  // a collective for a rank that has left).
  float votes = stop ? 1.0f : 0.0f;
  if (!succeeded(cfg.comm->sumFloats(&votes, 1), error))
    return false;
  stop = votes > 0;
  return true;
}

} // namespace einrt
