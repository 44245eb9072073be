//===- CudaProgramCheck.cpp - What the cuda device runs, without CUDA -----===//
//
// The parts of the cuda device that need no GPU and no CUDA headers: which
// Programs it runs (cudaProgramProblem, its check()), how it stores dtypes,
// and, in an einc built without the CUDA headers, the factory that says so.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaDevice.h"

namespace einrt {

StorageType cudaStorageOf(DType t) {
  switch (t) {
  case DType::BF16:
    return StorageType::BF16;
  case DType::F16:
    return StorageType::F16;
  case DType::I32:
    return StorageType::I32;
  case DType::I1:
    return StorageType::U8;
  default: // f32 (and f64, which the CPU backend's Programs never carry) as f32
    return StorageType::F32;
  }
}

namespace {
/// "" when the bundle has kernel `index` taking `buffers` buffers.
std::string kernelProblem(const std::string &step, const CudaKernelBundle *bundle, int64_t index,
                          size_t buffers) {
  if (!bundle || bundle->kernels.empty())
    return step + " launches kernel " + std::to_string(index) +
           ", but the cuda device was given no kernels";
  if (index < 0 || size_t(index) >= bundle->kernels.size())
    return step + " launches kernel " + std::to_string(index) +
           ", which is not in the cuda device's bundle of " +
           std::to_string(bundle->kernels.size()) + " kernels";
  const CudaKernelInfo &kernel = bundle->kernels[size_t(index)];
  if (size_t(kernel.params) != buffers)
    return step + " passes " + std::to_string(buffers) + " buffers to kernel " +
           std::to_string(index) + " ('" + kernel.entry + "'), which takes " +
           std::to_string(kernel.params);
  return "";
}
/// cudaProgramProblem's message ("" for none).
std::string programProblem(const Program &program, const CudaKernelBundle *bundle,
                           const CublasLtOptions &gemm) {
  for (size_t i = 0; i < program.steps.size(); ++i) {
    const Step &s = program.steps[i];
    const StepKindInfo *info = stepKindInfo(s.kind);
    std::string step = "step " + std::to_string(i) + " (" + (info ? info->name : "?") +
                       (s.note.empty() ? "" : ", " + s.note) + ")";
    if (!info)
      return step + " has an unknown kind";
    switch (info->runner) {
    case StepRunner::Reference:
      if (s.kind != StepKind::Copy)
        return step + " is not on the cuda device yet: it runs cuBLASLt matmuls, rendered " +
               "kernels and copies, and '" + info->name +
               "' is a reference-kernel step (run it on the cpu or reference backend)";
      break;
    case StepRunner::Gemm: {
      const auto *g = std::get_if<GemmDesc>(&s.payload);
      if (!g)
        return step + " carries no GEMM description";
      if (Expected<CublasLtPlan> plan = mapGemmToCublasLt(*g, gemm); !plan.ok())
        return step + ": " + plan.status().message();
      // An epilogue's rendered kernel: what runs where cuBLASLt does not
      // fuse it (checked whether or not it does).
      if (g->post.present())
        if (std::string e = kernelProblem(step + "'s epilogue", bundle, g->post.kernel,
                                          g->post.operands.size() + g->post.outputs.size());
            !e.empty())
          return e;
      break;
    }
    case StepRunner::Launch: {
      const auto *launch = std::get_if<KernelLaunch>(&s.payload);
      if (!launch)
        return step + " carries no kernel launch";
      const KernelLaunch &k = *launch;
      if (std::string e =
              kernelProblem(step, bundle, k.kernel, s.inputs.size() + 1 + k.extraOutputs.size());
          !e.empty())
        return e;
      break;
    }
    }
  }
  return "";
}

/// cudaAlignmentProblem's message ("" for none).
std::string alignmentProblem(const Program &program, const CudaKernelBundle &bundle,
                             const std::vector<const void *> &addresses,
                             const std::vector<bool> &epilogueLaunched) {
  for (size_t i = 0; i < program.steps.size(); ++i) {
    const Step &s = program.steps[i];
    int64_t kernel = -1;
    std::vector<int32_t> buffers;
    if (const auto *launch = std::get_if<KernelLaunch>(&s.payload)) {
      kernel = launch->kernel;
      buffers = s.inputs;
      for (int32_t b : s.outputs())
        buffers.push_back(b);
    } else if (const auto *g = std::get_if<GemmDesc>(&s.payload);
               g && g->post.present() && i < epilogueLaunched.size() && epilogueLaunched[i]) {
      kernel = g->post.kernel;
      buffers = g->post.operands;
      buffers.insert(buffers.end(), g->post.outputs.begin(), g->post.outputs.end());
    }
    if (kernel < 0 || size_t(kernel) >= bundle.kernels.size())
      continue;
    const CudaKernelInfo &info = bundle.kernels[size_t(kernel)];
    std::vector<const void *> params;
    for (int32_t b : buffers)
      params.push_back(b >= 0 && size_t(b) < addresses.size() ? addresses[size_t(b)] : nullptr);
    if (cudaMisalignedParameter(info, params).empty())
      continue;
    for (int32_t p : info.aligned) {
      if (p < 0 || size_t(p) >= buffers.size())
        continue;
      int64_t past = int64_t(reinterpret_cast<uintptr_t>(params[size_t(p)]) % kCudaVectorBytes);
      if (past == 0)
        continue;
      const Buffer &buffer = program.buffers[size_t(buffers[size_t(p)])];
      std::string where = buffer.viewOf < 0
                              ? ""
                              : " (a view " + std::to_string(buffer.viewOffset) +
                                    " elements into buffer " + std::to_string(buffer.viewOf) + ")";
      return "step " + std::to_string(i) + " (" + stepKindName(s.kind) +
             (s.note.empty() ? "" : ", " + s.note) + "): kernel '" + info.entry +
             "' moves buffer " + std::to_string(buffers[size_t(p)]) + " ('" + buffer.name +
             "') in " + std::to_string(kCudaVectorBytes) + "-byte vectors, but it starts " +
             std::to_string(past) + " bytes past a " + std::to_string(kCudaVectorBytes) +
             "-byte boundary" + where +
             "; the cuda device does not run this program (the cpu backend does)";
    }
  }
  return "";
}

} // namespace

Status cudaProgramProblem(const Program &program, const CudaKernelBundle *bundle,
                          const CublasLtOptions &gemm) {
  std::string why = programProblem(program, bundle, gemm);
  return why.empty() ? Status::success() : Status::invalid(why);
}

Status cudaAlignmentProblem(const Program &program, const CudaKernelBundle &bundle,
                            const std::vector<const void *> &addresses,
                            const std::vector<bool> &epilogueLaunched) {
  std::string why = alignmentProblem(program, bundle, addresses, epilogueLaunched);
  return why.empty() ? Status::success() : Status::invalid(why);
}

#ifndef EINC_HAVE_CUDA
Expected<std::shared_ptr<CudaDevice>> createCudaDevice(const CudaDeviceOptions &) {
  return Status(StatusCode::Unavailable,
                "this einc was built without CUDA headers (no CUDA toolkit was found when it was "
                "configured), so it has no cuda device");
}
#endif

} // namespace einrt
