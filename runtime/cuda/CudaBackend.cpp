//===- CudaBackend.cpp - The `cuda` backend's registration ----------------===//
//
// One NVIDIA GPU (runtime/cuda/CudaDevice.h): the Programs lowered for the
// CPU, their kernel table rendered as CUDA C++ (the program file's "cuda"
// section: runtime/cuda/CudaKernels.h) and their GEMMs through cuBLASLt.
//
//===----------------------------------------------------------------------===//
#include "runtime/base/Memory.h"
#include "runtime/base/TerminalText.h"
#include "runtime/core/Backend.h"
#include "runtime/cuda/CudaDevice.h"

#include <cctype>

namespace einrt {
namespace {

std::string lowerWords(const std::string &text) {
  std::string out = " ";
  for (char c : text)
    out += std::isalnum((unsigned char)c) ? char(std::tolower((unsigned char)c)) : ' ';
  return out + " ";
}

class CudaBackend final : public Backend {
public:
  const char *name() const override { return "cuda"; }
  const char *summary() const override {
    return "one NVIDIA GPU: the cpu Programs, their kernels rendered as CUDA C++ (NVRTC), "
           "GEMMs through cuBLASLt";
  }
  const char *programLowering() const override { return "cpu"; }
  bool hostKernels() const override { return false; }
  const char *kernelSection() const override { return "cuda"; }
  bool hostMemory() const override { return false; }
  bool deviceCollectives() const override { return true; }
  /// A profile named after one of the words of the GPU's name ("h200" of
  /// "NVIDIA H200 (sm_90, ...)").
  bool profileDescribes(const std::string &profile, const std::string &description) const override {
    return lowerWords(description).find(lowerWords(profile)) != std::string::npos;
  }
  const char *profileWord() const override { return "this GPU's"; }

  Expected<std::shared_ptr<Device>> open(const BackendOpen &options) const override {
    Expected<std::shared_ptr<CudaDevice>> device = createCudaDevice(cudaDeviceOptions(options));
    if (!device.ok())
      return device.takeStatus();
    return std::shared_ptr<Device>(device.take());
  }
  Status attachKernels(Device &device, const BackendKernels &kernels) const override {
    if (!kernels.section)
      return Status(StatusCode::NotFound,
                    "the compiled model has no CUDA kernels (einc compile --target cuda "
                    "writes them)");
    Expected<CudaKernelBundle> bundle = decodeCudaKernelBundle(*kernels.section);
    if (!bundle.ok())
      return bundle.status().withContext("cuda kernels: ");
    static_cast<CudaDevice &>(device).setKernels(
        std::make_shared<const CudaKernelBundle>(bundle.take()));
    return Status::success();
  }
  std::string describe(const Device &device) const override {
    return static_cast<const CudaDevice &>(device).describe();
  }
  std::string memoryShortfall(Device &device, int64_t bytes,
                              const std::string &what) const override {
    return static_cast<CudaDevice &>(device).memoryShortfall(bytes, what);
  }

  /// The rendered kernels are the cpu programs' table: one for each of its
  /// kernels, taking each launch's buffers.
  std::string checkSection(const std::vector<uint8_t> &section,
                           const std::vector<const Program *> &programs,
                           int64_t hostKernelCount) const override {
    Expected<CudaKernelBundle> decoded = decodeCudaKernelBundle(section);
    if (!decoded.ok())
      return decoded.status().message();
    const CudaKernelBundle &b = *decoded;
    if (std::string problem = checkCudaKernelBundle(b); !problem.empty())
      return problem;
    const int64_t count = int64_t(b.kernels.size());
    if (hostKernelCount >= 0 && hostKernelCount != count)
      return std::to_string(count) + " kernels, but the cpu kernel objects hold " +
             std::to_string(hostKernelCount);
    for (const Program *program : programs) {
      const std::vector<Step> &steps = program->steps;
      for (size_t i = 0; i < steps.size(); ++i)
        if (const auto *launch = std::get_if<KernelLaunch>(&steps[i].payload)) {
          if (launch->kernel >= count)
            return "program " + quoted(program->name) + " step " + std::to_string(i) +
                   " launches kernel " + std::to_string(launch->kernel) + "; cuda holds " +
                   std::to_string(count);
          const CudaKernelInfo &k = b.kernels[size_t(launch->kernel)];
          size_t buffers = steps[i].inputs.size() + 1 + launch->extraOutputs.size();
          if (size_t(k.params) != buffers)
            return "program " + quoted(program->name) + " step " + std::to_string(i) + " passes " +
                   std::to_string(buffers) + " buffers to cuda kernel " +
                   std::to_string(launch->kernel) + " (" + k.entry + "), which takes " +
                   std::to_string(k.params);
        }
    }
    return "";
  }

  std::string describeSection(const std::vector<uint8_t> &section,
                              const std::vector<const Program *> &programs) const override {
    Expected<CudaKernelBundle> decoded = decodeCudaKernelBundle(section);
    if (!decoded.ok())
      return "  cuda        " + decoded.status().message() + "\n";
    const CudaKernelBundle &b = *decoded;
    std::string images;
    for (const CudaImage &image : b.images)
      images +=
          (images.empty() ? "" : ", ") + image.arch + " " + formatMiB(int64_t(image.bytes.size()));
    std::string out = "  cuda        " + std::to_string(b.kernels.size()) + " kernels, " +
                      formatMiB(int64_t(b.source.size())) + " of CUDA C++; " +
                      (images.empty() ? "no images" : images) +
                      (b.compilerVersion.empty() ? "" : " (NVRTC " + b.compilerVersion + ")") +
                      "\n";
    // What the cuda device would refuse, checked without a GPU.
    std::string refused;
    for (const Program *program : programs)
      if (Status why = cudaProgramProblem(*program, &b, {}); !why.ok())
        refused += "\n              @" + program->name + ": " + why.message();
    return out + "  cuda runs   " +
           (refused.empty() ? "every program (the device's checks, without a GPU)"
                            : "not every program:" + refused) +
           "\n";
  }
};

} // namespace

CudaDeviceOptions cudaDeviceOptions(const BackendOpen &open) {
  CudaDeviceOptions cuda;
  cuda.tf32 = open.settings.tf32 == "on";
  cuda.ordinal = open.ordinal;
  cuda.wrapOrdinal = open.wrapOrdinal;
  return cuda;
}

const Backend &cudaBackend() {
  static const CudaBackend backend;
  return backend;
}

} // namespace einrt
