//===- Communicator.h - The ranks of a data-parallel run -------*- C++ -*-===//
//
// What the trainer needs from a distributed engine (MPI across processes,
// runtime/dist/MpiCommunicator.h; an in-process group of threads in the tests):
// its rank among `size` ranks, point-to-point messages, a broadcast and a
// library-ordered sum. Errors are messages; abort() ends every rank (the
// engine's launcher reports which one failed).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_COMMUNICATOR_H
#define EINC_RUNTIME_COMMUNICATOR_H

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
  virtual bool send(const void *data, int64_t bytes, int to, std::string &error) = 0;
  /// Receives exactly `bytes` from rank `from` (blocking).
  virtual bool recv(void *data, int64_t bytes, int from, std::string &error) = 0;
  /// Completes every posted send.
  virtual bool waitSends(std::string &error) = 0;
  /// `bytes` of rank `root` copied to every rank.
  virtual bool broadcast(void *data, int64_t bytes, int root, std::string &error) = 0;
  /// Every rank's `data` replaced by the element-wise sum over ranks, in
  /// whatever order the engine chooses (not reproducible across rank
  /// counts: the ordered sum is runtime/dist/OrderedSum.h).
  virtual bool sumFloats(float *data, int64_t count, std::string &error) = 0;
  virtual bool barrier(std::string &error) = 0;
  /// Ends every rank with exit status `code`.
  [[noreturn]] virtual void abort(int code) = 0;
};

/// One rank alone (`--distributed nccl` outside a launcher): broadcasts,
/// sums and barriers of one rank are no-ops; a message to itself is an
/// error (no step sends one with one rank); abort() exits.
std::unique_ptr<Communicator> singleRankCommunicator();

} // namespace einrt

#endif // EINC_RUNTIME_COMMUNICATOR_H
