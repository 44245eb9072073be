//===- ReferenceBackend.cpp - The `reference` backend's registration ------===//
//
// The interpreter: host memory and the reference kernels, in f32 or f64
// (runtime/core/HostDevice.h); no compiled kernels.
//
//===----------------------------------------------------------------------===//
#include "runtime/base/Memory.h"
#include "runtime/core/Backend.h"
#include "runtime/core/HostDevice.h"

namespace einrt {
namespace {

class ReferenceBackend final : public Backend {
public:
  const char *name() const override { return "reference"; }
  const char *summary() const override {
    return "the reference interpreter: every step by the reference kernels, f32 or f64";
  }
  const char *programLowering() const override { return "reference"; }
  bool hostKernels() const override { return false; }
  bool hostMemory() const override { return true; }
  bool runsF64() const override { return true; }
  bool profileDescribes(const std::string &profile, const std::string &) const override {
    return profile == "cpu";
  }
  const char *profileWord() const override { return "cpu"; }

  Expected<std::shared_ptr<Device>> open(const BackendOpen &options) const override {
    return std::shared_ptr<Device>(
        std::make_shared<HostDevice>(options.f64 ? Precision::F64 : Precision::F32));
  }
  Status attachKernels(Device &, const BackendKernels &) const override {
    return Status::success();
  }
  std::string memoryShortfall(Device &, int64_t bytes, const std::string &what) const override {
    return einrt::memoryShortfall(bytes, what);
  }
};

} // namespace

const Backend &referenceBackend() {
  static const ReferenceBackend backend;
  return backend;
}

} // namespace einrt
