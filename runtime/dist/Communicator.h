//===- Communicator.h - The ranks of a data-parallel run -------*- C++ -*-===//
//
// What the trainer needs from a distributed engine (MPI across processes,
// runtime/dist/MpiCommunicator.h; an in-process group of threads in the tests):
// its rank among `size` ranks, point-to-point messages, a broadcast and a
// library-ordered sum. A failed call is a Status (runtime/base/Status.h: i/o
// for a transfer the engine could not make); abort() ends every rank (the
// engine's launcher reports which one failed).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_COMMUNICATOR_H
#define EINC_RUNTIME_COMMUNICATOR_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <memory>
#include <string>

namespace einrt {

class Communicator {
public:
  virtual ~Communicator();
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "mpi (Open MPI v4.1.4)".
  virtual std::string describe() const = 0;

  /// Posts a send of `bytes` to rank `to`; the memory must stay untouched
  /// until waitSends() returns.
  virtual Status send(const void *data, int64_t bytes, int to) = 0;
  /// Receives exactly `bytes` from rank `from` (blocking).
  virtual Status recv(void *data, int64_t bytes, int from) = 0;
  /// Completes every posted send.
  virtual Status waitSends() = 0;
  /// `bytes` of rank `root` copied to every rank.
  virtual Status broadcast(void *data, int64_t bytes, int root) = 0;
  /// Every rank's `data` replaced by the element-wise sum over ranks, in
  /// whatever order the engine chooses (not reproducible across rank
  /// counts: the ordered sum is runtime/dist/OrderedSum.h).
  virtual Status sumFloats(float *data, int64_t count) = 0;
  virtual Status barrier() = 0;
  /// Ends every rank with exit status `code`.
  [[noreturn]] virtual void abort(int code) = 0;
};

/// One rank alone (`--distributed nccl` outside a launcher): broadcasts,
/// sums and barriers of one rank are no-ops; a message to itself is an
/// error (no step sends one with one rank); abort() exits.
std::unique_ptr<Communicator> singleRankCommunicator();

} // namespace einrt

#endif // EINC_RUNTIME_COMMUNICATOR_H
