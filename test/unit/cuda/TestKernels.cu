// Two kernels written to runtime/cuda/CudaKernels.h's contract (one pointer per
// buffer, shapes compiled in, grid-stride loops for any launch shape, no
// atomics), compiled by nvcc at build time for CudaDeviceTest: the device's
// module loading, launch shapes and graphs on a GPU. Integer-valued floats
// keep every result exact whatever the order of a sum.

// Elements: y = 2x + 1 over 10000 floats.
extern "C" __global__ void k0_scale(const float *x, float *y) {
  const long long n = 10000;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    y[i] = x[i] * 2.0f + 1.0f;
}

// WarpRows: y[r] = sum of row r of a 300 x 100 matrix, a warp per row.
extern "C" __global__ void k1_rowsum(const float *x, float *y) {
  const long long rows = 300, length = 100;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (long long r = blockIdx.x * (long long)warps + warp; r < rows;
       r += (long long)gridDim.x * warps) {
    float s = 0.0f;
    for (long long j = lane; j < length; j += 32)
      s += x[r * length + j];
    for (int offset = 16; offset > 0; offset /= 2)
      s += __shfl_down_sync(0xffffffffu, s, offset);
    if (lane == 0)
      y[r] = s;
  }
}
