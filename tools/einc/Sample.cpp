//===- Sample.cpp - `einc sample`: text from a trained model --------------===//
//
// The model is re-lowered with `batch = 1` (when it has a `batch` dim): one
// row per generated token (driver/Compile.h sampleModule). Compiled as
// `einc train` compiles (tools/driver/Compile.h),
// sampled by the runner (tools/runner/SampleRun.cpp).
//
//===----------------------------------------------------------------------===//
#include "Sample.h"
#include "BackendDevice.h"
#include "CompileOptions.h"
#include "RunnerOptions.h"

#include "tools/runner/Distributed.h"
#include "tools/runner/Runner.h"

#include "dsl/Elaborator.h"
#include "runtime/base/TerminalText.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace einc {

int sampleModel(const Options &o, const Frontend &fe, ModuleOp original) {
  const einrt::TrainSettings &settings = fe.settings;
  // The device first: a machine without it (a GPU) fails before compiling.
  runner::Backend backend;
  backend.kind = einrt::findBackend(o.backend);
  backend.threads = o.threads;
  backend.open = runner::deviceOptions({}, settings);
  if (!(backend.device = openBackendDevice(*backend.kind, backend.open)))
    return 1;
  // The model's context: its diagnostics print as einc prints them.
  MLIRContext &context = *original->getContext();
  CompileRequest what;
  what.backend = o.backend;
  what.functions = {"forward"};
  if (!o.noKvCache)
    what.functions.push_back("decode");
  CompileRequest request = compileRequest(o, settings, fe.file->text().str(), &fe, what);
  OwningOpRef<ModuleOp> module = sampleModule(original, request, context);
  if (!module)
    return 1;
  CompiledModel compiled;
  if (!compileModel(*module, request, compiled))
    return 1;
  if (compiled.kernels && backend.kind->hostKernels())
    backend.kernels = compiled.kernels->table();
  bool decode = compiled.bundle.find("decode") != nullptr;
  if (!o.noKvCache && !decode && !compiled.decodeNote.empty())
    llvm::errs() << "einc sample: recomputing the window for every token (no KV cache: "
                 << einrt::terminalSafe(compiled.decodeNote) << ")\n";
  runner::RunContext run;
  run.model = o.input;
  return runner::sample(run, runOptions(o), compiled.bundle, settings, "forward", backend,
                        decode ? "decode" : "");
}

} // namespace einc
