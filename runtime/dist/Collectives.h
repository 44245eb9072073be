//===- Collectives.h - Collectives over one device's memory ----*- C++ -*-===//
//
// What a data-parallel step needs from an engine that moves a device's
// memory itself (NCCL on the cuda device, runtime/dist/NcclCollectives.h), as
// opposed to runtime/dist/Communicator.h, whose messages are host memory. Every
// call takes addresses inside allocations of that one device and is
// ordered with the device's other work (the cuda device's stream): a call
// may return before the data has moved, and whatever the device runs next
// sees it moved. Every rank makes the same calls in the same order. A
// failed call is a Status (i/o: the engine could not move the data).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_COLLECTIVES_H
#define EINC_RUNTIME_COLLECTIVES_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <string>

namespace einrt {

class Device;

class Collectives {
public:
  virtual ~Collectives();
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "nccl 2.28.9": for banners.
  virtual std::string describe() const = 0;
  /// The device whose memory the calls take.
  virtual Device &device() const = 0;

  /// Block r of `send` (`bytesPerRank` bytes each, size() blocks) goes to
  /// rank r, and block r of `recv` arrives from rank r (this rank's own
  /// block included). `send` and `recv` do not overlap.
  virtual Status allToAll(const void *send, void *recv, int64_t bytesPerRank) = 0;
  /// In place: rank r's block r (`bytesPerRank` bytes at all + r·bytes)
  /// copied into block r of every rank's `all`.
  virtual Status allGather(void *all, int64_t bytesPerRank) = 0;
  /// Every rank's `count` floats replaced by their element-wise sum over
  /// ranks, in the engine's order (not reproducible across rank counts).
  virtual Status sumFloats(float *data, int64_t count) = 0;
  /// `bytes` of rank `root` copied to every rank.
  virtual Status broadcast(void *data, int64_t bytes, int root) = 0;
};

} // namespace einrt

#endif // EINC_RUNTIME_COLLECTIVES_H
