//===- TrainRun.cpp - `train`: the training loop of a compiled model ------===//
//
// The model's settings (its `train { }` section with --set applied, or the
// defaults below) are the runtime's TrainConfig:
//
//   lr 1e-3, min_lr lr/10, schedule cosine over `steps` (else the first
//   run's --steps, recorded in the checkpoint), warmup min(100, steps/10),
//   eval_every 100 with --val (0 without), eval_steps 10, seed 0, data:
//   inferred from the inputs (targets shaped like the context: shifted;
//   one axis fewer: next_token).
//
// The bundle holds @train_step (accumulate 1) or @accumulate_grad +
// @apply_update (accumulate > 1), and @forward for evaluation. Its report,
// when it was built on the `cpu` device profile, gives the predicted step
// time and MFU for the progress line.
//
//===----------------------------------------------------------------------===//
#include "Runner.h"

#include "runtime/base/Memory.h"
#include "runtime/base/StrictJson.h"
#include "runtime/base/TerminalText.h"
#include "runtime/core/StepPrediction.h"
#include "runtime/core/StepProfile.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cuda/CudaDevice.h"
#include "runtime/dist/NcclCollectives.h"
#include "runtime/io/Checkpoint.h"
#include "runtime/io/CheckpointDir.h"
#include "runtime/train/Schedule.h"
#include "runtime/train/StopSignals.h"
#include "runtime/train/Trainer.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace einc::runner {
namespace {

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

/// j[key] when `j` is an object that has it, else null (never throws).
const nlohmann::json *member(const nlohmann::json *j, const char *key) {
  if (!j || !j->is_object())
    return nullptr;
  auto it = j->find(key);
  return it == j->end() ? nullptr : &*it;
}

bool number(const nlohmann::json *v, double &out) {
  if (!v || !v->is_number())
    return false;
  out = v->get<double>();
  return true;
}

/// The prediction for the progress line: the bundle's report, when it is
/// of the device profile of what runs (see profileRuns).
struct Prediction {
  bool available = false;
  double stepSeconds = 0, mfu = 0, modelFlops = 0, peak = 0;
  double bandwidth = 0; // the device's bytes/s (the per-step roofline of --profile)
  std::string device;   // the report's ("" without a report)
};

/// Whether the report's device profile `profile` is of what runs (the
/// backend says: `cpu` for the host, a GPU's name word for a GPU).
bool profileRuns(const std::string &profile, const Backend &backend, const Loaded &loaded) {
  return backend.kind->profileDescribes(profile, loaded.description);
}

Prediction predict(const einrt::ModelBundle &bundle, const Backend &backend, const Loaded &loaded) {
  Prediction p;
  if (bundle.reportJson.empty())
    return p;
  auto parsed = einrt::parseStrictJson(bundle.reportJson.data(), bundle.reportJson.size());
  if (!parsed.ok())
    return p;
  const nlohmann::json j = parsed.take();
  const nlohmann::json *device = member(&j, "device"), *name = member(device, "name");
  if (!name || !name->is_string())
    return p;
  p.device = name->get<std::string>();
  if (!profileRuns(p.device, backend, loaded))
    return p;
  const nlohmann::json *predicted = member(&j, "predicted");
  p.available = number(member(predicted, "step_seconds"), p.stepSeconds) &&
                number(member(predicted, "mfu"), p.mfu) &&
                number(member(member(&j, "model_flops"), "total"), p.modelFlops) &&
                number(member(device, "matrix_flops_per_second"), p.peak) &&
                number(member(device, "bandwidth_bytes_per_second"), p.bandwidth);
  return p;
}

/// The schedule recorded in CK/last.safetensors, if any.
std::optional<einrt::Schedule> recordedSchedule(const std::string &lastPath) {
  einrt::Expected<einrt::Checkpoint> ck = einrt::readCheckpoint(lastPath);
  if (!ck.ok())
    return std::nullopt;
  einrt::Expected<einrt::Schedule> schedule = einrt::Schedule::parse(ck->info.schedule);
  if (!schedule.ok())
    return std::nullopt;
  return schedule.take();
}

/// --profile's table per profiled function, and its {"profile": ...} line
/// appended to the metrics log.
einrt::Status printProfile(const std::vector<einrt::Executor *> &profiled,
                           const Prediction &prediction, const std::string &logFile) {
  std::ostream &out = std::cout;
  nlohmann::json functions = nlohmann::json::array();
  einrt::StepRoofline roofline{prediction.peak, prediction.bandwidth};
  for (einrt::Executor *ex : profiled) {
    const einrt::Program &p = ex->program();
    out << "\n";
    if (prediction.available)
      out << "profile of @" << p.name << ": " << p.steps.size() << " steps, "
          << einrt::formatPredictedProfile(p, ex->stepSeconds(), ex->profiledRuns(), roofline);
    else
      out << einrt::formatStepProfile(p, ex->stepSeconds(), ex->profiledRuns())
          << "  (no prediction beside it: the report is not of this device's profile)\n";
    nlohmann::json steps = nlohmann::json::array();
    const double perRun = ex->profiledRuns() > 0 ? 1e3 / double(ex->profiledRuns()) : 0;
    for (size_t i = 0; i < p.steps.size() && i < ex->stepSeconds().size(); ++i) {
      nlohmann::json s = {{"index", i},
                          {"group", einrt::stepGroup(p.steps[i])},
                          {"note", p.steps[i].note},
                          {"measured_ms", ex->stepSeconds()[i] * perRun}};
      if (prediction.available) {
        einrt::StepPrediction e = einrt::predictStep(p, i, roofline);
        s["predicted_ms"] = 1e3 * e.seconds;
        s["bytes"] = e.bytes;
        s["flops"] = e.flops;
        s["bound"] = e.computeBound ? "compute" : "memory";
      }
      steps.push_back(std::move(s));
    }
    functions.push_back({{"function", p.name}, {"runs", ex->profiledRuns()}, {"steps", steps}});
  }
  if (logFile.empty())
    return einrt::Status::success();
  std::ofstream log(logFile, std::ios::app);
  log << nlohmann::json({{"profile", functions}}).dump() << "\n";
  log.flush();
  if (!log)
    return einrt::Status(einrt::StatusCode::Io,
                         "cannot append the profile to " + einrt::quoted(logFile));
  return einrt::Status::success();
}

std::string lrText(double lr) { return einrt::formatShortest(lr); }

/// What a resume must keep, by name (recorded in the checkpoint): every
/// dim, and every train setting's value (given or default) but the
/// schedule's length and the checkpoint interval, which a resume may change
/// explicitly, and those the trainer records as it runs them (seed,
/// accumulate, data).
einrt::SettingsRecord resumeSettings(const einrt::ModelBundle &bundle,
                                     const einrt::TrainSettings &settings) {
  einrt::SettingsRecord record;
  for (const auto &[name, size] : bundle.dims)
    record.emplace_back("dim " + name, std::to_string(size));
  for (const einrt::SettingInfo &info : einrt::trainSettingTable()) {
    std::string key = info.key;
    if (key != "steps" && key != "checkpoint_every" && key != "seed" && key != "accumulate" &&
        key != "data")
      record.emplace_back(key, einrt::trainSettingValue(settings, info));
  }
  return record;
}

std::string plural(int64_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

} // namespace

TrainRun::~TrainRun() = default;

int TrainRun::fail(const std::string &message) const { return context.fail("train", message); }

std::unique_ptr<TrainRun> TrainRun::prepare(const RunContext &context, const RunOptions &o,
                                            const einrt::TrainSettings &s, int32_t vocab) {
  std::unique_ptr<TrainRun> r(new TrainRun);
  r->context = context;
  r->options = o;
  r->settings = s;
  r->vocab = vocab;

  // The data first: a bad file (every token id checked against the vocab)
  // is reported before minutes of compiling.
  auto openChecked = [&](const std::string &path, std::optional<einrt::TokenFile> &file) {
    einrt::Expected<einrt::TokenFile> opened = einrt::TokenFile::open(path);
    if (!opened.ok())
      return opened.takeStatus();
    file = opened.take();
    return file->checkVocabulary(vocab);
  };
  if (einrt::Status opened = openChecked(o.trainData, r->trainFile); !opened.ok())
    return r->fail(opened.message()), nullptr;
  if (!o.valData.empty())
    if (einrt::Status opened = openChecked(o.valData, r->valFile); !opened.ok())
      return r->fail(opened.message()), nullptr;

  // The schedule: its length from the settings, else the checkpoint being
  // resumed, else this run's --steps.
  const std::string &ckDir = o.checkpointDir;
  std::string lastPath = ckDir + "/last.safetensors";
  std::error_code ec;
  if (o.resume && !std::filesystem::exists(lastPath, ec))
    return r->fail("--resume: no checkpoint " + einrt::quoted(lastPath) + " to resume from"),
           nullptr;
  if (!o.initFrom.empty() && !std::filesystem::is_regular_file(o.initFrom, ec))
    return r->fail("--init-from: no checkpoint file " + einrt::quoted(o.initFrom)), nullptr;
  // The directory this run writes: made, shown writable and locked now, not
  // found wanting at the first save (rank 0 alone writes it).
  if (!context.comm || context.comm->rank() == 0) {
    auto lock = einrt::CheckpointDirLock::acquire(ckDir);
    if (!lock.ok())
      return r->fail(lock.status().message()), nullptr;
    r->lock = lock.take();
    if (!r->lock->note().empty())
      std::cerr << context.tool << " train: " << r->lock->note() << "\n";
  }
  if (!o.resume && !o.overwrite)
    if (std::string inTheWay = einrt::checkpointInTheWay(ckDir); !inTheWay.empty())
      return r->fail(inTheWay), nullptr;
  einrt::Schedule &schedule = r->schedule;
  // The settings table admits only the schedules' names.
  schedule.kind = einrt::Schedule::kindNamed(s.schedule).value_or(einrt::Schedule::Kind::Cosine);
  schedule.lr = s.lr;
  schedule.cooldown = s.cooldown;
  schedule.minLr = s.minLr.value_or(schedule.lr / 10);
  // Its length is fixed when a run starts and recorded in the checkpoint:
  // the `steps` setting, else the first run's --steps. A resume keeps it
  // unless `steps` is set (an explicit extension or cut); running past the
  // end of a recorded schedule with an end without saying so is refused.
  std::optional<einrt::Schedule> recorded = o.resume ? recordedSchedule(lastPath) : std::nullopt;
  std::string &totalFrom = r->totalFrom;
  totalFrom = "the `steps` setting";
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
  // The default warmup fits any length; a warmup that was set and does not
  // fit is refused below (Schedule::validate), not cut short.
  if (!s.warmup && schedule.ends() && schedule.warmup >= schedule.total)
    schedule.warmup = schedule.total - 1;
  const bool ends = schedule.ends();
  const std::string shape =
      schedule.kind == einrt::Schedule::Kind::Cosine
          ? "cosine"
          : std::string(einrt::Schedule::kindName(schedule.kind)) + " schedule";
  auto n = [](int64_t v) { return std::to_string(v); };
  if (ends && recorded && !s.steps && o.steps > schedule.total) {
    einrt::Schedule stretched = schedule;
    stretched.total = o.steps;
    int64_t t = schedule.total + 1;
    return r->fail("--steps " + n(o.steps) + " runs past the end of the schedule recorded in " +
                   einrt::quoted(lastPath) + " (" + recorded->describe() + "): steps " + n(t) +
                   ".." + n(o.steps) + " would all run at min_lr " + lrText(schedule.minLr) +
                   ". Say which you mean: --set steps=" + n(o.steps) + " stretches the " + shape +
                   " to end at step " + n(o.steps) + " (the lr at step " + n(t) + " becomes " +
                   lrText(stretched.at(t)) + ", up from " + lrText(schedule.at(t)) +
                   "), or --set steps=" + n(schedule.total) +
                   " keeps the schedule and trains on at min_lr"),
           nullptr;
  }
  if (ends && recorded && s.steps && recorded->total != schedule.total) {
    int64_t t = 0; // the first step this run trains: the checkpoint's + 1
    if (einrt::Expected<einrt::Checkpoint> ck = einrt::readCheckpoint(lastPath); ck.ok())
      t = ck->info.step + 1;
    totalFrom += "; the checkpoint's was " + n(recorded->total) + ": the lr at step " + n(t) +
                 " is " + lrText(schedule.at(t)) + ", it was " + lrText(recorded->at(t));
  } else if (ends && o.steps > schedule.total) {
    totalFrom += "; steps " + n(schedule.total + 1) + ".." + n(o.steps) + " run at min_lr " +
                 lrText(schedule.minLr);
  }
  if (std::string problem = schedule.validate(); !problem.empty())
    return r->fail("the learning-rate schedule: " + problem), nullptr;
  return r;
}

int TrainRun::run(const einrt::ModelBundle &bundle, const Backend &backend,
                  const std::string &origin) {
  const RunOptions &o = options;
  const einrt::TrainSettings &s = settings;
  // The settings' accumulate is the global micro-batch count (einc train
  // compiled N x its per-rank one); each of N ranks runs accumulate / N.
  const int64_t accumulate = s.accumulate;
  const int64_t ranks = context.comm ? context.comm->size() : 1;
  const bool leader = !context.comm || context.comm->rank() == 0;
  if (accumulate % ranks != 0)
    return fail("the compiled accumulate (" + std::to_string(accumulate) +
                " micro-batches per step) does not divide over " + std::to_string(ranks) +
                " ranks; compile with a multiple of the rank count");
  const int64_t perRank = accumulate / ranks;

  if (o.distributed == "nccl" && !backend.kind->deviceCollectives())
    return fail("--distributed nccl sums gradients in GPU memory: it needs the cuda backend, not " +
                std::string(backend.name()) + " (--distributed mpi sums them on the host)");

  std::vector<std::string> names = trainFunctionNames(s, withValidation());
  Loaded loaded;
  if (einrt::Status ok = load(bundle, names, backend, loaded); !ok.ok())
    return fail(ok.message());
  // --distributed nccl: the ranks' NCCL communicator on this rank's GPU
  // (declared after `loaded`, so it goes before the device does).
  std::unique_ptr<einrt::Collectives> nccl;
  if (o.distributed == "nccl") {
    auto gpu = std::dynamic_pointer_cast<einrt::CudaDevice>(loaded.device);
    if (!gpu)
      return fail("--distributed nccl: the model does not run on a cuda device");
    auto opened = einrt::openNccl(gpu, context.comm);
    if (!opened.ok())
      return fail(opened.status().message());
    nccl = opened.take();
  }

  // How a window maps onto the inputs.
  einrt::TrainConfig config;
  const einrt::Program &first = loaded.executors.front()->program();
  if (auto word = s.data) {
    config.mapping = *einrt::parseWindowMapping(*word);
  } else {
    einrt::Expected<einrt::WindowMapping> inferred = einrt::inferWindowMapping(first);
    if (!inferred.ok())
      return fail("cannot tell how a token window maps onto the inputs (set `data` to "
                  "next_token or shifted): " +
                  inferred.status().message());
    config.mapping = *inferred;
  }
  einrt::Expected<einrt::WindowLayout> layout = einrt::windowLayout(first, config.mapping);
  if (!layout.ok())
    return fail(layout.status().message());

  const std::string &ckDir = o.checkpointDir;
  config.steps = o.steps;
  config.accumulate = perRank;
  config.comm = context.comm;
  config.collectives = nccl.get();
  config.fastSum = o.fastAllreduce;
  config.shardOptimizer = o.shardOptimizer;
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
  config.settings = resumeSettings(bundle, s);
  config.initFrom = o.initFrom;
  config.keepOptimizer = o.keepOptimizer;
  config.logPath = o.logFile;
  config.logEvery = o.logEvery;
  config.stopRequested = [] { return einrt::StopSignals::received() != 0; };
  int64_t tokensPerStep = layout->targetsPerBatch() * accumulate;
  config.progress.totalSteps = o.steps;
  static std::ostream silent(nullptr); // ranks other than 0 print nothing
  config.progress.out = leader ? &std::cout : &silent;
  Prediction prediction = predict(bundle, backend, loaded);
  if (prediction.available) {
    // Per rank: its micro-batches on its device.
    config.progress.flopsPerStep = prediction.modelFlops * perRank;
    config.progress.peakFlops = prediction.peak;
    config.progress.predictedStepSeconds = prediction.stepSeconds * perRank;
    config.progress.predictedMfu = prediction.mfu;
  }

  einrt::TrainPrograms programs;
  size_t next = 0;
  if (accumulate == 1) {
    programs.trainStep = &*loaded.executors[next++];
  } else {
    programs.accumulate = &*loaded.executors[next++];
    programs.apply = &*loaded.executors[next++];
  }
  if (valFile)
    programs.forward = &*loaded.executors[next++];

  std::ostream &out = leader ? std::cout : silent;
  out << context.tool << " train: " << einrt::terminalSafe(context.model) << "  (" << backend.name()
      << " backend";
  if (!origin.empty())
    out << ", " << origin;
  if (backend.kind->hostKernels())
    out << "; " << plural(loaded.threads, "thread");
  if (!loaded.description.empty())
    out << "; " << loaded.description;
  if (auto *cpu = dynamic_cast<einrt::CpuDevice *>(loaded.device.get()); cpu && cpu->bf16GemmPath())
    out << "; bf16 GEMMs: " << einrt::bf16GemmPathLabel(*cpu->bf16GemmPath());
  if (backend.kind->hostKernels() &&
      std::any_of(loaded.executors.begin(), loaded.executors.end(),
                  [](const auto &ex) { return einrt::CpuDevice::f16GemmSteps(ex->program()) > 0; }))
    out << "; f16 GEMMs: widened to f32";
  if (auto *cpu = dynamic_cast<einrt::CpuDevice *>(loaded.device.get());
      cpu && cpu->gemmChooser() && !cpu->gemmChooser()->isDefault())
    out << "; f32 GEMMs: " << cpu->gemmChooser()->describe();
  if (auto *cpu = dynamic_cast<einrt::CpuDevice *>(loaded.device.get());
      cpu && !cpu->gemmMeasurement().empty())
    out << "; " << cpu->gemmMeasurement();
  out << ")\n";
  {
    int64_t arena = 0, owned = 0; // over every function
    for (const auto &ex : loaded.executors) {
      arena += ex->arenaBytes();
      owned += ex->residentBytes();
    }
    out << "  memory    arena " << fixed(arena / 1048576.0, 1) << " MiB (+ "
        << fixed(owned / 1048576.0, 1) << " MiB params, inputs, state, results)\n";
  }
  out << "  data      " << einrt::terminalSafe(o.trainData) << ": " << trainFile->size()
      << " tokens (" << trainFile->formatName() << ")";
  if (valFile)
    out << "; val " << einrt::terminalSafe(o.valData) << ": " << valFile->size() << " tokens";
  out << "\n  windows   " << einrt::windowMappingName(config.mapping) << ", " << layout->batch
      << " rows x " << layout->context << " tokens"
      << (accumulate > 1 ? " x " + std::to_string(accumulate) + " micro-batches" : "") << " = "
      << tokensPerStep << " predicted tokens per step\n";
  if (context.comm) {
    out << "  ranks     " << ranks << " (" << context.comm->describe();
    if (nccl)
      out << "; " << nccl->describe();
    out << "), " << perRank << " micro-batch" << (perRank == 1 ? "" : "es")
        << " each, gradients summed ";
    if (accumulate == 1)
      out << "by no one (one micro-batch per step: nothing to sum)";
    else if (o.fastAllreduce)
      out << (nccl ? "by ncclAllReduce on the GPU" : "by MPI_Allreduce") << " (not reproducible)";
    else
      out << (nccl ? "on the GPU " : "") << "in one process's order (bit-identical to one process)";
    out << "\n";
  }
  out << "  schedule  " << schedule.describe() << " (length from " << totalFrom << ")\n";
  if (!o.initFrom.empty())
    out << "  init      params from " << o.initFrom << " (a new run: step 0, this run's settings; "
        << (o.keepOptimizer ? "its optimizer state kept" : "optimizer state from zero") << ")\n";
  out << "  steps     to " << o.steps << (o.resume ? " (resuming)" : "") << ", seed "
      << config.seed;
  if (config.evalEvery > 0)
    out << ", eval every " << plural(config.evalEvery, "step") << " on " << config.evalSteps
        << " batch" << (config.evalSteps == 1 ? "" : "es") << "\n";
  else
    out << (valFile ? ", no evaluation (eval_every 0)\n" : ", no evaluation (no --val)\n");
  if (prediction.available) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", prediction.stepSeconds * perRank);
    out << "  predicted " << text << " s/step, MFU " << fixed(100 * prediction.mfu, 1)
        << "% (the report on the " << prediction.device << " profile)\n";
  } else {
    out << "  predicted ("
        << (prediction.device.empty() || profileRuns(prediction.device, backend, loaded)
                ? context.noPrediction
                : "the report is on the " + prediction.device + " profile, not " +
                      backend.kind->profileWord())
        << ")\n";
  }
  out.flush();

  // --profile: every step of the training function(s) timed (the device
  // synchronises after each), printed at the end beside the roofline.
  std::vector<einrt::Executor *> profiled;
  if (o.profile) {
    for (einrt::Executor *ex : {programs.trainStep, programs.accumulate, programs.apply})
      if (ex) {
        ex->setProfiling(true);
        profiled.push_back(ex);
      }
  }

  einrt::Expected<std::unique_ptr<einrt::Trainer>> created =
      einrt::Trainer::create(config, programs, *trainFile, valFile ? &*valFile : nullptr);
  if (!created.ok())
    return fail(created.status().message());
  std::unique_ptr<einrt::Trainer> trainer = created.take();
  if (context.comm) {
    // Per rank: ZeRO-1 divides the optimizer state (docs/distributed.md).
    einrt::Expected<std::vector<int64_t>> stateBytes = trainer->optimizerStateBytes();
    if (!stateBytes.ok())
      return fail(stateBytes.status().message());
    const std::vector<int64_t> &state = *stateBytes;
    int64_t total = 0;
    std::string list;
    for (size_t r = 0; r < state.size(); ++r) {
      total += state[r];
      list += (r ? ", " : "") + fixed(state[r] / 1048576.0, 2);
    }
    out << "  opt state " << list << " MiB on rank" << (state.size() > 1 ? "s 0.." : " ")
        << (state.size() > 1 ? std::to_string(state.size() - 1) : "0")
        << (o.shardOptimizer ? " (ZeRO-1: sharded, " + fixed(total / 1048576.0, 2) + " MiB in all)"
                             : " (each a full copy)")
        << "\n";
    out.flush();
  }
  einrt::TrainResult result;
  auto runStart = std::chrono::steady_clock::now();
  int stopSignal = 0;
  einrt::Status trained;
  {
    // SIGINT/SIGTERM while training: save after this step, then stop.
    einrt::StopSignals signals(context.tool + " train: ", !leader);
    trained = trainer->run(result);
    stopSignal = einrt::StopSignals::received();
  }
  out.flush();
  double runSeconds = seconds(runStart);
  if (!trained.ok())
    return fail(trained.message());

  // The trainer evaluates at the last step; a resume with nothing to do has
  // the checkpoint's validation loss, if any.
  std::optional<double> valLoss = result.lastValLoss;
  std::vector<std::pair<std::string, double>> valMetrics = result.lastValMetrics;
  if (config.evalEvery > 0 && !valLoss && leader && !result.stopped) {
    einrt::Expected<einrt::Trainer::Evaluation> evaluation = trainer->evaluate();
    if (!evaluation.ok())
      return fail(evaluation.status().message());
    valLoss = evaluation->loss;
    valMetrics = evaluation->metrics;
  }
  int64_t stepsRun = result.lastStep - result.startStep;
  if (stepsRun > 0)
    out << "trained steps " << result.startStep + 1 << ".." << result.lastStep << " in "
        << fixed(runSeconds, 1) << " s (" << fixed(1000 * runSeconds / stepsRun, 1) << " ms/step, "
        << fixed(stepsRun * tokensPerStep / runSeconds, 0) << " tokens/s)\n";
  else
    out << "trained no steps: the checkpoint is at step " << result.lastStep
        << ", where --steps stops (a larger --steps goes on)\n";
  out << "train loss " << fixed(result.lastLoss, 4) << "\n";
  if (trainer->gradientSumSteps() > 0)
    out << "gradient sum "
        << fixed(1000 * trainer->gradientSumSeconds() / double(trainer->gradientSumSteps()), 1)
        << " ms/step on rank 0 not hidden behind compute ("
        << (nccl ? "after the last micro-batch: its round, the all-gather"
                 : "ring rounds, broadcast")
        << ")\n";
  // Tokens are bytes: nats per token / ln 2 = bits per byte, where the loss
  // is the cross-entropy alone; a loss with other terms is only the loss.
  // An objective's cross-entropy term comes as the output "cross_entropy"
  // (dsl: addCrossEntropyOutput).
  const bool perToken = bundle.loss != "objective";
  if (valLoss) {
    out << "val loss " << fixed(*valLoss, 4);
    std::optional<double> term;
    for (const auto &[name, value] : valMetrics)
      if (name == "cross_entropy")
        term = value;
    if (perToken)
      out << " nats/token = " << fixed(*valLoss / std::log(2.0), 4) << " bits per byte\n";
    else if (term)
      out << " (the whole objective); its cross-entropy term " << fixed(*term, 4)
          << " nats/token = " << fixed(*term / std::log(2.0), 4) << " bits per byte\n";
    else
      out << " (the whole objective: it is not the cross-entropy alone, so no bits per byte)\n";
    for (const auto &[name, value] : valMetrics)
      if (name != "cross_entropy" || perToken)
        out << "val " << einrt::terminalSafe(name) << " " << fixed(value, 4) << "\n";
  }
  if (result.bestValLoss) {
    out << "best val loss " << fixed(*result.bestValLoss, 4);
    if (perToken)
      out << " = " << fixed(*result.bestValLoss / std::log(2.0), 4) << " bits per byte";
    out << " (" << einrt::terminalSafe(ckDir) << "/best.safetensors)\n";
  }
  out << "checkpoint " << einrt::terminalSafe(ckDir) << "/last.safetensors\n";
  if (leader && !profiled.empty())
    if (einrt::Status printed = printProfile(profiled, prediction, o.logFile); !printed.ok())
      return fail(printed.message());
  out.flush();
  if (!result.stopped)
    return 0;
  if (leader) // one write: a launcher forwarding stderr keeps the line whole
    std::cerr << context.tool + " train: stopped by " +
                     (stopSignal ? einrt::StopSignals::name(stopSignal) : "another rank's signal") +
                     " after step " + std::to_string(result.lastStep) + " of " +
                     std::to_string(o.steps) + ", saved in '" + ckDir +
                     "/last.safetensors' (continue with --resume); exit status " +
                     std::to_string(einrt::kStoppedBySignalStatus) + "\n";
  return einrt::kStoppedBySignalStatus;
}

} // namespace einc::runner
