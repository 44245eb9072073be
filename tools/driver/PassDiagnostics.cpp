//===- PassDiagnostics.cpp - MLIR's diagnostics as the front end's --------===//
#include "PassDiagnostics.h"

#include "dsl/Elaborator.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace einc {

namespace {

ein::dsl::Diagnostic::Severity severityOf(DiagnosticSeverity s) {
  switch (s) {
  case DiagnosticSeverity::Error:
    return ein::dsl::Diagnostic::Severity::Error;
  case DiagnosticSeverity::Warning:
    return ein::dsl::Diagnostic::Severity::Warning;
  case DiagnosticSeverity::Note:
  case DiagnosticSeverity::Remark:
    break;
  }
  return ein::dsl::Diagnostic::Severity::Note;
}

} // namespace

PassDiagnostics::PassDiagnostics(MLIRContext &context, const ein::dsl::SourceFile &file,
                                 llvm::raw_ostream &os)
    : context(context), file(file), printer(this->file),
      wholeFile(ein::dsl::wholeFileLocation(context, this->file)), os(os) {
  // No "see current operation" note with the op's IR: not for a user.
  context.printOpOnDiagnostic(false);
  id = context.getDiagEngine().registerHandler([this](Diagnostic &d) {
    printer.print(this->os, translate(d));
    for (const Diagnostic &note : d.getNotes())
      printer.print(this->os, translate(note));
    return success();
  });
}

PassDiagnostics::~PassDiagnostics() { context.getDiagEngine().eraseHandler(id); }

ein::dsl::Diagnostic PassDiagnostics::translate(const Diagnostic &d) const {
  ein::dsl::Diagnostic out;
  out.severity = severityOf(d.getSeverity());
  out.message = d.str();
  // The first place in the model file inside fused, named and call-site
  // locations (a call site's callee first: where the op itself is). The
  // whole file's place, alone or first in the module's fused location
  // (where the `train { }` entries follow it), is no line.
  FileLineColLoc place;
  d.getLocation()->walk([&](Location l) {
    auto f = dyn_cast<FileLineColLoc>(l);
    if (!f || f.getFilename() != file.path())
      return WalkResult::advance();
    place = f;
    return WalkResult::interrupt();
  });
  if (place && Location(place) != wholeFile && place.getLine() > 0)
    out.loc = ein::dsl::SourceLoc{place.getLine(), place.getColumn()};
  return out;
}

} // namespace einc
