//===- HostDevice.cpp - Host memory and the reference kernels -------------===//
#include "runtime/core/HostDevice.h"

#include "runtime/base/Memory.h"
#include "runtime/core/ReferenceSteps.h"

#include <cstdlib>
#include <cstring>

namespace einrt {

std::string HostDevice::name() const {
  return prec == Precision::F64 ? "reference (f64)" : "reference";
}

StorageType HostDevice::storageOf(DType t) const {
  switch (t) {
  case DType::I32:
    return StorageType::I32;
  case DType::I1:
    return StorageType::U8;
  default:
    return prec == Precision::F64 ? StorageType::F64 : StorageType::F32;
  }
}

Expected<DeviceMemory> HostDevice::allocate(int64_t bytes, const std::string &what) {
  if (bytes <= 0)
    return DeviceMemory{};
  // Before allocating: too large is an error, not an abort (runtime/base/Memory.h).
  if (std::string shortfall = memoryShortfall(bytes, what); !shortfall.empty())
    return Status(StatusCode::OutOfMemory, shortfall);
  constexpr int64_t kAlign = 64;
  int64_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  void *p = std::aligned_alloc(size_t(kAlign), size_t(rounded));
  if (!p)
    return Status(StatusCode::OutOfMemory,
                  what + " needs " + formatBytes(bytes) + ", which could not be allocated");
  std::memset(p, 0, size_t(rounded));
  return DeviceMemory{p, bytes};
}

void HostDevice::release(DeviceMemory &memory) {
  std::free(memory.data);
  memory = {};
}

Status HostDevice::upload(void *dst, const void *src, int64_t bytes) {
  if (bytes > 0)
    std::memcpy(dst, src, size_t(bytes));
  return Status::success();
}

Status HostDevice::download(void *dst, const void *src, int64_t bytes) {
  if (bytes > 0)
    std::memcpy(dst, src, size_t(bytes));
  return Status::success();
}

Status HostDevice::copy(void *dst, const void *src, int64_t bytes) {
  if (bytes > 0 && dst != src)
    std::memmove(dst, src, size_t(bytes));
  return Status::success();
}

Status HostDevice::zero(void *dst, int64_t bytes) {
  if (bytes > 0)
    std::memset(dst, 0, size_t(bytes));
  return Status::success();
}

Status HostDevice::addInOrder(float *sum, const float *parts, int64_t partCount, int64_t partStride,
                              int64_t count) {
  if (prec == Precision::F64)
    return Status(StatusCode::Unavailable,
                  "the f64 reference device stores floats as doubles: it sums no f32 gradients");
  // One float add per part, in part order: nothing here may be
  // reassociated (the runtime is built without fast-math).
  for (int64_t i = 0; i < count; ++i) {
    float s = sum[i];
    for (int64_t p = 0; p < partCount; ++p)
      s = s + parts[p * partStride + i];
    sum[i] = s;
  }
  return Status::success();
}

Status HostDevice::reference(const Step &s, const std::vector<DeviceSpan> &inputs,
                             const DeviceSpan &output) {
  return prec == Precision::F64 ? runReferenceStep<double>(s, inputs, output)
                                : runReferenceStep<float>(s, inputs, output);
}

} // namespace einrt
