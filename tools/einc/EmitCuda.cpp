//===- EmitCuda.cpp - `einc emit --stage=cuda`: the step's CUDA kernels ---===//
#include "EmitCuda.h"
#include "CompileOptions.h"

#include "codegen/CudaRenderer.h"

namespace einc {

bool renderCudaStage(mlir::ModuleOp module, const Options &o, const einrt::TrainSettings &settings,
                     std::string &source) {
  CompileRequest request;
  request.backend = "cpu"; // the kernel table the cuda device runs is the CPU backend's
  request.functions = {"train_step"};
  request.jit = false;
  CompiledModel compiled;
  if (!compileModel(module, o, settings, /*source=*/"", request, compiled))
    return false;
  const einrt::Program *step = compiled.program("train_step");
  einrt::CudaKernelBundle bundle = ::ein::codegen::renderCudaBundle(*compiled.kernels, {step});
  source = std::move(bundle.source);
  return true;
}

} // namespace einc
