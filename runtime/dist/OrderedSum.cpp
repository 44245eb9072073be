//===- OrderedSum.cpp - A cross-rank sum in one fixed order ---------------===//
#include "runtime/dist/OrderedSum.h"

#include <algorithm>

namespace einrt {

OrderedSum::OrderedSum(Communicator &comm, int64_t count, int64_t bucketElements)
    : comm(comm), count(count), bucket(std::max<int64_t>(1, bucketElements)),
      total(size_t(count), 0.0f) {}

Status OrderedSum::addRound(const float *x, int64_t round, int64_t rounds,
                            const std::function<bool(int64_t)> &ready) {
  const int n = comm.size(), r = comm.rank();
  const int prev = (r + n - 1) % n, next = (r + 1) % n;
  const bool starts = round == 0 && r == 0;            // s := 0 + x
  const bool ends = round == rounds - 1 && r == n - 1; // holds the sum
  for (int64_t b0 = 0; b0 < count; b0 += bucket) {
    const int64_t len = std::min(bucket, count - b0);
    float *s = total.data() + b0;
    // This rank's part first: a rank that gave up leaves the ring here,
    // not in a receive.
    if (ready && !ready(b0 + len))
      return Status::invalid("the contribution of round " + std::to_string(round) +
                             " was never complete");
    if (starts)
      std::fill(s, s + len, 0.0f);
    else if (n > 1)
      EINRT_TRY(comm.recv(s, len * int64_t(sizeof(float)), prev));
    // One float add per element, in the order one process adds: nothing
    // here may be reassociated (the runtime is built without fast-math).
    for (int64_t i = 0; i < len; ++i)
      s[i] = s[i] + x[b0 + i];
    if (n > 1 && !ends)
      EINRT_TRY(comm.send(s, len * int64_t(sizeof(float)), next));
  }
  return n == 1 ? Status() : comm.waitSends();
}

Status OrderedSum::finish() {
  if (comm.size() == 1)
    return {};
  return comm.broadcast(total.data(), count * int64_t(sizeof(float)), comm.size() - 1);
}

} // namespace einrt
