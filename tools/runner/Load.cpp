//===- Load.cpp - A bundle's functions on one device ----------------------===//
#include "Runner.h"

#include "runtime/base/Memory.h"

#include <cstdio>
#include <iostream>

namespace einc::runner {

std::string fixed(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

int RunContext::fail(const std::string &command, const std::string &message) const {
  std::cout.flush();
  std::cerr << tool << " " << command << ": ";
  if (comm && comm->size() > 1)
    std::cerr << "rank " << comm->rank() << ": ";
  std::cerr << message << "\n";
  return 1;
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

einrt::Expected<std::shared_ptr<einrt::Device>> openDevice(const einrt::Backend &backend,
                                                           const einrt::BackendOpen &open) {
  auto device = backend.open(open);
  if (!device.ok())
    return device.takeStatus().withContext("--backend " + std::string(backend.name()) + ": ");
  return device;
}

einrt::Status load(const einrt::ModelBundle &bundle, const std::vector<std::string> &functions,
                   const Backend &backend, Loaded &out) {
  const einrt::Backend &kind = *backend.kind;
  std::vector<const einrt::Program *> programs;
  for (const std::string &name : functions) {
    const einrt::BundledProgram *p = bundle.find(name);
    if (!p)
      return einrt::Status(einrt::StatusCode::NotFound, "the compiled model has no @" + name);
    if (p->backend != kind.programLowering())
      return einrt::Status::invalid("@" + name + " was compiled for the " + p->backend +
                                    " backend, not " + kind.name());
    programs.push_back(&p->program);
  }
  out.device = backend.device;
  if (!out.device) {
    einrt::BackendOpen open = backend.open;
    open.threads = backend.threads;
    auto device = openDevice(kind, open);
    if (!device.ok())
      return device.takeStatus();
    out.device = device.take();
  }
  einrt::BackendKernels kernels;
  kernels.host = backend.kernels;
  kernels.section =
      backend.section ? backend.section.get() : bundle.kernelSection(kind.kernelSection());
  EINRT_TRY(kind.attachKernels(*out.device, kernels));
  out.threads = kind.threads(*out.device);
  out.description = kind.describe(*out.device);
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
  if (std::string shortfall = kind.memoryShortfall(*out.device, planned, what); !shortfall.empty())
    return einrt::Status(einrt::StatusCode::OutOfMemory, shortfall);
  for (size_t i = 0; i < programs.size(); ++i) {
    einrt::Expected<einrt::Executor> ex = einrt::Executor::create(*programs[i], out.device);
    if (!ex.ok())
      return ex.takeStatus().withContext("cannot run @" + functions[i] + ": ");
    out.executors.push_back(ex.take());
  }
  return einrt::Status::success();
}

} // namespace einc::runner
