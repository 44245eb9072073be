//===- Train.cpp - `einc train`: the training loop ------------------------===//
//
// The model's settings (its `train { }` section with --set applied, or the
// defaults below) become the train-step pipeline's options and the
// runtime's TrainConfig:
//
//   optimizer adamw, lr 1e-3, min_lr lr/10, schedule cosine over `steps`
//   (else the first run's --steps, recorded in the checkpoint), warmup
//   min(100, steps/10), accumulate 1, eval_every 100 with --val (0 without),
//   eval_steps 10, seed 0, data: inferred from the inputs (targets shaped
//   like the context: shifted; one axis fewer: next_token).
//
// The functions are lowered for --backend: @train_step (accumulate 1) or
// @accumulate_grad + @apply_update (accumulate > 1), and @forward for evaluation. The
// static report of the same step on the `cpu` device profile, when one
// exists, gives the predicted step time and MFU for the progress line.
//
//===----------------------------------------------------------------------===//
#include "Train.h"
#include "Data.h"
#include "Report.h"
#include "Stages.h"

#include "codegen/CpuKernels.h"
#include "codegen/CpuLowering.h"
#include "codegen/ReferenceLowering.h"
#include "passes/DeviceProfile.h"
#include "runtime/Checkpoint.h"
#include "runtime/CpuDevice.h"
#include "runtime/Memory.h"
#include "runtime/Schedule.h"
#include "runtime/TokenData.h"
#include "runtime/Trainer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <iostream>

using namespace mlir;

namespace einc {

Lowered::~Lowered() {
  executors.clear(); // before the kernels they call
  device.reset();
}

namespace {

int fail(const llvm::Twine &message) {
  llvm::errs() << "einc train: " << message << "\n";
  return 1;
}

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

bool haveCpuProfile() {
  for (const mlir::ein::DeviceProfile &p : mlir::ein::builtinDeviceProfiles())
    if (p.name == "cpu")
      return true;
  std::string path = userProfilesPath();
  if (path.empty())
    return false;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return false;
  std::string error;
  auto parsed = mlir::ein::parseDeviceProfiles((*buffer)->getBuffer().str(), error);
  if (!parsed)
    return false;
  for (const mlir::ein::DeviceProfile &p : *parsed)
    if (p.name == "cpu")
      return true;
  return false;
}

/// The prediction for the progress line: the report of the step on `cpu`.
struct Prediction {
  bool available = false;
  double stepSeconds = 0, mfu = 0, modelFlops = 0, peak = 0;
};

Prediction predict(ModuleOp module, const Options &o, const einrt::TrainSettings &settings) {
  Prediction p;
  if (!haveCpuProfile())
    return p;
  OwningOpRef<ModuleOp> copy = module.clone();
  Options ro = o;
  ro.command = "report";
  ro.device = "cpu";
  ro.deviceFile.clear();
  ro.precision.clear();
  ro.optimizer.clear();
  Report r;
  if (!buildReport(*copy, ro, settings, r))
    return p;
  p.available = true;
  p.stepSeconds = r.stepSeconds;
  p.mfu = r.mfu;
  p.modelFlops = static_cast<double>(r.modelFlops.total());
  p.peak = r.matrixPeak;
  return p;
}

/// The schedule recorded in CK/last.safetensors, if any.
std::optional<einrt::Schedule> recordedSchedule(const std::string &lastPath) {
  std::string error;
  auto ck = einrt::readCheckpoint(lastPath, error);
  if (!ck)
    return std::nullopt;
  return einrt::Schedule::parse(ck->info.schedule, error);
}

std::string lrText(double lr) { return einrt::formatShortest(lr); }

std::string settingsText(ModuleOp module, const einrt::TrainSettings &settings) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto dims = module->getAttr("ein.dims"))
    os << "dims " << dims << "\n";
  // Not the schedule's length nor the checkpoint interval: a resume may
  // change them explicitly (the schedule's shape is hashed by the trainer).
  einrt::TrainSettings hashed = settings;
  hashed.given.erase(
      std::remove_if(hashed.given.begin(), hashed.given.end(),
                     [](const std::string &k) { return k == "steps" || k == "checkpoint_every"; }),
      hashed.given.end());
  os << "train {" << hashed.describe() << "}\n";
  return os.str();
}

} // namespace

bool lowerFunctions(ModuleOp module, const einrt::TrainSettings &settings,
                    const std::vector<std::string> &names, const std::string &backend,
                    int64_t threads, Lowered &out) {
  out.backend = backend;
  if (backend == "cpu") {
    out.threads = threads > 0 ? int(threads) : einrt::defaultThreadCount();
    einrt::setBlasThreads(1); // the executor splits matmuls itself
  }
  std::vector<einrt::Program> programs;
  auto start = std::chrono::steady_clock::now();
  if (backend == "cpu") {
    out.kernels = ::ein::codegen::KernelCompiler::create();
    if (failed(applyFusion(module, settings)))
      return false;
  }
  for (const std::string &name : names) {
    auto fn = module.lookupSymbol<func::FuncOp>(name);
    if (!fn) {
      llvm::errs() << "einc: the module has no @" << name << "\n";
      return false;
    }
    FailureOr<einrt::Program> program = backend == "cpu"
                                            ? ::ein::codegen::lowerToCpuProgram(fn, *out.kernels)
                                            : ::ein::codegen::lowerToProgram(fn);
    if (failed(program))
      return false;
    programs.push_back(std::move(*program));
  }
  if (out.kernels) {
    if (failed(out.kernels->compile()))
      return false;
    out.kernelsCompiled = out.kernels->compiledCount();
    out.kernelsCached = out.kernels->cachedCount();
  }
  out.compileSeconds = seconds(start);
  // Every function's storage together, before any is allocated: too large
  // a model is an error with the bytes needed and available, not an abort.
  if (out.kernels) {
    auto cpu = std::make_shared<einrt::CpuDevice>(out.kernels->table());
    // One set of threads for every function.
    if (out.threads > 1)
      cpu->setThreadPool(std::make_shared<einrt::ThreadPool>(out.threads));
    out.device = cpu;
  } else {
    out.device = std::make_shared<einrt::HostDevice>(einrt::Precision::F32);
  }
  int64_t planned = 0;
  std::string parts;
  for (size_t i = 0; i < programs.size(); ++i) {
    int64_t bytes = einrt::Executor::plannedBytes(programs[i], *out.device);
    planned += bytes;
    parts += (i ? ", @" : "@") + names[i] + " " + einrt::formatBytes(bytes);
  }
  std::string shortfall = einrt::memoryShortfall(planned, "the model's storage (" + parts + ")");
  if (!shortfall.empty()) {
    llvm::errs() << "einc: " << shortfall << "\n";
    return false;
  }
  for (size_t i = 0; i < programs.size(); ++i) {
    std::string error;
    auto ex = einrt::Executor::create(programs[i], out.device, error);
    if (!ex) {
      llvm::errs() << "einc: cannot run @" << names[i] << ": " << error << "\n";
      return false;
    }
    out.executors.push_back(std::move(ex));
  }
  return true;
}

int trainModel(const Options &o, const einrt::TrainSettings &s, ModuleOp module) {
  std::string error;

  // The data first: a bad file (every token id checked against the vocab)
  // is reported before minutes of compiling.
  int32_t vocab = 0;
  if (auto dims = module->getAttrOfType<DictionaryAttr>("ein.dims"))
    if (auto v = dims.getAs<IntegerAttr>("vocab"))
      vocab = static_cast<int32_t>(v.getInt());
  auto trainFile = einrt::TokenFile::open(o.trainData, error);
  if (!trainFile || !trainFile->checkVocabulary(vocab, error))
    return fail(error);
  std::optional<einrt::TokenFile> valFile;
  if (!o.valData.empty()) {
    valFile = einrt::TokenFile::open(o.valData, error);
    if (!valFile || !valFile->checkVocabulary(vocab, error))
      return fail(error);
  }

  // The schedule: its length from the settings, else the checkpoint being
  // resumed, else this run's --steps.
  std::string ckDir = o.checkpointDir;
  std::string lastPath = ckDir + "/last.safetensors";
  if (o.resume && !llvm::sys::fs::exists(lastPath))
    return fail("--resume: no checkpoint '" + lastPath + "' to resume from");
  if (!o.resume && !o.overwrite)
    if (std::string inTheWay = einrt::checkpointInTheWay(ckDir); !inTheWay.empty())
      return fail(inTheWay);
  einrt::Schedule schedule;
  schedule.kind =
      s.schedule == "constant" ? einrt::Schedule::Kind::Constant : einrt::Schedule::Kind::Cosine;
  schedule.lr = s.lr;
  schedule.minLr = s.minLr.value_or(schedule.lr / 10);
  // Its length is fixed when a run starts and recorded in the checkpoint:
  // the `steps` setting, else the first run's --steps. A resume keeps it
  // unless `steps` is set (an explicit extension or cut); running past the
  // end of a recorded cosine without saying so is refused.
  std::optional<einrt::Schedule> recorded = o.resume ? recordedSchedule(lastPath) : std::nullopt;
  std::string totalFrom = "the `steps` setting";
  if (s.steps)
    schedule.total = *s.steps;
  else if (recorded && recorded->total > 0) {
    schedule.total = recorded->total;
    totalFrom = "the checkpoint";
  } else {
    schedule.total = o.steps;
    totalFrom = "--steps (no `steps` setting)";
  }
  schedule.warmup =
      s.warmup.value_or(recorded ? recorded->warmup : std::min<int64_t>(100, schedule.total / 10));
  if (schedule.kind == einrt::Schedule::Kind::Cosine && schedule.warmup >= schedule.total)
    schedule.warmup = schedule.total - 1;
  const bool cosine = schedule.kind == einrt::Schedule::Kind::Cosine;
  if (cosine && recorded && !s.steps && o.steps > schedule.total) {
    einrt::Schedule stretched = schedule;
    stretched.total = o.steps;
    int64_t t = schedule.total + 1;
    return fail(
        "--steps " + llvm::Twine(o.steps) + " runs past the end of the schedule recorded in '" +
        lastPath + "' (" + schedule.describe() + "): steps " + llvm::Twine(t) + ".." +
        llvm::Twine(o.steps) + " would all run at min_lr " + lrText(schedule.minLr) +
        ". Say which you mean: --set steps=" + llvm::Twine(o.steps) +
        " stretches the cosine to end at step " + llvm::Twine(o.steps) + " (the lr at step " +
        llvm::Twine(t) + " becomes " + lrText(stretched.at(t)) + ", up from " +
        lrText(schedule.at(t)) + "), or --set steps=" + llvm::Twine(schedule.total) +
        " keeps the schedule and trains on at min_lr");
  }
  if (cosine && recorded && s.steps && recorded->total != schedule.total) {
    int64_t t = 0; // the first step this run trains: the checkpoint's + 1
    std::string ignored;
    if (auto ck = einrt::readCheckpoint(lastPath, ignored))
      t = ck->info.step + 1;
    totalFrom += "; the checkpoint's was " + std::to_string(recorded->total) + ": the lr at step " +
                 std::to_string(t) + " is " + lrText(schedule.at(t)) + ", it was " +
                 lrText(recorded->at(t));
  } else if (cosine && o.steps > schedule.total) {
    totalFrom += "; steps " + std::to_string(schedule.total + 1) + ".." + std::to_string(o.steps) +
                 " run at min_lr " + lrText(schedule.minLr);
  }
  if (std::string problem = schedule.validate(); !problem.empty())
    return fail("the learning-rate schedule: " + problem);

  int64_t accumulate = s.accumulate;

  // Compile: the train step (and @accumulate_grad, @apply_update) with the
  // settings.
  auto start = std::chrono::steady_clock::now();
  Prediction prediction = predict(module, o, s);
  if (failed(buildTrainStep(module, s)))
    return 1;
  std::vector<std::string> names;
  if (accumulate == 1)
    names.push_back("train_step");
  else
    names = {"accumulate_grad", "apply_update"};
  if (valFile)
    names.push_back("forward");
  Lowered lowered;
  if (!lowerFunctions(module, s, names, o.backend, o.threads, lowered))
    return 1;
  double compileSeconds = seconds(start);

  // How a window maps onto the inputs.
  einrt::TrainConfig config;
  const einrt::Program &first = lowered.executors.front()->program();
  if (auto word = s.data) {
    config.mapping = *einrt::parseWindowMapping(*word);
  } else {
    auto inferred = einrt::inferWindowMapping(first, error);
    if (!inferred)
      return fail("cannot tell how a token window maps onto the inputs (set `data` to "
                  "next_token or shifted): " +
                  error);
    config.mapping = *inferred;
  }
  auto layout = einrt::windowLayout(first, config.mapping, error);
  if (!layout)
    return fail(error);

  config.steps = o.steps;
  config.accumulate = accumulate;
  config.evalEvery = valFile ? s.evalEvery.value_or(100) : 0;
  config.evalSteps = s.evalSteps;
  config.checkpointEvery = s.checkpointEvery;
  config.seed = static_cast<uint64_t>(s.seed);
  config.schedule = schedule;
  config.vocab = vocab;
  config.checkpointDir = ckDir;
  config.resume = o.resume;
  config.overwrite = o.overwrite;
  config.resetOptimizer = o.resetOptimizer;
  config.configText = settingsText(module, s) + "schedule " + schedule.describeShape() + "\n";
  config.logPath = o.logFile;
  config.logEvery = o.logEvery;
  int64_t tokensPerStep = layout->targetsPerBatch() * accumulate;
  config.progress.totalSteps = o.steps;
  config.progress.out = &std::cout;
  if (prediction.available) {
    config.progress.flopsPerStep = prediction.modelFlops * accumulate;
    config.progress.peakFlops = prediction.peak;
    config.progress.predictedStepSeconds = prediction.stepSeconds * accumulate;
    config.progress.predictedMfu = prediction.mfu;
  }

  if (!makeDirs(ckDir, error))
    return fail(error);

  einrt::TrainPrograms programs;
  size_t next = 0;
  if (accumulate == 1) {
    programs.trainStep = &*lowered.executors[next++];
  } else {
    programs.accumulate = &*lowered.executors[next++];
    programs.apply = &*lowered.executors[next++];
  }
  if (valFile)
    programs.forward = &*lowered.executors[next++];

  llvm::outs() << "einc train: " << o.input << "  (" << o.backend << " backend, compiled in "
               << llvm::format("%.2f", compileSeconds) << " s";
  if (lowered.kernels)
    llvm::outs() << "; " << lowered.kernelsCompiled << " kernels compiled, "
                 << lowered.kernelsCached << " cached; " << lowered.threads
                 << (lowered.threads == 1 ? " thread" : " threads");
  llvm::outs() << ")\n";
  {
    int64_t arena = 0, owned = 0; // over every lowered function
    for (const auto &ex : lowered.executors) {
      arena += ex->arenaBytes();
      owned += ex->residentBytes();
    }
    llvm::outs() << "  memory    "
                 << llvm::format("arena %.1f MiB (+ %.1f MiB params, inputs, state, results)\n",
                                 arena / 1048576.0, owned / 1048576.0);
  }
  llvm::outs() << "  data      " << o.trainData << ": " << trainFile->size() << " tokens ("
               << trainFile->formatName() << ")";
  if (valFile)
    llvm::outs() << "; val " << o.valData << ": " << valFile->size() << " tokens";
  llvm::outs() << "\n  windows   " << einrt::windowMappingName(config.mapping) << ", "
               << layout->batch << " rows x " << layout->context << " tokens"
               << (accumulate > 1 ? " x " + std::to_string(accumulate) + " micro-batches" : "")
               << " = " << tokensPerStep << " predicted tokens per step\n";
  llvm::outs() << "  schedule  " << schedule.describe() << " (length from " << totalFrom << ")\n";
  llvm::outs() << "  steps     to " << o.steps << (o.resume ? " (resuming)" : "") << ", seed "
               << config.seed;
  if (config.evalEvery > 0)
    llvm::outs() << ", eval every " << config.evalEvery << " step"
                 << (config.evalEvery == 1 ? "" : "s") << " on " << config.evalSteps << " batch"
                 << (config.evalSteps == 1 ? "" : "es") << "\n";
  else
    llvm::outs() << (valFile ? ", no evaluation (eval_every 0)\n" : ", no evaluation (no --val)\n");
  if (prediction.available)
    llvm::outs() << "  predicted " << llvm::format("%.4g", prediction.stepSeconds * accumulate)
                 << " s/step, MFU " << llvm::format("%.1f%%", 100 * prediction.mfu)
                 << " (the report on the cpu profile)\n";
  else
    llvm::outs() << "  predicted (no cpu profile: run einc calibrate)\n";
  llvm::outs().flush();

  auto trainer =
      einrt::Trainer::create(config, programs, *trainFile, valFile ? &*valFile : nullptr, error);
  if (!trainer)
    return fail(error);
  einrt::TrainResult result;
  auto runStart = std::chrono::steady_clock::now();
  bool ok = trainer->run(result, error);
  std::cout.flush();
  double runSeconds = seconds(runStart);
  if (!ok)
    return fail(error);

  // The trainer evaluates at the last step; a resume with nothing to do has
  // the checkpoint's validation loss, if any.
  std::optional<double> valLoss = result.lastValLoss;
  if (config.evalEvery > 0 && !valLoss) {
    double v;
    if (!trainer->evaluate(v, error))
      return fail(error);
    valLoss = v;
  }
  int64_t stepsRun = result.lastStep - result.startStep;
  llvm::outs() << "trained steps " << result.startStep + 1 << ".." << result.lastStep << " in "
               << llvm::format("%.1f", runSeconds) << " s";
  if (stepsRun > 0)
    llvm::outs() << llvm::format(" (%.1f ms/step, %.0f tokens/s)", 1000 * runSeconds / stepsRun,
                                 stepsRun * tokensPerStep / runSeconds);
  llvm::outs() << "\n";
  llvm::outs() << "train loss " << llvm::format("%.4f", result.lastLoss) << "\n";
  if (valLoss) {
    // Tokens are bytes: nats per token / ln 2 = bits per byte.
    llvm::outs() << "val loss " << llvm::format("%.4f", *valLoss)
                 << " nats/token = " << llvm::format("%.4f", *valLoss / std::log(2.0))
                 << " bits per byte\n";
  }
  if (result.bestValLoss)
    llvm::outs() << "best val loss " << llvm::format("%.4f", *result.bestValLoss) << " = "
                 << llvm::format("%.4f", *result.bestValLoss / std::log(2.0)) << " bits per byte ("
                 << ckDir << "/best.safetensors)\n";
  llvm::outs() << "checkpoint " << lastPath << "\n";
  return 0;
}

} // namespace einc
