//===- CudaTarget.cpp - `einc compile --target cuda`: kernels for the GPU --===//
#include "CudaTarget.h"

#include "codegen/CudaRenderer.h"
#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/Nvrtc.h"

#include <chrono>
#include <future>
#include <vector>

namespace einc {

einrt::Status addCudaKernels(const ::ein::codegen::KernelCompiler &kernels,
                             einrt::ModelBundle &bundle, CudaTargetSummary &summary) {
  auto start = std::chrono::steady_clock::now();
  std::vector<const einrt::Program *> programs;
  for (const einrt::BundledProgram &bp : bundle.programs)
    programs.push_back(&bp.program);
  einrt::CudaKernelBundle cuda = ::ein::codegen::renderCudaBundle(kernels, programs);

  einrt::Expected<const einrt::Nvrtc *> loaded = einrt::Nvrtc::load();
  if (!loaded.ok())
    return loaded.takeStatus().withContext("--target cuda needs NVRTC: ");
  const einrt::Nvrtc *nvrtc = *loaded;
  // One NVRTC program per architecture, compiled side by side (NVRTC is
  // thread-safe across programs).
  std::vector<std::future<einrt::Expected<einrt::NvrtcOutput>>> jobs;
  for (size_t i = 0; i < std::size(kCudaImageArchs); ++i)
    jobs.push_back(std::async(std::launch::async, [&, i] {
      einrt::NvrtcOptions options;
      options.arch = kCudaImageArchs[i];
      options.name = (bundle.modelName.empty() ? std::string("model") : bundle.modelName) + ".cu";
      return nvrtc->compile(cuda.source, options);
    }));
  std::vector<einrt::NvrtcOutput> outputs;
  einrt::Status failure;
  for (size_t i = 0; i < jobs.size(); ++i) {
    einrt::Expected<einrt::NvrtcOutput> compiled = jobs[i].get(); // every job ends first
    if (!compiled.ok() && failure.ok())
      failure =
          compiled.takeStatus().withContext(std::string("NVRTC for ") + kCudaImageArchs[i] + ": ");
    else if (compiled.ok())
      outputs.push_back(compiled.take());
  }
  if (!failure.ok())
    return failure;
  for (einrt::NvrtcOutput &out : outputs) {
    for (const einrt::PtxasReport &f : out.functions)
      summary.spillingKernels += f.entry && f.spills();
    summary.imageBytes += int64_t(out.image.bytes.size());
    summary.fromCache += out.fromCache;
    cuda.images.push_back(std::move(out.image));
  }
  cuda.compilerVersion = nvrtc->version();
  summary.kernels = int64_t(cuda.kernels.size());
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // A program the cuda device would refuse (a step it does not run yet):
  // said now, not on the GPU machine; the executable still runs it on the
  // CPU.
  for (const einrt::BundledProgram &bp : bundle.programs)
    if (einrt::Status why = einrt::cudaProgramProblem(bp.program, &cuda, {}); !why.ok())
      summary.warnings.push_back("@" + bp.program.name + ": " + why.message());
  einrt::Expected<std::vector<uint8_t>> section = einrt::encodeCudaKernelBundle(cuda);
  if (!section.ok())
    return section.takeStatus().withContext("cannot encode the CUDA kernels: ");
  bundle.kernelSections["cuda"] = section.take();
  return einrt::Status();
}

} // namespace einc
