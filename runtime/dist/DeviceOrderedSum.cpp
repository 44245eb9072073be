//===- DeviceOrderedSum.cpp - One process's gradient sum, on the device ---===//
#include "runtime/dist/DeviceOrderedSum.h"

#include <algorithm>

namespace einrt {

Collectives::~Collectives() = default;

DeviceOrderedSum::DeviceOrderedSum(Collectives &c, int64_t count)
    : coll(c), dev(c.device()), elements(count),
      slice((count + c.size() - 1) / std::max(1, c.size())) {}

std::unique_ptr<DeviceOrderedSum> DeviceOrderedSum::create(Collectives &c, int64_t count,
                                                           std::string &error) {
  if (c.size() < 1 || count < 0) {
    error = "an ordered sum of " + std::to_string(count) + " floats over " +
            std::to_string(c.size()) + " ranks";
    return nullptr;
  }
  std::unique_ptr<DeviceOrderedSum> s(new DeviceOrderedSum(c, count));
  // The padding past `count` stays zero: it travels, and is never read.
  const int64_t bytes = s->slice * c.size() * int64_t(sizeof(float));
  for (DeviceMemory *m : {&s->mine, &s->received, &s->total}) {
    Expected<DeviceMemory> memory = s->dev.allocate(bytes, "the data-parallel gradient sum");
    if (!memory.ok()) {
      error = memory.status().message();
      return nullptr;
    }
    *m = *memory;
  }
  return s;
}

DeviceOrderedSum::~DeviceOrderedSum() {
  for (DeviceMemory *m : {&mine, &received, &total})
    dev.release(*m);
}

bool DeviceOrderedSum::addRound(int64_t round, std::string &error) {
  const int64_t bytes = slice * int64_t(sizeof(float));
  float *owned = static_cast<float *>(total.data) + int64_t(coll.rank()) * slice;
  if (slice == 0)
    return true;
  Status zeroed = round == 0 ? dev.zero(owned, bytes) : Status(); // s := 0, then s + x_0
  if (!zeroed.ok()) {
    error = zeroed.message();
    return false;
  }
  if (!coll.allToAll(mine.data, received.data, bytes, error))
    return false;
  Status added =
      dev.addInOrder(owned, static_cast<const float *>(received.data), coll.size(), slice, slice);
  if (!added.ok())
    error = added.message();
  return added.ok();
}

bool DeviceOrderedSum::finish(std::string &error) {
  return slice == 0 || coll.allGather(total.data, slice * int64_t(sizeof(float)), error);
}

bool DeviceOrderedSum::sumUnordered(std::string &error) {
  if (Status copied = dev.copy(total.data, mine.data, elements * int64_t(sizeof(float)));
      !copied.ok()) {
    error = copied.message();
    return false;
  }
  return coll.sumFloats(static_cast<float *>(total.data), elements, error);
}

} // namespace einrt
