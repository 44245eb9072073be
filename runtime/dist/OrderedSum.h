//===- OrderedSum.h - A cross-rank sum in one fixed order ------*- C++ -*-===//
//
// The gradient sum of a data-parallel step, bit for bit the sum one process
// makes. One process accumulating A micro-batches adds their contributions
// x_0, x_1, ... in order: s = ((0 + x_0) + x_1) + ... (float adds, one
// rounding each). N ranks with k = A / N micro-batches each hold them
// interleaved — in round j, rank r holds micro-batch j·N + r — and the
// partial sum travels the ring 0 → 1 → ... → N−1 → 0 once per round,
// every rank adding its contribution as it passes: the same adds in the
// same order. After the last round rank N−1 holds s and broadcasts it.
//
// The sum moves in buckets, so rank r + 1 adds bucket b while rank r adds
// b + 1 (the chain is pipelined: a round costs about one pass of the bytes
// over a link plus N bucket latencies, not N passes).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_ORDEREDSUM_H
#define EINC_RUNTIME_ORDEREDSUM_H

#include "runtime/dist/Communicator.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace einrt {

class OrderedSum {
public:
  /// Sums of `count` floats over `comm`'s ranks, moved in buckets of
  /// `bucketElements` (>= 1).
  OrderedSum(Communicator &comm, int64_t count, int64_t bucketElements);

  /// Adds this rank's contribution of round `round` (of `rounds`) into the
  /// travelling sum; round 0 on rank 0 starts it from zero. With `ready`,
  /// a bucket ending at element e is added once ready(e) says the
  /// contribution's first e elements are in place (false: give up, the
  /// round failed), so the sum can start while the contribution is still
  /// being computed.
  Status addRound(const float *contribution, int64_t round, int64_t rounds,
                  const std::function<bool(int64_t)> &ready = {});
  /// After the last round: the sum, on every rank.
  Status finish();
  const std::vector<float> &sum() const { return total; }
  std::vector<float> &sum() { return total; }

private:
  Communicator &comm;
  int64_t count, bucket;
  std::vector<float> total;
};

} // namespace einrt

#endif // EINC_RUNTIME_ORDEREDSUM_H
