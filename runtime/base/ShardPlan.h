//===- ShardPlan.h - Which rank owns each param's optimizer state -*- C++ -*-===//
//
// ZeRO-1 (--shard-optimizer) gives each param's optimizer state to one
// rank, which alone keeps it and updates the param. Params are dealt
// largest first, each to the rank holding the fewest elements so far (ties:
// the lower rank, then the earlier param) — torch's ZeroRedundancyOptimizer
// balances by size the same way. The compiler (passes/ShardOptimizer.cpp)
// and the trainer both ask this function, so they agree.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_SHARDPLAN_H
#define EINC_RUNTIME_SHARDPLAN_H

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace einrt {

/// owner[k] for params of `elements[k]` elements over `ranks` (>= 1).
inline std::vector<int> shardOwners(const std::vector<int64_t> &elements, int ranks) {
  std::vector<size_t> order(elements.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return elements[a] > elements[b]; });
  std::vector<int64_t> load(size_t(std::max(ranks, 1)), 0);
  std::vector<int> owner(elements.size(), 0);
  for (size_t k : order) {
    size_t least = size_t(std::min_element(load.begin(), load.end()) - load.begin());
    owner[k] = int(least);
    load[least] += elements[k];
  }
  return owner;
}

} // namespace einrt

#endif // EINC_RUNTIME_SHARDPLAN_H
