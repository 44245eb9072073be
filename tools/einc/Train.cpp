//===- Train.cpp - `einc train`: compile, then run the trainer ------------===//
//
// Everything after compiling is the runner's (tools/runner/TrainRun.cpp):
// the same code trains in the executables of `einc compile`. Here: the
// vocab from the module's dims, the one compile (Compile.h: the train
// functions for --backend, kernels JIT-compiled, and the report on the
// `cpu` device profile when there is one, for the predicted step time),
// and the JIT's kernel table handed to the runner.
//
//===----------------------------------------------------------------------===//
#include "Train.h"
#include "BackendDevice.h"
#include "CompileOptions.h"
#include "RunnerOptions.h"

#include "tools/runner/Distributed.h"
#include "tools/runner/Runner.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace einc {

namespace {

int trainOnRanks(const Options &o, const Frontend &fe, const einrt::TrainSettings &s,
                 ModuleOp module, einrt::Communicator *comm) {
  // The device first: a machine without it (a GPU) fails before compiling.
  runner::Backend backend;
  backend.kind = einrt::findBackend(o.backend);
  backend.threads = o.threads;
  backend.open = runner::deviceOptions(runOptions(o), s);
  if (!(backend.device = openBackendDevice(*backend.kind, backend.open)))
    return 1;
  int32_t vocab = 0;
  if (auto dims = module->getAttrOfType<DictionaryAttr>("ein.dims"))
    if (auto v = dims.getAs<IntegerAttr>("vocab"))
      vocab = static_cast<int32_t>(v.getInt());
  runner::RunContext context;
  context.model = o.input;
  context.comm = comm;
  auto run = runner::TrainRun::prepare(context, runOptions(o), s, vocab);
  if (!run)
    return 1;

  CompileRequest request;
  request.backend = o.backend;
  request.functions = runner::trainFunctionNames(s, run->withValidation());
  request.report = true; // the prediction on the progress line
  request.reportDevice = reportProfileFor(o, *backend.kind, *backend.device);
  request.reportOptional = true;
  if (o.shardOptimizer && comm) {
    request.shardRank = comm->rank();
    request.shardRanks = comm->size();
  }
  CompiledModel compiled;
  if (!compileModel(module, o, s, fe.file->text().str(), request, compiled, &fe))
    return 1;

  std::string origin = "compiled in " + runner::fixed(compiled.compileSeconds, 2) + " s";
  if (!compiled.bundle.kernelSections.empty()) {
    origin += "; " + std::to_string(compiled.kernels->kernelCount()) + " kernels rendered";
  } else if (compiled.kernels) {
    backend.kernels = compiled.kernels->table();
    origin += "; " + std::to_string(compiled.kernelsCompiled) + " kernels compiled, " +
              std::to_string(compiled.kernelsCached) + " cached";
  }
  return run->run(compiled.bundle, backend, origin);
}

} // namespace

int trainModel(const Options &o, const Frontend &fe, ModuleOp module) {
  const einrt::TrainSettings &s = fe.settings;
  // N ranks with `accumulate` k each train the global batch of N·k
  // micro-batches: the step is compiled for that count.
  runner::Ranks ranks(runOptions(o), "einc");
  if (!ranks.ok())
    return 1;
  einrt::TrainSettings global = s;
  global.accumulate = s.accumulate * ranks.size();
  return ranks.finish(trainOnRanks(o, fe, global, module, ranks.comm()));
}

} // namespace einc
