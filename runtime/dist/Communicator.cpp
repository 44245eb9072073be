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
  bool send(const void *, int64_t, int to, std::string &error) override {
    error = "a message to rank " + std::to_string(to) + " of a run with one rank";
    return false;
  }
  bool recv(void *, int64_t, int from, std::string &error) override {
    error = "a message from rank " + std::to_string(from) + " of a run with one rank";
    return false;
  }
  bool waitSends(std::string &) override { return true; }
  bool broadcast(void *, int64_t, int, std::string &) override { return true; }
  bool sumFloats(float *, int64_t, std::string &) override { return true; }
  bool barrier(std::string &) override { return true; }
  [[noreturn]] void abort(int code) override { std::_Exit(code); }
};

} // namespace

std::unique_ptr<Communicator> singleRankCommunicator() { return std::make_unique<SingleRank>(); }

} // namespace einrt
