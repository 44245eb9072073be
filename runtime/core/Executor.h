//===- Executor.h - Runs a Program on a Device, step by step -----*- C++ -*-===//
//
// An Executor binds a validated Program to a Device (runtime/core/Device.h): it
// plans the Program's memory once (runtime/core/Arena.h: the temporaries share
// one arena by liveness; arguments, results and constants are resident),
// asks the device for both blocks, uploads the constants, and then runs the
// steps in order, calling the device's gemm / launch / reference for each
// as the step-kind table's Runner column says. It owns no storage of its
// own: every buffer lives in the device's memory, and the host reaches a
// buffer only through copies (read / write / exportBuffer / importBuffer,
// converting between the buffer's dtype and the device's storage), so the
// trainer, checkpoints and sampling run unchanged on any device.
//
// Errors are return values (a Status, runtime/base/Status.h); a bad
// gather/scatter index is an error naming the step, never undefined
// behaviour.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_EXECUTOR_H
#define EINC_RUNTIME_EXECUTOR_H

#include "runtime/core/Arena.h"
#include "runtime/core/Device.h"
#include "runtime/core/HostDevice.h"
#include "runtime/core/Program.h"
#include "runtime/core/Safetensors.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace einrt {

/// A result (or any buffer) copied out as doubles.
struct HostTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<double> values; // row-major
};

class Executor {
public:
  /// Validates `program` against itself and `device` (every step's runner,
  /// device.check), plans its memory and allocates it through the device
  /// (zeroed); Constant buffers are filled. Param buffers start at zero:
  /// call initParams (runtime/core/Init.h) or set them. With `useArena`, the
  /// temporaries share the planned arena: their contents are only
  /// meaningful from the step that writes them to the last step that reads
  /// them. Without it every buffer is resident.
  static Expected<Executor> create(const Program &program, std::shared_ptr<Device> device,
                                   bool useArena = true);
  /// On a fresh reference device of that precision.
  static Expected<Executor> create(const Program &program, Precision precision,
                                   bool useArena = true);
  /// The bytes create() allocates for `program` on `device` (arena and
  /// resident buffers), without allocating them.
  static int64_t plannedBytes(const Program &program, const Device &device);

  /// A copy has memory of its own on the same device, holding the same
  /// values; moves keep the memory.
  Executor(const Executor &other);
  Executor &operator=(const Executor &other);
  Executor(Executor &&other) noexcept;
  Executor &operator=(Executor &&other) noexcept;
  ~Executor();

  const Program &program() const { return prog; }
  Device &device() const { return *dev; }
  const std::shared_ptr<Device> &sharedDevice() const { return dev; }
  size_t argumentCount() const { return prog.arguments.size(); }
  size_t resultCount() const { return prog.results.size(); }

  /// The memory plan and the bytes of its two blocks.
  const MemoryPlan &memoryPlan() const { return plan; }
  int64_t arenaBytes() const { return plan.arenaBytes; }
  int64_t residentBytes() const { return plan.residentBytes; }

  /// Step profiling: while on, run() synchronises after each step, adds its
  /// wall time to stepSeconds()[step index] and counts the runs (default
  /// off; off costs nothing). resetProfile() zeroes both.
  void setProfiling(bool on);
  const std::vector<double> &stepSeconds() const { return profileSeconds; }
  int64_t profiledRuns() const { return profileRuns; }
  void resetProfile();

  /// Whether values entering bf16/f16 buffers (writes and every step's
  /// results: ir/EinOps.td's one rounding per op) are rounded to their
  /// format (default on). Off is
  /// meant for the f64 reference device: every float buffer is then plain
  /// float64 (the gradient check, runtime/core/GradCheck.h).
  void setRoundLowPrecision(bool on) { roundLow = on; }
  bool roundsLowPrecision() const { return roundLow; }
  /// How the device stores floats: F64 on the f64 reference device, else F32.
  Precision precision() const {
    return dev->storageOf(DType::F32) == StorageType::F64 ? Precision::F64 : Precision::F32;
  }

  /// Runs every step in order, then synchronises. On failure the message
  /// names the step index, kind and note. Unless profiling, the device may
  /// record the first run and replay it after (Device::beginRun: the cuda
  /// device's CUDA graph).
  Status run();
  /// The same, calling afterStep(i) once step i's outputs are in memory,
  /// in step order: right after each step on a host device (its calls
  /// finish when they return), after the run's synchronize elsewhere. On
  /// the calling thread; the run waits for it.
  Status run(const std::function<void(size_t)> &afterStep);

  /// Host copies of buffer `bufferIndex` (any buffer), as doubles: read
  /// converts from the device's storage; write converts and rounds as
  /// storeElement does (bf16/f16 to their format, float to i32 truncating).
  /// `count` must equal the buffer's element count.
  Expected<std::vector<double>> read(size_t bufferIndex) const;
  Status write(size_t bufferIndex, const double *values, size_t count);
  /// The same by argument index.
  Status setArgument(size_t argIndex, const double *data, size_t count);
  Status setArgument(size_t argIndex, const float *data, size_t count);
  Status setArgument(size_t argIndex, const int32_t *data, size_t count);
  /// Element 0 of result `resultIndex` (a loss, a norm).
  Expected<double> readScalar(size_t resultIndex) const;
  /// Buffer `bufferIndex` := `source`'s buffer `sourceBuffer` (same element
  /// count and dtype): a device copy on a shared device, through the host
  /// otherwise.
  Status copyFrom(size_t bufferIndex, const Executor &source, size_t sourceBuffer);
  /// Buffer `bufferIndex` := 0.
  Status zeroBuffer(size_t bufferIndex);

  /// Result `resultIndex` copied out (its name is the result name); values
  /// are empty if the device failed to copy.
  HostTensor getResult(size_t resultIndex) const;

  /// Element count and shape of a buffer.
  int64_t elementCount(size_t bufferIndex) const {
    return prog.buffers[bufferIndex].elementCount();
  }
  const std::vector<int64_t> &shape(size_t bufferIndex) const {
    return prog.buffers[bufferIndex].shape;
  }
  /// The index of the buffer named `name`, or -1.
  int64_t findBuffer(const std::string &name) const;

  /// A buffer encoded in its Program dtype (for checkpoints), named after
  /// the buffer.
  Expected<TensorData> exportBuffer(size_t bufferIndex) const;
  /// Loads `t` into a buffer: shapes must match; float dtypes convert to
  /// one another (rounding), i32 and bool must match exactly.
  Status importBuffer(size_t bufferIndex, const TensorData &t);

  /// A buffer's place in device memory (null for a buffer with no
  /// storage), and how the device stores its elements.
  void *deviceData(size_t bufferIndex) const;
  StorageType storageOf(size_t bufferIndex) const {
    return dev->storageOf(prog.buffers[bufferIndex].dtype);
  }

private:
  Executor() = default;
  Status allocate();
  void releaseMemory();
  Status runStep(size_t index);
  Status runSteps(const std::function<void(size_t)> &afterStep);
  DeviceSpan span(int32_t buffer) const;
  Status checkBuffer(size_t bufferIndex) const;

  Program prog;
  std::shared_ptr<Device> dev;
  MemoryPlan plan;
  DeviceMemory arena, resident;
  bool roundLow = true;
  bool profiling = false;
  std::vector<double> profileSeconds; // per step, summed over runs
  int64_t profileRuns = 0;
  uint64_t runKey = 0; // names this executor's run to the device (beginRun)
};

} // namespace einrt

#endif // EINC_RUNTIME_EXECUTOR_H
