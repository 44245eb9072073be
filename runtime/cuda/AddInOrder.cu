// The cuda device's Device::addInOrder: the adds of a data-parallel
// gradient sum (runtime/dist/DeviceOrderedSum.h), in one process's order.
// nvcc compiles it to PTX at build time (runtime/CMakeLists.txt) and the
// device loads that PTX (the driver compiles it for the GPU), so neither
// einc nor an executable needs NVRTC for it.
//
// sum[i] := ((sum[i] + parts[0 * stride + i]) + parts[1 * stride + i]) + ...
// __fadd_rn is one IEEE add rounded to nearest even: never contracted,
// never reassociated, the same bits as the CPU's float add. A grid-stride
// loop, so any launch shape covers any count.
extern "C" __global__ void einc_add_in_order(float *__restrict__ sum,
                                             const float *__restrict__ parts,
                                             long long partCount, long long partStride,
                                             long long count) {
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step) {
    float s = sum[i];
    for (long long p = 0; p < partCount; ++p)
      s = __fadd_rn(s, parts[p * partStride + i]);
    sum[i] = s;
  }
}
