//===- PassDiagnostics.h - MLIR's diagnostics as the front end's -*- C++ -*-===//
//
// What passes, lowering and the verifier report (mlir::Diagnostic) is
// printed as the front end prints its own errors (dsl/Diagnostics.h):
//
//   model.ein:6:11: error: remat: budget:60% needs a device's memory ...
//     remat = "budget:60%"
//             ^
//
// at the place in the model file the op's location names — FusedLoc,
// NameLoc and CallSiteLoc unwrapped to the first FileLineColLoc of that file
// — and as `model.ein: error: ...` on one line where it names no line: no
// location, another file's, or the whole file (the module and its
// functions, dsl::wholeFileLocation). Notes follow their error. Every einc
// command that runs passes holds one for the life of its MLIRContext.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_DRIVER_PASSDIAGNOSTICS_H
#define EINC_TOOLS_DRIVER_PASSDIAGNOSTICS_H

#include "dsl/Diagnostics.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/raw_ostream.h"

namespace einc {

class PassDiagnostics {
public:
  /// Prints `context`'s diagnostics to `os` against `file` (copied: the
  /// front end that read it may be gone before the context).
  PassDiagnostics(mlir::MLIRContext &context, const ein::dsl::SourceFile &file,
                  llvm::raw_ostream &os = llvm::errs());
  ~PassDiagnostics();
  PassDiagnostics(const PassDiagnostics &) = delete;
  PassDiagnostics &operator=(const PassDiagnostics &) = delete;

  /// The front end's diagnostic for `diagnostic` (its notes not included).
  ein::dsl::Diagnostic translate(const mlir::Diagnostic &diagnostic) const;

private:
  mlir::MLIRContext &context;
  ein::dsl::SourceFile file;
  ein::dsl::DiagnosticEngine printer;
  mlir::Location wholeFile;
  llvm::raw_ostream &os;
  mlir::DiagnosticEngine::HandlerID id;
};

} // namespace einc

#endif // EINC_TOOLS_DRIVER_PASSDIAGNOSTICS_H
