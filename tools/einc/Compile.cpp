//===- Compile.cpp - The one compile path: a model's module → a bundle ----===//
#include "Compile.h"
#include "RematSweep.h"
#include "Report.h"
#include "Stages.h"

#include "codegen/CpuLowering.h"
#include "codegen/CudaRenderer.h"
#include "codegen/ReferenceLowering.h"
#include "runtime/Memory.h"
#include "runtime/TerminalText.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

using namespace mlir;

namespace einc {
namespace {

bool fail(const llvm::Twine &message) {
  llvm::errs() << "einc: " << message << "\n";
  return false;
}

bool needsTrainStep(const std::string &function) { return function != "forward"; }

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

bool compileModel(ModuleOp module, const Options &o, const einrt::TrainSettings &settings,
                  const std::string &source, const CompileRequest &request, CompiledModel &out) {
  auto start = std::chrono::steady_clock::now();
  if (request.backend != "cpu" && request.backend != "reference" && request.backend != "cuda")
    return fail("unknown backend " + einrt::quoted(request.backend) + " (cpu, reference, cuda)");

  // The report's --optimizer prices another optimizer: the step is built
  // with it, so that the report describes the step that was built
  // (--precision is `--set precision=`, in `settings` already).
  einrt::TrainSettings priced = settings;
  if (!o.optimizer.empty()) // with its defaults for what the model does not set
    einrt::setTrainText(priced, "optimizer", o.optimizer);
  out.settings = priced;

  bool report = request.report;
  if (report && request.reportOptional && !haveDeviceProfile(o, request.reportDevice))
    report = false;
  bool step =
      report || std::any_of(request.functions.begin(), request.functions.end(), needsTrainStep);

  // The pipeline, once (its first pass is the precision policy on @forward;
  // without a step, @forward alone gets it: evaluation and sampling run
  // the policy's forward).
  if (step && failed(buildTrainStep(module, priced)))
    return false;
  if (step && request.shardRanks > 1 && module.lookupSymbol("apply_update") &&
      failed(shardOptimizer(module, request.shardRank, request.shardRanks)))
    return false;
  if (!step && failed(applyPrecision(module, priced)))
    return false;
  // The cuda backend runs the Programs lowered for the CPU, their kernel
  // table rendered as CUDA (runtime/CudaKernels.h).
  bool cuda = request.backend == "cuda";
  bool cpu = request.backend == "cpu" || cuda;
  if ((cpu || report) && failed(applyFusion(module, priced)))
    return false;
  // Remat last; `budget:` prices recompute time on the report's device when
  // there is a profile of it, and takes N% of its memory — or, for what runs
  // here on the CPU (train, sample, an executable), of this machine's.
  std::optional<RematDevice> rematDevice;
  if (haveDeviceProfile(o, request.reportDevice))
    if (auto profile = findDeviceProfile(o, request.reportDevice)) {
      auto at = [](const std::map<std::string, double> &rates, const std::string &dtype) {
        auto it = rates.count(dtype) ? rates.find(dtype) : rates.find("f32");
        return it == rates.end() ? 0.0 : it->second;
      };
      rematDevice =
          RematDevice{profile->memoryBytes,
                      at(profile->matmulFlops,
                         mlir::ein::contractionDtype(*profile, "f32", priced.tf32 == "on")),
                      at(profile->vectorFlops, "f32"), profile->bandwidth};
    }
  if (!request.functions.empty() && !cuda)
    if (auto here = thisMachineForRemat(rematDevice ? &*rematDevice : nullptr))
      rematDevice = here;
  // The report's remat trade-off is of the step before its policy.
  std::optional<ReportRematSweep> sweep;
  if (report)
    sweep = sweepRemat(module, o, rematDevice ? &*rematDevice : nullptr, o.rematSweep);
  // A budget must fit the functions this compile lowers (and the report's
  // @train_step); the others only get its best try.
  std::vector<std::string> mustFit = request.functions;
  if (report)
    mustFit.push_back("train_step");
  if (step && failed(applyRemat(module, priced, rematDevice ? &*rematDevice : nullptr, mustFit)))
    return false;

  // Lowering: the CPU backend's Programs call the kernels `out.kernels`
  // collects (one table for every function).
  if (cpu)
    out.kernels = ::ein::codegen::KernelCompiler::create();
  std::vector<einrt::Program> programs;
  for (const std::string &name : request.functions) {
    auto fn = module.lookupSymbol<func::FuncOp>(name);
    if (!fn)
      return fail("the module has no @" + name);
    FailureOr<einrt::Program> program = cpu ? ::ein::codegen::lowerToCpuProgram(fn, *out.kernels)
                                            : ::ein::codegen::lowerToProgram(fn);
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
    auto at = std::find(request.functions.begin(), request.functions.end(), "train_step");
    const einrt::Program *trainStep = cpu && at != request.functions.end()
                                          ? &programs[size_t(at - request.functions.begin())]
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
    if (!reportOnStep(module, *trainStep, o, priced, request.reportDevice, r))
      return false;
    r.rematSweep = std::move(sweep);
    fillSweepStepTimes(r);
    if (request.renderReport) {
      llvm::raw_string_ostream json(out.bundle.reportJson), text(out.reportText);
      printReportJson(r, json);
      printReportText(r, text);
    }
    out.report = std::move(r);
  }

  if (cuda) {
    std::vector<const einrt::Program *> lowered;
    for (const einrt::Program &p : programs)
      lowered.push_back(&p);
    out.bundle.cuda = ::ein::codegen::renderCudaBundle(*out.kernels, lowered);
  }
  if (request.backend == "cpu" && request.jit) {
    if (failed(out.kernels->compile()))
      return false;
    out.kernelsCompiled = out.kernels->compiledCount();
    out.kernelsCached = out.kernels->cachedCount();
  }

  // The bundle: the requested functions' Programs and the model's metadata.
  einrt::ModelBundle &b = out.bundle;
  b.sourceName = o.input;
  b.modelName = llvm::sys::path::stem(o.input).str();
  b.source = source;
  if (auto dims = module->getAttrOfType<DictionaryAttr>("ein.dims"))
    for (NamedAttribute a : dims)
      if (auto i = dyn_cast<IntegerAttr>(a.getValue()))
        b.dims[a.getName().str()] = i.getInt();
  b.settings = priced;
  for (size_t i = 0; i < request.functions.size(); ++i)
    b.programs.push_back(einrt::BundledProgram{cpu ? "cpu" : "reference", std::move(programs[i])});
  b.loss =
      !module->hasAttr("ein.tokens") || module->hasAttr("ein.loss") ? "objective" : "cross_entropy";
  // How a token window maps onto the first train program's inputs: the
  // `data` setting, else inferred (absent when it cannot be: the runner
  // says why when asked to train).
  for (const einrt::BundledProgram &bp : b.programs) {
    if (!needsTrainStep(bp.program.name))
      continue;
    std::string error;
    if (priced.data)
      b.window = einrt::parseWindowMapping(*priced.data);
    else if (auto inferred = einrt::inferWindowMapping(bp.program, error))
      b.window = *inferred;
    break;
  }
  out.compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return true;
}

bool buildReport(ModuleOp module, const Options &o, const einrt::TrainSettings &settings,
                 Report &r) {
  // Nothing to run: the report lowers @train_step itself (for the CPU, or
  // as the reference backend lowers it where the CPU backend cannot).
  CompileRequest request;
  request.jit = false;
  request.report = true;
  request.reportDevice = o.device;
  request.renderReport = false; // the caller prints the format asked for
  CompiledModel compiled;
  if (!compileModel(module, o, settings, /*source=*/"", request, compiled))
    return false;
  r = std::move(*compiled.report);
  return true;
}

} // namespace einc
