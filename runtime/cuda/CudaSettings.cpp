//===- CudaSettings.cpp - The cuda device's switches and staging check ----===//
//
// The parts of CudaDeviceOptions that come from the environment, and the
// host-memory check of the pinned staging buffer: no CUDA headers, no GPU
// (unit-tested here; runtime/cuda/CudaDevice.cpp uses them).
//
//===----------------------------------------------------------------------===//
#include "runtime/base/Memory.h"
#include "runtime/cuda/CudaDevice.h"

#include <cstdlib>

namespace einrt {

namespace {

/// A 0/1 switch: unset or empty leaves `value`.
Status readSwitch(const char *variable, const char *meaning0, const char *meaning1, bool &value) {
  const char *v = std::getenv(variable);
  if (!v || !*v)
    return Status::success();
  std::string text = v;
  if (text == "0" || text == "1") {
    value = text == "1";
    return Status::success();
  }
  return Status::invalid(std::string(variable) + "=" + text + ": expected 0 (" + meaning0 +
                         ") or 1 (" + meaning1 + ")");
}

} // namespace

Status readCudaDebugSwitches(CudaDeviceOptions &options) {
  EINRT_TRY(readSwitch("EINC_CUDA_GRAPHS", "run every step by plain launches",
                       "capture runs as CUDA graphs and replay them, the default", options.graphs));
  return readSwitch("EINC_CUDA_SYNC", "the default",
                    "synchronise and check for errors after every step", options.syncEveryStep);
}

std::string cudaSwitchesText(const CudaDeviceOptions &options) {
  std::string text;
  if (!options.graphs)
    text += "; graphs off (EINC_CUDA_GRAPHS=0)";
  if (options.syncEveryStep)
    text += "; synchronised after every step (EINC_CUDA_SYNC=1)";
  return text;
}

Status cudaStagingProblem(int64_t bytes) {
  std::string shortfall =
      memoryShortfall(bytes, "the cuda device's pinned staging buffer (host memory)");
  return shortfall.empty() ? Status::success() : Status(StatusCode::OutOfMemory, shortfall);
}

} // namespace einrt
