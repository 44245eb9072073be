//===- CompileOptions.h - einc's command line as a compile request -*- C++ -*-===//
//
// The one place einc's Options become the driver's CompileRequest
// (tools/driver/CompileRequest.h): the model (its file, text, parsed front
// end, `--set`), --backend, --optimizer, --device-file and the report's
// flags. The commands choose what to build (functions, JIT, report device)
// and call compileModel through here.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_EINC_COMPILEOPTIONS_H
#define EINC_TOOLS_EINC_COMPILEOPTIONS_H

#include "Options.h"

#include "tools/driver/Compile.h"
#include "tools/driver/Frontend.h"

#include <string>

namespace einc {

/// What `o.command` (and `emit`'s stage) needs of the settings: `check` and
/// `emit --stage=ir` accept every value the language knows, the report
/// also prices precision bf16 / mixed, and whatever builds the step to run
/// it refuses what no pass implements yet (docs/decisions.md).
einrt::SettingsUse settingsUse(const Options &o);

/// `what` (the command's choice of functions, backend, JIT, report device...)
/// with the model and the flags of `o`: the model file o.input with
/// `source`, `settings` and `parsed` (null: none), --set, --optimizer,
/// --device-file, --kernels, --remat-sweep, --gpus, --nodes, --tokens,
/// --mfu, --shard-optimizer.
CompileRequest compileRequest(const Options &o, const einrt::TrainSettings &settings,
                              const std::string &source, const Frontend *parsed,
                              CompileRequest what = {});

/// compileModel (tools/driver/Compile.h) of compileRequest(o, ..., request).
bool compileModel(mlir::ModuleOp module, const Options &o, const einrt::TrainSettings &settings,
                  const std::string &source, const CompileRequest &request, CompiledModel &out,
                  const Frontend *parsed = nullptr);

} // namespace einc

#endif // EINC_TOOLS_EINC_COMPILEOPTIONS_H
