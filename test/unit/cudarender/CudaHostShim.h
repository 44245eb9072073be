//===- CudaHostShim.h - Rendered CUDA kernels compiled as host code -*- C++ -*-===//
//
// What a rendered translation unit (codegen/CudaRenderer.h) needs to compile
// as host C++ and run on the CPU: the CUDA built-ins it uses (threadIdx,
// blockIdx, blockDim, gridDim), the intrinsics (__fadd_rn, ... as the
// correctly rounded host operations under -ffp-contract=off; bf16 and f16
// conversions to nearest even, a bf16 NaN canonical as cvt.rn.bf16.f32
// makes it), __shfl_xor_sync and __syncthreads over real threads (one host
// thread per CUDA thread of a block, warps exchanging through barriers),
// __threadfence and atomicAdd (a chunked row's counter: module globals are
// host globals), and
// a launcher: einc_emulate(entry, params, grid, block) runs every block of
// the grid in turn. Used by CudaHostEmulationTest.cpp; the math functions
// are the host's libm, not CUDA's, so this checks the kernels' structure
// (indices, vectors, tails, in-place reads, rows and their order), not the
// device's math.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_UNIT_CUDARENDER_CUDAHOSTSHIM_H
#define EINC_TEST_UNIT_CUDARENDER_CUDAHOSTSHIM_H

namespace einc::cudatest {

/// Goes before the rendered source (its #include <cuda_*.h> lines removed).
inline const char *kHostShimPrologue = R"(
#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ static // one block runs at a time

struct ein_uint3 { unsigned x = 0, y = 0, z = 0; };
thread_local ein_uint3 threadIdx, blockIdx;
ein_uint3 blockDim, gridDim;

template <class A, class B> static A ein_bits(B b) { A a; std::memcpy(&a, &b, sizeof a); return a; }
static float __int_as_float(int x) { return ein_bits<float>(x); }
static float __uint_as_float(unsigned x) { return ein_bits<float>(x); }
static unsigned __float_as_uint(float x) { return ein_bits<unsigned>(x); }
static float __fadd_rn(float a, float b) { return a + b; }
static float __fsub_rn(float a, float b) { return a - b; }
static float __fmul_rn(float a, float b) { return a * b; }
static float __fdiv_rn(float a, float b) { return a / b; }
static float __fsqrt_rn(float a) { return std::sqrt(a); }
static float __int2float_rn(int x) { return (float)x; }
static float __ll2float_rn(long long x) { return (float)x; }
using std::max;

struct __nv_bfloat16 { unsigned short x; };
static float __bfloat162float(__nv_bfloat16 b) { return ein_bits<float>((unsigned)b.x << 16); }
static __nv_bfloat16 __float2bfloat16_rn(float f) {
  unsigned u = ein_bits<unsigned>(f);
  if (f != f)
    return {0x7FFF};
  return {(unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16)};
}
struct __half { _Float16 h; };
static float __half2float(__half h) { return (float)h.h; }
static __half __float2half_rn(float f) { return {(_Float16)f}; }

// A reusable barrier for `n` threads.
struct ein_barrier {
  std::mutex m;
  std::condition_variable cv;
  unsigned n = 0, waiting = 0, generation = 0;
  void wait() {
    std::unique_lock<std::mutex> lock(m);
    unsigned g = generation;
    if (++waiting == n) {
      waiting = 0;
      ++generation;
      cv.notify_all();
    } else {
      cv.wait(lock, [&] { return generation != g; });
    }
  }
};
struct ein_warp_state {
  ein_barrier barrier;
  unsigned long long slot[32];
};
static ein_warp_state ein_warps_state[32];
static ein_barrier ein_block_barrier;

template <class T> static T __shfl_xor_sync(unsigned, T v, int d) {
  ein_warp_state &w = ein_warps_state[threadIdx.x / 32];
  unsigned lane = threadIdx.x % 32;
  std::memcpy(&w.slot[lane], &v, sizeof v);
  w.barrier.wait();
  T r;
  std::memcpy(&r, &w.slot[lane ^ unsigned(d)], sizeof r);
  w.barrier.wait();
  return r;
}
template <class T> static T __shfl_sync(unsigned, T v, int src) {
  ein_warp_state &w = ein_warps_state[threadIdx.x / 32];
  std::memcpy(&w.slot[threadIdx.x % 32], &v, sizeof v);
  w.barrier.wait();
  T r;
  std::memcpy(&r, &w.slot[unsigned(src) % 32], sizeof r);
  w.barrier.wait();
  return r;
}
static void __syncthreads() { ein_block_barrier.wait(); }
static void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
static unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
)";

/// Goes after it, with `kernels` the entries: the launcher.
inline const char *kHostShimEpilogue = R"(
template <class... A, size_t... I>
static void ein_call_with(void (*f)(A...), void **p, std::index_sequence<I...>) {
  f(static_cast<A>(p[I])...);
}
template <class... A> static void ein_call(void (*f)(A...), void **p) {
  ein_call_with(f, p, std::index_sequence_for<A...>{});
}
struct ein_entry { const char *name; void (*run)(void **); };
static const ein_entry ein_entries[] = {
  EIN_ENTRIES
};

/// Runs kernel `name` on a grid of `grid` blocks of `block` threads (whole
/// warps); `threads`: one host thread per CUDA thread (kernels with
/// shuffles or barriers), else the threads of a block one after another.
extern "C" int einc_emulate(const char *name, void **params, unsigned grid, unsigned block,
                            int threads) {
  const ein_entry *e = nullptr;
  for (const ein_entry &x : ein_entries)
    if (std::strcmp(x.name, name) == 0)
      e = &x;
  if (!e || block == 0 || block % 32 || block > 1024)
    return 1;
  gridDim.x = grid;
  blockDim.x = block;
  ein_block_barrier.n = block;
  for (ein_warp_state &w : ein_warps_state)
    w.barrier.n = 32;
  for (unsigned b = 0; b < grid; ++b) {
    if (!threads) {
      for (unsigned t = 0; t < block; ++t) {
        blockIdx.x = b;
        threadIdx.x = t;
        e->run(params);
      }
      continue;
    }
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < block; ++t)
      pool.emplace_back([=] {
        blockIdx.x = b;
        threadIdx.x = t;
        e->run(params);
      });
    for (std::thread &th : pool)
      th.join();
  }
  return 0;
}
)";

} // namespace einc::cudatest

#endif // EINC_TEST_UNIT_CUDARENDER_CUDAHOSTSHIM_H
