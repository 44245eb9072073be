//===- HostDevice.h - Host memory and the reference kernels -----*- C++ -*-===//
//
// The reference device: buffers in host memory (64-byte aligned, zeroed),
// every step of a Reference kind run by the reference kernels
// (runtime/core/ReferenceSteps.h). Floats of every dtype are stored as float
// (Precision::F32) or double (Precision::F64); bf16/f16 values are rounded
// to their format where they enter a buffer (casts, host writes). The CPU
// device (runtime/cpu/CpuDevice.h) is a host device that adds a GEMM library and
// compiled kernels.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_HOSTDEVICE_H
#define EINC_RUNTIME_HOSTDEVICE_H

#include "runtime/core/Device.h"

namespace einrt {

enum class Precision { F32, F64 };

class HostDevice : public Device {
public:
  explicit HostDevice(Precision precision = Precision::F32) : prec(precision) {}

  Precision precision() const { return prec; }

  std::string name() const override;
  StorageType storageOf(DType t) const override;
  bool runs(StepRunner runner) const override { return runner == StepRunner::Reference; }

  Expected<DeviceMemory> allocate(int64_t bytes, const std::string &what) override;
  void release(DeviceMemory &memory) override;
  Status upload(void *dst, const void *src, int64_t bytes) override;
  Status download(void *dst, const void *src, int64_t bytes) override;
  Status copy(void *dst, const void *src, int64_t bytes) override;
  Status zero(void *dst, int64_t bytes) override;
  Status reference(const Step &s, const std::vector<DeviceSpan> &inputs,
                   const DeviceSpan &output) override;
  Status addInOrder(float *sum, const float *parts, int64_t partCount, int64_t partStride,
                    int64_t count) override;
  Status synchronize() override { return Status::success(); }

private:
  Precision prec;
};

} // namespace einrt

#endif // EINC_RUNTIME_HOSTDEVICE_H
