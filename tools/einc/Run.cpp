//===- Run.cpp - `einc run`: one batch on the CPU, cuda or reference backend ===//
//
// Compiles @forward, @grad or @train_step through the one compile path
// (tools/driver/Compile.h compileModel: for the CPU backend BLAS Matmul
// steps and JIT-compiled kernels; for the cuda backend the same Programs,
// cuBLASLt matmuls and the kernels rendered to CUDA; for the reference
// backend the reference kernels), initialises params (or loads them), draws
// or loads inputs, runs, and prints the loss and gradient norms. With
// --gradcheck, holds @grad against finite differences of @forward in
// float64 (always on the reference backend, compiled from the model as
// elaborated).
//
//===----------------------------------------------------------------------===//
#include "Run.h"
#include "BackendDevice.h"
#include "CompileOptions.h"

#include "tools/driver/Compile.h"
#include "tools/driver/Errors.h"

#include "tools/runner/Distributed.h"

#include "runtime/base/LossScaleState.h"
#include "runtime/base/TerminalText.h"
#include "runtime/core/Executor.h"
#include "runtime/core/FloatFormats.h"
#include "runtime/core/GradCheck.h"
#include "runtime/core/Init.h"
#include "runtime/core/Safetensors.h"
#include "runtime/core/StepProfile.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/io/Checkpoint.h"

#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <set>

using namespace mlir;

namespace einc {
namespace {

int fail(const llvm::Twine &message) { return exitError("", message); }

/// `status`'s message as einc's error line; 1.
int fail(const einrt::Status &status) { return fail(status.message()); }

/// `result`'s value into `out`; false after printing its failure.
template <class T, class U> bool got(einrt::Expected<T> result, U &out) {
  if (!result.ok())
    return fail(result.status()), false;
  out = result.take();
  return true;
}

/// What a run holds: the request every function is compiled with (its
/// backend, settings, model), the device every executor runs on, and the
/// compiled model whose kernel table those executors call.
struct RunBackend {
  const einrt::Backend *kind = nullptr;
  CompileRequest request;
  std::shared_ptr<einrt::Device> device;
  CompiledModel compiled;
  std::string name() const { return std::string(kind->name()) + " backend"; }
};

/// Steps of `program` of `kind`.
int64_t stepsOf(const einrt::Program &program, einrt::StepKind kind) {
  return std::count_if(program.steps.begin(), program.steps.end(),
                       [&](const einrt::Step &s) { return s.kind == kind; });
}

/// Gives the device the compiled model's kernels (its host table or its
/// kernel section) and says what @name runs.
bool attachKernels(RunBackend &backend, llvm::StringRef name, const einrt::Program &program) {
  const einrt::Backend &kind = *backend.kind;
  CompiledModel &c = backend.compiled;
  einrt::BackendKernels kernels;
  if (kind.hostKernels())
    kernels.host = c.kernels->table();
  kernels.section = c.bundle.kernelSection(kind.kernelSection());
  if (einrt::Status s = kind.attachKernels(*backend.device, kernels); !s.ok()) {
    fail(s);
    return false;
  }
  llvm::raw_ostream &os = llvm::outs();
  if (kernels.section) {
    os << backend.name() << ": @" << name << ": " << stepsOf(program, einrt::StepKind::Matmul)
       << " matmul steps, " << stepsOf(program, einrt::StepKind::Kernel) << " kernel steps; "
       << c.kernels->kernelCount() << " kernels rendered; " << kind.describe(*backend.device)
       << "\n";
  } else if (kind.hostKernels()) {
    int64_t epilogues = 0;
    for (const einrt::Step &s : program.steps)
      if (const auto *g = std::get_if<einrt::GemmDesc>(&s.payload))
        epilogues += g->post.present();
    int threads = kind.threads(*backend.device);
    os << backend.name() << ": @" << name << ": " << stepsOf(program, einrt::StepKind::Matmul)
       << " BLAS matmul steps";
    if (epilogues > 0)
      os << " (" << epilogues << " with epilogues)";
    os << ", " << stepsOf(program, einrt::StepKind::Kernel)
       << " kernel steps; kernels: " << c.kernelsCompiled << " compiled, " << c.kernelsCached
       << " cached, " << llvm::format("%.2f s compiling for ", c.kernels->compileSeconds())
       << c.kernels->jitTarget() << "; " << threads << (threads == 1 ? " thread\n" : " threads\n");
  }
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

/// The executor's memory line.
void describeMemory(llvm::StringRef name, const einrt::Executor &ex) {
  llvm::outs() << "@" << name << ": "
               << llvm::format("arena %.1f MiB (+ %.1f MiB params, inputs, state, results)\n",
                               ex.arenaBytes() / 1048576.0, ex.residentBytes() / 1048576.0);
}

/// @name compiled for the run's backend (the one compile path, once per
/// run) and an executor of it on the backend's device.
std::optional<einrt::Executor> compileAndOpen(ModuleOp module, llvm::StringRef name,
                                              RunBackend &backend) {
  CompileRequest request = backend.request;
  request.functions = {name.str()};
  if (!compileModel(module, request, backend.compiled))
    return std::nullopt;
  const einrt::Program &program = *backend.compiled.program(name.str());
  if (!attachKernels(backend, name, program))
    return std::nullopt;
  einrt::Expected<einrt::Executor> ex = einrt::Executor::create(program, backend.device);
  if (!ex.ok()) {
    fail("cannot run @" + name + ": " + ex.status().message());
    return std::nullopt;
  }
  if (auto *cpu = dynamic_cast<einrt::CpuDevice *>(backend.device.get()))
    describeCpuGemms(*cpu, name, program);
  describeMemory(name, *ex);
  return ex.take();
}

/// --gradcheck's executors: @forward and @grad of `module` (as elaborated)
/// compiled for the reference backend and run in float64.
struct Float64Pair {
  CompiledModel compiled;
  std::optional<einrt::Executor> forward, grad;
};
bool compileFloat64(ModuleOp module, const CompileRequest &run, Float64Pair &out) {
  CompileRequest request = run;
  request.backend = "reference";
  request.functions = {"forward", "grad"};
  request.jit = false;
  if (!compileModel(module, request, out.compiled))
    return false;
  for (auto [name, ex] : {std::pair{"forward", &out.forward}, std::pair{"grad", &out.grad}}) {
    einrt::Expected<einrt::Executor> made =
        einrt::Executor::create(*out.compiled.program(name), einrt::Precision::F64);
    if (!made.ok())
      return fail("cannot run @" + llvm::Twine(name) + ": " + made.status().message()), false;
    describeMemory(name, *made);
    *ex = made.take();
  }
  return true;
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
  if (einrt::Status s = einrt::initParams(ex, o.seed); !s.ok())
    return fail(s), false;
  if (einrt::Status s = einrt::fillRandomInputs(ex, o.seed + 1, tokenBound(module, ex.program()));
      !s.ok())
    return fail(s), false;
  if (o.load.empty())
    return true;
  einrt::SafetensorsMetadata metadata;
  bool checksummed = false;
  auto tensors = einrt::readSafetensors(o.load, metadata, &checksummed);
  if (!tensors.ok())
    return fail("cannot load " + einrt::quoted(o.load) + ": " + tensors.status().message()), false;
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
    if (einrt::Status s = ex.importBuffer(found, t); !s.ok())
      return fail("cannot load " + einrt::quoted(t.name) + " from " + einrt::quoted(o.load) + ": " +
                  s.message()),
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
  ex.setProfiling(true);
  ex.resetProfile();
  for (int r = 0; r < kProfileRuns; ++r)
    if (einrt::Status s = ex.run(); !s.ok())
      return fail(s);
  llvm::outs() << einrt::formatStepProfile(ex.program(), ex.stepSeconds(), ex.profiledRuns());
  return 0;
}

int runForward(const Options &o, ModuleOp module, RunBackend &backend) {
  auto ex = compileAndOpen(module, "forward", backend);
  if (!ex || !prepareArguments(o, module, *ex))
    return 1;
  auto start = std::chrono::steady_clock::now();
  if (einrt::Status s = ex->run(); !s.ok())
    return fail(s);
  double loss;
  if (!got(ex->readScalar(0), loss))
    return 1;
  llvm::outs() << "loss " << llvm::format("%.6f", loss) << "   (forward, " << backend.name()
               << llvm::format(", %.2f s)\n", seconds(start));
  return o.profile ? profileRuns(*ex) : 0;
}

int runGrad(const Options &o, ModuleOp module, RunBackend &backend) {
  // --gradcheck compiles the model as elaborated again, for the reference
  // backend in float64: a copy from before this run's compile changes it.
  OwningOpRef<ModuleOp> elaborated;
  if (o.gradcheck)
    elaborated = cast<ModuleOp>(module->clone());
  backend.request.plainGradient = true; // the gradients, not loss_scale times them
  auto ex = compileAndOpen(module, "grad", backend);
  if (!ex || !prepareArguments(o, module, *ex))
    return 1;
  auto start = std::chrono::steady_clock::now();
  if (einrt::Status s = ex->run(); !s.ok())
    return fail(s);
  double elapsed = seconds(start);
  double loss;
  if (!got(ex->readScalar(0), loss))
    return 1;
  double total = 0;
  const einrt::Program &p = ex->program();
  std::vector<std::pair<std::string, double>> norms;
  for (size_t r = 1; r < ex->resultCount(); ++r) {
    std::vector<double> values;
    if (!got(ex->read(size_t(p.results[r])), values))
      return 1;
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
      if (!got(ex->exportBuffer(size_t(p.results[r])), t))
        return 1;
      t.name = p.resultNames[r];
      out.push_back(std::move(t));
    }
    if (einrt::Status s = einrt::writeSafetensors(o.saveGrads, out, {{"format", "pt"}}); !s.ok())
      return fail("cannot write " + einrt::quoted(o.saveGrads) + ": " + s.message());
    llvm::outs() << "wrote the loss and " << out.size() - 1 << " gradients to "
                 << einrt::terminalSafe(o.saveGrads) << "\n";
  }

  if (o.gradcheck) {
    Float64Pair f64;
    if (!compileFloat64(*elaborated, backend.request, f64))
      return 1;
    einrt::Executor &forward = *f64.forward, &grad = *f64.grad;
    // Both take (inputs, params): the same values as the run above.
    for (size_t a = 0; a < ex->argumentCount(); ++a) {
      std::vector<double> values;
      if (!got(ex->read(size_t(p.arguments[a])), values))
        return 1;
      if (einrt::Status s = forward.setArgument(a, values.data(), values.size()); !s.ok())
        return fail(s);
      if (einrt::Status s = grad.setArgument(a, values.data(), values.size()); !s.ok())
        return fail(s);
    }
    einrt::GradCheckOptions options;
    options.samplesPerParam = static_cast<int>(o.samples);
    options.seed = o.seed;
    einrt::GradCheckReport report;
    if (!got(einrt::gradCheck(forward, grad, options), report))
      return 1;
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

int runSteps(const Options &o, ModuleOp module, RunBackend &backend) {
  auto ex = compileAndOpen(module, "train_step", backend);
  if (!ex || !prepareArguments(o, module, *ex))
    return 1;
  const einrt::Program &p = ex->program();
  // Results 2.. feed the arguments of the same name (params, optimizer state).
  std::vector<std::pair<size_t, size_t>> feedback;
  int64_t stepArg = -1, lrArg = -1;
  for (size_t a = 0; a < p.arguments.size(); ++a) {
    const einrt::Buffer &b = p.buffers[p.arguments[a]];
    if (b.name == "seed" && b.role == einrt::BufferRole::Scalar) { // dropout's, with --seed
      const int32_t seed = einrt::dropoutSeed(o.seed);
      if (einrt::Status s = ex->setArgument(a, &seed, 1); !s.ok())
        return fail(s);
    }
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
  double lr = backend.compiled.settings.lr;
  llvm::outs() << "training " << o.steps << " step" << (o.steps == 1 ? "" : "s")
               << " on one batch (" << backend.name() << ", lr " << einrt::formatShortest(lr)
               << ")\n";
  auto start = std::chrono::steady_clock::now();
  double t = 0;
  for (int64_t step = 1; step <= o.steps; ++step) {
    t += 1;
    if (einrt::Status s = ex->setArgument(stepArg, &t, 1); !s.ok())
      return fail(s);
    if (einrt::Status s = ex->setArgument(lrArg, &lr, 1); !s.ok())
      return fail(s);
    // --profile: every step after the first, which warms caches and pages.
    ex->setProfiling(o.profile && (step > 1 || o.steps == 1));
    if (einrt::Status s = ex->run(); !s.ok())
      return fail(s);
    double loss, gradNorm;
    if (!got(ex->readScalar(0), loss) || !got(ex->readScalar(1), gradNorm))
      return 1;
    llvm::outs() << "step " << step << "  loss " << llvm::format("%.6f", loss) << "  grad_norm "
                 << llvm::format("%.6g", gradNorm);
    bool skipped = false;
    if (skippedResult >= 0) {
      double skippedNow, scale;
      if (!got(ex->readScalar(size_t(skippedResult)), skippedNow) ||
          !got(ex->readScalar(size_t(scaleResult)), scale))
        return 1;
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
      if (einrt::Status s = ex->copyFrom(size_t(p.arguments[a]), *ex, size_t(p.results[r]));
          !s.ok())
        return fail(s);
    }
  }
  llvm::outs() << llvm::format("%.2f s\n", seconds(start));
  if (o.profile)
    llvm::outs() << einrt::formatStepProfile(p, ex->stepSeconds(), ex->profiledRuns());
  if (!o.saveParams.empty()) {
    std::vector<einrt::TensorData> out;
    for (auto [r, a] : feedback) {
      einrt::TensorData t;
      if (!got(ex->exportBuffer(size_t(p.arguments[a])), t))
        return 1;
      t.name = p.buffers[p.arguments[a]].name;
      out.push_back(std::move(t));
    }
    if (einrt::Status s = einrt::writeSafetensors(
            o.saveParams, out, {{"format", "pt"}, {"step", std::to_string(o.steps)}});
        !s.ok())
      return fail("cannot write " + einrt::quoted(o.saveParams) + ": " + s.message());
    llvm::outs() << "wrote " << out.size() << " tensors to " << einrt::terminalSafe(o.saveParams)
                 << "\n";
  }
  return 0;
}

} // namespace

int runModel(const Options &o, const Frontend &fe, ModuleOp module) {
  RunBackend backend;
  backend.kind = einrt::findBackend(o.backend);
  CompileRequest what;
  what.backend = o.backend;
  backend.request = compileRequest(o, fe.settings, fe.file->text().str(), &fe, what);
  einrt::BackendOpen open = runner::deviceOptions({}, fe.settings);
  open.threads = o.threads;
  open.f64 = o.f64;
  if (!(backend.device = openBackendDevice(*backend.kind, open)))
    return 1;
  if (o.mode == "forward")
    return runForward(o, module, backend);
  if (o.mode == "step")
    return runSteps(o, module, backend);
  return runGrad(o, module, backend);
}

} // namespace einc
