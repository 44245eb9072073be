//===- Communicator.cpp - The ranks of a data-parallel run ----------------===//
#include "runtime/dist/Communicator.h"

#include <cstdlib>

namespace einrt {

Communicator::~Communicator() = default;

namespace {

class SingleRank final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string describe() const override { return "one process"; }
  // No step sends a message with one rank: one is a bug.
  Status send(const void *, int64_t, int to) override {
    return Status::internal("a message to rank " + std::to_string(to) + " of a run with one rank");
  }
  Status recv(void *, int64_t, int from) override {
    return Status::internal("a message from rank " + std::to_string(from) +
                            " of a run with one rank");
  }
  Status waitSends() override { return {}; }
  Status broadcast(void *, int64_t, int) override { return {}; }
  Status sumFloats(float *, int64_t) override { return {}; }
  Status barrier() override { return {}; }
  [[noreturn]] void abort(int code) override { std::_Exit(code); }
};

} // namespace

std::unique_ptr<Communicator> singleRankCommunicator() { return std::make_unique<SingleRank>(); }

} // namespace einrt
