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

std::string Device::check(const Program &) const { return ""; }

bool Device::prepare(const Program &, std::string &) { return true; }

bool Device::bind(const Program &, const std::vector<const void *> &, std::string &) {
  return true;
}

bool Device::gemm(const GemmDesc &, const void *, const void *, void *, std::string &error) {
  error = "the " + name() + " device has no GEMM library";
  return false;
}

bool Device::gemmPost(const GemmDesc &g, const void *a, const void *b, void *c,
                      const std::vector<DeviceSpan> &post, std::string &error) {
  if (!gemm(g, a, b, c, error))
    return false;
  KernelLaunch k;
  k.kernel = g.post.kernel;
  return launch(k, post, error);
}

bool Device::launch(const KernelLaunch &, const std::vector<DeviceSpan> &, std::string &error) {
  error = "the " + name() + " device runs no compiled kernels";
  return false;
}

bool Device::reference(const Step &s, const std::vector<DeviceSpan> &, const DeviceSpan &,
                       std::string &error) {
  error = "the " + name() + " device does not run '" + stepKindName(s.kind) + "' steps";
  return false;
}

bool Device::addInOrder(float *, const float *, int64_t, int64_t, int64_t, std::string &error) {
  error = "the " + name() + " device cannot sum gradients in order";
  return false;
}

Device::RunStart Device::beginRun(uint64_t, std::string &) { return RunStart::Steps; }

Device::RunEnd Device::endRun(uint64_t, bool, std::string &) { return RunEnd::Done; }

void Device::forgetRun(uint64_t) {}

} // namespace einrt
