//===- Device.h - Where a Program runs: memory, copies, GEMMs, kernels ----===//
//
// The seam between the runtime and a device. An Executor walks a Program's
// steps and asks its Device for everything that touches data:
//
//   memory     allocate (zeroed) / release; upload, download, copy, zero
//   steps      gemm (a GemmDesc), launch (a compiled kernel), reference (a
//              step the reference kernels run, on host devices)
//   ordering   synchronize: every earlier call has finished
//   sums       addInOrder: a data-parallel gradient sum's adds, in one order
//
// A device says how it stores each dtype (storageOf) and which runners of
// the step-kind table (StepKinds.def) it has, so a Program it cannot run is
// refused before anything is allocated. The devices: `reference` (host
// memory, the reference kernels in f32 or f64), `cpu` (host memory, a BLAS
// GEMM and JIT/AOT-compiled kernels over a thread pool) and, with the CUDA
// backend, `cuda`. The trainer, checkpoints and sampling reach buffers only
// through the Executor's copies, never through device pointers.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_DEVICE_H
#define EINC_RUNTIME_DEVICE_H

#include "runtime/base/Status.h"
#include "runtime/core/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace einrt {

/// How a device holds one element.
enum class StorageType : uint8_t { F32, F64, BF16, F16, I32, U8 };
int64_t storageBytes(StorageType t);
const char *storageName(StorageType t);

/// A block of device memory: a host pointer on host devices, a device
/// address on others. Released by the device that allocated it.
struct DeviceMemory {
  void *data = nullptr;
  int64_t bytes = 0;
};

/// One buffer of a step as a device sees it.
struct DeviceSpan {
  DType dtype = DType::F32;
  StorageType storage = StorageType::F32;
  const std::vector<int64_t> *shape = nullptr;
  void *data = nullptr;
  int64_t count = 0; // elements
};

class Device {
public:
  virtual ~Device();

  /// "reference", "cpu", "cuda": for messages.
  virtual std::string name() const = 0;
  /// How this device stores elements of `t`.
  virtual StorageType storageOf(DType t) const = 0;
  /// Whether steps of this runner run here.
  virtual bool runs(StepRunner runner) const = 0;
  /// Whether the device can run `program` (beyond its runners: e.g. every
  /// kernel a Kernel step launches is in its table); Invalid says why not.
  virtual Status check(const Program &program) const;
  /// Called by Executor::create after check(): sets up what `program`'s
  /// steps need on the device beyond buffers (the cpu device's f32
  /// workspace for GEMMs of bf16/f16 operands), so no step allocates.
  virtual Status prepare(const Program &program);
  /// Called by Executor::create once the buffers have their addresses
  /// (`addresses[b]` of buffer b; null where it has no storage): what
  /// depends on where they are (the cuda device's GEMM algorithms, picked
  /// for the alignment of each operand).
  virtual Status bind(const Program &program, const std::vector<const void *> &addresses);

  /// `bytes` of zeroed memory. Host devices check availableMemory() first
  /// (runtime/base/Memory.h): too large is OutOfMemory with the bytes
  /// needed and available, never an abort. Zero bytes: no memory (null).
  virtual Expected<DeviceMemory> allocate(int64_t bytes, const std::string &what) = 0;
  virtual void release(DeviceMemory &memory) = 0;
  /// Host -> device, device -> host, device -> device; `bytes` at the given
  /// addresses (inside allocations of this device).
  virtual Status upload(void *dst, const void *src, int64_t bytes) = 0;
  virtual Status download(void *dst, const void *src, int64_t bytes) = 0;
  virtual Status copy(void *dst, const void *src, int64_t bytes) = 0;
  virtual Status zero(void *dst, int64_t bytes) = 0;

  /// C = op(A)·op(B) (or +=), as `g` describes, on device addresses.
  virtual Status gemm(const GemmDesc &g, const void *a, const void *b, void *c);
  /// A Matmul step with an epilogue (GemmDesc::post): the product into C,
  /// then the epilogue's kernel over `post` (the buffers of post.operands,
  /// then of post.outputs). The default runs gemm() and then launch() of
  /// the kernel over the whole of C (a device whose library fuses it may
  /// do better); the cpu device runs the kernel on each block of C's rows
  /// right after the block's product.
  virtual Status gemmPost(const GemmDesc &g, const void *a, const void *b, void *c,
                          const std::vector<DeviceSpan> &post);
  /// A compiled kernel over `buffers`: the step's inputs, its output, then
  /// the launch's extra outputs.
  virtual Status launch(const KernelLaunch &k, const std::vector<DeviceSpan> &buffers);
  /// A step of a kind the reference kernels run.
  virtual Status reference(const Step &s, const std::vector<DeviceSpan> &inputs,
                           const DeviceSpan &output);
  /// sum[i] := ((sum[i] + parts[0·stride + i]) + parts[1·stride + i]) + ...
  /// over `partCount` parts, for i < count, on f32 device memory: one
  /// rounding per add, in this order and no other (the gradient sum of a
  /// data-parallel step, runtime/dist/DeviceOrderedSum.h). The default says the
  /// device has none.
  virtual Status addInOrder(float *sum, const float *parts, int64_t partCount, int64_t partStride,
                            int64_t count);
  /// Returns when every call before it has finished; reports an
  /// asynchronous failure.
  virtual Status synchronize() = 0;

  /// A whole run as one recorded unit (the cuda device: a CUDA graph).
  /// Executor::run (when not profiling) calls beginRun(key) before its
  /// steps: Steps — issue them (up to the first that fails), then
  /// endRun(key, whether they all succeeded); Replayed — the device has
  /// issued the recorded run itself; or the failure. endRun says Done,
  /// the failure, or IssueAgain: the device could not record what was
  /// issued and ran none of it (a capture that failed), so the executor
  /// issues the steps once more, unrecorded. `key` names one executor,
  /// whose steps and buffer addresses never change while it lives (host
  /// writes between runs land at the same addresses, so a replay reads
  /// them); forgetRun(key) when it goes. The defaults (host devices):
  /// Steps, Done, nothing to forget.
  enum class RunStart { Steps, Replayed };
  enum class RunEnd { Done, IssueAgain };
  virtual Expected<RunStart> beginRun(uint64_t key);
  virtual Expected<RunEnd> endRun(uint64_t key, bool stepsSucceeded);
  virtual void forgetRun(uint64_t key);
};

} // namespace einrt

#endif // EINC_RUNTIME_DEVICE_H
