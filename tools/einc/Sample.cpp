//===- Sample.cpp - `einc sample`: text from a trained model --------------===//
//
// The model is re-lowered with `batch = 1` (when it has a `batch` dim): one
// row per generated token. Compiled as `einc train` compiles (Compile.h),
// sampled by the runner (tools/runner/SampleRun.cpp).
//
//===----------------------------------------------------------------------===//
#include "Sample.h"
#include "Compile.h"
#include "CudaBackend.h"
#include "Frontend.h"

#include "tools/runner/Distributed.h"
#include "tools/runner/Runner.h"

#include "dsl/Elaborator.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"

using namespace mlir;

namespace einc {

OwningOpRef<ModuleOp> sampleModule(const Options &o, ModuleOp module, MLIRContext &context) {
  auto dims = module->getAttrOfType<DictionaryAttr>("ein.dims");
  auto batch = dims ? dims.getAs<IntegerAttr>("batch") : IntegerAttr();
  if (!batch || batch.getInt() == 1)
    return OwningOpRef<ModuleOp>(cast<ModuleOp>(module->clone()));
  ::ein::dsl::registerElaboratorDialects(context);
  Options one = o;
  one.overrides.insert(one.overrides.begin(), {"batch", "1"});
  Frontend fe;
  if (!fe.load(o.input) || !fe.parse()) {
    fe.printDiagnostics();
    return nullptr;
  }
  OwningOpRef<ModuleOp> lowered = fe.lower(context, one);
  fe.printDiagnostics();
  return lowered;
}

int sampleModel(const Options &o, const einrt::TrainSettings &settings, ModuleOp original,
                const std::string &source) {
  std::shared_ptr<einrt::CudaDevice> gpu;
  if (o.backend == "cuda" && !(gpu = openCudaBackend(runner::cudaOptions(Options{}, settings))))
    return 1;
  // The model's context: its diagnostics print as einc prints them.
  MLIRContext &context = *original->getContext();
  OwningOpRef<ModuleOp> module = sampleModule(o, original, context);
  if (!module)
    return 1;
  CompileRequest request;
  request.backend = o.backend;
  request.functions = {"forward"};
  CompiledModel compiled;
  if (!compileModel(*module, o, settings, source, request, compiled))
    return 1;
  runner::Backend backend;
  backend.name = o.backend;
  backend.threads = o.threads;
  if (gpu) {
    backend.cuda = takeCudaKernels(compiled);
    backend.cudaDevice = gpu;
  } else if (compiled.kernels) {
    backend.kernels = compiled.kernels->table();
  }
  runner::RunContext run;
  run.model = o.input;
  return runner::sample(run, o, compiled.bundle, settings, "forward", backend);
}

} // namespace einc
