//===- CudaTarget.cpp - `einc compile --target cuda`: kernels for the GPU --===//
#include "CudaTarget.h"
#include "runtime/base/StatusOut.h"

#include "codegen/CudaRenderer.h"
#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/Nvrtc.h"

#include <chrono>
#include <future>
#include <vector>

namespace einc {

bool addCudaKernels(const ::ein::codegen::KernelCompiler &kernels, einrt::ModelBundle &bundle,
                    CudaTargetSummary &summary, std::string &error) {
  auto start = std::chrono::steady_clock::now();
  std::vector<const einrt::Program *> programs;
  for (const einrt::BundledProgram &bp : bundle.programs)
    programs.push_back(&bp.program);
  einrt::CudaKernelBundle cuda = ::ein::codegen::renderCudaBundle(kernels, programs);

  const einrt::Nvrtc *nvrtc = statusOut(einrt::Nvrtc::load(), error);
  if (!nvrtc) {
    error = "--target cuda needs NVRTC: " + error;
    return false;
  }
  // One NVRTC program per architecture, compiled side by side (NVRTC is
  // thread-safe across programs).
  std::vector<std::future<bool>> jobs;
  std::vector<einrt::NvrtcOutput> outputs(std::size(kCudaImageArchs));
  std::vector<std::string> errors(std::size(kCudaImageArchs));
  for (size_t i = 0; i < std::size(kCudaImageArchs); ++i)
    jobs.push_back(std::async(std::launch::async, [&, i] {
      einrt::NvrtcOptions options;
      options.arch = kCudaImageArchs[i];
      options.name = (bundle.modelName.empty() ? std::string("model") : bundle.modelName) + ".cu";
      return statusOut(nvrtc->compile(cuda.source, options), outputs[i], errors[i]);
    }));
  for (size_t i = 0; i < jobs.size(); ++i)
    if (!jobs[i].get() && error.empty())
      error = std::string("NVRTC for ") + kCudaImageArchs[i] + ": " + errors[i];
  if (!error.empty())
    return false;
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
  if (!section.ok()) {
    error = "cannot encode the CUDA kernels: " + section.status().message();
    return false;
  }
  bundle.kernelSections["cuda"] = section.take();
  return true;
}

} // namespace einc
