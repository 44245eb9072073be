//===- Arena.cpp - Memory planning for a Program's temporaries ------------===//
#include "runtime/core/Arena.h"
#include "runtime/base/FirstFit.h"
#include "runtime/core/Device.h"

#include <algorithm>
#include <numeric>

namespace einrt {

StorageSizes StorageSizes::of(const Device &device) {
  StorageSizes s;
  for (uint8_t t = 0; t < kDTypeCount; ++t)
    s.bytes[t] = storageBytes(device.storageOf(DType(t)));
  return s;
}

MemoryPlan planMemory(const Program &program, const StorageSizes &sizes, bool useArena) {
  const size_t nbuf = program.buffers.size();
  MemoryPlan plan;
  plan.arenaOffset.assign(nbuf, -1);
  plan.residentOffset.assign(nbuf, -1);

  // Which buffers anything touches: steps, arguments, results, and every
  // non-temporary (constants, declared params...).
  std::vector<char> used(nbuf, 0), candidate(nbuf, 0);
  for (size_t b = 0; b < nbuf; ++b) {
    used[b] = program.buffers[b].role != BufferRole::Temp;
    candidate[b] = useArena && program.buffers[b].role == BufferRole::Temp;
  }
  for (int32_t r : program.results)
    if (r >= 0 && size_t(r) < nbuf)
      used[size_t(r)] = 1, candidate[size_t(r)] = 0;
  for (int32_t a : program.arguments)
    if (a >= 0 && size_t(a) < nbuf)
      used[size_t(a)] = 1, candidate[size_t(a)] = 0;

  // A view's reads and writes are its root's (the buffer it views).
  auto storageOf = [&](int32_t b) -> int32_t {
    int32_t root = program.buffers[size_t(b)].viewOf;
    return root >= 0 && size_t(root) < nbuf ? root : b;
  };
  std::vector<int64_t> first(nbuf, -1), last(nbuf, -1);
  for (size_t si = 0; si < program.steps.size(); ++si) {
    const Step &s = program.steps[si];
    int64_t i = int64_t(si);
    for (int32_t b : s.inputs)
      if (b >= 0 && size_t(b) < nbuf)
        last[size_t(storageOf(b))] = i, used[size_t(storageOf(b))] = 1;
    for (int32_t b : s.outputs()) {
      if (b < 0 || size_t(b) >= nbuf)
        continue;
      size_t o = size_t(storageOf(b));
      used[o] = 1;
      if (first[o] < 0)
        first[o] = i;
      last[o] = std::max(last[o], i);
    }
  }

  auto bytesOf = [&](size_t b) {
    return program.buffers[b].elementCount() * sizes.of(program.buffers[b].dtype);
  };
  std::vector<LiveRange> items;
  for (size_t b = 0; b < nbuf; ++b) {
    if (!used[b] || program.buffers[b].viewOf >= 0)
      continue; // e.g. a broadcast the CPU backend folded into its users
    // A temporary no step writes (so none reads it, by validation) is
    // resident, zeroed.
    if (candidate[b] && first[b] >= 0) {
      items.push_back(LiveRange{int32_t(b), bytesOf(b), first[b], last[b]});
      continue;
    }
    plan.residentOffset[b] = plan.residentBytes;
    plan.residentBytes = alignArena(plan.residentBytes + bytesOf(b));
  }
  std::vector<int64_t> delta(program.steps.size() + 1, 0);
  for (const LiveRange &it : items) {
    delta[size_t(it.first)] += it.bytes;
    delta[size_t(it.last) + 1] -= it.bytes;
  }
  int64_t live = 0;
  plan.liveAtStep.assign(program.steps.size(), 0);
  for (size_t step = 0; step < program.steps.size(); ++step) {
    plan.liveAtStep[step] = (live += delta[step]);
    if (live > plan.liveBytes) {
      plan.liveBytes = live;
      plan.peakStep = int64_t(step);
    }
  }
  plan.arenaBytes = placeFirstFit(items, plan.arenaOffset);
  plan.temporaries = std::move(items);
  // Views: their root's place, at their offset.
  for (size_t b = 0; b < nbuf; ++b) {
    int32_t root = storageOf(int32_t(b));
    if (size_t(root) == b)
      continue;
    int64_t at = program.buffers[b].viewOffset * sizes.of(program.buffers[b].dtype);
    if (plan.arenaOffset[root] >= 0)
      plan.arenaOffset[b] = plan.arenaOffset[root] + at;
    else if (plan.residentOffset[root] >= 0)
      plan.residentOffset[b] = plan.residentOffset[root] + at;
  }
  return plan;
}

} // namespace einrt
