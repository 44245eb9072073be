//===- ThreadGroup.h - N ranks as threads of one process (tests) ----------===//
//
// A Communicator whose ranks are threads: messages are copied into a
// mailbox per (sender, receiver) pair at send() and taken in order by
// recv(), as MPI's non-overtaking rule keeps them. The engine-order sum
// adds in rank order at rank 0 and broadcasts.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_UNIT_TRAINER_THREADGROUP_H
#define EINC_TEST_UNIT_TRAINER_THREADGROUP_H

#include "runtime/dist/Communicator.h"

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace einrt::test {

class ThreadGroup {
public:
  explicit ThreadGroup(int n) : n(n) {}
  int size() const { return n; }
  /// Messages sent so far (all ranks).
  int64_t messages() const {
    std::lock_guard<std::mutex> lock(m);
    return sent;
  }

  class Rank final : public Communicator {
  public:
    Rank(ThreadGroup &g, int me) : g(g), me(me) {}
    int rank() const override { return me; }
    int size() const override { return g.n; }
    std::string describe() const override { return "threads"; }
    Status send(const void *data, int64_t bytes, int to) override {
      const char *p = static_cast<const char *>(data);
      std::lock_guard<std::mutex> lock(g.m);
      g.boxes[{me, to}].emplace_back(p, p + bytes);
      ++g.sent;
      g.cv.notify_all();
      return {};
    }
    Status recv(void *data, int64_t bytes, int from) override {
      std::unique_lock<std::mutex> lock(g.m);
      auto &box = g.boxes[{from, me}];
      g.cv.wait(lock, [&] { return !box.empty(); });
      std::vector<char> msg = std::move(box.front());
      box.pop_front();
      if (int64_t(msg.size()) != bytes)
        return Status(StatusCode::Io, "message of " + std::to_string(msg.size()) +
                                          " bytes, expected " + std::to_string(bytes));
      std::memcpy(data, msg.data(), msg.size());
      return {};
    }
    Status waitSends() override { return {}; }
    Status broadcast(void *data, int64_t bytes, int root) override {
      if (me == root) {
        for (int r = 0; r < g.n; ++r)
          if (r != root)
            EINRT_TRY(send(data, bytes, r));
        return {};
      }
      return recv(data, bytes, root);
    }
    Status sumFloats(float *data, int64_t count) override {
      if (me != 0) {
        EINRT_TRY(send(data, count * 4, 0));
        return recv(data, count * 4, 0);
      }
      std::vector<float> other(static_cast<size_t>(count));
      for (int r = 1; r < g.n; ++r) {
        EINRT_TRY(recv(other.data(), count * 4, r));
        for (int64_t i = 0; i < count; ++i)
          data[i] += other[size_t(i)];
      }
      for (int r = 1; r < g.n; ++r)
        EINRT_TRY(send(data, count * 4, r));
      return {};
    }
    Status barrier() override {
      char byte = 0;
      return sumFloats(reinterpret_cast<float *>(&byte), 0);
    }
    [[noreturn]] void abort(int) override { std::abort(); }

  private:
    ThreadGroup &g;
    int me;
  };

  std::unique_ptr<Rank> rank(int r) { return std::make_unique<Rank>(*this, r); }

private:
  int n;
  mutable std::mutex m;
  std::condition_variable cv;
  std::map<std::pair<int, int>, std::deque<std::vector<char>>> boxes;
  int64_t sent = 0;
};

} // namespace einrt::test

#endif // EINC_TEST_UNIT_TRAINER_THREADGROUP_H
