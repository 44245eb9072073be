//===- PipelineCheck.cpp - One program through every pass combination -----===//
#include "PipelineCheck.h"
#include "Combinations.h"
#include "Compare.h"
#include "Ledgers.h"
#include "PassVerifier.h"
#include "Perturb.h"
#include "Runs.h"

#include "tools/driver/Stages.h"

#include "codegen/CpuKernels.h"
#include "codegen/CpuLowering.h"
#include "codegen/ReferenceLowering.h"
#include "dsl/Elaborator.h"
#include "dsl/Parser.h"
#include "ir/EinOps.h"
#include "passes/Dropout.h"
#include "runtime/core/GradCheck.h"
#include "runtime/core/Init.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>
#include <map>

using namespace mlir;

namespace einc::pipelinefuzz {
namespace {

constexpr uint64_t kNoiseSamples = 3;
/// The least error bound of a gradient, relative to the largest gradient
/// entry of any param, or to a tenth of the loss (at least 1) when every
/// gradient is zero by structure (float32's epsilon is 6e-8).
constexpr double kGradientFloor = 1e-6;

/// Per gradient, the entries whose value is within 30 times float32's error
/// on it (over the samples and the CPU runs): zero in exact arithmetic, or
/// nearly, so that their sign is noise.
/// Also sets `noiseNorm` to the 2-norm of the entries' errors: the most the
/// gradient norm can be off by, however the errors line up (they do, where
/// the CPU's exp and tanh are biased by a fraction of an ulp).
Skips unstableEntries(const std::vector<Sample> &samples, std::vector<const RunResults *> cpu,
                      double &noiseNorm) {
  Skips out;
  noiseNorm = 0;
  const RunResults &r64 = samples[0].ref64;
  for (size_t t = 1; t < r64.names.size(); ++t) { // result 0 is the loss
    std::vector<bool> flags(r64.values[t].size());
    for (size_t i = 0; i < flags.size(); ++i) {
      double noise = 0;
      for (const Sample &s : samples)
        noise = std::max(noise, std::fabs(s.ref32.values[t][i] - s.ref64.values[t][i]));
      for (const RunResults *c : cpu)
        noise = std::max(noise, std::fabs(c->values[t][i] - r64.values[t][i]));
      flags[i] = std::fabs(r64.values[t][i]) < 30 * noise;
      noiseNorm += noise * noise;
    }
    out[r64.names[t]] = std::move(flags);
  }
  noiseNorm = std::sqrt(noiseNorm);
  return out;
}

struct Failure {
  std::string combination, what;
  bool nonFinite = false;
};
using MaybeFailure = std::optional<Failure>;

/// A Failure of `combination` saying why `status` failed; none when it is ok.
MaybeFailure failed(const std::string &combination, const einrt::Status &status) {
  if (status.ok())
    return std::nullopt;
  return Failure{combination, status.message()};
}

class Checker {
public:
  Checker(const std::string &source, const CheckOptions &options)
      : source(source), options(options) {
    ::ein::dsl::registerElaboratorDialects(context);
  }
  CheckResult run();

private:
  MaybeFailure frontEnd();
  using Stages = llvm::function_ref<LogicalResult(ModuleOp, PassManagerHook)>;
  MaybeFailure build(const std::string &combination, Stages stages, OwningOpRef<ModuleOp> &out);
  MaybeFailure lower(ModuleOp module, const std::vector<std::string> &names, bool cpu,
                     const std::string &combination, Lowered &out);
  MaybeFailure gradCheck(ModuleOp grad);
  MaybeFailure checkGrad(ModuleOp fused, ModuleOp unfused);
  MaybeFailure checkSteps(ModuleOp fused, ModuleOp unfused, const std::string &optimizer,
                          const std::string &label);
  /// @train_step under the whole combination (Combinations.h), built as
  /// einc builds it (the step, fusion, remat last), against the same step
  /// with neither fusion nor remat: the same bits on the reference backend
  /// and on the CPU. Fusion and remat change which kernels run and what is
  /// kept, never a value (docs/ir.md: a narrow value is rounded once per op,
  /// in a fused kernel too; a recompute clone is the same op on the same
  /// values).
  MaybeFailure checkCombination();
  /// "fusion all" (the combination's fusion): the fused builds' tag.
  std::string fusedTag() const { return "fusion " + combo.fusion; }
  /// The reference lowered from each of nudgeTranscendentals' copies of `module`.
  MaybeFailure lowerNudged(ModuleOp module, const std::vector<std::string> &names,
                           std::vector<Lowered> &out);
  /// The least error bound of a @train_step result, from the gradients'
  /// (kGradientFloor): the grad norm's is theirs; optimizer state (a
  /// momentum, a first or second moment: "w.m") is made of g or g², a param of
  /// lr times that.
  double stepFloor(const std::string &result) const {
    double g = kGradientFloor * gradScale, moments = 2 * g * std::max(1.0, gradScale);
    if (result == "grad_norm")
      return g;
    if (unstable.count(result))
      return settings.lr * moments;
    for (const auto &[param, flags] : unstable)
      if (result.rfind(param + ".", 0) == 0)
        return moments;
    return 0; // the loss
  }
  /// Elements of all params together.
  int64_t paramElements() const {
    int64_t n = 0;
    for (const auto &[param, flags] : unstable)
      n += int64_t(flags.size());
    return n;
  }
  /// `at` and kNoiseSamples points a few ulps away (Compare.h).
  std::vector<Values> noisePoints(const einrt::Program &program, const Values &at) const;
  MaybeFailure checkApply(ModuleOp unfusedStep, ModuleOp cpuStep);
  MaybeFailure extraOptimizer();

  const std::string &source;
  CheckOptions options;
  MLIRContext context;
  OwningOpRef<ModuleOp> base;
  einrt::TrainSettings settings;
  Combination combo;        // drawn from the seed once the settings are read
  Values initial;           // params, inputs, zero optimizer state, step, lr
  int32_t vocab = 2;        // token ids are below the `vocab` dim
  Skips unstable;           // per param: gradient entries at float32's noise level
  double gradientNoise = 0; // the 2-norm of @grad's entries' float32 errors
  double gradScale = 0;     // the largest gradient entry (float64), or loss / 10
  CheckStats stats;
};

MaybeFailure Checker::frontEnd() {
  ::ein::dsl::SourceFile file("program.ein", source);
  ::ein::dsl::DiagnosticEngine diags(file);
  auto program = ::ein::dsl::parseProgram(file, diags);
  ::ein::dsl::ElaborateOptions elaborate;
  elaborate.use = einrt::SettingsUse::Execute; // as einc run and train
  elaborate.settings = &settings;
  if (!diags.hasErrors())
    base = ::ein::dsl::elaborate(*program, file, diags, context, elaborate);
  if (!diags.hasErrors() && base)
    return std::nullopt;
  std::string text;
  llvm::raw_string_ostream os(text);
  diags.print(os);
  return Failure{"front end (einc check)", "the front end rejects the program:\n" + text};
}

MaybeFailure Checker::build(const std::string &combination, Stages stages,
                            OwningOpRef<ModuleOp> &out) {
  out = base->clone();
  PassLog log;
  DiagnosticCapture capture(context, log.diagnostics);
  bool ok = succeeded(stages(*out, [&](PassManager &pm) { instrument(pm, log); }));
  stats.passesRun += log.passesRun;
  ++stats.combinations;
  if (ok && log.failedPass.empty() && succeeded(verify(*out)))
    return std::nullopt;
  return Failure{combination, "pass " + (log.failedPass.empty() ? "?" : log.failedPass) + ":\n" +
                                  log.diagnostics};
}

MaybeFailure Checker::lower(ModuleOp module, const std::vector<std::string> &names, bool cpu,
                            const std::string &combination, Lowered &out) {
  std::string diagnostics;
  DiagnosticCapture capture(context, diagnostics);
  if (cpu)
    out.kernels = ::ein::codegen::KernelCompiler::create();
  for (const std::string &name : names) {
    auto fn = module.lookupSymbol<func::FuncOp>(name);
    if (!fn)
      return Failure{combination, "the module has no @" + name};
    auto program = cpu ? ::ein::codegen::lowerToCpuProgram(fn, *out.kernels)
                       : ::ein::codegen::lowerToProgram(fn);
    if (failed(program))
      return Failure{combination, std::string("lowering @") + name + " for the " +
                                      (cpu ? "CPU" : "reference") + " backend fails:\n" +
                                      diagnostics};
    out.programs.emplace(name, std::move(*program));
  }
  if (cpu) {
    bool compiled = succeeded(out.kernels->compile());
    stats.kernelsCompiled += out.kernels->compiledCount();
    stats.compileSeconds += out.kernels->compileSeconds();
    if (!compiled)
      return Failure{combination, "the CPU kernels do not compile:\n" + diagnostics};
  }
  return std::nullopt;
}

MaybeFailure Checker::gradCheck(ModuleOp grad) {
  Lowered ref;
  if (auto f = lower(grad, {"forward", "grad"}, false, "gradient check", ref))
    return f;
  einrt::Expected<einrt::Executor> forward = ref.executor("forward", einrt::Precision::F64, 1);
  if (!forward.ok())
    return failed("gradient check", forward.status());
  einrt::Expected<einrt::Executor> gradEx = ref.executor("grad", einrt::Precision::F64, 1);
  if (!gradEx.ok())
    return failed("gradient check", gradEx.status());
  // Two tries at points jittered off the initialisers' ties (ones, zeros):
  // a kink (relu, abs, max at a tie) near the point of the first moves away.
  for (int attempt = 0; attempt < 2; ++attempt) {
    Values point = jittered(initial, *forward, options.seed + 7 + uint64_t(attempt));
    if (auto f = failed("gradient check", setByName(*forward, point)))
      return f;
    if (auto f = failed("gradient check", setByName(*gradEx, point)))
      return f;
    einrt::GradCheckOptions o;
    o.seed = options.seed;
    einrt::Expected<einrt::GradCheckReport> checked = einrt::gradCheck(*forward, *gradEx, o);
    if (!checked.ok())
      return failed("gradient check", checked.status());
    const einrt::GradCheckReport report = checked.take();
    stats.gradEntries += report.checked;
    if (report.worst.relativeError <= 1e-5)
      return std::nullopt;
    // Truncation or a kink within the stencil: a smaller step (the same
    // entries: the same seed).
    o.step = 1e-6;
    einrt::Expected<einrt::GradCheckReport> checkedFine = einrt::gradCheck(*forward, *gradEx, o);
    if (!checkedFine.ok())
      return failed("gradient check", checkedFine.status());
    const einrt::GradCheckReport fine = checkedFine.take();
    if (fine.worst.relativeError <= 1e-4)
      return std::nullopt;
    if (!atKink(*forward, fine.worst.param, fine.worst.index, 2 * o.step)) {
      const einrt::GradCheckEntry &w = fine.worst;
      std::string value; // the param's value, where it can be read
      if (int64_t b = forward->findBuffer(w.param); b >= 0)
        if (einrt::Expected<std::vector<double>> at = forward->read(size_t(b));
            at.ok() && w.index < int64_t(at->size()))
          value = " = " + formatNumber((*at)[size_t(w.index)]);
      return Failure{"gradient check (reference backend, float64, @grad vs central "
                     "differences of @forward)",
                     w.param + "[" + std::to_string(w.index) + "]" + value + ": analytic " +
                         formatNumber(w.analytic) + ", numeric " + formatNumber(w.numeric) +
                         " (h = 1e-6; relative error " + formatNumber(w.relativeError) +
                         " > 1e-4; with h = 1e-4: " + formatNumber(report.worst.relativeError) +
                         " at " + report.worst.param + "[" + std::to_string(report.worst.index) +
                         "])"};
    }
    ++stats.kinkSkips;
  }
  return std::nullopt;
}

std::vector<Values> Checker::noisePoints(const einrt::Program &program, const Values &at) const {
  std::vector<Values> points = {at};
  for (uint64_t k = 1; k <= kNoiseSamples; ++k)
    points.push_back(nudged(at, program, options.seed * 131 + k));
  return points;
}

MaybeFailure Checker::lowerNudged(ModuleOp module, const std::vector<std::string> &names,
                                  std::vector<Lowered> &out) {
  out.clear();
  out.resize(std::size(kUlpNudges));
  for (size_t i = 0; i < out.size(); ++i) {
    OwningOpRef<ModuleOp> copy = nudgeTranscendentals(module, kUlpNudges[i], options.seed + i);
    if (auto f = lower(*copy, names, false, "the reference with nudged exp/log/tanh", out[i]))
      return f;
  }
  return std::nullopt;
}

MaybeFailure Checker::checkGrad(ModuleOp fused, ModuleOp unfused) {
  Lowered ref, refFused, cpuFused, cpuUnfused;
  const std::vector<std::string> names = {"forward", "grad"};
  if (auto f = lower(unfused, names, false, "@grad, fusion off", ref))
    return f;
  if (auto f = lower(fused, names, false, "@grad, " + fusedTag(), refFused))
    return f;
  if (options.cpu)
    if (auto f = lower(fused, names, true, "@grad, " + fusedTag(), cpuFused))
      return f;
  if (options.cpu)
    if (auto f = lower(unfused, names, true, "@grad, fusion off", cpuUnfused))
      return f;
  std::vector<Lowered> nudgedRefs;
  if (options.cpu)
    if (auto f = lowerNudged(unfused, names, nudgedRefs))
      return f;
  std::vector<Values> points = noisePoints(ref.programs.at("grad"), initial);
  for (const std::string &name : names) {
    std::vector<Sample> samples(points.size());
    RunResults rf, cf, cu;
    for (size_t k = 0; k < points.size(); ++k) {
      if (auto f = failed("@" + name, runOnce(ref, name, einrt::Precision::F32, 1, points[k],
                                              samples[k].ref32)))
        return f;
      if (auto f = failed("@" + name, runOnce(ref, name, einrt::Precision::F64, 1, points[k],
                                              samples[k].ref64)))
        return f;
    }
    for (const Lowered &n : nudgedRefs) {
      samples.push_back({{}, samples[0].ref64});
      if (auto f = failed("@" + name, runOnce(n, name, einrt::Precision::F32, 1, initial,
                                              samples.back().ref32)))
        return f;
    }
    if (auto f = failed("@" + name, runOnce(refFused, name, einrt::Precision::F32, 1, initial, rf)))
      return f;
    if (std::string d = compareBits(rf, samples[0].ref32); !d.empty())
      return Failure{"@" + name +
                         ": reference backend, fused op order vs program order "
                         "(bit-identical)",
                     d};
    if (!options.cpu)
      continue;
    if (auto f = failed("@" + name, runOnce(cpuFused, name, einrt::Precision::F32, options.threads,
                                            initial, cf)))
      return f;
    if (auto f = failed("@" + name, runOnce(cpuUnfused, name, einrt::Precision::F32,
                                            options.threads, initial, cu)))
      return f;
    const RunResults &r64 = samples[0].ref64;
    std::vector<double> noise = noiseOf(samples);
    if (name == "grad") {
      // A gradient zero by structure is exactly 0 in the reference and
      // rounding noise on the CPU: at most kGradientFloor of the largest.
      gradScale = 0.1 * std::max(1.0, std::fabs(r64.values[0][0]));
      for (size_t t = 1; t < r64.values.size(); ++t)
        for (double v : r64.values[t])
          gradScale = std::max(gradScale, std::fabs(v));
      for (size_t t = 1; t < noise.size(); ++t)
        noise[t] = std::max(noise[t], kGradientFloor * gradScale / kNoise);
    }
    stats.tensorsCompared += int64_t(r64.names.size()) * 4;
    bool nonFinite = false;
    for (auto [cpu, label] :
         {std::pair{&cf, fusedTag()}, std::pair{&cu, std::string("fusion off")}})
      if (std::string d = compareWithReference(*cpu, r64, noise, nonFinite); !d.empty())
        return Failure{"@" + name + ", " + label + ": CPU backend vs reference backend", d,
                       nonFinite};
    if (std::string d = compareBits(cf, cu); !d.empty())
      return Failure{"@" + name + ": CPU backend, " + fusedTag() + " vs off (bit-identical)", d};
    if (name == "grad")
      unstable = unstableEntries(samples, {&cf, &cu}, gradientNoise);
  }
  return std::nullopt;
}

MaybeFailure Checker::checkSteps(ModuleOp fused, ModuleOp unfused, const std::string &optimizer,
                                 const std::string &label) {
  if (!options.cpu)
    return std::nullopt;
  Lowered ref, cpuFused, cpuUnfused;
  if (auto f = lower(unfused, {"train_step"}, false, "@train_step, fusion off, " + label, ref))
    return f;
  if (auto f =
          lower(fused, {"train_step"}, true, "@train_step, " + fusedTag() + ", " + label, cpuFused))
    return f;
  if (auto f =
          lower(unfused, {"train_step"}, true, "@train_step, fusion off, " + label, cpuUnfused))
    return f;
  // Adam, AdamW and Adagrad divide by |g| (at step 1 the update is lr·sign(g)):
  // where a gradient entry is float32 noise the update is noise of size lr,
  // so those entries are left out of step 1 and step 2 (which reads every
  // param) is not compared.
  bool adaptive = optimizer != "sgd";
  bool noisy = false;
  for (const auto &[param, flags] : unstable)
    noisy |= std::find(flags.begin(), flags.end(), true) != flags.end();
  int steps = adaptive && noisy ? 1 : 2;
  stats.oneStepOnly += steps == 1;
  std::vector<Lowered> nudgedRefs;
  if (auto f = lowerNudged(unfused, {"train_step"}, nudgedRefs))
    return f;
  std::vector<Values> points = noisePoints(ref.programs.at("train_step"), initial);
  std::vector<std::vector<Sample>> samples(static_cast<size_t>(steps)); // [step][sample]
  std::vector<RunResults> cf, cu;
  const std::string what = "@train_step, " + label;
  for (const Values &p : points) {
    std::vector<RunResults> r32, r64;
    if (auto f = failed(what, runSteps(ref, "train_step", einrt::Precision::F32, 1, p, steps, r32)))
      return f;
    if (auto f = failed(what, runSteps(ref, "train_step", einrt::Precision::F64, 1, p, steps, r64)))
      return f;
    for (int s = 0; s < steps; ++s)
      samples[size_t(s)].push_back({r32[size_t(s)], r64[size_t(s)]});
  }
  for (const Lowered &n : nudgedRefs) {
    std::vector<RunResults> r32;
    if (auto f =
            failed(what, runSteps(n, "train_step", einrt::Precision::F32, 1, initial, steps, r32)))
      return f;
    for (int s = 0; s < steps; ++s)
      samples[size_t(s)].push_back({r32[size_t(s)], samples[size_t(s)][0].ref64});
  }
  if (auto f = failed(what, runSteps(cpuFused, "train_step", einrt::Precision::F32, options.threads,
                                     initial, steps, cf)))
    return f;
  if (auto f = failed(what, runSteps(cpuUnfused, "train_step", einrt::Precision::F32,
                                     options.threads, initial, steps, cu)))
    return f;
  // The left-out entries: in each param and its optimizer state ("w.m", ...).
  Skips skips;
  for (const std::string &result : samples[0][0].ref64.names)
    for (const auto &[param, flags] : unstable)
      if (adaptive && (result == param || result.rfind(param + ".", 0) == 0))
        skips[result] = flags;
  for (int s = 0; s < steps; ++s) {
    std::string step = " (step " + std::to_string(s + 1) + ")";
    const RunResults &r64 = samples[size_t(s)][0].ref64;
    std::vector<double> noise = noiseOf(samples[size_t(s)]);
    // The scalars sum over every param: the CPU's errors add up where the
    // reference's cancel. Step 1's grad norm is at most the norm of the
    // gradients' errors off; later scalars get sqrt(entries) times theirs.
    for (size_t t = 0; t < r64.names.size(); ++t) {
      if (s == 0 && r64.names[t] == "grad_norm")
        noise[t] = std::max(noise[t], gradientNoise);
      else if (s > 0 && r64.values[t].size() == 1)
        noise[t] *= std::sqrt(double(paramElements()));
      noise[t] = std::max(noise[t], stepFloor(r64.names[t]) / kNoise);
    }
    stats.tensorsCompared += int64_t(r64.names.size()) * 3;
    bool nonFinite = false;
    for (auto [cpu, tag] : {std::pair{&cf, fusedTag()}, std::pair{&cu, std::string("fusion off")}})
      if (std::string d = compareWithReference((*cpu)[size_t(s)], r64, noise, nonFinite, &skips);
          !d.empty())
        return Failure{"@train_step, " + std::string(tag) + ", " + label + ": CPU vs reference" +
                           step,
                       d, nonFinite};
    if (std::string d = compareBits(cf[size_t(s)], cu[size_t(s)]); !d.empty())
      return Failure{
          "@train_step, " + label + ": CPU, " + fusedTag() + " vs off (bit-identical)" + step, d};
  }
  return std::nullopt;
}

MaybeFailure Checker::checkApply(ModuleOp unfusedStep, ModuleOp cpuStep) {
  const std::string combination =
      "@grad + @apply_update, accumulate " + std::to_string(settings.accumulate) + ", " +
      (settings.fusion == "off" ? std::string("fusion off") : fusedTag());
  Lowered ref, cpu;
  const std::vector<std::string> names = {"grad", "apply_update", "train_step"};
  if (auto f = lower(unfusedStep, names, false, combination, ref))
    return f;
  if (options.cpu)
    if (auto f = lower(cpuStep, {"grad", "apply_update"}, true, combination, cpu))
      return f;
  // @apply_update on @grad's gradients is @train_step (float64, one batch).
  RunResults step, grads, applied;
  if (auto f =
          failed(combination, runOnce(ref, "train_step", einrt::Precision::F64, 1, initial, step)))
    return f;
  if (auto f = failed(combination, runOnce(ref, "grad", einrt::Precision::F64, 1, initial, grads)))
    return f;
  if (auto f = failed(combination, runApply(ref, einrt::Precision::F64, initial, {grads}, applied)))
    return f;
  RunResults stepUpdate = step;
  stepUpdate.names.erase(stepUpdate.names.begin()); // the loss
  stepUpdate.values.erase(stepUpdate.values.begin());
  if (std::string d = compareClose(applied, stepUpdate, 1e-9, 1e-12); !d.empty())
    return Failure{"@apply_update(@grad) vs @train_step (reference, float64)", d};
  if (settings.accumulate <= 1 || !options.cpu)
    return std::nullopt;
  // The trainer's micro-batches: each batch's gradients on both backends,
  // then @apply_update on both given the same (the CPU's) mean gradients.
  std::vector<Values> batches =
      microBatches(ref, "grad", initial, settings.accumulate, vocab, options.seed);
  std::vector<Lowered> nudgedRefs;
  if (auto f = lowerNudged(unfusedStep, {"grad"}, nudgedRefs))
    return f;
  std::vector<RunResults> cpuGrads;
  for (size_t m = 0; m < batches.size(); ++m) {
    std::vector<Values> points = noisePoints(ref.programs.at("grad"), batches[m]);
    std::vector<Sample> samples(points.size());
    RunResults c;
    for (size_t k = 0; k < points.size(); ++k) {
      if (auto f = failed(combination, runOnce(ref, "grad", einrt::Precision::F32, 1, points[k],
                                               samples[k].ref32)))
        return f;
      if (auto f = failed(combination, runOnce(ref, "grad", einrt::Precision::F64, 1, points[k],
                                               samples[k].ref64)))
        return f;
    }
    for (const Lowered &n : nudgedRefs) {
      samples.push_back({{}, samples[0].ref64});
      if (auto f = failed(combination, runOnce(n, "grad", einrt::Precision::F32, 1, batches[m],
                                               samples.back().ref32)))
        return f;
    }
    if (auto f = failed(combination, runOnce(cpu, "grad", einrt::Precision::F32, options.threads,
                                             batches[m], c)))
      return f;
    bool nonFinite = false;
    std::vector<double> noise = noiseOf(samples);
    for (size_t t = 1; t < noise.size(); ++t)
      noise[t] = std::max(noise[t], kGradientFloor * gradScale / kNoise);
    if (std::string d = compareWithReference(c, samples[0].ref64, noise, nonFinite); !d.empty())
      return Failure{combination + ": @grad of micro-batch " + std::to_string(m + 1) +
                         ", CPU vs reference",
                     d, nonFinite};
    cpuGrads.push_back(std::move(c));
  }
  Sample sample;
  RunResults c;
  if (auto f = failed(combination, runApply(cpu, einrt::Precision::F32, initial, cpuGrads, c)))
    return f;
  if (auto f = failed(combination,
                      runApply(ref, einrt::Precision::F32, initial, cpuGrads, sample.ref32)))
    return f;
  if (auto f = failed(combination,
                      runApply(ref, einrt::Precision::F64, initial, cpuGrads, sample.ref64)))
    return f;
  stats.tensorsCompared += int64_t(sample.ref64.names.size()) * (1 + int64_t(batches.size()));
  bool nonFinite = false;
  if (std::string d = compareWithReference(c, sample.ref64, noiseOf({sample}), nonFinite);
      !d.empty())
    return Failure{combination + ": @apply_update, CPU vs reference", d, nonFinite};
  return std::nullopt;
}

MaybeFailure Checker::extraOptimizer() {
  // Each program also trains with the combination's optimizer, one its
  // settings did not pick, in fp32, fused and not.
  einrt::TrainSettings s = settings;
  s.optimizer = combo.optimizer;
  s.momentum = combo.momentum;
  s.fusion = combo.fusion;
  std::string label =
      "optimizer " + combo.optimizer +
      (combo.optimizer == "sgd" ? combo.momentum > 0 ? " with momentum" : " without momentum" : "");
  OwningOpRef<ModuleOp> step;
  if (auto f = build(
          "@train_step, " + fusedTag() + ", " + label,
          [&](ModuleOp m, PassManagerHook hook) {
            if (failed(buildTrainStep(m, s, hook)))
              return failure();
            return applyFusion(m, s, hook);
          },
          step))
    return f;
  OwningOpRef<ModuleOp> plain;
  if (auto f = build(
          "@train_step, fusion off, " + label,
          [&](ModuleOp m, PassManagerHook hook) { return buildTrainStep(m, s, hook); }, plain))
    return f;
  return checkSteps(*step, *plain, combo.optimizer, label);
}

MaybeFailure Checker::checkCombination() {
  einrt::TrainSettings all = combo.applied(settings), plain = all;
  plain.fusion = "off";
  plain.remat = "none";
  const std::string label = "@train_step, " + combo.label();
  OwningOpRef<ModuleOp> step, baseline;
  if (auto f = build(
          label,
          [&](ModuleOp m, PassManagerHook hook) {
            if (failed(buildTrainStep(m, all, hook)) || failed(applyFusion(m, all, hook)))
              return failure();
            return applyRemat(m, all, /*device=*/nullptr, {}, hook);
          },
          step))
    return f;
  const std::string plainLabel = "@train_step, precision " + all.precision + ", fp8 " + all.fp8 +
                                 ", remat none, fusion off, optimizer " + all.optimizer;
  if (auto f = build(
          plainLabel,
          [&](ModuleOp m, PassManagerHook hook) { return buildTrainStep(m, plain, hook); },
          baseline))
    return f;
  ++stats.combinationRuns;
  for (bool cpu : {false, true}) {
    if (cpu && !options.cpu)
      break;
    Lowered with, without;
    if (auto f = lower(*step, {"train_step"}, cpu, label, with))
      return f;
    if (auto f = lower(*baseline, {"train_step"}, cpu, plainLabel, without))
      return f;
    RunResults a, b;
    int threads = cpu ? options.threads : 1;
    if (auto f =
            failed(label, runOnce(with, "train_step", einrt::Precision::F32, threads, initial, a)))
      return f;
    if (auto f = failed(label,
                        runOnce(without, "train_step", einrt::Precision::F32, threads, initial, b)))
      return f;
    // A narrow step may overflow (fp16-mixed then skips it): NaNs are equal
    // whatever their sign and payload, which no op can observe (x86 makes
    // -nan for an invalid operation; a propagated NaN keeps its sign).
    for (RunResults *r : {&a, &b}) {
      for (auto &v : r->values)
        for (double &x : v)
          x = std::isnan(x) ? std::numeric_limits<double>::quiet_NaN() : x;
      for (auto &v : r->f32)
        for (float &x : v)
          x = std::isnan(x) ? std::numeric_limits<float>::quiet_NaN() : x;
    }
    stats.tensorsCompared += int64_t(a.names.size());
    if (std::string d = compareBits(a, b); !d.empty())
      return Failure{label + (cpu ? ": CPU" : ": reference") +
                         ", vs fusion off and remat none (bit-identical)",
                     d};
  }
  return std::nullopt;
}

CheckResult Checker::run() {
  CheckResult result;
  auto finish = [&](MaybeFailure f) {
    result.stats = stats;
    if (f) {
      result.ok = false;
      result.combination = f->combination;
      result.what = f->what;
      result.nonFinite = f->nonFinite;
    }
    return result;
  };
  if (auto f = frontEnd()) {
    result.frontEndRejected = true;
    return finish(f);
  }
  combo = options.combination ? *options.combination : drawCombination(options.seed, settings);
  result.drawn = combo;
  einrt::TrainSettings on = settings, off = settings;
  on.fusion = combo.fusion, off.fusion = "off";
  OwningOpRef<ModuleOp> grad[2], step[2];
  for (int fuse = 0; fuse < 2; ++fuse) {
    const einrt::TrainSettings &s = fuse ? on : off;
    std::string tag = ", " + (fuse ? fusedTag() : std::string("fusion off"));
    if (auto f = build(
            "@grad" + tag,
            [&](ModuleOp m, PassManagerHook hook) {
              if (failed(buildGrad(m, hook)))
                return failure();
              // @grad without a step, as einc run --mode grad builds it:
              // dropout is the identity (masked in @train_step only).
              mlir::ein::eraseDropouts(m);
              return applyFusion(m, s, hook);
            },
            grad[fuse]))
      return finish(f);
    if (auto f = build(
            "@train_step" + tag + ", optimizer " + settings.optimizer,
            [&](ModuleOp m, PassManagerHook hook) {
              if (failed(buildTrainStep(m, settings, hook)))
                return failure();
              return applyFusion(m, s, hook);
            },
            step[fuse]))
      return finish(f);
  }
  // The report's ledgers: fusion changes no FLOP and adds no byte.
  for (auto [modules, name] : {std::pair{grad, "grad"}, std::pair{step, "train_step"}}) {
    auto fused = modules[1]->lookupSymbol<func::FuncOp>(name);
    auto unfused = modules[0]->lookupSymbol<func::FuncOp>(name);
    if (std::string d = compareLedgers(fused, unfused); !d.empty())
      return finish(Failure{
          std::string("@") + name + ", " + fusedTag() + " vs off: the report's ledgers", d});
  }
  // The starting point every backend runs from.
  {
    Lowered ref;
    if (auto f = lower(*step[0], {"train_step"}, false, "@train_step", ref))
      return finish(f);
    if (auto dims = (*base)->getAttrOfType<DictionaryAttr>("ein.dims"))
      if (auto v = dims.getAs<IntegerAttr>("vocab"))
        vocab = int32_t(v.getInt());
    if (auto f = failed("@train_step", initialValues(ref, "train_step", vocab, settings.lr,
                                                     options.seed, initial)))
      return finish(f);
  }
  if (options.gradcheck)
    if (auto f = gradCheck(*grad[0]))
      return finish(f);
  if (auto f = checkGrad(*grad[1], *grad[0]))
    return finish(f);
  if (auto f =
          checkSteps(*step[1], *step[0], settings.optimizer, "optimizer " + settings.optimizer))
    return finish(f);
  // @grad + @apply_update is the accumulating trainer's step, which a model
  // with dropout is refused (its @grad has no step to key the mask by).
  if (!mlir::ein::hasDropout(*base))
    if (auto f = checkApply(*step[0], *step[settings.fusion == "off" ? 0 : 1]))
      return finish(f);
  if (auto f = checkCombination())
    return finish(f);
  return finish(extraOptimizer());
}

} // namespace

CheckResult checkProgram(const std::string &source, const CheckOptions &options) {
  return Checker(source, options).run();
}

} // namespace einc::pipelinefuzz
