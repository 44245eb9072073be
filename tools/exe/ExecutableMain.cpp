//===- ExecutableMain.cpp - The main of an executable of einc compile -----===//
//
//   NAME train --data ... --steps N --checkpoint-dir CK [options]
//   NAME sample --checkpoint FILE [options]
//   NAME report [--format text|json] [-o FILE]
//   NAME info
//   NAME check [--backend cuda|cpu] [--json FILE]
//
// Finds its program file linked into itself (EmbeddedModel.h), parses it
// (a damaged one is an error naming it), picks the kernel table of the
// target this CPU runs among the linked ones, and hands everything to the
// runner (tools/runner/Runner.h) — the code `einc train` and `einc sample`
// run after compiling. No MLIR, no LLVM.
//
//===----------------------------------------------------------------------===//
#include "EmbeddedModel.h"

#include "runtime/base/TerminalText.h"
#include "tools/einc/Options.h"
#include "tools/einc/RunnerOptions.h"
#include "tools/runner/Distributed.h"
#include "tools/runner/Runner.h"

#include "runtime/core/KernelTable.h"
#include "runtime/cpu/CpuTarget.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/io/ModelBundle.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

using namespace einc;

namespace {

/// OpenBLAS's constructor starts a thread per core, each spinning for a
/// while before it sleeps: at start-up they compete with the main thread
/// for nothing, since einc calls BLAS on one thread (the CPU device splits
/// matmuls itself, runtime/cpu/CpuDevice.h). So while the constructors run
/// OPENBLAS_NUM_THREADS is 1 (this one runs first: priority 101); main
/// unsets it again (einrt::defaultThreadCount reads it).
bool blasThreadsSet = false;
__attribute__((constructor(101))) void startBlasWithOneThread() {
  if (!std::getenv("OPENBLAS_NUM_THREADS"))
    blasThreadsSet = ::setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0;
}

/// The kernels of the target this CPU runs: EINC_JIT_CPU's when set (as for
/// einc's JIT, so that the determinism matrix's cells cover executables),
/// else the best linked target the CPU runs. Its table must have the
/// kernel count the program file states.
struct Chosen {
  runner::LinkedKernels linked;
  const einc_linked_target *target = nullptr;
};

Chosen chooseTarget() {
  Chosen c;
  for (uint64_t i = 0; i < einc_linked_target_count; ++i)
    c.linked.targets.push_back(einc_linked_targets[i].name);
  const char *env = std::getenv("EINC_JIT_CPU");
  std::string forced = env ? env : "";
  for (uint64_t i = 0; i < einc_linked_target_count && !c.target; ++i) {
    const einc_linked_target &t = einc_linked_targets[i];
    if (forced.empty() ? einrt::cpuRuns(t.name) : forced == t.name)
      c.target = &t;
  }
  if (forced.empty()) {
    c.linked.why = c.target ? "the best linked target it runs" : "it runs none of them";
  } else if (!c.target) {
    c.linked.why = "EINC_JIT_CPU=" + forced + " names no linked target";
  } else if (!einrt::cpuRuns(c.target->name)) {
    c.linked.why = "EINC_JIT_CPU=" + forced + ", which this CPU does not run";
    c.target = nullptr;
  } else {
    c.linked.why = "EINC_JIT_CPU=" + forced;
  }
  if (c.target)
    c.linked.chosen = c.target->name;
  return c;
}

int64_t fileSize(const char *path) {
  struct stat st;
  return ::stat(path, &st) == 0 ? int64_t(st.st_size) : 0;
}

/// As einc's: the last resort when an allocation fails that the planned-
/// memory checks did not foresee; a message and exit status 1, not an abort.
[[noreturn]] void outOfMemory() {
  static const char message[] = "out of memory: an allocation failed; raise the limit "
                                "(ulimit -v, the cgroup's memory.max)\n";
  ssize_t ignored = ::write(2, message, sizeof message - 1);
  (void)ignored;
  std::_Exit(1);
}

} // namespace

int main(int argc, char **argv) {
  if (blasThreadsSet)
    ::unsetenv("OPENBLAS_NUM_THREADS");
  std::set_new_handler(outOfMemory);
  std::string name = argc > 0 ? argv[0] : "model";
  if (size_t slash = name.rfind('/'); slash != std::string::npos)
    name = name.substr(slash + 1);
  name = einrt::terminalSafe(name); // every message starts with it

  CommandLine line =
      parseExecutableCommandLine(name, std::vector<std::string>(argv + 1, argv + argc));
  if (line.action == CommandLine::Action::Error) {
    std::cerr << line.text << "\n";
    return 2;
  }
  if (line.action == CommandLine::Action::Help) {
    std::cout << line.text;
    return 0;
  }

  einrt::Expected<einrt::ModelBundle> bundle = einrt::parseModelBundle(
      einc_program_file, size_t(einc_program_file_size), name + "'s embedded program");
  if (!bundle.ok()) {
    std::cerr << name << ": " << bundle.status().message() << "\n";
    return 1;
  }
  if (line.action == CommandLine::Action::Version) {
    std::cout << name << ": the model " << einrt::terminalSafe(bundle->modelName) << " compiled by "
              << bundle->writtenBy << "\n";
    return 0;
  }

  const Options &o = line.options;
  const runner::RunOptions run = runOptions(o); // what the runner reads
  runner::RunContext context;
  context.tool = name;
  context.model = bundle->sourceName;
  context.noPrediction = "its report has no prediction";
  Chosen chosen = chooseTarget();
  if (o.command == "report")
    return runner::report(context, run, *bundle);
  if (o.command == "info")
    return runner::info(context, *bundle, chosen.linked, int64_t(einc_program_file_size),
                        fileSize("/proc/self/exe"));

  auto fail = [&](const std::string &message) { return context.fail(o.command, message); };
  // The settings with --set applied (the device reads tf32 when it opens).
  einrt::Expected<einrt::TrainSettings> runSettings = runner::runSettings(*bundle, run);
  if (!runSettings.ok())
    return fail(runSettings.status().message());
  const einrt::TrainSettings settings = runSettings.take();
  // The backend: --backend, else the one whose kernel section the model
  // carries (cuda, when compiled for it), else the default.
  runner::Backend backend;
  backend.threads = o.threads;
  if (o.backendGiven)
    backend.kind = einrt::findBackend(o.backend);
  else
    for (const auto &[section, bytes] : bundle->kernelSections)
      if (const einrt::Backend *b = einrt::backendOfSection(section))
        backend.kind = b;
  if (!backend.kind)
    return fail(einrt::unknownBackend(o.backend));
  const std::string backendName = backend.name();
  std::string origin;
  if (const std::string section = backend.kind->kernelSection(); !section.empty()) {
    if (!bundle->kernelSection(section))
      return fail("--backend " + backendName + ": " + name + " has no " + section +
                  " kernels (compile it with einc compile --target " + backendName + ")");
    // --distributed: the rank's device (the launcher's local rank).
    backend.open =
        runner::deviceOptions(o.command == "train" ? run : runner::RunOptions{}, settings);
    auto device = runner::openDevice(*backend.kind, backend.open);
    if (!device.ok())
      return fail(device.status().message() +
                  (o.backendGiven
                       ? ""
                       : " (the default for a model compiled for " + backendName + "; --backend " +
                             einrt::defaultBackend().name() + " runs it on the CPU)"));
    backend.device = device.take();
    origin = section + " kernels linked in";
  }
  // `check` compares with the CPU kernels whatever the device under test.
  bool cpuKernels = backend.kind->hostKernels() || o.command == "check";
  if (cpuKernels && !chosen.target) {
    std::string list;
    for (const std::string &t : chosen.linked.targets)
      list += (list.empty() ? "" : ", ") + t;
    return fail("no kernels for this CPU: " + chosen.linked.why + " (linked: " + list + ")");
  }
  if (cpuKernels) {
    const einrt::KernelObject *object = nullptr;
    for (const einrt::KernelObject &k : bundle->kernelObjects)
      if (k.name == std::string("cpu/") + chosen.target->name)
        object = &k;
    if (!object || object->kernelCount != *chosen.target->kernelCount)
      return fail(std::string("the linked kernels of ") + chosen.target->name +
                  " do not match the embedded program (" +
                  std::to_string(*chosen.target->kernelCount) + " kernels, the program file says " +
                  (object ? std::to_string(object->kernelCount) : "none") + ")");
    backend.kernels = einrt::kernelTable(chosen.target->kernels, *chosen.target->kernelCount);
    origin = chosen.linked.chosen + " kernels linked in";
  }

  if (o.command == "check") {
    // The reference: the CPU device with the linked kernels, at one thread
    // when the device under test is the CPU at another count, else at every
    // thread (the CPU's results do not depend on the count).
    runner::Backend reference;
    reference.kernels = backend.kernels;
    runner::Backend tested = backend;
    if (backend.kind == reference.kind) {
      reference.threads = 1;
      tested.threads = o.threads > 0 ? o.threads : std::max(2, einrt::defaultThreadCount());
    } else {
      reference.threads = o.threads;
    }
    return runner::check(context, run, *bundle, reference, tested);
  }

  if (o.command == "sample")
    return runner::sample(context, run, *bundle, settings,
                          bundle->find("sample") ? "sample" : "forward", backend,
                          bundle->find("sample_decode") && !run.noKvCache ? "sample_decode" : "");
  // --distributed: the compiled accumulate is the global micro-batch count.
  runner::Ranks ranks(run, context.tool);
  if (!ranks.ok())
    return 1;
  context.comm = ranks.comm();
  auto train = runner::TrainRun::prepare(context, run, settings, int32_t(bundle->vocab()));
  if (!train)
    return ranks.finish(1);
  return ranks.finish(train->run(*bundle, backend, origin));
}
