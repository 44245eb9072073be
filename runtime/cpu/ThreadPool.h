//===- ThreadPool.h - Threads for the CPU backend's kernels -----*- C++ -*-===//
//
// A fixed set of worker threads that run the chunks of one parallel loop at a
// time: run(chunks, fn) calls fn(0) ... fn(chunks - 1), each exactly once, on
// the workers and on the calling thread, and returns when every call has
// returned. Plain C++ (std::thread), no OpenMP.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_THREADPOOL_H
#define EINC_RUNTIME_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace einrt {

class ThreadPool {
public:
  /// `threads` in all, the caller included (so threads - 1 workers).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int threads() const { return int(workers.size()) + 1; }

  /// Runs fn(c) for every c in [0, chunks); one run at a time per pool.
  void run(int chunks, const std::function<void(int)> &fn);

private:
  struct Job {
    const std::function<void(int)> *fn = nullptr;
    int chunks = 0;
    uint32_t generation = 0;
  };
  void work();
  /// Runs chunks of `job` until none is left; claims carry the job's
  /// generation, so a worker holding a finished job's snapshot claims
  /// nothing of the next one.
  void drain(const Job &job);

  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable wake, finished;
  Job current; // under mutex
  std::atomic<uint32_t> generation{0};
  std::atomic<uint64_t> claim{0};    // generation << 32 | next chunk
  int pending = 0;                   // chunks not finished (under mutex)
  std::atomic<bool> stopping{false}; // also read while spinning, unlocked
};

/// The thread count einc uses when none is given: EINC_NUM_THREADS, else
/// OMP_NUM_THREADS, else OPENBLAS_NUM_THREADS (the first that holds a
/// positive integer), else the machine's hardware threads.
int defaultThreadCount();

/// Tells the BLAS library how many threads its calls may use (OpenBLAS's
/// openblas_set_num_threads; nothing with another BLAS).
void setBlasThreads(int threads);

} // namespace einrt

#endif // EINC_RUNTIME_THREADPOOL_H
