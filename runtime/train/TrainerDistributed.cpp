//===- TrainerDistributed.cpp - The micro-batches of N ranks --------------===//
//
// One optimizer step's gradients over N > 1 ranks (Trainer.h's data
// parallelism): this rank's `accumulate` micro-batches of the global
// N·accumulate, then the sum over all ranks, handed to @apply_update.
//
//===----------------------------------------------------------------------===//
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

Status gather(const Executor &ex, size_t buffer, float *out) {
  const int64_t n = ex.elementCount(buffer);
  if (ex.storageOf(buffer) != StorageType::F32)
    return Status::invalid("a data-parallel step sums float32 gradients; '" +
                           ex.program().buffers[buffer].name + "' is stored otherwise on the " +
                           ex.device().name() + " device");
  if (dynamic_cast<const HostDevice *>(&ex.device())) {
    if (n > 0)
      std::memcpy(out, ex.deviceData(buffer), size_t(n) * sizeof(float));
    return Status::success();
  }
  Expected<std::vector<double>> values = ex.read(buffer);
  if (!values.ok())
    return values.takeStatus();
  for (int64_t i = 0; i < n; ++i)
    out[i] = float((*values)[size_t(i)]);
  return Status::success();
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

Status zeroAccumulators(const Trainer::Impl &I, Executor &g) {
  for (auto [result, arg] : I.accumulators)
    EINRT_TRY(g.zeroBuffer(size_t(g.program().arguments[arg])));
  return Status::success();
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

Status Trainer::microBatch(int64_t j, const std::function<void(size_t)> &afterStep) {
  Impl &I = *impl;
  const int64_t n = ranks(), me = cfg.comm ? cfg.comm->rank() : 0;
  Executor &g = *progs.accumulate;
  const Program &ap = g.program();
  // Round j: the global micro-batches j·N .. j·N + N − 1, this rank's the
  // (me)th of them.
  trainSampler->skip(me);
  EINRT_TRY(trainSampler->feed(g));
  trainSampler->skip(n - 1 - me);
  EINRT_TRY(g.run(afterStep).withContext(microBatchWhere(curStep + 1, j * n + me, me)));
  if (cfg.fastSum) // this rank's own micro-batches summed in compiled code
    for (auto [result, arg] : I.accumulators)
      EINRT_TRY(g.copyFrom(size_t(ap.arguments[arg]), g, size_t(ap.results[result])));
  return Status::success();
}

Expected<double> Trainer::distributedMicroBatches() {
  if (cfg.collectives)
    return deviceMicroBatches();
  Impl &I = *impl;
  Communicator &comm = *cfg.comm;
  const int64_t n = comm.size(), me = comm.rank(), k = cfg.accumulate;
  const int64_t t = curStep + 1;
  Executor &g = *progs.accumulate;
  const Program &ap = g.program();
  auto where = [&](int64_t m) { return microBatchWhere(t, m, me); };
  EINRT_TRY(trainer_detail::zeroAccumulators(I, g));

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
    Status status; // the ring's failure
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
      for (int64_t j = 0; j < k && ring.status.ok(); ++j) {
        const int b = int(j % 2);
        auto ready = [&](int64_t end) {
          Lock lock(feed.m);
          feed.changed.wait(
              lock, [&] { return feed.failed || (feed.round[b] == j && feed.final[b] >= end); });
          return !feed.failed;
        };
        ring.status =
            ordered.addRound(contributions[b].data(), j, k, ready).withContext(where(j * n + me));
        Lock lock(feed.m);
        feed.summed = j;
        feed.failed = feed.failed || !ring.status.ok();
        feed.changed.notify_all();
      }
    });
  auto joinRing = [&] {
    auto start = Clock::now();
    if (ring.thread.joinable())
      ring.thread.join();
    exposed += std::chrono::duration<double>(Clock::now() - start).count();
    return ring.status;
  };

  for (int64_t j = 0; j < k; ++j) {
    if (cfg.fastSum) {
      EINRT_TRY(microBatch(j));
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
    Status copied; // the observer's first failure
    auto afterStep = [&](size_t step) {
      if (step >= I.finishedBy.size() || !copied.ok())
        return;
      for (size_t a : I.finishedBy[step])
        if (copied.ok())
          copied = gather(g, size_t(ap.results[I.accumulators[a].first]),
                          contributions[b].data() + I.accOffsets[a]);
      if (!I.finishedBy[step].empty() && copied.ok()) {
        Lock lock(feed.m);
        feed.final[b] = I.finalPrefix[step];
        feed.changed.notify_all();
      }
    };
    Status ran = microBatch(j, afterStep);
    if (!ran.ok() || !copied.ok()) {
      ring.stop();
      return ran.ok() ? copied : ran;
    }
    Lock lock(feed.m);
    feed.final[b] = I.accCount; // every result, whatever the observer saw
    feed.changed.notify_all();
  }
  auto start = Clock::now();
  if (cfg.fastSum) {
    std::vector<float> &own = contributions[0];
    for (size_t a = 0; a < I.accumulators.size(); ++a)
      EINRT_TRY(
          gather(g, size_t(ap.arguments[I.accumulators[a].second]), own.data() + I.accOffsets[a]));
    EINRT_TRY(comm.sumFloats(own.data(), int64_t(own.size())));
    gradientSum = std::move(own);
  } else {
    EINRT_TRY(joinRing());
    EINRT_TRY(ordered.finish());
    gradientSum = std::move(ordered.sum());
  }
  sumSeconds += exposed + std::chrono::duration<double>(Clock::now() - start).count();
  ++sumSteps;

  const double loss = gradientSum.empty() ? 0 : gradientSum[size_t(I.accOffsets[0])];
  for (size_t p = 0; p < I.paramCount; ++p) {
    size_t a = 0;
    while (I.accumulators[a].second != size_t(I.slots[p].sumArg))
      ++a;
    size_t count = size_t(ap.buffers[ap.arguments[I.accumulators[a].second]].elementCount());
    EINRT_TRY(I.holder->setArgument(size_t(I.slots[p].applyGradArg),
                                    gradientSum.data() + I.accOffsets[a], count));
  }
  return loss;
}

// The same step with the device's collectives: the contributions, the sum
// and the apply step's gradients stay in device memory, and every call is
// ordered on the device (the cuda device's stream) with the micro-batches.
Expected<double> Trainer::deviceMicroBatches() {
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
             StorageType::F32))
      return Status::invalid("a data-parallel step sums float32 gradients; '" +
                             ap.buffers[p.result].name + "' is stored otherwise on the " +
                             dev.name() + " device");
    pieces.push_back(p);
  }
  if (!deviceSum) {
    Expected<std::unique_ptr<DeviceOrderedSum>> created =
        DeviceOrderedSum::create(coll, I.accCount);
    if (!created.ok())
      return created.takeStatus();
    deviceSum = created.take();
  }
  float *mine = deviceSum->contribution();
  auto pack = [&](bool results) {
    for (const Piece &p : pieces)
      EINRT_TRY(dev.copy(mine + p.offset, g.deviceData(results ? p.result : p.argument),
                         p.count * int64_t(sizeof(float))));
    return Status::success();
  };

  EINRT_TRY(trainer_detail::zeroAccumulators(I, g));
  for (int64_t j = 0; j < k; ++j) {
    EINRT_TRY(microBatch(j));
    if (cfg.fastSum)
      continue; // summed below
    // The accumulators stay zero: the results are 0 + g/(N·k), the addends.
    EINRT_TRY(pack(/*results=*/true).withContext(where(j * n + me)));
    EINRT_TRY(deviceSum->addRound(j).withContext(where(j * n + me)));
  }
  // What runs after the last micro-batch: its round, the all-gather (or
  // the all-reduce), the copies; reading the loss waits for all of it.
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  const std::string stepWhere =
      "step " + std::to_string(t) + " (rank " + std::to_string(me) + "): ";
  if (cfg.fastSum) {
    EINRT_TRY(pack(/*results=*/false).withContext(stepWhere));
    EINRT_TRY(deviceSum->sumUnordered().withContext(stepWhere));
  } else {
    EINRT_TRY(deviceSum->finish().withContext(stepWhere));
  }
  for (const Piece &p : pieces)
    if (p.applyArg >= 0)
      EINRT_TRY(
          dev.copy(I.holder->deviceData(size_t(I.holder->program().arguments[size_t(p.applyArg)])),
                   deviceSum->sum() + p.offset, p.count * int64_t(sizeof(float))));
  float first = 0; // the loss
  if (deviceSum->count() > 0)
    EINRT_TRY(dev.download(&first, deviceSum->sum() + I.accOffsets[0], int64_t(sizeof(float))));
  sumSeconds += std::chrono::duration<double>(Clock::now() - start).count();
  ++sumSteps;
  return double(first);
}

Expected<bool> Trainer::stopAgreed() {
  if (!cfg.stopRequested)
    return false;
  bool stop = cfg.stopRequested();
  if (ranks() == 1)
    return stop;
  // Every rank asks after every step, so this sum pairs up across them: a
  // rank told to stop stops the others after the same step (none waits in
  // a collective for a rank that has left).
  float votes = stop ? 1.0f : 0.0f;
  EINRT_TRY(cfg.comm->sumFloats(&votes, 1));
  return votes > 0;
}

} // namespace einrt
