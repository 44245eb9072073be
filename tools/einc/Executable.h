//===- Executable.h - `einc compile`: a standalone executable ---*- C++ -*-===//
#ifndef EINC_TOOLS_EINC_EXECUTABLE_H
#define EINC_TOOLS_EINC_EXECUTABLE_H

#include "Options.h"

#include "tools/driver/Frontend.h"

#include "runtime/base/TrainSettings.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace einc {

/// `einc compile FILE.ein [-o NAME]`: the model compiled once (Compile.h)
/// with its kernels as object code for every portable CPU target, written as
/// a program file, embedded and linked with einc's runner and the runtime
/// into a standalone executable (docs/compile.md). `source` is the model
/// file's text. Returns the exit status.
int compileExecutable(const Options &o, const Frontend &fe, mlir::ModuleOp module);

} // namespace einc

#endif // EINC_TOOLS_EINC_EXECUTABLE_H
