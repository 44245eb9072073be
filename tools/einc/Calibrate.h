//===- Calibrate.h - `einc calibrate`: measure this machine ------*- C++ -*-===//
//
// Measures the CPU's matmul (OpenBLAS sgemm) and vector (FMA loop) FLOP/s
// and its memory bandwidth (STREAM copy / triad), and writes them as the
// device profile "cpu" into a profiles file (docs/devices.md).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_EINC_CALIBRATE_H
#define EINC_TOOLS_EINC_CALIBRATE_H

#include "Options.h"

#include "tools/driver/DeviceProfiles.h" // defaultDeviceFilePath

#include "runtime/base/TrainSettings.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace einc {

/// Runs `einc calibrate`; returns the process exit status.
int calibrate(const Options &o);

/// `einc calibrate --gemm FILE.ein`: times every GEMM shape of the model's
/// training functions on each GEMM library (runtime/cpu/GemmTable.h), prints
/// the table and merges the choices into this machine's GEMM table. The
/// exit status.
int calibrateGemm(mlir::ModuleOp module, const Options &o, const einrt::TrainSettings &settings);

} // namespace einc

#endif // EINC_TOOLS_EINC_CALIBRATE_H
