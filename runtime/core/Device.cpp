//===- Device.cpp - Defaults of the device interface ----------------------===//
#include "runtime/core/Device.h"

namespace einrt {

int64_t storageBytes(StorageType t) {
  switch (t) {
  case StorageType::F64:
    return 8;
  case StorageType::F32:
  case StorageType::I32:
    return 4;
  case StorageType::BF16:
  case StorageType::F16:
    return 2;
  case StorageType::U8:
    return 1;
  }
  return 0;
}

const char *storageName(StorageType t) {
  switch (t) {
  case StorageType::F32:
    return "f32";
  case StorageType::F64:
    return "f64";
  case StorageType::BF16:
    return "bf16";
  case StorageType::F16:
    return "f16";
  case StorageType::I32:
    return "i32";
  case StorageType::U8:
    return "u8";
  }
  return "?";
}

Device::~Device() = default;

Status Device::check(const Program &) const { return Status::success(); }

Status Device::prepare(const Program &) { return Status::success(); }

Status Device::bind(const Program &, const std::vector<const void *> &) {
  return Status::success();
}

// Executor::create refuses a step whose runner the device lacks: reaching
// one of these defaults is a broken promise, not bad input.
Status Device::gemm(const GemmDesc &, const void *, const void *, void *) {
  return Status::internal("the " + name() + " device has no GEMM library");
}

Status Device::gemmPost(const GemmDesc &g, const void *a, const void *b, void *c,
                        const std::vector<DeviceSpan> &post) {
  EINRT_TRY(gemm(g, a, b, c));
  KernelLaunch k;
  k.kernel = g.post.kernel;
  return launch(k, post);
}

Status Device::launch(const KernelLaunch &, const std::vector<DeviceSpan> &) {
  return Status::internal("the " + name() + " device runs no compiled kernels");
}

Status Device::reference(const Step &s, const std::vector<DeviceSpan> &, const DeviceSpan &) {
  return Status::internal("the " + name() + " device does not run '" + stepKindName(s.kind) +
                          "' steps");
}

Status Device::addInOrder(float *, const float *, int64_t, int64_t, int64_t) {
  return Status(StatusCode::Unavailable, "the " + name() + " device cannot sum gradients in order");
}

Expected<Device::RunStart> Device::beginRun(uint64_t) { return RunStart::Steps; }

Expected<Device::RunEnd> Device::endRun(uint64_t, bool) { return RunEnd::Done; }

void Device::forgetRun(uint64_t) {}

} // namespace einrt
