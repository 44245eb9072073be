//===- Executable.cpp - `einc compile`: a standalone executable -----------===//
//
//   1. compileModel (tools/driver/Compile.h) as `einc train` compiles,
//      without the JIT: the train functions and @forward (evaluation), the
//      report on --device, and @forward with batch 1 (`sample`, where the
//      model has a `batch` dim other than 1: CompileRequest::sampleProgram)
//      in the same kernel table;
//   2. the kernels as object code for every portable CPU target;
//   3. the program file (runtime/io/ModelBundle.h) holding all of it;
//   4. an assembly file embedding it (Embed.h), linked with the objects and
//      the kit (the runner's main, the runtime, a static OpenBLAS: Link.h)
//      by the system's compiler driver into a temporary beside -o, renamed
//      into place when complete.
//
//===----------------------------------------------------------------------===//
#include "Executable.h"
#include "CompileOptions.h"
#include "CudaTarget.h"
#include "Embed.h"
#include "Link.h"

#include "runtime/base/TerminalText.h"
#include "tools/driver/Errors.h"
#include "tools/exe/EmbeddedModel.h"
#include "tools/runner/Runner.h"

#include "codegen/CpuLowering.h"
#include "codegen/CpuTargets.h"
#include "runtime/base/Memory.h"
#include "runtime/core/Backend.h"
#include "runtime/io/ModelBundle.h"

#include "Version.inc"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <unistd.h>

using namespace mlir;

namespace einc {
namespace {

/// Kernel sections `einc compile --target T` renders and compiles ahead of
/// time, by the section's name (runtime/core/Backend.h's kernelSection()).
struct AheadOfTime {
  const char *section;
  einrt::Status (*compile)(const ::ein::codegen::KernelCompiler &kernels,
                           einrt::ModelBundle &bundle, CudaTargetSummary &summary);
};
const AheadOfTime kAheadOfTime[] = {{"cuda", addCudaKernels}};

int fail(const llvm::Twine &message) { return exitError("compile", message); }

/// A temporary folder, removed with everything in it when this goes.
struct TempDir {
  llvm::SmallString<128> path;
  ~TempDir() {
    if (!path.empty())
      llvm::sys::fs::remove_directories(path);
  }
  std::string file(const std::string &name) const {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    return p.str().str();
  }
};

einrt::Status writeFile(const std::string &path, llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (!ec) {
    out << bytes;
    out.close();
    ec = out.error();
  }
  if (ec)
    return einrt::Status(einrt::StatusCode::Io,
                         "cannot write " + einrt::quoted(path) + ": " + ec.message());
  return einrt::Status::success();
}

} // namespace

int compileExecutable(const Options &o, const Frontend &fe, ModuleOp module) {
  const einrt::TrainSettings &settings = fe.settings;
  auto start = std::chrono::steady_clock::now();
  std::string output = o.output;
  if (output.empty())
    output = llvm::sys::path::stem(o.input).str();
  if (output.empty() || output == "-")
    return fail("say where to write the executable (-o NAME)");
  // Never clobber a file that is not one of ours.
  if (llvm::sys::fs::exists(output)) {
    if (llvm::sys::fs::is_directory(output))
      return fail(einrt::quoted(output) + " is a folder");
    if (!o.force && !isEincExecutable(output))
      return fail(einrt::quoted(output) +
                  " exists and is not an executable of einc compile; remove it, pick "
                  "another -o, or pass --force to replace it");
  }
  // The folder must take the file before anything is compiled (a link
  // failing at the end with the linker's words is what this prevents).
  {
    llvm::StringRef parent = llvm::sys::path::parent_path(output);
    std::string folder = parent.empty() ? "." : parent.str();
    if (!llvm::sys::fs::is_directory(folder))
      return fail("cannot write " + einrt::quoted(output) + ": " +
                  (llvm::sys::fs::exists(folder) ? einrt::quoted(folder) + " is not a folder"
                                                 : "no folder " + einrt::quoted(folder)));
    llvm::SmallString<256> probe;
    int fd = -1;
    if (std::error_code ec =
            llvm::sys::fs::createUniqueFile(folder + "/.einc-compile-probe-%%%%%%", fd, probe))
      return fail("cannot write " + einrt::quoted(output) + ": " + ec.message());
    ::close(fd);
    llvm::sys::fs::remove(probe);
  }
  einrt::Expected<std::string> linker = findLinker();
  if (!linker.ok())
    return fail(linker.status().message());
  einrt::Expected<LinkKit> kit = kitArguments();
  if (!kit.ok())
    return fail(kit.status().message());
  std::string error; // the kernel compilers' (codegen) messages

  // 1. The one compile.
  CompileRequest request;
  request.backend = einrt::defaultBackend().name(); // its Programs run on every target
  request.functions = runner::trainFunctionNames(settings, /*withForward=*/true);
  request.jit = false;
  request.report = true;
  request.reportDevice = o.device;
  request.sampleProgram = true; // @forward at batch 1, what the executable samples with
  CompiledModel compiled;
  if (!compileModel(module, o, settings, fe.file->text().str(), request, compiled, &fe))
    return 1;
  einrt::ModelBundle &bundle = compiled.bundle;
  bundle.writtenBy = std::string("einc ") + EINC_VERSION + " (" + EINC_GIT_COMMIT + ")";
  bundle.reportText = compiled.reportText;
  // --target T with a kernel section: the same kernel table rendered and
  // compiled ahead of time for T's device (cuda: CudaTarget.h).
  std::optional<CudaTargetSummary> cuda;
  if (const std::string section = einrt::findBackend(o.target)->kernelSection(); !section.empty()) {
    auto aot = std::find_if(std::begin(kAheadOfTime), std::end(kAheadOfTime),
                            [&](const AheadOfTime &a) { return section == a.section; });
    if (aot == std::end(kAheadOfTime))
      return fail("--target " + o.target + ": this einc cannot compile its kernels ahead of time");
    cuda.emplace();
    if (einrt::Status s = aot->compile(*compiled.kernels, bundle, *cuda); !s.ok())
      return fail(s.message());
    for (const std::string &warning : cuda->warnings)
      llvm::errs() << "einc compile: warning: --target " << o.target << ": " << warning << "\n";
  }

  // 2. The kernels for every target.
  TempDir temp;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("einc-compile", temp.path))
    return fail("cannot create a temporary folder: " + ec.message());
  std::vector<std::string> targets, objects;
  for (const ::ein::codegen::CpuTarget &t : ::ein::codegen::cpuTargets()) {
    std::string bytes;
    llvm::raw_string_ostream os(bytes);
    if (einrt::Status s = compiled.kernels->emitObject(t.name, exe::kKernelPrefix, os); !s.ok())
      return fail("cannot compile the kernels for " + std::string(t.name) + ": " + s.message());
    os.flush();
    einrt::KernelObject k;
    k.name = std::string("cpu/") + t.name;
    k.kernelCount = compiled.kernels->kernelCount();
    k.metadata["symbol_prefix"] = exe::kKernelPrefix;
    k.bytes.assign(bytes.begin(), bytes.end());
    bundle.kernelObjects.push_back(std::move(k));
    std::string path = temp.file(std::string("kernels-") + t.name + ".o");
    if (einrt::Status written = writeFile(path, bytes); !written.ok())
      return fail(written.message());
    targets.push_back(t.name);
    objects.push_back(path);
  }

  // 3. The program file.
  einrt::Expected<std::vector<uint8_t>> programFile = einrt::serializeModelBundle(bundle);
  if (!programFile.ok())
    return fail("cannot write the program file: " + programFile.status().message());
  std::string programPath =
      temp.file(bundle.modelName.empty() ? "model.eincprog" : bundle.modelName + ".eincprog");
  llvm::StringRef programBytes(reinterpret_cast<const char *>(programFile->data()),
                               programFile->size());
  if (einrt::Status written = writeFile(programPath, programBytes); !written.ok())
    return fail(written.message());
  if (!o.programFile.empty())
    if (einrt::Status written = einrt::writeModelBundle(o.programFile, bundle); !written.ok())
      return fail(written.message());

  // 4. Embed and link, into a temporary beside the output.
  std::string assembly = temp.file("embed.s");
  if (einrt::Status written = writeFile(assembly, embeddingAssembly(programPath, targets));
      !written.ok())
    return fail(written.message());
  std::string partial = output + ".tmp." + std::to_string(::getpid());
  std::vector<std::string> args{"-o", partial, assembly};
  args.insert(args.end(), objects.begin(), objects.end());
  args.insert(args.end(), kit->args.begin(), kit->args.end());
  if (einrt::Status linked = runProgram(*linker, args); !linked.ok()) {
    llvm::sys::fs::remove(partial);
    return fail("linking failed: " + linked.message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(partial, output)) {
    llvm::sys::fs::remove(partial);
    return fail("cannot write " + einrt::quoted(output) + ": " + ec.message());
  }
  uint64_t size = 0;
  llvm::sys::fs::file_size(output, size);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string programs;
  for (const einrt::BundledProgram &p : bundle.programs)
    programs += (programs.empty() ? "@" : ", @") + p.program.name;
  llvm::outs() << "einc compile: " << einrt::terminalSafe(o.input) << " -> "
               << einrt::terminalSafe(output) << " (" << einrt::formatBytes(int64_t(size)) << "; "
               << programs << "; " << compiled.kernels->kernelCount() << " kernels for "
               << targets.size() << " targets";
  if (cuda) {
    llvm::outs() << "; cuda: " << cuda->kernels << " kernels, " << std::size(kCudaImageArchs)
                 << " images (";
    for (size_t i = 0; i < std::size(kCudaImageArchs); ++i)
      llvm::outs() << (i ? ", " : "") << kCudaImageArchs[i];
    llvm::outs() << ") " << einrt::formatBytes(cuda->imageBytes) << " by NVRTC in "
                 << llvm::format("%.1f", cuda->seconds) << " s";
    if (cuda->spillingKernels)
      llvm::outs() << ", " << cuda->spillingKernels << " kernels spill registers";
  }
  llvm::outs() << "; program file " << einrt::formatBytes(int64_t(programFile->size())) << ") in "
               << llvm::format("%.1f", seconds) << " s\n";
  return 0;
}

} // namespace einc
