//===- Backend.h - The registry of what runs a Program -----------*- C++ -*-===//
//
// Above Device.h: a backend is a kind of device together with everything
// the tools need to know of it, so that no tool compares backend names. Each
// backend registers one Backend object, defined in its own folder
// (runtime/core/ReferenceBackend.cpp, runtime/cpu/CpuBackend.cpp,
// runtime/cuda/CudaBackend.cpp), and the list of them is one line each in
// runtime/core/Backends.def. Adding a backend is a folder (its Device and
// its registration) plus that line; the compiler side adds a row for its
// kernel section's renderer when it has one (codegen/KernelSections.h).
//
// What a backend says of itself:
//   - the Programs it runs: which lowering they come from ("cpu": fused
//     kernels and GEMM steps; "reference": the interpreter's steps);
//   - its kernels: the host kernel table (object code, JIT-compiled or
//     linked in) and/or a kernel section the program file carries for it
//     (the cuda backend's rendered CUDA C++ and images), which it checks
//     against the Programs and describes for `info`;
//   - its device: how it is opened, how its kernels are attached, how much
//     memory it has free (a plan that does not fit is an error before
//     anything is allocated), and whether that memory is this machine's;
//   - what it supports: f64 Programs, gradient sums in device memory
//     (NCCL), results bit-identical to the host kernels at any thread count.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_BACKEND_H
#define EINC_RUNTIME_BACKEND_H

#include "runtime/base/Status.h"
#include "runtime/base/TrainSettings.h"
#include "runtime/core/Program.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace einrt {

class Device;

/// How a backend's device is opened.
struct BackendOpen {
  /// Host kernels: worker threads (0: defaultThreadCount()).
  int64_t threads = 0;
  /// The settings it runs (a GPU reads `tf32`).
  TrainSettings settings;
  /// Which of several devices (a rank's GPU: the launcher's local rank),
  /// modulo the devices there are when `wrapOrdinal`.
  int ordinal = 0;
  bool wrapOrdinal = false;
  /// f64 storage for floats (backends with runsF64()).
  bool f64 = false;
};

/// The kernels a device runs the Programs' Kernel steps with.
struct BackendKernels {
  /// The host kernel table (backends with hostKernels()).
  std::vector<KernelEntry> host;
  /// The program file's section of this backend (kernelSection()), or null.
  const std::vector<uint8_t> *section = nullptr;
};

class Backend {
public:
  virtual ~Backend();

  /// "cpu", "reference", "cuda": --backend's value and the banner's word.
  virtual const char *name() const = 0;
  /// One line for --help and `einc info`.
  virtual const char *summary() const = 0;
  /// The lowering its Programs come from: a BundledProgram's `backend`.
  virtual const char *programLowering() const = 0;
  /// Whether Kernel steps call the host kernel table (compiled for this
  /// CPU: by the JIT in einc, linked into an executable).
  virtual bool hostKernels() const = 0;
  /// The program file's kernel section it needs ("": none).
  virtual const char *kernelSection() const { return ""; }
  /// Whether its memory is this machine's (a `budget:N%` takes N% of it).
  virtual bool hostMemory() const = 0;
  /// Whether it runs f64 Programs (einc run --f64).
  virtual bool runsF64() const { return false; }
  /// Whether a data-parallel gradient sum can stay in its memory (NCCL).
  virtual bool deviceCollectives() const { return false; }
  /// Whether its results equal the host kernels' bit for bit at any thread
  /// count (einc check compares exactly, else within bounds).
  virtual bool exactAsHostKernels() const { return false; }
  /// Whether the report's device profile `profile` describes the device
  /// `description` (describe()) this backend opened: the prediction on a
  /// training banner is of what runs.
  virtual bool profileDescribes(const std::string &profile,
                                const std::string &description) const = 0;
  /// What a profile of this backend's device is called in messages ("cpu",
  /// "this GPU's").
  virtual const char *profileWord() const = 0;

  /// A device, without kernels yet.
  virtual Expected<std::shared_ptr<Device>> open(const BackendOpen &options) const = 0;
  /// Gives `device` (opened by this backend) its kernels.
  virtual Status attachKernels(Device &device, const BackendKernels &kernels) const = 0;
  /// One line for banners ("" for none): the GPU's name and clocks.
  virtual std::string describe(const Device &) const { return ""; }
  /// Threads its kernels and GEMMs run on.
  virtual int threads(const Device &) const { return 1; }
  /// "" when `bytes` fit the memory `device` has free; else the message,
  /// naming `what`, the bytes needed and free.
  virtual std::string memoryShortfall(Device &device, int64_t bytes,
                                      const std::string &what) const = 0;

  /// "" when `section` (this backend's kernel section) is well-formed and
  /// serves `programs` (those of programLowering()), whose host kernel
  /// objects hold `hostKernelCount` kernels each (-1: none); else the
  /// problem. The program file's reader runs it.
  virtual std::string checkSection(const std::vector<uint8_t> &section,
                                   const std::vector<const Program *> &programs,
                                   int64_t hostKernelCount) const;
  /// `einc info`'s lines on the section (each starting with two spaces).
  virtual std::string describeSection(const std::vector<uint8_t> &section,
                                      const std::vector<const Program *> &programs) const;
};

/// Every backend, in Backends.def's order (the first is the default).
const std::vector<const Backend *> &backends();
/// The first of backends(): --backend's default.
const Backend &defaultBackend();
/// The backend called `name`, or null.
const Backend *findBackend(std::string_view name);
/// The backend whose kernel section is `section`, or null.
const Backend *backendOfSection(std::string_view section);
/// "cpu, reference, cuda": for messages.
std::string backendNames();
/// "unknown backend 'x' (cpu, reference, cuda)".
std::string unknownBackend(std::string_view name);

} // namespace einrt

#endif // EINC_RUNTIME_BACKEND_H
