//===- FrontendFuzzer.cpp - libFuzzer entry point over the whole front end -===//
//
// One input is one model file: lex + parse, print the syntax tree, and when the
// parse is clean, elaborate into `ein` IR (which verifies the module) and print
// it; every diagnostic is rendered with its caret line. Output goes to a null
// stream: crashes, sanitizer reports, hangs and leaks matter.
//
// The front end promises "no crash, no assertion, on any input", so the extra
// oracles are the elaborator's "internal error" diagnostic (the generated IR
// did not verify): it is a bug in einc, and the fuzzer aborts on it; and the
// rendered diagnostics, which must be terminal-safe (no control bytes) and
// bounded (no line past a fixed length) whatever the input.
//
// Built as `einc-fuzz` (libFuzzer, EINC_LIBFUZZER=ON) and linked with
// ReplayMain.cpp as `einc-fuzz-replay` (every build; ctest replays corpus/).
//
//===----------------------------------------------------------------------===//
#include "dsl/ASTPrinter.h"
#include "dsl/Diagnostics.h"
#include "dsl/Elaborator.h"
#include "dsl/Parser.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

mlir::MLIRContext &fuzzContext() {
  // Created once: dialect registration is the expensive part. Types and
  // attributes interned by earlier inputs stay alive (and reachable), which is
  // what a long-lived compiler process does too.
  static mlir::MLIRContext *context = [] {
    auto *ctx = new mlir::MLIRContext(mlir::MLIRContext::Threading::DISABLED);
    ein::dsl::registerElaboratorDialects(*ctx);
    ctx->loadAllAvailableDialects();
    // MLIR diagnostics not caught by the elaborator would go to stderr.
    ctx->getDiagEngine().registerHandler([](mlir::Diagnostic &) { return mlir::success(); });
    return ctx;
  }();
  return *context;
}

[[noreturn]] void internalError(const ein::dsl::DiagnosticEngine &diags) {
  std::fputs("einc-fuzz: the front end reported an internal error:\n", stderr);
  diags.print(llvm::errs());
  llvm::errs().flush();
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  ein::dsl::SourceFile file("fuzz.ein", std::move(text));
  ein::dsl::DiagnosticEngine diags(file);
  llvm::raw_null_ostream null;

  std::unique_ptr<ein::dsl::Program> program = ein::dsl::parseProgram(file, diags);
  if (program)
    ein::dsl::printAST(*program, null);

  if (program && !diags.hasErrors()) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        ein::dsl::elaborate(*program, file, diags, fuzzContext(), ein::dsl::ElaborateOptions{});
    if (module)
      module->print(null);
  }

  // What reaches a terminal must be safe and bounded whatever the input: no
  // control byte but the line ends, no line longer than a bounded message
  // (every column at most a 4-byte escape) or source excerpt.
  std::string printed;
  llvm::raw_string_ostream printedStream(printed);
  diags.print(printedStream);
  size_t lineLength = 0;
  for (char c : printed) {
    lineLength = c == '\n' ? 0 : lineLength + 1;
    if ((c != '\n' && (unsigned char)c < 0x20) || c == 0x7f ||
        lineLength > 4 * (ein::dsl::kMaxMessageColumns + 100)) {
      std::fputs("einc-fuzz: unsafe or unbounded diagnostic output\n", stderr);
      std::abort();
    }
  }
  for (const ein::dsl::Diagnostic &d : diags.diagnostics())
    if (llvm::StringRef(d.message).starts_with("internal error"))
      internalError(diags);
  return 0;
}
