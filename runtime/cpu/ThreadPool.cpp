//===- ThreadPool.cpp - Threads for the CPU backend's kernels -------------===//
#include "runtime/cpu/ThreadPool.h"

#include <algorithm>
#include <cstdlib>

#ifdef EINC_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace einrt {

ThreadPool::ThreadPool(int threads) {
  for (int t = 1; t < threads; ++t)
    workers.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  for (std::thread &t : workers)
    t.join();
}

void ThreadPool::drain(const Job &job) {
  int done = 0;
  for (;;) {
    uint64_t c = claim.load(std::memory_order_acquire);
    if (uint32_t(c >> 32) != job.generation || int(uint32_t(c)) >= job.chunks)
      break;
    if (!claim.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel))
      continue;
    (*job.fn)(int(uint32_t(c)));
    ++done;
  }
  if (done > 0) {
    std::lock_guard<std::mutex> lock(mutex);
    pending -= done;
    if (pending == 0)
      finished.notify_all();
  }
}

void ThreadPool::work() {
  uint32_t seen = 0;
  for (;;) {
    // Spin briefly first: steps follow each other within microseconds, and
    // a sleeping thread takes tens of them to wake. A pool being destroyed
    // stops spinning at once (on a loaded machine each yield can take a
    // whole time slice, and the destructor waits for every worker).
    for (int spin = 0; spin < 20000 && generation.load(std::memory_order_acquire) == seen &&
                       !stopping.load(std::memory_order_relaxed);
         ++spin)
      std::this_thread::yield();
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return stopping || generation.load() != seen; });
      if (stopping)
        return;
      job = current;
      seen = job.generation;
    }
    drain(job);
  }
}

void ThreadPool::run(int chunks, const std::function<void(int)> &fn) {
  if (chunks <= 0)
    return;
  if (workers.empty() || chunks == 1) {
    for (int c = 0; c < chunks; ++c)
      fn(c);
    return;
  }
  Job job;
  {
    std::lock_guard<std::mutex> lock(mutex);
    job.fn = &fn;
    job.chunks = chunks;
    job.generation = generation.load() + 1;
    current = job;
    pending = chunks;
    claim.store(uint64_t(job.generation) << 32, std::memory_order_release);
    generation.store(job.generation, std::memory_order_release);
  }
  wake.notify_all();
  drain(job);
  std::unique_lock<std::mutex> lock(mutex);
  finished.wait(lock, [&] { return pending == 0; });
}

int defaultThreadCount() {
  for (const char *name : {"EINC_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"})
    if (const char *v = std::getenv(name)) {
      char *end = nullptr;
      long n = std::strtol(v, &end, 10);
      if (end != v && *end == '\0' && n > 0)
        return int(std::min<long>(n, 1024));
    }
  unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? int(hw) : 1;
}

void setBlasThreads(int threads) {
#ifdef EINC_HAVE_OPENBLAS
  openblas_set_num_threads(std::max(1, threads));
#else
  (void)threads;
#endif
}

} // namespace einrt
