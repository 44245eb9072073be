//===- EmitCuda.h - `einc emit --stage=cuda`: the step's CUDA kernels -*- C++ -*-===//
//
// The training step compiled as `einc compile` and the CPU backend compile
// it (compileModel: the precision policy, fusion unless `fusion = off`,
// remat), its kernel table rendered as one CUDA translation unit
// (codegen/CudaRenderer.h), the kernels' notes from @train_step's steps.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_EINC_EMITCUDA_H
#define EINC_TOOLS_EINC_EMITCUDA_H

#include "Options.h"

#include "runtime/base/TrainSettings.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace einc {

/// The CUDA source of @train_step's kernels; false after printing why.
bool renderCudaStage(mlir::ModuleOp module, const Options &o, const einrt::TrainSettings &settings,
                     std::string &source);

} // namespace einc

#endif // EINC_TOOLS_EINC_EMITCUDA_H
