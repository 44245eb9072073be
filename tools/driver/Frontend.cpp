//===- Frontend.cpp - Read, parse and elaborate one model file ------------===//
#include "Frontend.h"

#include "dsl/Elaborator.h"
#include "dsl/Parser.h"
#include "runtime/base/TerminalText.h"

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

mlir::OwningOpRef<mlir::ModuleOp>
Frontend::lower(mlir::MLIRContext &context, const Overrides &overrides, einrt::SettingsUse use) {
  ein::dsl::ElaborateOptions options;
  options.overrides = overrides;
  options.use = use;
  options.settings = &settings;
  return ein::dsl::elaborate(*program, *file, *diags, context, options);
}

mlir::OwningOpRef<mlir::ModuleOp>
Frontend::elaborate(mlir::MLIRContext &context, const Overrides &overrides, einrt::SettingsUse use,
                    einrt::TrainSettings &settings, llvm::raw_ostream *diagnostics) const {
  ein::dsl::DiagnosticEngine again(*file); // this elaboration's diagnostics alone
  ein::dsl::ElaborateOptions options;
  options.overrides = overrides;
  options.use = use;
  options.settings = &settings;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      ein::dsl::elaborate(*program, *file, again, context, options);
  if (diagnostics)
    again.print(*diagnostics);
  return module;
}

void Frontend::printDiagnostics() {
  if (diags)
    diags->print(llvm::errs());
}

} // namespace einc
