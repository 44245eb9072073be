//===- einc.cpp - The einc driver -----------------------------------------===//
//
//   einc check FILE.ein               diagnostics only
//   einc emit --stage=ast|ir|grad|step|fused|cuda FILE.ein   a stage of compilation
//   einc run FILE.ein                 the reference backend on one batch
//   einc report FILE.ein              the static cost report (docs/report.md)
//   einc calibrate [-o FILE]          measure this machine as the profile "cpu"
//   einc data TEXT --out DIR          text to byte tokens (train.bin, val.bin)
//   einc train FILE.ein --data ...    the training loop (docs/training.md)
//   einc sample FILE.ein --checkpoint ...   text from a trained model
//   einc compile FILE.ein -o NAME     a standalone executable (docs/compile.md)
//
//===----------------------------------------------------------------------===//
#include "Calibrate.h"
#include "CompileOptions.h"
#include "Data.h"
#include "EmitCuda.h"
#include "Executable.h"
#include "Options.h"
#include "Run.h"
#include "Sample.h"
#include "Train.h"

#include "tools/driver/Compile.h"
#include "tools/driver/Frontend.h"
#include "tools/driver/PassDiagnostics.h"

#include "dsl/ASTPrinter.h"
#include "dsl/Elaborator.h"
#include "runtime/base/TerminalText.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"

#include "Version.inc"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <new>
#include <unistd.h>

using namespace einc;

namespace {

/// Writes through `write` to -o FILE or stdout; false after printing why.
template <typename Fn> bool writeOutput(const Options &o, Fn write) {
  if (o.output.empty()) {
    write(llvm::outs());
    llvm::outs().flush();
    return !llvm::outs().has_error();
  }
  std::error_code ec;
  llvm::ToolOutputFile out(o.output, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::errs() << "einc: cannot write " << einrt::quoted(o.output) << ": " << ec.message()
                 << "\n";
    return false;
  }
  write(out.os());
  out.os().flush();
  if (out.os().has_error()) {
    llvm::errs() << "einc: cannot write " << einrt::quoted(o.output) << ": "
                 << out.os().error().message() << "\n";
    out.os().clear_error();
    return false;
  }
  out.keep(); // renamed into place only when complete
  return true;
}

/// `einc --version`: this build's version and commit, and the LLVM/MLIR
/// it was built against (MLIR is versioned with LLVM).
void printVersion(llvm::raw_ostream &os) {
  os << "einc " << EINC_VERSION << " (git " << EINC_GIT_COMMIT << ")\n"
     << "LLVM/MLIR " << LLVM_VERSION_STRING << "\n";
}

int run(const Options &o) {
  Frontend fe;
  if (!fe.load(o.input))
    return 1;
  bool parsed = fe.parse();
  if (o.command == "emit" && o.stage == "ast") {
    fe.printDiagnostics();
    if (!parsed)
      return 1;
    return writeOutput(o, [&](llvm::raw_ostream &os) { ein::dsl::printAST(*fe.program, os); }) ? 0
                                                                                               : 1;
  }
  if (!parsed) {
    fe.printDiagnostics();
    return 1;
  }
  mlir::MLIRContext context;
  ein::dsl::registerElaboratorDialects(context);
  PassDiagnostics passDiagnostics(context, *fe.file); // every pass's errors, as the front end's
  auto module = fe.lower(context, o.overrides, settingsUse(o));
  fe.printDiagnostics();
  if (!module)
    return 1;
  if (o.command == "calibrate")
    return calibrateGemm(*module, o, fe.settings);
  if (o.command == "check")
    return 0;
  if (o.command == "run")
    return runModel(o, fe, *module);
  if (o.command == "train")
    return trainModel(o, fe, *module);
  if (o.command == "sample")
    return sampleModel(o, fe, *module);
  if (o.command == "compile")
    return compileExecutable(o, fe, *module);
  if (o.command == "report") {
    CompileRequest request;
    request.reportDevice = o.device;
    Report report;
    if (!buildReport(*module, compileRequest(o, fe.settings, "", &fe, request), report))
      return 1;
    return writeOutput(o,
                       [&](llvm::raw_ostream &os) {
                         if (o.format == "json")
                           printReportJson(report, os);
                         else if (o.format == "html")
                           printReportHtml(report, os);
                         else
                           printReportText(report, os);
                       })
               ? 0
               : 1;
  }
  if (o.stage == "cuda") {
    std::string cuda;
    if (!renderCudaStage(*module, o, fe.settings, cuda))
      return 1;
    return writeOutput(o, [&](llvm::raw_ostream &os) { os << cuda; }) ? 0 : 1;
  }
  if (!compileToStage(*module, compileRequest(o, fe.settings, "", &fe), o.stage))
    return 1;
  return writeOutput(o,
                     [&](llvm::raw_ostream &os) {
                       module->print(os);
                       os << "\n";
                     })
             ? 0
             : 1;
}

/// The last resort when an allocation fails that the planned-memory checks
/// (runtime/base/Memory.h) did not foresee: einc is built without exceptions, so
/// std::bad_alloc would abort. A message and exit status 1 instead; no
/// allocation here (there is no memory to be had).
[[noreturn]] void outOfMemory() {
  static const char message[] =
      "einc: out of memory: an allocation failed; use smaller dims (--set) or "
      "raise the limit (ulimit -v, the cgroup's memory.max)\n";
  ssize_t ignored = ::write(2, message, sizeof message - 1);
  (void)ignored;
  std::_Exit(1);
}

} // namespace

int main(int argc, char **argv) {
  std::set_new_handler(outOfMemory);
  CommandLine line = parseCommandLine(std::vector<std::string>(argv + 1, argv + argc));
  switch (line.action) {
  case CommandLine::Action::Error:
    llvm::errs() << line.text << "\n";
    return 2;
  case CommandLine::Action::Help:
    llvm::outs() << line.text;
    return 0;
  case CommandLine::Action::Version:
    printVersion(llvm::outs());
    return 0;
  case CommandLine::Action::Run:
    break;
  }
  const Options *options = &line.options;
  if (options->command == "calibrate" && !options->calibrateGemm)
    return calibrate(*options);
  if (options->command == "data")
    return prepareData(*options);
  return run(*options);
}
