//===- Lowerings.cpp - The lowerings and kernel-section renderers ---------===//
#include "codegen/Lowerings.h"

#include "codegen/CpuLowering.h"
#include "codegen/CudaRenderer.h"
#include "codegen/ReferenceLowering.h"
#include "runtime/cuda/CudaKernels.h"

#include "llvm/Support/raw_ostream.h"

namespace ein::codegen {
namespace {

mlir::FailureOr<einrt::Program> lowerCpu(mlir::func::FuncOp fn, KernelCompiler *kernels) {
  return lowerToCpuProgram(fn, *kernels);
}

mlir::FailureOr<einrt::Program> lowerReference(mlir::func::FuncOp fn, KernelCompiler *) {
  return lowerToProgram(fn);
}

mlir::FailureOr<std::vector<uint8_t>>
renderCuda(const KernelCompiler &kernels, const std::vector<const einrt::Program *> &programs) {
  einrt::Expected<std::vector<uint8_t>> section =
      einrt::encodeCudaKernelBundle(renderCudaBundle(kernels, programs));
  if (!section.ok()) {
    llvm::errs() << "einc: cannot encode the CUDA kernels: " << section.status().message() << "\n";
    return mlir::failure();
  }
  return section.take();
}

} // namespace

const std::vector<ProgramLowering> &programLowerings() {
  static const std::vector<ProgramLowering> table = {
      {"cpu", /*fused=*/true, /*kernels=*/true, lowerCpu},
      {"reference", /*fused=*/false, /*kernels=*/false, lowerReference},
  };
  return table;
}

const std::vector<KernelSectionRenderer> &kernelSections() {
  static const std::vector<KernelSectionRenderer> table = {
      {"cuda", renderCuda},
  };
  return table;
}

const ProgramLowering *findProgramLowering(std::string_view name) {
  for (const ProgramLowering &l : programLowerings())
    if (name == l.name)
      return &l;
  return nullptr;
}

const KernelSectionRenderer *findKernelSection(std::string_view name) {
  for (const KernelSectionRenderer &r : kernelSections())
    if (name == r.name)
      return &r;
  return nullptr;
}

mlir::FailureOr<std::vector<uint8_t>>
renderKernelSection(std::string_view name, const KernelCompiler *kernels,
                    const std::vector<const einrt::Program *> &programs) {
  const KernelSectionRenderer *renderer = findKernelSection(name);
  if (!renderer || !kernels) {
    llvm::errs() << "einc: this einc cannot render the " << name << " kernel section\n";
    return mlir::failure();
  }
  return renderer->render(*kernels, programs);
}

} // namespace ein::codegen
