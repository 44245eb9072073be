//===- HostCollectives.h - A device's collectives on host memory (tests) -===//
//
// runtime/dist/Collectives.h over a host device and a Communicator (ThreadGroup's
// ranks): what NCCL does on the cuda device, done with messages, so the
// trainer's device path (runtime/dist/DeviceOrderedSum.h) runs without a GPU.
// Counts its calls, so a test can tell the path ran.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_UNIT_TRAINER_HOSTCOLLECTIVES_H
#define EINC_TEST_UNIT_TRAINER_HOSTCOLLECTIVES_H

#include "runtime/core/Device.h"
#include "runtime/dist/Collectives.h"
#include "runtime/dist/Communicator.h"

#include <cstring>
#include <memory>

namespace einrt::test {

class HostCollectives final : public Collectives {
public:
  HostCollectives(Communicator &comm, std::shared_ptr<Device> device)
      : comm(comm), dev(std::move(device)) {}
  int rank() const override { return comm.rank(); }
  int size() const override { return comm.size(); }
  std::string describe() const override { return "host collectives"; }
  Device &device() const override { return *dev; }
  int64_t calls = 0;

  Status allToAll(const void *send, void *recv, int64_t bytes) override {
    ++calls;
    const char *in = static_cast<const char *>(send);
    char *out = static_cast<char *>(recv);
    for (int r = 0; r < size(); ++r)
      if (r != rank())
        EINRT_TRY(comm.send(in + r * bytes, bytes, r));
    std::memcpy(out + rank() * bytes, in + rank() * bytes, size_t(bytes));
    for (int r = 0; r < size(); ++r)
      if (r != rank())
        EINRT_TRY(comm.recv(out + r * bytes, bytes, r));
    return comm.waitSends();
  }
  Status allGather(void *all, int64_t bytes) override {
    ++calls;
    for (int r = 0; r < size(); ++r)
      EINRT_TRY(comm.broadcast(static_cast<char *>(all) + r * bytes, bytes, r));
    return {};
  }
  Status sumFloats(float *data, int64_t count) override {
    ++calls;
    return comm.sumFloats(data, count);
  }
  Status broadcast(void *data, int64_t bytes, int root) override {
    ++calls;
    return comm.broadcast(data, bytes, root);
  }

private:
  Communicator &comm;
  std::shared_ptr<Device> dev;
};

} // namespace einrt::test

#endif // EINC_TEST_UNIT_TRAINER_HOSTCOLLECTIVES_H
