//===- DeviceOrderedSum.h - One process's gradient sum, on the device -*- C++ -*-===//
//
// The sum of runtime/dist/OrderedSum.h — bit for bit the sum one process makes
// of its micro-batches' contributions, ((0 + x_0) + x_1) + ... — for
// gradients that stay in device memory, over collectives that move device
// memory (runtime/dist/Collectives.h: NCCL on the cuda device).
//
// OrderedSum's pipelined ring needs sends that complete before their
// receiver gets to them (MPI's Isend); NCCL's point-to-point calls hold the
// stream until they are matched, and a ring pipelined over buckets then
// deadlocks where it wraps from rank N−1 to rank 0. So here each rank owns
// one slice of the gradient (`slice` floats at rank·slice) and keeps that
// slice's running sum:
//
//   round j   an all-to-all sends slice s of every rank's contribution to
//             rank s, which adds the N slices it received in rank order:
//             micro-batches j·N + 0, ..., j·N + N − 1, one process's order
//             (Device::addInOrder, one rounding per add)
//   finish    an all-gather of the owned slices: the sum on every rank
//
// Each round moves (N−1)/N of the gradient bytes in and out of each rank,
// as a ring reduce-scatter does, with no chain of N hops; the all-gather
// moves as much once per step. Every buffer is allocated once, on the
// collectives' device.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_DEVICEORDEREDSUM_H
#define EINC_RUNTIME_DEVICEORDEREDSUM_H

#include "runtime/core/Device.h"
#include "runtime/dist/Collectives.h"

#include <cstdint>
#include <memory>
#include <string>

namespace einrt {

class DeviceOrderedSum {
public:
  /// Sums of `count` floats over `collectives`' ranks; out of memory when
  /// the device cannot hold the three buffers.
  static Expected<std::unique_ptr<DeviceOrderedSum>> create(Collectives &collectives,
                                                            int64_t count);
  ~DeviceOrderedSum();
  DeviceOrderedSum(const DeviceOrderedSum &) = delete;
  DeviceOrderedSum &operator=(const DeviceOrderedSum &) = delete;

  /// Where this rank puts its contribution of a round (`count` floats of
  /// device memory) before addRound.
  float *contribution() const { return static_cast<float *>(mine.data); }
  /// Adds this round's contributions of every rank into the owned slice,
  /// in rank order; round 0 starts the slice from zero.
  Status addRound(int64_t round);
  /// After the last round: the sum, on every rank.
  Status finish();
  /// `--allreduce fast`: sum() := the engine's sum over ranks of each
  /// rank's contribution (not reproducible across rank counts).
  Status sumUnordered();
  /// The sum (`count` floats of device memory), after finish or
  /// sumUnordered.
  const float *sum() const { return static_cast<const float *>(total.data); }
  int64_t count() const { return elements; }
  /// Floats each rank owns (the count over the ranks, rounded up).
  int64_t sliceElements() const { return slice; }

private:
  DeviceOrderedSum(Collectives &c, int64_t count);

  Collectives &coll;
  Device &dev;
  int64_t elements, slice;
  DeviceMemory mine, received, total; // N·slice floats each
};

} // namespace einrt

#endif // EINC_RUNTIME_DEVICEORDEREDSUM_H
