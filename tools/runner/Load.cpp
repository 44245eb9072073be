//===- Load.cpp - A bundle's functions on one device ----------------------===//
#include "Runner.h"
#include "runtime/base/StatusOut.h"

#include "runtime/base/Memory.h"
#include "runtime/core/HostDevice.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/cuda/CudaDevice.h"

#include <cstdio>

namespace einc::runner {

std::string fixed(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

std::vector<std::string> trainFunctionNames(const einrt::TrainSettings &settings,
                                            bool withForward) {
  std::vector<std::string> names;
  if (settings.accumulate > 1)
    names = {"accumulate_grad", "apply_update"};
  else
    names = {"train_step"};
  if (withForward)
    names.push_back("forward");
  return names;
}

bool load(const einrt::ModelBundle &bundle, const std::vector<std::string> &functions,
          const Backend &backend, Loaded &out, std::string &error) {
  std::vector<const einrt::Program *> programs;
  for (const std::string &name : functions) {
    const einrt::BundledProgram *p = bundle.find(name);
    if (!p) {
      error = "the compiled model has no @" + name;
      return false;
    }
    if (p->backend != backend.programBackend()) {
      error = "@" + name + " was compiled for the " + p->backend + " backend, not " + backend.name;
      return false;
    }
    programs.push_back(&p->program);
  }
  if (backend.name == "cpu") {
    out.threads = backend.threads > 0 ? int(backend.threads) : einrt::defaultThreadCount();
    einrt::setBlasThreads(1); // the device splits matmuls itself
    auto cpu = std::make_shared<einrt::CpuDevice>(backend.kernels);
    // One set of threads for every function.
    if (out.threads > 1)
      cpu->setThreadPool(std::make_shared<einrt::ThreadPool>(out.threads));
    out.device = cpu;
  } else if (backend.name == "cuda") {
    if (!backend.cuda) {
      error = "the compiled model has no CUDA kernels (einc compile --target cuda writes them)";
      return false;
    }
    std::shared_ptr<einrt::CudaDevice> cuda =
        backend.cudaDevice ? backend.cudaDevice : statusOut(einrt::createCudaDevice({}), error);
    if (!cuda) {
      error = "--backend cuda: " + error;
      return false;
    }
    cuda->setKernels(backend.cuda);
    out.threads = 1;
    out.description = cuda->describe();
    out.device = cuda;
  } else {
    out.threads = 1;
    out.device = std::make_shared<einrt::HostDevice>(einrt::Precision::F32);
  }
  // Every function's storage together, before any is allocated: too large
  // a model is an error with the bytes needed and available, not an abort.
  int64_t planned = 0;
  std::string parts;
  for (size_t i = 0; i < programs.size(); ++i) {
    int64_t bytes = einrt::Executor::plannedBytes(*programs[i], *out.device);
    planned += bytes;
    parts += (i ? ", @" : "@") + functions[i] + " " + einrt::formatBytes(bytes);
  }
  std::string what = "the model's storage (" + parts + ")";
  auto *cuda = dynamic_cast<einrt::CudaDevice *>(out.device.get());
  std::string shortfall =
      cuda ? cuda->memoryShortfall(planned, what) : einrt::memoryShortfall(planned, what);
  if (!shortfall.empty()) {
    error = shortfall;
    return false;
  }
  for (size_t i = 0; i < programs.size(); ++i) {
    std::string why;
    auto ex = statusOut(einrt::Executor::create(*programs[i], out.device), why);
    if (!ex) {
      error = "cannot run @" + functions[i] + ": " + why;
      return false;
    }
    out.executors.push_back(std::move(ex));
  }
  return true;
}

} // namespace einc::runner
