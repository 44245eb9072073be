//===- DeviceOrderedSum.cpp - One process's gradient sum, on the device ---===//
#include "runtime/dist/DeviceOrderedSum.h"

#include <algorithm>

namespace einrt {

Collectives::~Collectives() = default;

DeviceOrderedSum::DeviceOrderedSum(Collectives &c, int64_t count)
    : coll(c), dev(c.device()), elements(count),
      slice((count + c.size() - 1) / std::max(1, c.size())) {}

Expected<std::unique_ptr<DeviceOrderedSum>> DeviceOrderedSum::create(Collectives &c,
                                                                     int64_t count) {
  if (c.size() < 1 || count < 0)
    return Status::invalid("an ordered sum of " + std::to_string(count) + " floats over " +
                           std::to_string(c.size()) + " ranks");
  std::unique_ptr<DeviceOrderedSum> s(new DeviceOrderedSum(c, count));
  // The padding past `count` stays zero: it travels, and is never read.
  const int64_t bytes = s->slice * c.size() * int64_t(sizeof(float));
  for (DeviceMemory *m : {&s->mine, &s->received, &s->total}) {
    Expected<DeviceMemory> memory = s->dev.allocate(bytes, "the data-parallel gradient sum");
    if (!memory.ok())
      return memory.takeStatus();
    *m = *memory;
  }
  return s;
}

DeviceOrderedSum::~DeviceOrderedSum() {
  for (DeviceMemory *m : {&mine, &received, &total})
    dev.release(*m);
}

Status DeviceOrderedSum::addRound(int64_t round) {
  const int64_t bytes = slice * int64_t(sizeof(float));
  float *owned = static_cast<float *>(total.data) + int64_t(coll.rank()) * slice;
  if (slice == 0)
    return {};
  if (round == 0) // s := 0, then s + x_0
    EINRT_TRY(dev.zero(owned, bytes));
  EINRT_TRY(coll.allToAll(mine.data, received.data, bytes));
  return dev.addInOrder(owned, static_cast<const float *>(received.data), coll.size(), slice,
                        slice);
}

Status DeviceOrderedSum::finish() {
  return slice == 0 ? Status() : coll.allGather(total.data, slice * int64_t(sizeof(float)));
}

Status DeviceOrderedSum::sumUnordered() {
  EINRT_TRY(dev.copy(total.data, mine.data, elements * int64_t(sizeof(float))));
  return coll.sumFloats(static_cast<float *>(total.data), elements);
}

} // namespace einrt
