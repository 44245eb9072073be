//===- Errors.h - How einc prints an error line ----------------*- C++ -*-===//
//
// Every error einc itself prints is one line on standard error, "einc:
// MESSAGE" or "einc COMMAND: MESSAGE" (diagnostics with a caret come from
// dsl/Diagnostics.h instead). These two are the only writers of that line
// in the driver and the einc tool; the runner's lines ("TOOL COMMAND: ...",
// TOOL being einc or an executable) are RunContext::fail's.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_DRIVER_ERRORS_H
#define EINC_TOOLS_DRIVER_ERRORS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

namespace einc {

/// "einc: MESSAGE"; false, for a step that returns whether it worked.
bool printError(const llvm::Twine &message);

/// "einc COMMAND: MESSAGE" ("einc: MESSAGE" for an empty command); 1, the
/// exit status.
int exitError(llvm::StringRef command, const llvm::Twine &message);

} // namespace einc

#endif // EINC_TOOLS_DRIVER_ERRORS_H
