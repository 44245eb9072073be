//===- Compile.cpp - The one compile path: a model's module → a bundle ----===//
#include "Compile.h"
#include "Frontend.h"
#include "RematSweep.h"
#include "Report.h"
#include "Stages.h"

#include "codegen/CpuLowering.h"
#include "codegen/Lowerings.h"
#include "dsl/Elaborator.h"
#include "ir/EinOps.h"
#include "passes/DecodeStep.h"
#include "passes/Dropout.h"
#include "runtime/base/Memory.h"
#include "runtime/base/TerminalText.h"
#include "runtime/core/Backend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "Errors.h"
#include "llvm/Support/Path.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

using namespace mlir;

namespace einc {
namespace {

bool fail(const llvm::Twine &message) { return printError(message); }

bool needsTrainStep(const std::string &function) {
  return function != "forward" && function != "decode";
}

/// @sample: @forward of the model at batch 1 under the precision policy and
/// fusion, lowered into `out.kernels` for the CPU (else for the reference
/// backend), and @sample_decode, its decode step (passes/DecodeStep.h), where
/// the model has one. Nothing when the model's batch is 1 already.
bool lowerSampleProgram(ModuleOp module, const CompileRequest &request,
                        const einrt::TrainSettings &priced,
                        const ::ein::codegen::ProgramLowering &lowering, CompiledModel &out,
                        std::optional<einrt::Program> &sample,
                        std::optional<einrt::Program> &sampleDecode) {
  auto dims = module->getAttrOfType<DictionaryAttr>("ein.dims");
  auto batch = dims ? dims.getAs<IntegerAttr>("batch") : IntegerAttr();
  if (!batch || batch.getInt() == 1)
    return true;
  MLIRContext &context = *module->getContext(); // its diagnostics print as einc's
  OwningOpRef<ModuleOp> one = sampleModule(module, request, context);
  if (!one)
    return false;
  mlir::ein::eraseStopGradients(*one); // no backward reads them
  mlir::ein::eraseDropouts(*one);      // sampling runs without dropout
  if (failed(applyPrecision(*one, priced)))
    return false;
  bool decode = succeeded(mlir::ein::buildDecodeStep(*one, out.decodeNote));
  if (lowering.fused && failed(applyFusion(*one, priced)))
    return false;
  auto fn = one->lookupSymbol<func::FuncOp>("forward");
  if (!fn)
    return fail("the model has no @forward");
  FailureOr<einrt::Program> program = lowering.lower(fn, out.kernels.get());
  if (failed(program))
    return false;
  program->name = "sample";
  sample = std::move(*program);
  if (!decode)
    return true;
  program = lowering.lower(one->lookupSymbol<func::FuncOp>("decode"), out.kernels.get());
  if (failed(program))
    return false;
  program->name = "sample_decode";
  sampleDecode = std::move(*program);
  return true;
}

} // namespace

std::optional<RematDevice> thisMachineForRemat(const RematDevice *rates) {
  einrt::MemoryAvailable memory = einrt::availableMemory();
  if (memory.bytes == INT64_MAX)
    return std::nullopt;
  RematDevice device = rates ? *rates : RematDevice{};
  device.memoryBytes = double(memory.bytes);
  return device;
}

const einrt::Program *CompiledModel::program(const std::string &function) const {
  const einrt::BundledProgram *p = bundle.find(function);
  return p ? &p->program : nullptr;
}

bool compileModel(ModuleOp module, const CompileRequest &request, CompiledModel &out) {
  auto start = std::chrono::steady_clock::now();
  const einrt::Backend *backend = einrt::findBackend(request.backend);
  if (!backend)
    return fail(einrt::unknownBackend(request.backend));
  const ::ein::codegen::ProgramLowering *lowering =
      ::ein::codegen::findProgramLowering(backend->programLowering());
  if (!lowering)
    return fail("this einc cannot lower Programs for the " + request.backend + " backend");

  // The report's --optimizer prices another optimizer: the step is built
  // with it, so that the report describes the step that was built
  // (--precision is `--set precision=`, in `settings` already).
  einrt::TrainSettings priced = request.settings;
  if (!request.optimizer.empty()) // with its defaults for what the model does not set
    einrt::setTrainText(priced, "optimizer", request.optimizer);
  out.settings = priced;

  bool report = request.report;
  if (report && request.reportOptional &&
      !haveDeviceProfile(request.deviceFile, request.reportDevice))
    report = false;
  bool step =
      report || std::any_of(request.functions.begin(), request.functions.end(), needsTrainStep);

  // The pipeline, once (its first pass is the precision policy on @forward;
  // without a step, @forward alone gets it: evaluation and sampling run
  // the policy's forward).
  // Micro-batches run @grad, which has no step to key a dropout mask by.
  if (step && priced.accumulate > 1 && mlir::ein::hasDropout(module))
    return fail("dropout needs one micro-batch per step (accumulate = 1 on one rank): its masks "
                "are keyed by @train_step's step; got accumulate = " +
                std::to_string(priced.accumulate));
  if (step && failed(buildTrainStep(module, priced, nullptr, !request.plainGradient)))
    return false;
  if (step && request.shardRanks > 1 && module.lookupSymbol("apply_update") &&
      failed(shardOptimizer(module, request.shardRank, request.shardRanks)))
    return false;
  if (!step) { // @forward alone: no backward reads its stop_gradients; no dropout
    mlir::ein::eraseStopGradients(module);
    mlir::ein::eraseDropouts(module);
  }
  if (!step && failed(applyPrecision(module, priced)))
    return false;
  // @decode (sampling with a KV cache) from @forward as the policy left it;
  // a model it cannot be derived from samples by recomputing the window.
  std::vector<std::string> functions = request.functions;
  if (auto at = std::find(functions.begin(), functions.end(), "decode"); at != functions.end()) {
    bool applies = true;
    if (failed(mlir::ein::buildDecodeStep(module, out.decodeNote, &applies)))
      functions.erase(at);
    if (!applies) // nothing to cache: no note
      out.decodeNote.clear();
  }
  // The backend's lowering (the cuda backend runs the Programs lowered for
  // the CPU, their kernel table rendered as CUDA: its kernel section).
  if ((lowering->fused || report) && failed(applyFusion(module, priced)))
    return false;
  // Remat last; `budget:` prices recompute time on the report's device when
  // there is a profile of it, and takes N% of its memory — or, for what runs
  // here on the CPU (train, sample, an executable), of this machine's.
  std::optional<RematDevice> rematDevice;
  if (haveDeviceProfile(request.deviceFile, request.reportDevice))
    if (auto profile = findDeviceProfile(request.deviceFile, request.reportDevice)) {
      auto at = [](const std::map<std::string, double> &rates, const std::string &dtype) {
        auto it = rates.count(dtype) ? rates.find(dtype) : rates.find("f32");
        return it == rates.end() ? 0.0 : it->second;
      };
      rematDevice =
          RematDevice{profile->memoryBytes,
                      at(profile->matmulFlops,
                         mlir::ein::contractionDtype(*profile, "f32", priced.tf32 == "on")),
                      at(profile->vectorFlops, "f32"),
                      profile->bandwidth,
                      profile->kernelLatency,
                      at(profile->matmulFlops, "bf16"),
                      at(profile->vectorFlops, "bf16"),
                      at(profile->matmulFlops, "f16"),
                      at(profile->vectorFlops, "f16")};
    }
  if (!request.functions.empty() && backend->hostMemory())
    if (auto here = thisMachineForRemat(rematDevice ? &*rematDevice : nullptr))
      rematDevice = here;
  // The report's remat trade-off is of the step before its policy, each
  // plan priced as the step it becomes.
  std::optional<ReportRematSweep> sweep;
  if (report && failed(sweepRemat(module, request, priced, rematDevice ? &*rematDevice : nullptr,
                                  request.reportFlags.rematSweep, sweep)))
    return false;
  // A budget must fit the functions this compile lowers (and the report's
  // @train_step); the others only get its best try.
  std::vector<std::string> mustFit = request.functions;
  if (report)
    mustFit.push_back("train_step");
  if (step && failed(applyRemat(module, priced, rematDevice ? &*rematDevice : nullptr, mustFit)))
    return false;

  // Lowering: Programs with kernels call those `out.kernels` collects (one
  // table for every function).
  if (lowering->kernels)
    out.kernels = ::ein::codegen::KernelCompiler::create();
  std::vector<einrt::Program> programs;
  for (const std::string &name : functions) {
    auto fn = module.lookupSymbol<func::FuncOp>(name);
    if (!fn)
      return fail("the module has no @" + name);
    FailureOr<einrt::Program> program = lowering->lower(fn, out.kernels.get());
    if (failed(program))
      return false;
    programs.push_back(std::move(*program));
  }

  // The report: the fused IR's costs and the memory plan of the @train_step
  // Program the CPU backend runs — the one just lowered where there is one;
  // else (reference backend, or a run of @accumulate_grad + @apply_update)
  // @train_step lowered for the CPU beside them, its kernels never compiled.
  // A step the CPU backend cannot lower is no report: its diagnostic, as
  // `einc run` gives it (the report never prices another Program instead).
  if (report) {
    auto at = std::find(functions.begin(), functions.end(), "train_step");
    const einrt::Program *trainStep = lowering->kernels && at != functions.end()
                                          ? &programs[size_t(at - functions.begin())]
                                          : nullptr;
    std::optional<einrt::Program> priceOnly;
    if (!trainStep) {
      auto fn = module.lookupSymbol<func::FuncOp>("train_step");
      if (!fn)
        return fail("building the training step produced no @train_step");
      auto unused = ::ein::codegen::KernelCompiler::create();
      FailureOr<einrt::Program> p = ::ein::codegen::lowerToCpuProgram(fn, *unused);
      if (failed(p))
        return false;
      priceOnly = std::move(*p);
      trainStep = &*priceOnly;
    }
    Report r;
    r.plannedBackend = "cpu";
    if (!reportOnStep(module, trainStep, request, priced, r))
      return false;
    r.rematSweep = std::move(sweep);
    if (request.renderReport) {
      llvm::raw_string_ostream json(out.bundle.reportJson), text(out.reportText);
      printReportJson(r, json);
      printReportText(r, text);
    }
    out.report = std::move(r);
  }

  // @sample (an executable's): @forward at batch 1, lowered as @forward is,
  // into the same kernel table (identical kernels share an index).
  std::optional<einrt::Program> sample, sampleDecode;
  if (request.sampleProgram &&
      !lowerSampleProgram(module, request, priced, *lowering, out, sample, sampleDecode))
    return false;

  if (const std::string name = backend->kernelSection(); !name.empty()) {
    std::vector<const einrt::Program *> lowered;
    for (const einrt::Program &p : programs)
      lowered.push_back(&p);
    FailureOr<std::vector<uint8_t>> section =
        ::ein::codegen::renderKernelSection(name, out.kernels.get(), lowered);
    if (failed(section))
      return false;
    out.bundle.kernelSections[name] = std::move(*section);
  }
  if (backend->hostKernels() && request.jit) {
    if (failed(out.kernels->compile()))
      return false;
    out.kernelsCompiled = out.kernels->compiledCount();
    out.kernelsCached = out.kernels->cachedCount();
  }

  // The bundle: the requested functions' Programs and the model's metadata.
  einrt::ModelBundle &b = out.bundle;
  b.sourceName = request.modelPath;
  b.modelName = llvm::sys::path::stem(request.modelPath).str();
  b.source = request.source;
  if (auto dims = module->getAttrOfType<DictionaryAttr>("ein.dims"))
    for (NamedAttribute a : dims)
      if (auto i = dyn_cast<IntegerAttr>(a.getValue()))
        b.dims[a.getName().str()] = i.getInt();
  b.settings = priced;
  for (size_t i = 0; i < functions.size(); ++i)
    b.programs.push_back(einrt::BundledProgram{lowering->name, std::move(programs[i])});
  b.loss =
      !module->hasAttr("ein.tokens") || module->hasAttr("ein.loss") ? "objective" : "cross_entropy";
  // How a token window maps onto the first train program's inputs: the
  // `data` setting, else inferred (absent when it cannot be: the runner
  // says why when asked to train).
  for (const einrt::BundledProgram &bp : b.programs) {
    if (!needsTrainStep(bp.program.name))
      continue;
    if (priced.data)
      b.window = einrt::parseWindowMapping(*priced.data);
    else if (auto inferred = einrt::inferWindowMapping(bp.program); inferred.ok())
      b.window = *inferred;
    break;
  }
  if (sample)
    b.programs.push_back(einrt::BundledProgram{lowering->name, std::move(*sample)});
  if (sampleDecode)
    b.programs.push_back(einrt::BundledProgram{lowering->name, std::move(*sampleDecode)});
  out.compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return true;
}

bool compileToStage(ModuleOp module, const CompileRequest &request, const std::string &stage) {
  const einrt::TrainSettings &s = request.settings;
  bool step = stage == "step" || stage == "fused";
  if (stage == "grad" && (failed(applyPrecision(module, s)) || failed(buildGrad(module))))
    return false;
  if (step && failed(buildTrainStep(module, s)))
    return false;
  if (stage == "fused" && failed(applyFusion(module, s)))
    return false;
  return !(step && failed(applyRemat(module, s)));
}

bool buildReport(ModuleOp module, CompileRequest request, Report &r) {
  // Nothing to run: the report lowers @train_step itself (for the CPU, or
  // as the reference backend lowers it where the CPU backend cannot).
  request.functions.clear();
  request.jit = false;
  request.sampleProgram = false;
  request.report = true;
  request.reportOptional = false;
  request.renderReport = false; // the caller prints the format asked for
  CompiledModel compiled;
  if (!compileModel(module, request, compiled))
    return false;
  r = std::move(*compiled.report);
  return true;
}

OwningOpRef<ModuleOp> sampleModule(ModuleOp module, const CompileRequest &request,
                                   MLIRContext &context) {
  auto dims = module->getAttrOfType<DictionaryAttr>("ein.dims");
  auto batch = dims ? dims.getAs<IntegerAttr>("batch") : IntegerAttr();
  if (!batch || batch.getInt() == 1)
    return OwningOpRef<ModuleOp>(cast<ModuleOp>(module->clone()));
  if (!request.frontend) {
    fail("no parsed model to build at batch 1");
    return nullptr;
  }
  ::ein::dsl::registerElaboratorDialects(context);
  Overrides one = request.overrides;
  one.insert(one.begin(), {"batch", "1"}); // before --set batch=, which wins
  einrt::TrainSettings settings;
  return request.frontend->elaborate(context, one, request.use, settings, &llvm::errs());
}

} // namespace einc
