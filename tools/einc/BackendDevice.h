//===- BackendDevice.h - --backend's device, opened before compiling -*- C++ -*-===//
//
// `einc train`, `sample` and `run` open the device first, so that a machine
// without it (no GPU, no driver) fails before spending time compiling; the
// runner then loads the compiled Programs onto that device
// (tools/runner/Runner.h).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_EINC_BACKENDDEVICE_H
#define EINC_TOOLS_EINC_BACKENDDEVICE_H

#include "Options.h"

#include "runtime/core/Backend.h"
#include "runtime/core/Device.h"

#include <memory>
#include <string>

namespace einc {

/// `kind`'s device, or null after printing why ("einc: --backend cuda: ...").
std::shared_ptr<einrt::Device> openBackendDevice(const einrt::Backend &kind,
                                                 const einrt::BackendOpen &open);

/// The device profile a run's report is priced on: one named by a word of
/// the device's description that the backend says describes it ("h200" of
/// "NVIDIA H200 (sm_90, ...)"); else `cpu` (a host backend; or a GPU without
/// a profile, whose prediction the banner then says is of another device).
std::string reportProfileFor(const Options &o, const einrt::Backend &kind,
                             const einrt::Device &device);

} // namespace einc

#endif // EINC_TOOLS_EINC_BACKENDDEVICE_H
