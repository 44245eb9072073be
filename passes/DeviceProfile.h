//===- DeviceProfile.h - Hardware numbers as data -----------------*- C++ -*-===//
//
// Device profiles live in a data file (passes/devices.json, embedded at build
// time; `--device-file` reads another). Passes and the report take numbers
// only from here, never from literals.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_PASSES_DEVICEPROFILE_H
#define EINC_PASSES_DEVICEPROFILE_H

#include "runtime/base/Status.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::ein {

struct DeviceProfile {
  std::string name;        // "h100"
  std::string description; // "NVIDIA H100 SXM5 80GB"
  /// Dense peak FLOP/s of contractions per dtype: "f32" (the FP32 rate an
  /// f32 GEMM runs at: on NVIDIA GPUs not the tensor cores), "tf32" (f32
  /// operands on TF32 tensor cores, the `tf32` setting), "bf16", "f16", "fp8".
  std::map<std::string, double> matmulFlops;
  /// Peak FLOP/s of the vector units (elementwise work) per dtype.
  std::map<std::string, double> vectorFlops;
  double bandwidth = 0;   // bytes/s of main memory
  double memoryBytes = 0; // capacity
  /// Seconds each kernel of the step adds beyond its roofline time (launch
  /// and ramp, as the runtime issues kernels: a CUDA graph replayed on a
  /// GPU); 0 where the profile has no `kernelLatencySeconds`.
  double kernelLatency = 0;
  std::string source; // where the numbers come from
  /// The links a data-parallel ring crosses, per device and direction
  /// (optional): within a node (nvlink, pcie, loopback) and between nodes
  /// (infiniband, ethernet: the device's share of the node's NICs).
  struct Link {
    std::string kind;
    double bytesPerSecond = 0;
  };
  std::optional<Link> intraNodeLink, interNodeLink;
};

/// The profiles embedded in the binary (passes/devices.json).
const std::vector<DeviceProfile> &builtinDeviceProfiles();
/// Parses a profiles file (the format of passes/devices.json); Invalid,
/// naming the profile and the field, on a malformed file.
einrt::Expected<std::vector<DeviceProfile>> parseDeviceProfiles(const std::string &json);
/// Serialises profiles back to that format (einc calibrate writes one).
std::string printDeviceProfiles(const std::vector<DeviceProfile> &profiles);

/// The `matmulFlops` key a contraction of `dtype` operands runs at on
/// `device`: "tf32" for f32 operands when the `tf32` setting is on and the
/// device has TF32 units (a tf32 entry; the CPU has none), else dtype.
inline std::string contractionDtype(const DeviceProfile &device, const std::string &dtype,
                                    bool tf32) {
  return tf32 && dtype == "f32" && device.matmulFlops.count("tf32") ? "tf32" : dtype;
}

/// Roofline of one op on `device` for element type `dtype` ("f32", "bf16").
struct Roofline {
  double intensity = 0; // flops / byte
  double seconds = 0;   // max(flops / peak, bytes / bandwidth)
  bool computeBound = false;
};
Roofline roofline(const DeviceProfile &device, const std::string &dtype, bool onMatrixUnits,
                  double flops, double bytes);

} // namespace mlir::ein

#endif // EINC_PASSES_DEVICEPROFILE_H
