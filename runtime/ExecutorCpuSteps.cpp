//===- ExecutorCpuSteps.cpp - The CPU backend's steps and threads --------===//
//
// Matmul steps (cblas_sgemm) and Kernel steps (compiled kernels), each run
// as the chunks of runtime/ParallelChunks.h: the same calls at every thread
// count, so the thread count never changes a result bit.
//
//===----------------------------------------------------------------------===//
#include "runtime/Executor.h"

#include <cblas.h>

#include <algorithm>

namespace einrt {

void Executor::forEachChunk(int chunks, const std::function<void(int)> &fn) {
  if (pool) {
    pool->run(chunks, fn);
    return;
  }
  for (int c = 0; c < chunks; ++c)
    fn(c);
}

void Executor::runMatmulStep(const GemmDesc &g, const float *a, const float *b, float *c) {
  // Every matrix of the step: the outer loops (outermost first) around the
  // batch, flattened; matrix i's operand offsets.
  const int64_t total = g.matrices();
  if (total == 0 || g.m == 0 || g.n == 0)
    return;
  auto offsets = [&](int64_t i, int64_t &oa, int64_t &ob, int64_t &oc) {
    int64_t inner = i % g.batch, rest = i / g.batch;
    oa = inner * g.strideA, ob = inner * g.strideB, oc = inner * g.strideC;
    for (size_t d = g.outer.size(); d-- > 0;) {
      const GemmLoop &loop = g.outer[d];
      int64_t at = rest % loop.count;
      rest /= loop.count;
      oa += at * loop.strideA;
      ob += at * loop.strideB;
      oc += at * loop.strideC;
    }
  };
  const MatmulChunks chunks = planMatmulChunks(total, g.m, g.n, g.k);
  forEachChunk(chunks.count(), [&](int chunk) {
    MatmulChunks::Chunk part = chunks.chunk(chunk);
    for (int64_t i = part.first; i < part.last; ++i) {
      int64_t oa, ob, oc;
      offsets(i, oa, ob, oc);
      runMatmul(g, a + oa, b + ob, c + oc, part.r0, part.r1);
    }
  });
}

void Executor::runMatmul(const GemmDesc &g, const float *a, const float *b, float *c, int64_t r0,
                         int64_t r1) {
  const int64_t m = r1 - r0, n = g.n, k = g.k;
  const bool accumulate = g.epilogue == GemmEpilogue::Accumulate;
  if (m <= 0 || n == 0)
    return;
  // Rows [r0, r1) of op(A) and C: op(A)'s rows are A's columns when A is
  // stored transposed.
  const float *ar = a + (g.transA ? r0 : r0 * g.lda);
  float *cr = c + r0 * g.ldc;
  if (k == 0) { // an empty sum: BLAS implementations differ, so zero here
    if (!accumulate)
      for (int64_t r = 0; r < m; ++r)
        std::fill(cr + r * g.ldc, cr + r * g.ldc + n, 0.0f);
    return;
  }
  cblas_sgemm(CblasRowMajor, g.transA ? CblasTrans : CblasNoTrans,
              g.transB ? CblasTrans : CblasNoTrans, int(m), int(n), int(k), 1.0f, ar, int(g.lda), b,
              int(g.ldb), accumulate ? 1.0f : 0.0f, cr, int(g.ldc));
}

void Executor::setThreads(int threads) {
  if (threads <= 1)
    pool.reset();
  else if (!pool || pool->threads() != threads)
    pool = std::make_shared<ThreadPool>(threads);
}

void Executor::setThreadPool(std::shared_ptr<ThreadPool> shared) {
  pool = shared && shared->threads() > 1 ? std::move(shared) : nullptr;
}

int Executor::threads() const { return pool ? pool->threads() : 1; }

bool Executor::runKernel(const Step &s, std::string &error) {
  const KernelLaunch &launch = s.as<KernelLaunch>();
  if (launch.kernel < 0 || size_t(launch.kernel) >= kernels.size() ||
      !kernels[size_t(launch.kernel)].fn) {
    error = "kernel " + std::to_string(launch.kernel) +
            (kernels.empty()
                 ? std::string(" cannot run: no kernel table was given "
                               "(Executor::setKernels)")
                 : " is not in the kernel table (" + std::to_string(kernels.size()) + " kernels)");
    return false;
  }
  const KernelEntry &kernel = kernels[size_t(launch.kernel)];
  const size_t nin = s.inputs.size(), count = nin + 1 + launch.extraOutputs.size();
  std::vector<void *> data(count), args(count + 2);
  int64_t elements = 0;
  for (size_t i = 0; i < count; ++i) {
    BufferData &b = bufs[i < nin    ? s.inputs[i]
                         : i == nin ? s.output
                                    : launch.extraOutputs[i - nin - 1]];
    data[i] = b.dtype == DType::I32  ? static_cast<void *>(b.i32.data())
              : b.dtype == DType::I1 ? static_cast<void *>(b.i1.data())
                                     : static_cast<void *>(b.f32.data());
    args[i] = &data[i];
    elements = std::max(elements, b.size());
  }
  const int64_t extent = std::max<int64_t>(1, kernel.extent);
  const int chunks = kernelChunkCount(extent, elements);
  if (chunks == 1) {
    int64_t range[2] = {0, extent};
    args[count] = &range[0];
    args[count + 1] = &range[1];
    kernel.fn(args.data());
    return true;
  }
  forEachChunk(chunks, [&](int c) {
    Range r = kernelChunk(extent, chunks, c);
    int64_t range[2] = {r.begin, r.end};
    std::vector<void *> own(args);
    own[count] = &range[0];
    own[count + 1] = &range[1];
    kernel.fn(own.data());
  });
  return true;
}

} // namespace einrt
