//===- Frontend.cpp - Read, parse and elaborate one model file ------------===//
#include "Frontend.h"

#include "dsl/Elaborator.h"
#include "dsl/Parser.h"
#include "runtime/TerminalText.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace einc {

bool Frontend::load(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer) {
    llvm::errs() << "einc: cannot read " << einrt::quoted(path) << ": "
                 << buffer.getError().message() << "\n";
    return false;
  }
  std::string name = path == "-" ? "<stdin>" : path;
  file = std::make_unique<ein::dsl::SourceFile>(name, (*buffer)->getBuffer().str());
  diags = std::make_unique<ein::dsl::DiagnosticEngine>(*file);
  return true;
}

bool Frontend::parse() {
  program = ein::dsl::parseProgram(*file, *diags);
  return program && !diags->hasErrors();
}

mlir::OwningOpRef<mlir::ModuleOp> Frontend::lower(mlir::MLIRContext &context,
                                                  const Options &options) {
  ein::dsl::ElaborateOptions elaborateOptions;
  elaborateOptions.overrides = options.overrides;
  // `check` and `emit --stage=ir` accept every value the language knows,
  // the report also prices precision bf16 / mixed, and whatever builds the
  // step to run it refuses what no pass implements yet (docs/decisions.md).
  bool executes = options.command != "check" && options.command != "report" &&
                  !(options.command == "emit" && options.stage == "ir");
  elaborateOptions.use = options.command == "report" ? einrt::SettingsUse::Report
                         : executes                  ? einrt::SettingsUse::Execute
                                                     : einrt::SettingsUse::Check;
  elaborateOptions.settings = &settings;
  return ein::dsl::elaborate(*program, *file, *diags, context, elaborateOptions);
}

void Frontend::printDiagnostics() {
  if (diags)
    diags->print(llvm::errs());
}

} // namespace einc
