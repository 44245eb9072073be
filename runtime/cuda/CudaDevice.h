//===- CudaDevice.h - The `cuda` device: driver API, cuBLASLt, graphs -*- C++ -*-===//
//
// A Device (runtime/core/Device.h) on one NVIDIA GPU, for the Programs the CPU
// lowering makes (codegen/CpuLowering.h) with their kernels rendered to
// CUDA (runtime/cuda/CudaKernels.h):
//   memory    one cuMemAlloc per Executor (its arena and resident block),
//             after cuMemGetInfo says it fits; one stream for everything;
//             uploads and downloads through one pinned staging buffer
//             (cuMemHostAlloc at open, checked against the host's
//             available memory; cuMemcpy*Async in parts of its size);
//             copies and zeroing on the stream
//   gemm      cuBLASLt (runtime/cuda/CublasLt.h), algorithms chosen once per
//             call shape and alignment in bind()
//   launch    the bundle's kernels (its cubin for this device's sm_XY, else
//             its PTX), grid and block from cudaLaunchShape with the
//             driver's occupancy, computed once per kernel in prepare()
//   reference only Copy steps (a device copy): check() refuses a Program
//             with any other reference step, naming it
//   runs      an Executor's first run is issued step by step (it loads
//             every kernel), its second is captured as a CUDA graph
//             (cuStreamBeginCapture ... cuGraphInstantiate) and launched,
//             and every later run replays the graph (Device::beginRun);
//             while profiling, with EINC_CUDA_GRAPHS=0 or EINC_CUDA_SYNC=1
//             (readCudaDebugSwitches), steps are issued one by one
// Storage as on the CPU: f32, bf16 and f16 as themselves, i32, i1 as bytes.
// Deterministic: the kernels use no atomics (the renderer's rule) and each
// GEMM shape runs one algorithm.
//
// The driver and cuBLASLt are opened with dlopen (runtime/cuda/CudaDriver.h): an
// einc built with the CUDA headers runs everywhere, and createCudaDevice
// says why there is no device ("no CUDA driver (libcuda.so.1 not found:
// ...)", "no CUDA device (...)"). An einc built without them has the same
// interface, and createCudaDevice says so.
//
// This header needs no CUDA headers.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_CUDADEVICE_H
#define EINC_RUNTIME_CUDADEVICE_H

#include "runtime/core/Backend.h"
#include "runtime/core/Device.h"
#include "runtime/cuda/CublasLtMapping.h"
#include "runtime/cuda/CudaKernels.h"

#include <memory>
#include <string>

namespace einrt {

struct CudaDeviceOptions {
  int ordinal = 0; // which GPU (cuDeviceGet)
  /// The ordinal modulo the GPUs the driver sees (ranks sharing GPUs),
  /// instead of an error when it is past them.
  bool wrapOrdinal = false;
  bool tf32 = false;  // f32 GEMMs with CUBLAS_COMPUTE_32F_FAST_TF32
  bool graphs = true; // record and replay whole runs as CUDA graphs
  /// Synchronise and check the stream after every step, the failing step
  /// and its kernel named: a fault is located, not reported by a later
  /// synchronize or graph replay. No graphs then (a capture cannot wait).
  bool syncEveryStep = false;
  std::string driver; // "" : $EINC_CUDA_DRIVER, else libcuda.so.1
  // Not hardware numbers: how much memory the device sets aside for
  // itself. cuBLASLt's workspace (NVIDIA's advice for Hopper is 32 MiB);
  // the pinned staging buffer, allocated once at open (bigger copies go
  // through it in parts).
  int64_t gemmWorkspaceBytes = int64_t(32) << 20;
  int64_t stagingBytes = int64_t(64) << 20;

  /// Whether runs are captured and replayed as CUDA graphs.
  bool capturesGraphs() const { return graphs && !syncEveryStep; }
};

class CudaDevice : public Device {
public:
  /// What Kernel steps launch: the bundle's kernels by index. A later
  /// bundle must extend the earlier one (kernels are appended, as the
  /// kernel compiler does), so executors made before keep their kernels.
  virtual void setKernels(std::shared_ptr<const CudaKernelBundle> bundle) = 0;
  /// "NVIDIA H200 (sm_90, 132 multiprocessors, 139.8 GiB; CUDA 13.0
  /// driver, cuBLASLt 130100)": for banners.
  virtual std::string describe() const = 0;
  virtual CudaDeviceProperties properties() const = 0;
  /// Runs recorded as CUDA graphs so far (for tests and banners).
  virtual int64_t graphsRecorded() const = 0;
  /// For libraries that work beside the device (NCCL): its stream (a
  /// CUstream) and its context made current on the calling thread (the
  /// CUDA runtime then takes this GPU as its device); which GPU it is.
  virtual void *nativeStream() const = 0;
  virtual Status makeCurrent() = 0;
  virtual int ordinal() const = 0;
  /// "" when `bytes` fit the device's free memory now; else what `what`
  /// needs, what is free and the device's total (as allocate() says it),
  /// or why the driver could not tell.
  virtual std::string memoryShortfall(int64_t bytes, const std::string &what) = 0;
};

/// The debug switches, read here and nowhere else (createCudaDevice calls
/// it): EINC_CUDA_GRAPHS=0 runs every step by plain launches instead of
/// capturing and replaying CUDA graphs (1: graphs, the default);
/// EINC_CUDA_SYNC=1 sets syncEveryStep (0: the default). Unset or empty
/// leaves `options` as they are; any other value is Invalid, naming it.
Status readCudaDebugSwitches(CudaDeviceOptions &options);
/// What describe() adds for switches away from the defaults: "" or
/// "; graphs off (EINC_CUDA_GRAPHS=0)", "; synchronised after every step
/// (EINC_CUDA_SYNC=1)".
std::string cudaSwitchesText(const CudaDeviceOptions &options);

/// Whether a pinned staging buffer of `bytes` fits the memory the host has
/// available (runtime/base/Memory.h: ulimits, MemAvailable, cgroup; pinned
/// memory is the host's, never the GPU's); else OutOfMemory with what it
/// needs and what is available.
Status cudaStagingProblem(int64_t bytes);

/// What the cuda backend opens its device with (runtime/core/Backend.h):
/// `open`'s device ordinal and settings (f32 GEMMs on TF32 tensor cores
/// under tf32=on).
CudaDeviceOptions cudaDeviceOptions(const BackendOpen &open);

/// The device, or why there is none (Unavailable: no driver, no GPU, no
/// cuBLASLt; exit status 1 for a tool).
Expected<std::shared_ptr<CudaDevice>> createCudaDevice(const CudaDeviceOptions &options);

/// Whether the cuda device can run `program` with `bundle`'s kernels; else
/// Invalid, saying why not: a step of a kind it does not run (reference steps other than
/// Copy: "step 7 (quantize, ...) ... is not on the cuda device yet"), a
/// kernel not in the bundle or with another parameter count, a GEMM
/// cuBLASLt cannot run. Pure: unit-tested without a GPU.
Status cudaProgramProblem(const Program &program, const CudaKernelBundle *bundle,
                          const CublasLtOptions &gemm);

/// Whether every buffer a rendered kernel moves in 16-byte vectors
/// (CudaKernelInfo::aligned) starts 16-byte aligned at `addresses` (per
/// buffer), for the Kernel steps and the Matmul steps whose epilogue kernel
/// runs (`epilogueLaunched[step]`); else Invalid for the first that does not, naming the
/// step, the kernel and the buffer. Checked once the executor's buffers have
/// addresses (bind): a view sits at any element offset of its root. Pure.
Status cudaAlignmentProblem(const Program &program, const CudaKernelBundle &bundle,
                            const std::vector<const void *> &addresses,
                            const std::vector<bool> &epilogueLaunched = {});

/// How the cuda device stores `t` (the CPU device's choice).
StorageType cudaStorageOf(DType t);

} // namespace einrt

#endif // EINC_RUNTIME_CUDADEVICE_H
