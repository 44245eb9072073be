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
    bool send(const void *data, int64_t bytes, int to, std::string &) override {
      const char *p = static_cast<const char *>(data);
      std::lock_guard<std::mutex> lock(g.m);
      g.boxes[{me, to}].emplace_back(p, p + bytes);
      ++g.sent;
      g.cv.notify_all();
      return true;
    }
    bool recv(void *data, int64_t bytes, int from, std::string &error) override {
      std::unique_lock<std::mutex> lock(g.m);
      auto &box = g.boxes[{from, me}];
      g.cv.wait(lock, [&] { return !box.empty(); });
      std::vector<char> msg = std::move(box.front());
      box.pop_front();
      if (int64_t(msg.size()) != bytes) {
        error = "message of " + std::to_string(msg.size()) + " bytes, expected " +
                std::to_string(bytes);
        return false;
      }
      std::memcpy(data, msg.data(), msg.size());
      return true;
    }
    bool waitSends(std::string &) override { return true; }
    bool broadcast(void *data, int64_t bytes, int root, std::string &error) override {
      if (me == root) {
        for (int r = 0; r < g.n; ++r)
          if (r != root && !send(data, bytes, r, error))
            return false;
        return true;
      }
      return recv(data, bytes, root, error);
    }
    bool sumFloats(float *data, int64_t count, std::string &error) override {
      if (me != 0)
        return send(data, count * 4, 0, error) && recv(data, count * 4, 0, error);
      std::vector<float> other(static_cast<size_t>(count));
      for (int r = 1; r < g.n; ++r) {
        if (!recv(other.data(), count * 4, r, error))
          return false;
        for (int64_t i = 0; i < count; ++i)
          data[i] += other[size_t(i)];
      }
      for (int r = 1; r < g.n; ++r)
        if (!send(data, count * 4, r, error))
          return false;
      return true;
    }
    bool barrier(std::string &error) override {
      char byte = 0;
      return sumFloats(reinterpret_cast<float *>(&byte), 0, error);
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
