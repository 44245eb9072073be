//===- Run.cpp - `einc run`: one batch on the CPU, cuda or reference backend ===//
//
// Lowers @forward / @grad / @train_step to Programs (for the CPU backend:
// BLAS Matmul steps and JIT-compiled kernels; for the cuda backend: the same
// Programs, cuBLASLt matmuls and the kernels rendered to CUDA; for the
// reference backend: the reference kernels), initialises params (or loads
// them), draws or loads inputs, runs, and prints the loss and gradient
// norms. With --gradcheck,
// holds @grad against finite differences of @forward in float64 (always on
// the reference backend).
//
//===----------------------------------------------------------------------===//
#include "Run.h"
#include "BackendDevice.h"
#include "runtime/base/StatusOut.h"

#include "tools/driver/Compile.h"
#include "tools/driver/Errors.h"
#include "tools/driver/Stages.h"

#include "tools/runner/Distributed.h"

#include "codegen/CpuKernels.h"
#include "codegen/CpuLowering.h"
#include "codegen/Lowerings.h"
#include "codegen/ReferenceLowering.h"
#include "runtime/base/LossScaleState.h"
#include "runtime/base/TerminalText.h"
#include "runtime/core/Executor.h"
#include "runtime/core/GradCheck.h"
#include "runtime/core/Init.h"
#include "runtime/core/Safetensors.h"
#include "runtime/core/StepProfile.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/io/Checkpoint.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <set>

using namespace mlir;

namespace einc {
namespace {

int fail(const llvm::Twine &message) { return exitError("", message); }

/// The backend a run uses (runtime/core/Backend.h) and what it holds for the
/// whole run: the kernel compiler of its lowering (whose table the executors
/// call), one device for every executor, and the Programs lowered so far (a
/// kernel section is rendered again, notes and all, as the table grows).
struct Backend {
  const einrt::Backend *kind = nullptr;
  const ::ein::codegen::ProgramLowering *lowering = nullptr;
  const einrt::TrainSettings *settings = nullptr; // the model's (fusion, step, lr)
  std::unique_ptr<::ein::codegen::KernelCompiler> kernels;
  std::shared_ptr<einrt::Device> device;
  std::deque<einrt::Program> lowered;
  std::string name() const { return std::string(kind->name()) + " backend"; }
};

/// Steps of `program` of `kind`.
int64_t stepsOf(const einrt::Program &program, einrt::StepKind kind) {
  return std::count_if(program.steps.begin(), program.steps.end(),
                       [&](const einrt::Step &s) { return s.kind == kind; });
}

/// Renders the backend's kernel section of every kernel so far and gives
/// it to the device.
bool attachSection(Backend &backend, llvm::StringRef name, const einrt::Program &program) {
  // Every kernel of the table so far, with the notes of every Program
  // lowered (kernel i stays kernel i as the table grows).
  backend.lowered.push_back(program);
  std::vector<const einrt::Program *> programs;
  for (const einrt::Program &p : backend.lowered)
    programs.push_back(&p);
  FailureOr<std::vector<uint8_t>> bytes = ::ein::codegen::renderKernelSection(
      backend.kind->kernelSection(), backend.kernels.get(), programs);
  if (failed(bytes))
    return false;
  einrt::BackendKernels kernels;
  kernels.section = &*bytes;
  if (einrt::Status s = backend.kind->attachKernels(*backend.device, kernels); !s.ok()) {
    fail(s.message());
    return false;
  }
  llvm::outs() << backend.name() << ": @" << name << ": "
               << stepsOf(program, einrt::StepKind::Matmul) << " matmul steps, "
               << stepsOf(program, einrt::StepKind::Kernel) << " kernel steps; "
               << backend.kernels->kernelCount() << " kernels rendered; "
               << backend.kind->describe(*backend.device) << "\n";
  return true;
}

/// JIT-compiles the host kernels so far and gives the table to the device.
bool attachHostKernels(Backend &backend, llvm::StringRef name, const einrt::Program &program) {
  ::ein::codegen::KernelCompiler &k = *backend.kernels;
  double before = k.compileSeconds();
  int64_t compiled = k.compiledCount(), cached = k.cachedCount();
  if (failed(k.compile())) {
    fail("cannot compile the kernels of @" + name);
    return false;
  }
  int64_t epilogues = 0;
  for (const einrt::Step &s : program.steps)
    if (const auto *g = std::get_if<einrt::GemmDesc>(&s.payload))
      epilogues += g->post.present();
  einrt::BackendKernels kernels;
  kernels.host = k.table();
  if (einrt::Status s = backend.kind->attachKernels(*backend.device, kernels); !s.ok()) {
    fail(s.message());
    return false;
  }
  int threads = backend.kind->threads(*backend.device);
  llvm::outs() << backend.name() << ": @" << name << ": "
               << stepsOf(program, einrt::StepKind::Matmul) << " BLAS matmul steps";
  if (epilogues > 0)
    llvm::outs() << " (" << epilogues << " with epilogues)";
  llvm::outs() << ", " << stepsOf(program, einrt::StepKind::Kernel)
               << " kernel steps; kernels: " << k.compiledCount() - compiled << " compiled, "
               << k.cachedCount() - cached << " cached, "
               << llvm::format("%.2f s compiling for ", k.compileSeconds() - before)
               << k.jitTarget() << "; " << threads << (threads == 1 ? " thread\n" : " threads\n");
  return true;
}

/// What the CPU device says of a Program's GEMMs (bf16 path, f16 widening,
/// the f32 GEMM table).
void describeCpuGemms(const einrt::CpuDevice &cpu, llvm::StringRef name,
                      const einrt::Program &program) {
  if (int64_t steps = einrt::CpuDevice::bf16GemmSteps(program))
    llvm::outs() << "cpu backend: @" << name << ": " << steps << " bf16 GEMM steps through "
                 << einrt::bf16GemmPathDescription(*cpu.bf16GemmPath()) << "\n";
  if (int64_t steps = einrt::CpuDevice::f16GemmSteps(program))
    llvm::outs() << "cpu backend: @" << name << ": " << steps
                 << " f16 GEMM steps widened to f32 (exactly) for cblas_sgemm: the CPU backend "
                    "has no f16 GEMM\n";
  if (const einrt::GemmChooser *gemms = cpu.gemmChooser(); gemms && !gemms->isDefault())
    llvm::outs() << "cpu backend: @" << name << ": f32 GEMMs on " << gemms->describe() << "\n";
  if (!cpu.gemmMeasurement().empty())
    llvm::outs() << "cpu backend: @" << name << ": " << cpu.gemmMeasurement() << "\n";
}

/// An executor of @name on the backend's device; without a backend, on the
/// reference interpreter in `precision` (gradcheck's float64 runs).
std::optional<einrt::Executor> makeExecutor(ModuleOp module, llvm::StringRef name,
                                            einrt::Precision precision,
                                            Backend *backend = nullptr) {
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  if (!fn) {
    fail("the module has no @" + name);
    return std::nullopt;
  }
  if (backend && backend->lowering->fused && failed(applyFusion(module, *backend->settings)))
    return std::nullopt;
  // `budget:N%` where the device's memory is this machine's: N% of it.
  std::optional<RematDevice> here;
  if (!backend || backend->kind->hostMemory())
    here = thisMachineForRemat(nullptr);
  if (backend && backend->settings &&
      failed(applyRemat(module, *backend->settings, here ? &*here : nullptr)))
    return std::nullopt;
  auto program = backend ? backend->lowering->lower(fn, backend->kernels.get())
                         : ::ein::codegen::lowerToProgram(fn);
  if (failed(program))
    return std::nullopt;
  if (backend && *backend->kind->kernelSection() && !attachSection(*backend, name, *program))
    return std::nullopt;
  if (backend && backend->kind->hostKernels() && !attachHostKernels(*backend, name, *program))
    return std::nullopt;
  std::string error;
  auto ex = backend ? einrt::statusOut(einrt::Executor::create(*program, backend->device), error)
                    : einrt::statusOut(einrt::Executor::create(*program, precision), error);
  if (!ex) {
    fail("cannot run @" + name + ": " + error);
    return ex;
  }
  if (auto *cpu = backend ? dynamic_cast<einrt::CpuDevice *>(backend->device.get()) : nullptr)
    describeCpuGemms(*cpu, name, *program);
  llvm::outs() << "@" << name << ": "
               << llvm::format("arena %.1f MiB (+ %.1f MiB params, inputs, state, results)\n",
                               ex->arenaBytes() / 1048576.0, ex->residentBytes() / 1048576.0);
  return ex;
}

/// The exclusive upper bound for random token ids: the `vocab` dim when the
/// model declares one, else the rows of the smallest table an input indexes.
int32_t tokenBound(ModuleOp module, const einrt::Program &p) {
  if (auto dims = module->getAttrOfType<DictionaryAttr>("ein.dims"))
    if (auto vocab = dims.getAs<IntegerAttr>("vocab"))
      return static_cast<int32_t>(std::min<int64_t>(vocab.getInt(), INT32_MAX));
  int64_t bound = std::numeric_limits<int32_t>::max();
  for (const einrt::Step &s : p.steps)
    if (s.kind == einrt::StepKind::Gather &&
        p.buffers[s.inputs[1]].role == einrt::BufferRole::Input)
      bound = std::min(bound, p.buffers[s.inputs[0]].shape.front());
  return bound == std::numeric_limits<int32_t>::max() ? 2 : static_cast<int32_t>(bound);
}

double norm(const std::vector<double> &values) {
  double sum = 0;
  for (double v : values)
    sum += v * v;
  return std::sqrt(sum);
}

/// Params from their initialisers, inputs at random, then whatever --load
/// provides on top.
bool prepareArguments(const Options &o, ModuleOp module, einrt::Executor &ex) {
  std::string error;
  if (!statusOut(einrt::initParams(ex, o.seed), error))
    return fail(error), false;
  if (!statusOut(einrt::fillRandomInputs(ex, o.seed + 1, tokenBound(module, ex.program())), error))
    return fail(error), false;
  if (o.load.empty())
    return true;
  einrt::SafetensorsMetadata metadata;
  bool checksummed = false;
  auto tensors = statusOut(einrt::readSafetensors(o.load, metadata, &checksummed), error);
  if (!tensors)
    return fail("cannot load " + einrt::quoted(o.load) + ": " + error), false;
  if (std::string missing = einrt::missingChecksums(o.load, metadata, checksummed);
      !missing.empty())
    return fail("cannot load " + missing), false;
  if (std::string note = einrt::uncheckedNote(o.load, checksummed); !note.empty())
    llvm::errs() << "einc: " << note << "\n";
  const einrt::Program &p = ex.program();
  int loaded = 0;
  std::set<int32_t> given;
  for (const einrt::TensorData &t : *tensors) {
    int64_t found = -1;
    for (int32_t a : p.arguments)
      if (p.buffers[a].name == t.name)
        found = a;
    if (found < 0) {
      // The nearest argument name, for a misspelling.
      std::string nearest;
      unsigned best = 3;
      for (int32_t a : p.arguments)
        if (unsigned d = llvm::StringRef(p.buffers[a].name).edit_distance(t.name); d < best)
          best = d, nearest = p.buffers[a].name;
      llvm::errs() << "einc: warning: " << einrt::quoted(o.load) << " has a tensor "
                   << einrt::quoted(t.name) << " that the model does not take"
                   << (nearest.empty() ? "" : " (did you mean " + einrt::quoted(nearest) + "?)")
                   << "\n";
      continue;
    }
    if (!statusOut(ex.importBuffer(found, t), error))
      return fail("cannot load " + einrt::quoted(t.name) + " from " + einrt::quoted(o.load) + ": " +
                  error),
             false;
    given.insert(int32_t(found));
    ++loaded;
  }
  // What the file did not give keeps its initialiser: say which params.
  std::string missing;
  int missingCount = 0;
  for (int32_t a : p.arguments)
    if (p.buffers[a].role == einrt::BufferRole::Param && !given.count(a)) {
      missing += (missing.empty() ? "" : ", ") + einrt::quoted(p.buffers[a].name);
      ++missingCount;
    }
  if (missingCount > 0)
    llvm::errs() << "einc: warning: " << einrt::quoted(o.load) << " has no " << missing
                 << (missingCount == 1 ? ": that param keeps its initialiser"
                                       : ": those params keep their initialisers")
                 << "\n";
  llvm::outs() << "loaded " << loaded << " tensors from " << einrt::terminalSafe(o.load) << "\n";
  return true;
}

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

/// --profile in forward / gradient mode: after the first run (which warms
/// caches and pages), times this many more.
constexpr int kProfileRuns = 5;

/// Runs `ex` kProfileRuns more times with profiling on and prints the table.
int profileRuns(einrt::Executor &ex) {
  std::string error;
  ex.setProfiling(true);
  ex.resetProfile();
  for (int r = 0; r < kProfileRuns; ++r)
    if (!statusOut(ex.run(), error))
      return fail(error);
  llvm::outs() << einrt::formatStepProfile(ex.program(), ex.stepSeconds(), ex.profiledRuns());
  return 0;
}

int runForward(const Options &o, ModuleOp module, einrt::Precision precision, Backend &backend) {
  auto ex = makeExecutor(module, "forward", precision, &backend);
  if (!ex || !prepareArguments(o, module, *ex))
    return 1;
  std::string error;
  auto start = std::chrono::steady_clock::now();
  if (!statusOut(ex->run(), error))
    return fail(error);
  double loss;
  if (!statusOut(ex->readScalar(0), loss, error))
    return fail(error);
  llvm::outs() << "loss " << llvm::format("%.6f", loss) << "   (forward, " << backend.name()
               << llvm::format(", %.2f s)\n", seconds(start));
  return o.profile ? profileRuns(*ex) : 0;
}

int runGrad(const Options &o, ModuleOp module, einrt::Precision precision, Backend &backend) {
  if (failed(buildGrad(module)))
    return 1;
  auto ex = makeExecutor(module, "grad", precision, &backend);
  if (!ex || !prepareArguments(o, module, *ex))
    return 1;
  std::string error;
  auto start = std::chrono::steady_clock::now();
  if (!statusOut(ex->run(), error))
    return fail(error);
  double elapsed = seconds(start);
  double loss;
  if (!statusOut(ex->readScalar(0), loss, error))
    return fail(error);
  double total = 0;
  const einrt::Program &p = ex->program();
  std::vector<std::pair<std::string, double>> norms;
  for (size_t r = 1; r < ex->resultCount(); ++r) {
    std::vector<double> values;
    if (!statusOut(ex->read(size_t(p.results[r])), values, error))
      return fail(error);
    double n = norm(values);
    total += n * n;
    norms.emplace_back(p.resultNames[r], n);
  }
  llvm::outs() << "loss " << llvm::format("%.6f", loss) << "   (forward + backward, "
               << backend.name() << llvm::format(", %.2f s)\n", elapsed);
  llvm::outs() << "grad norm " << llvm::format("%.6g", std::sqrt(total)) << " (all params)\n";
  size_t width = 0;
  for (auto &[name, n] : norms)
    width = std::max(width, name.size());
  for (size_t r = 1; r < ex->resultCount(); ++r) {
    const auto &[name, n] = norms[r - 1];
    llvm::outs() << "  " << llvm::left_justify(name, width) << "  "
                 << llvm::left_justify(einrt::shapeText(ex->shape(size_t(p.results[r]))), 16)
                 << llvm::format("%.6g", n) << "\n";
  }
  if (!std::isfinite(loss))
    return fail("the loss is not finite");
  if (o.profile && profileRuns(*ex) != 0)
    return 1;

  if (!o.saveGrads.empty()) {
    std::vector<einrt::TensorData> out;
    for (size_t r = 0; r < ex->resultCount(); ++r) {
      einrt::TensorData t;
      if (!statusOut(ex->exportBuffer(size_t(p.results[r])), t, error))
        return fail(error);
      t.name = p.resultNames[r];
      out.push_back(std::move(t));
    }
    if (!statusOut(einrt::writeSafetensors(o.saveGrads, out, {{"format", "pt"}}), error))
      return fail("cannot write " + einrt::quoted(o.saveGrads) + ": " + error);
    llvm::outs() << "wrote the loss and " << out.size() - 1 << " gradients to "
                 << einrt::terminalSafe(o.saveGrads) << "\n";
  }

  if (o.gradcheck) {
    auto forward = makeExecutor(module, "forward", einrt::Precision::F64);
    auto grad = makeExecutor(module, "grad", einrt::Precision::F64);
    if (!forward || !grad)
      return 1;
    // Both take (inputs, params): the same values as the run above.
    for (size_t a = 0; a < ex->argumentCount(); ++a) {
      std::vector<double> values;
      if (!statusOut(ex->read(size_t(p.arguments[a])), values, error))
        return fail(error);
      if (!statusOut(forward->setArgument(a, values.data(), values.size()), error) ||
          !statusOut(grad->setArgument(a, values.data(), values.size()), error))
        return fail(error);
    }
    einrt::GradCheckOptions options;
    options.samplesPerParam = static_cast<int>(o.samples);
    options.seed = o.seed;
    einrt::GradCheckReport report;
    if (!statusOut(einrt::gradCheck(*forward, *grad, options), report, error))
      return fail(error);
    const einrt::GradCheckEntry &w = report.worst;
    llvm::outs() << "gradcheck: " << report.checked
                 << " entries against central differences (float64, h = "
                 << llvm::format("%g", options.step) << "); worst relative error "
                 << llvm::format("%.3g", w.relativeError) << " at " << w.param << "[" << w.index
                 << "] (analytic " << llvm::format("%.9g", w.analytic) << ", numeric "
                 << llvm::format("%.9g", w.numeric) << ")\n";
    llvm::outs() << "gradcheck: bound " << llvm::format("%g", options.tolerance)
                 << " on |analytic - numeric| / max(|analytic|, |numeric|, floor); floor "
                 << llvm::format("%.3g", w.floor) << " there = max("
                 << llvm::format("%g", options.floor) << ", "
                 << llvm::format("%g", options.noiseFactor) << " eps |loss| / h / "
                 << llvm::format("%g", options.tolerance) << ") at |loss| "
                 << llvm::format("%.6g", w.loss) << "\n";
    if (report.unroundedBuffers > 0)
      llvm::outs() << "gradcheck: bf16/f16 computed in float64 without rounding ("
                   << report.unroundedBuffers << " buffers; " << report.identityCasts
                   << (report.identityCasts == 1 ? " cast" : " casts")
                   << " to bf16/f16 taken as the identity)\n";
    if (!report.passed && report.quantizations > 0)
      llvm::outs() << "gradcheck: the model has " << report.quantizations
                   << " fp8 quantisations: their gradient is straight-through (the identity, by "
                      "design), while finite differences see the rounding to fp8; check the "
                      "gradients with --set fp8=none\n";
    llvm::outs().flush(); // the lines above before a failure's
    if (!report.passed)
      // %g, not formatv's "{0:g}" (not a float style there: it printed 0.00).
      return fail("gradient check failed: relative error " +
                  llvm::formatv("{0}", llvm::format("%.3g", w.relativeError)).str() + " at " +
                  w.param + "[" + std::to_string(w.index) + "] is not below " +
                  llvm::formatv("{0}", llvm::format("%g", options.tolerance)).str());
  }
  return 0;
}

int runSteps(const Options &o, ModuleOp module, einrt::Precision precision, Backend &backend) {
  if (failed(buildTrainStep(module, *backend.settings)))
    return 1;
  auto ex = makeExecutor(module, "train_step", precision, &backend);
  if (!ex || !prepareArguments(o, module, *ex))
    return 1;
  const einrt::Program &p = ex->program();
  std::string error;
  // Results 2.. feed the arguments of the same name (params, optimizer state).
  std::vector<std::pair<size_t, size_t>> feedback;
  int64_t stepArg = -1, lrArg = -1;
  for (size_t a = 0; a < p.arguments.size(); ++a) {
    const einrt::Buffer &b = p.buffers[p.arguments[a]];
    if (b.name == "step" && b.role == einrt::BufferRole::Scalar)
      stepArg = a;
    if (b.name == "lr" && b.role == einrt::BufferRole::Scalar)
      lrArg = a;
    if (b.role != einrt::BufferRole::Param && b.role != einrt::BufferRole::OptState)
      continue;
    for (size_t r = 2; r < p.results.size(); ++r)
      if (p.resultNames[r] == b.name)
        feedback.emplace_back(r, a);
  }
  if (stepArg < 0 || lrArg < 0)
    return fail("@train_step lacks its step or lr argument");
  // Loss scaling (fp16-mixed): a step whose gradients overflowed is skipped
  // inside the program; it is reported as such, and the optimizer's step
  // count does not advance (as the trainer does).
  int64_t scaleResult = -1, skippedResult = -1;
  for (size_t r = 2; r < p.results.size(); ++r) {
    if (p.resultNames[r] == einrt::kLossScaleName)
      scaleResult = int64_t(r);
    if (p.resultNames[r] == einrt::kSkippedStepsName)
      skippedResult = int64_t(r);
  }
  double skippedBefore = 0;
  double lr = backend.settings->lr;
  llvm::outs() << "training " << o.steps << " step" << (o.steps == 1 ? "" : "s")
               << " on one batch (" << backend.name() << ", lr " << einrt::formatShortest(lr)
               << ")\n";
  auto start = std::chrono::steady_clock::now();
  double t = 0;
  for (int64_t step = 1; step <= o.steps; ++step) {
    t += 1;
    if (!statusOut(ex->setArgument(stepArg, &t, 1), error) ||
        !statusOut(ex->setArgument(lrArg, &lr, 1), error))
      return fail(error);
    // --profile: every step after the first, which warms caches and pages.
    ex->setProfiling(o.profile && (step > 1 || o.steps == 1));
    if (!statusOut(ex->run(), error))
      return fail(error);
    double loss, gradNorm;
    if (!statusOut(ex->readScalar(0), loss, error) ||
        !statusOut(ex->readScalar(1), gradNorm, error))
      return fail(error);
    llvm::outs() << "step " << step << "  loss " << llvm::format("%.6f", loss) << "  grad_norm "
                 << llvm::format("%.6g", gradNorm);
    bool skipped = false;
    if (skippedResult >= 0) {
      double skippedNow, scale;
      if (!statusOut(ex->readScalar(size_t(skippedResult)), skippedNow, error) ||
          !statusOut(ex->readScalar(size_t(scaleResult)), scale, error))
        return fail(error);
      skipped = skippedNow > skippedBefore;
      skippedBefore = skippedNow;
      llvm::outs() << "  loss_scale " << einrt::formatShortest(scale)
                   << (skipped ? "  (skipped: a gradient is not finite)" : "");
    }
    llvm::outs() << "\n";
    if (skipped)
      t -= 1;
    if (!std::isfinite(loss) || (!skipped && !std::isfinite(gradNorm)))
      return fail("step " + llvm::Twine(step) + ": the loss or gradient norm is not finite");
    for (auto [r, a] : feedback) {
      if (!statusOut(ex->copyFrom(size_t(p.arguments[a]), *ex, size_t(p.results[r])), error))
        return fail(error);
    }
  }
  llvm::outs() << llvm::format("%.2f s\n", seconds(start));
  if (o.profile)
    llvm::outs() << einrt::formatStepProfile(p, ex->stepSeconds(), ex->profiledRuns());
  if (!o.saveParams.empty()) {
    std::vector<einrt::TensorData> out;
    for (auto [r, a] : feedback) {
      einrt::TensorData t;
      if (!statusOut(ex->exportBuffer(size_t(p.arguments[a])), t, error))
        return fail(error);
      t.name = p.buffers[p.arguments[a]].name;
      out.push_back(std::move(t));
    }
    if (!statusOut(einrt::writeSafetensors(o.saveParams, out,
                                           {{"format", "pt"}, {"step", std::to_string(o.steps)}}),
                   error))
      return fail("cannot write " + einrt::quoted(o.saveParams) + ": " + error);
    llvm::outs() << "wrote " << out.size() << " tensors to " << einrt::terminalSafe(o.saveParams)
                 << "\n";
  }
  return 0;
}

} // namespace

int runModel(const Options &o, const einrt::TrainSettings &settings, ModuleOp module) {
  auto precision = o.f64 ? einrt::Precision::F64 : einrt::Precision::F32;
  Backend backend;
  backend.kind = einrt::findBackend(o.backend);
  backend.lowering = ::ein::codegen::findProgramLowering(backend.kind->programLowering());
  if (!backend.lowering)
    return fail("this einc cannot lower Programs for the " + o.backend + " backend");
  backend.settings = &settings;
  if (backend.lowering->kernels && !(backend.kernels = ::ein::codegen::KernelCompiler::create()))
    return fail("cannot start the CPU backend's kernel compiler");
  einrt::BackendOpen open = runner::deviceOptions({}, settings);
  open.threads = o.threads;
  open.f64 = o.f64;
  if (!(backend.device = openBackendDevice(*backend.kind, open)))
    return 1;
  // Every mode runs the precision policy's forward (the step's pipeline
  // finds it applied).
  if (failed(applyPrecision(module, settings)))
    return 1;
  if (o.mode == "forward")
    return runForward(o, module, precision, backend);
  if (o.mode == "step")
    return runSteps(o, module, precision, backend);
  return runGrad(o, module, precision, backend);
}

} // namespace einc
