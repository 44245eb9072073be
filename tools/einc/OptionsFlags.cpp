//===- OptionsFlags.cpp - Each command's flags ----------------------------===//
//
// The value parsers, the flags several commands share (--set, --remat,
// --precision, --backend, --threads ...) and one builder per command
// (OptionsCommand.h); Options.cpp puts them together.
//
//===----------------------------------------------------------------------===//
#include "OptionsCommand.h"

#include "runtime/base/TerminalText.h"
#include "runtime/core/Backend.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace einc::cli {

/// The whole of `text` as an integer >= min, else nullopt.
std::optional<int64_t> parseInteger(const std::string &text, int64_t min) {
  if (text.empty())
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size() || v < min)
    return std::nullopt;
  return v;
}

/// The whole of `text` as a finite number, else nullopt.
std::optional<double> parseReal(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

int64_t count(const std::string &flag, const std::string &v, int64_t min) {
  auto n = parseInteger(v, min);
  if (!n)
    bad(flag + (min > 0 ? " needs a positive integer" : " needs a non-negative integer") +
        ", got " + einrt::quoted(v));
  return *n;
}

/// A positive number, optionally with a suffix K, M, B or G, T (10^3 .. 10^12).
std::optional<double> parseQuantity(std::string s) {
  double scale = 1;
  if (!s.empty()) {
    switch (s.back()) {
    case 'k':
    case 'K':
      scale = 1e3;
      break;
    case 'M':
      scale = 1e6;
      break;
    case 'B':
    case 'G':
      scale = 1e9;
      break;
    case 'T':
      scale = 1e12;
      break;
    default:
      break;
    }
    if (scale != 1)
      s.pop_back();
  }
  auto v = parseReal(s);
  if (!v || !(*v > 0) || *v * scale > 1e30)
    return std::nullopt;
  return *v * scale;
}

std::string choice(const std::string &what, const std::string &v,
                   const std::vector<std::string> &choices) {
  std::string list;
  size_t i = 0;
  for (const std::string &c : choices) {
    if (v == c)
      return v;
    list += std::string(i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + c;
    ++i;
  }
  bad("unknown " + what + " " + einrt::quoted(v) + "; expected " + list);
}

void addSet(Command &c, Options &o,
            const char *description = "override a `dim` or a `train { }` setting (repeatable)") {
  c.value("--set", "NAME=VALUE", description, [&o](const std::string &v) {
    size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0)
      bad("--set needs NAME=VALUE, got " + einrt::quoted(v));
    o.overrides.emplace_back(v.substr(0, eq), v.substr(eq + 1));
  });
}

/// `--remat POLICY`: the `remat` setting, as `--set remat=POLICY`.
/// An executable takes it too, and refuses any value but the one compiled
/// in with the words of `--set remat=...` (tools/runner/RunSettings.cpp).
void addRemat(Command &c, Options &o) {
  c.value("--remat", "POLICY",
          c.tool->executable ? "activation checkpointing: compiled in; any other policy\n"
                               "needs einc compile --remat POLICY"
                             : "activation checkpointing: none, full, every:K, sqrt, selective,\n"
                               "names:a,b, budget:SIZE (2GiB, 60%); the same as --set remat=POLICY",
          [&o](const std::string &v) { o.overrides.emplace_back("remat", v); });
}

void addPrecision(Command &c, Options &o) {
  c.value("--precision", "P",
          c.tool->executable
              ? "precision policy: compiled in; any other policy needs\n"
                "einc compile --precision P"
              : "precision policy: fp32, bf16-mixed (alias mixed), fp16-mixed or bf16\n"
                "(docs/precision.md); the same as --set precision=P",
          [&o](const std::string &v) { o.overrides.emplace_back("precision", v); });
}

void addOutput(Command &c, Options &o, const char *description) {
  c.value("-o", "FILE", description, [&o](const std::string &v) { o.output = v; });
}

/// The registered backends' names (runtime/core/Backend.h); an executable's
/// are those that run the Programs it carries (the default backend's).
std::vector<std::string> backendChoices(bool executable) {
  std::vector<std::string> names;
  const std::string carried = einrt::defaultBackend().programLowering();
  for (const einrt::Backend *b : einrt::backends())
    if (!executable || b->programLowering() == carried)
      names.push_back(b->name());
  return names;
}

void addBackend(Command &c, Options &o, const char *description) {
  c.value("--backend", "B", description, [&o](const std::string &v) {
    o.backend = choice("backend", v, backendChoices(false));
    o.backendGiven = true;
  });
}

void addThreads(Command &c, Options &o, const char *description) {
  c.value("--threads", "N", description, [&o](const std::string &v) {
    auto n = parseInteger(v, 1);
    if (!n || *n > 1024)
      bad("--threads needs an integer in [1, 1024], got " + einrt::quoted(v));
    o.threads = *n;
  });
}

void addSeed(Command &c, Options &o, const char *description) {
  c.value("--seed", "N", description,
          [&o](const std::string &v) { o.seed = static_cast<uint64_t>(count("--seed", v, 0)); });
}

void addSteps(Command &c, Options &o, const char *description, const std::string &group) {
  c.value(
      "--steps", "N", description,
      [&o](const std::string &v) {
        o.stepsGiven = true;
        o.steps = count("--steps", v, 1);
      },
      group);
}

/// An executable's --backend: cpu, or cuda where it was compiled with
/// `--target cuda` (its default there; the main decides).
void addExecutableBackend(Command &c, Options &o) {
  c.value("--backend", "B",
          "cpu or cuda (default: cuda when compiled with --target cuda,\n"
          "else cpu)",
          [&o](const std::string &v) {
            o.backend = choice("backend", v, backendChoices(true));
            o.backendGiven = true;
          });
}

const char *kThreadsHelp = "threads for the CPU backend: its kernels and BLAS (default:\n"
                           "EINC_NUM_THREADS, OMP_NUM_THREADS or OPENBLAS_NUM_THREADS if set,\n"
                           "else every hardware thread)";

void buildCheck(Command &c, Options &o) { addSet(c, o); }

void buildEmit(Command &c, Options &o) {
  c.value("--stage", "STAGE", "ast, ir, grad, step, fused or cuda (default: ir)",
          [&o](const std::string &v) {
            if (v != "ast" && v != "ir" && v != "grad" && v != "step" && v != "fused" &&
                v != "cuda")
              bad("unknown stage " + einrt::quoted(v) +
                  "; expected ast, ir, grad, step, fused or cuda");
            o.stage = v;
          });
  addOutput(c, o, "write to FILE instead of standard output");
  addPrecision(c, o);
  addRemat(c, o);
  addSet(c, o);
}

void buildRun(Command &c, Options &o) {
  c.app
      ->add_flag_callback(
          "--forward", [&o] { o.mode = "forward"; }, "the forward only: print the loss")
      ->group("Modes");
  c.app
      ->add_flag_callback(
          "--step", [&o] { o.mode = "step"; },
          "training steps (forward, backward, clipping, optimizer) on one\n"
          "batch: print loss and gradient norm per step")
      ->group("Modes");
  addSteps(c, o, "with --step: how many steps (default 1)", "Modes");
  c.value("--load", "FILE",
          "read params and inputs from a safetensors file; tensors are named\n"
          "as the model names them (per-layer params as layer.3.w_qkv);\n"
          "anything not in the file is initialised / drawn at random",
          [&o](const std::string &v) { o.load = v; });
  c.value("--save-grads", "FILE",
          "write the loss and every gradient (named as its param) to a\n"
          "safetensors file (default mode only)",
          [&o](const std::string &v) { o.saveGrads = v; });
  c.value("--save-params", "FILE",
          "with --step: write the params and optimizer state after the\n"
          "last step to a safetensors file (loadable with --load)",
          [&o](const std::string &v) { o.saveParams = v; });
  addSeed(c, o, "seed for parameter initialisation and random inputs (default 0)");
  addBackend(c, o,
             "cpu (BLAS and compiled kernels, float32), reference or cuda\n"
             "(an NVIDIA GPU); the default is cpu, or reference with --f64\n"
             "or --gradcheck");
  c.flag("--f64", "compute in float64 instead of float32 (reference backend)", o.f64);
  addThreads(c, o, kThreadsHelp);
  c.flag("--gradcheck", "compare the gradients with central finite differences (float64)",
         o.gradcheck);
  c.value("--samples", "K", "with --gradcheck: entries checked per param (default 8)",
          [&o](const std::string &v) { o.samples = count("--samples", v, 1); });
  c.flag("--profile",
         "time every step of the lowered Program and print where the time\n"
         "goes: by group (BLAS matmuls, kernels by op, fused kernels) and the\n"
         "costliest steps. Forward / gradient mode: 5 more timed runs after\n"
         "the first; --step: every step after the first (or the only one)",
         o.profile);
  addPrecision(c, o);
  addRemat(c, o);
  addSet(c, o);
}

void buildCalibrate(Command &c, Options &o) {
  addOutput(c, o,
            "the profiles file to write (default:\n"
            "$XDG_CONFIG_HOME/einc/devices.json, else\n"
            "~/.config/einc/devices.json; the folder is created)");
  c.value("--seconds", "S", "about how long to measure, in seconds (default 3, at most 60)",
          [&o](const std::string &v) {
            auto s = parseReal(v);
            if (!s || !(*s > 0 && *s <= 60))
              bad("--seconds needs a number of seconds in (0, 60], got " + einrt::quoted(v));
            o.seconds = *s;
          });
  c.flag("--gemm",
         "with a model file: time every GEMM shape of its step on each\n"
         "library that loads (OpenBLAS, oneDNN, BLIS), one thread, and keep\n"
         "the fastest per shape in this machine's table, which the CPU\n"
         "backend then uses (runtime/cpu/GemmTable.h); --set applies",
         o.calibrateGemm);
  addSet(c, o);
}

void buildReport(Command &c, Options &o) {
  c.value("--device", "NAME",
          "device profile (default h100); profiles: the built-in ones, then\n"
          "$XDG_CONFIG_HOME/einc/devices.json (or ~/.config/einc/devices.json,\n"
          "where `einc calibrate` writes \"cpu\"), then --device-file",
          [&o](const std::string &v) { o.device = v; });
  c.value("--device-file", "F", "read more device profiles from F (same-named ones replace)",
          [&o](const std::string &v) { o.deviceFile = v; });
  addPrecision(c, o);
  c.value("--optimizer", "O", "adamw, adam, sgd or adagrad (default: the model's, else adamw)",
          [&o](const std::string &v) {
            o.optimizer = choice("optimizer", v, {"adamw", "adam", "sgd", "adagrad"});
          });
  c.value("--format", "F", "text (default), json or html (one self-contained file)",
          [&o](const std::string &v) { o.format = choice("format", v, {"text", "json", "html"}); });
  addOutput(c, o, "write to FILE instead of standard output");
  c.value("--gpus", "G",
          "data parallelism on G devices: the gradient all-reduce per step\n"
          "beside the compute; with --tokens: training time on G devices,\n"
          "and the largest model that fits G devices",
          [&o](const std::string &v) { o.gpus = count("--gpus", v, 1); });
  c.value("--nodes", "M",
          "with --gpus: the G devices are on M nodes (the ring crosses the\n"
          "profile's inter-node link when M > 1; default 1)",
          [&o](const std::string &v) { o.nodes = count("--nodes", v, 1); });
  c.flag("--shard-optimizer", "with --gpus: ZeRO-1, each device's optimizer state is 1/G of it",
         o.shardOptimizer);
  c.value("--tokens", "D", "training tokens in all (a number, or with K, M, B, T: 15T)",
          [&o](const std::string &v) {
            auto q = parseQuantity(v);
            if (!q)
              bad("--tokens needs a positive number such as 15e12 or 15T, got " + einrt::quoted(v));
            o.clusterTokens = *q;
          });
  c.value("--mfu", "M", "assumed MFU for the cluster time (default: the predicted MFU)",
          [&o](const std::string &v) {
            auto m = parseReal(v);
            if (!m || !(*m > 0 && *m <= 1))
              bad("--mfu needs a fraction in (0, 1], got " + einrt::quoted(v));
            o.mfu = *m;
          });
  c.flag("--kernels",
         "every kernel of the step (ops, .ein locations, FLOPs, bytes,\n"
         "bound, predicted time) and why fusion stopped at each boundary",
         o.kernels);
  addRemat(c, o);
  c.flag("--remat-sweep",
         "the remat trade-off: peak, recompute and step time for a ladder\n"
         "of budgets, and the named policies beside them",
         o.rematSweep);
  addSet(c, o);
}

void buildData(Command &c, Options &o) {
  c.value("--out", "DIR", "the folder to write (required)",
          [&o](const std::string &v) { o.dataOut = v; });
  c.value("--val-fraction", "F",
          "the share of tokens held out for validation, in [0, 1)\n"
          "(default 0.1; 0 writes no val.bin)",
          [&o](const std::string &v) {
            auto f = parseReal(v);
            if (!f || !(*f >= 0 && *f < 1))
              bad("--val-fraction needs a fraction in [0, 1), got " + einrt::quoted(v));
            o.valFraction = *f;
          });
}

void buildTrain(Command &c, Options &o) {
  c.value("--data", "FILE",
          "training tokens: little-endian uint16 (`einc data` writes them;\n"
          "llm.c's header is recognised)",
          [&o](const std::string &v) { o.trainData = v; });
  c.value("--val", "FILE", "validation tokens (evaluation and best.safetensors need it)",
          [&o](const std::string &v) { o.valData = v; });
  addSteps(c, o,
           "the step at which this run stops: a total, not an increment\n"
           "(`--steps 20`, then `--steps 40 --resume`, ends where `--steps 40`\n"
           "does). The schedule's length is the `steps` setting; without one,\n"
           "--steps of the first run (recorded in the checkpoint)",
           "Options");
  c.value("--checkpoint-dir", "CK", "where checkpoints are written (created)",
          [&o](const std::string &v) { o.checkpointDir = v; });
  c.flag("--resume", "continue from CK/last.safetensors", o.resume);
  c.flag("--overwrite",
         "start over in a CK that holds a checkpoint (its last and best\n"
         "are replaced); without it such a run is refused",
         o.overwrite);
  c.flag("--reset-optimizer",
         "with --resume: allow a checkpoint without optimizer state\n"
         "(the state starts at zero)",
         o.resetOptimizer);
  c.value("--init-from", "CKPT",
          "start a new run (step 0, this run's settings: schedule, lr,\n"
          "evaluation, optimizer) from the params of checkpoint CKPT, which\n"
          "must fit the model; the optimizer state starts at zero",
          [&o](const std::string &v) { o.initFrom = v; });
  c.flag("--keep-optimizer",
         "with --init-from: take CKPT's optimizer state and update count\n"
         "too (the same optimizer's)",
         o.keepOptimizer);
  c.value("--log", "FILE",
          "metrics as JSON lines: step, loss, lr, grad_norm,\n"
          "tokens_per_second, and val_loss where evaluated",
          [&o](const std::string &v) { o.logFile = v; });
  c.value("--log-every", "N",
          "report (progress line and log) every N steps (default 1); steps\n"
          "with an evaluation and the last step are always reported",
          [&o](const std::string &v) { o.logEvery = count("--log-every", v, 1); });
  c.flag("--profile",
         "time every step of the training function(s) and print, at the end,\n"
         "each step group's measured time beside the report's roofline and\n"
         "the worst-predicted steps (also a {\"profile\": ...} line in --log)",
         o.profile);
  c.value(
      "--distributed", "mpi|nccl",
      "data parallelism under `mpirun -np N`: every rank runs its share\n"
      "of the micro-batches (accumulate per rank; an executable's\n"
      "compiled accumulate is the global count), rank 0 logs and writes\n"
      "checkpoints; mpi sums the gradients on the host, nccl (with\n"
      "--backend cuda) on the GPUs, a GPU per rank (docs/distributed.md)",
      [&o](const std::string &v) { o.distributed = choice("distributed", v, {"mpi", "nccl"}); });
  if (!c.tool->executable)
    c.flag("--shard-optimizer",
           "with --distributed: ZeRO-1, each rank keeps and updates the\n"
           "optimizer state of its share of the params (about 1/N of it) and\n"
           "sends the params it updated to the others",
           o.shardOptimizer);
  c.value("--allreduce", "ordered|fast",
          "with --distributed: ordered (default) sums the gradients in one\n"
          "process's order, bit-identical to accumulate = N x k in one process;\n"
          "fast uses the engine's all-reduce (MPI's or NCCL's: fewer messages,\n"
          "not reproducible)",
          [&o](const std::string &v) {
            o.fastAllreduce = choice("allreduce", v, {"ordered", "fast"}) == "fast";
          });
  if (!c.tool->executable)
    addBackend(c, o, "cpu (compiled kernels and BLAS; the default), reference or cuda");
  else
    addExecutableBackend(c, o);
  addThreads(c, o, kThreadsHelp);
  addPrecision(c, o);
  addRemat(c, o);
  if (c.tool->executable)
    addSet(c, o,
           "override a run-time train setting (lr, min_lr, schedule, warmup,\n"
           "cooldown, steps, eval_every, eval_steps, checkpoint_every, seed, data;\n"
           "repeatable); dims and the other settings are compiled in");
  else
    addSet(c, o);
}

void buildSample(Command &c, Options &o) {
  c.value("--checkpoint", "FILE", "the params to load (CK/best.safetensors or CK/last.safetensors)",
          [&o](const std::string &v) { o.checkpoint = v; });
  c.value("--prompt", "TEXT", "the text to continue (default: a newline)",
          [&o](const std::string &v) { o.prompt = v; });
  c.value("--tokens", "N", "how many tokens (bytes) to generate (default 200)",
          [&o](const std::string &v) { o.sampleTokens = count("--tokens", v, 0); });
  c.value("--temperature", "T", "divide the logits by T > 0 (default 1); small T is nearly greedy",
          [&o](const std::string &v) {
            auto t = parseReal(v);
            if (!t || !(*t > 0))
              bad("--temperature needs a positive number, got " + einrt::quoted(v));
            // Past 1e6 every logit / T rounds to the same float: uniform
            // sampling, which --temperature cannot mean.
            if (*t > 1e6)
              bad("--temperature must be at most 1e6 (larger samples every token alike), got " +
                  einrt::quoted(v));
            o.temperature = *t;
          });
  c.value("--top-k", "K", "sample among the K most likely tokens only (default 0: all)",
          [&o](const std::string &v) { o.topK = count("--top-k", v, 0); });
  c.flag("--no-kv-cache",
         "recompute the whole window for every token (default: a causal model\n"
         "computes only the new position, keys and values cached)",
         o.noKvCache);
  addSeed(c, o, "the sampling seed (default 0)");
  if (!c.tool->executable)
    addBackend(c, o, "cpu (the default), reference or cuda");
  else
    addExecutableBackend(c, o);
  addThreads(c, o,
             "threads for the CPU backend (default: EINC_NUM_THREADS,\n"
             "OMP_NUM_THREADS or OPENBLAS_NUM_THREADS if set, else every\n"
             "hardware thread)");
  if (c.tool->executable)
    addSet(c, o, "`data` (next_token or shifted); dims are compiled in");
  else
    addSet(c, o, "override a `dim` (must match the checkpoint's shapes)");
}

void buildCompile(Command &c, Options &o) {
  addOutput(c, o,
            "the executable to write (default: the model file's name without\n"
            "`.ein`, in the current folder)");
  c.flag("--force",
         "replace FILE even when it is not an executable of einc compile\n"
         "(without it such a file is refused; a previous one is replaced)",
         o.force);
  c.value("--program-file", "F", "also write the program file (docs/program-file.md) to F",
          [&o](const std::string &v) { o.programFile = v; });
  c.value("--target", "T",
          "cpu (the default) or cuda: also the kernels rendered to CUDA and\n"
          "compiled by NVRTC (cubins for sm_80 and sm_90, PTX for\n"
          "compute_90), so that `NAME train --backend cuda` compiles nothing",
          [&o](const std::string &v) { o.target = choice("target", v, backendChoices(true)); });
  c.value("--device", "NAME",
          "the device profile of the report built in (`NAME report`; default\n"
          "h100; `cpu`, when calibrated, also gives training its prediction)",
          [&o](const std::string &v) { o.device = v; });
  c.value("--device-file", "F", "read more device profiles from F (same-named ones replace)",
          [&o](const std::string &v) { o.deviceFile = v; });
  addPrecision(c, o);
  addSet(c, o);
}

/// An executable's `report`: the one it was compiled with.
void buildExecutableReport(Command &c, Options &o) {
  c.value("--format", "F", "text (default) or json",
          [&o](const std::string &v) { o.format = choice("format", v, {"text", "json"}); });
  addOutput(c, o, "write to FILE instead of standard output");
}

void buildInfo(Command &, Options &) {}

/// An executable's `check`: its kernels and GEMMs on a device against the CPU.
void buildExecutableCheck(Command &c, Options &o) {
  addExecutableBackend(c, o);
  c.value("--json", "FILE", "also write the results as JSON to FILE",
          [&o](const std::string &v) { o.checkJson = v; });
  c.value("--functions", "F,G",
          "check these functions only (default: every one; `info` lists\n"
          "them: train_step, forward, sample)",
          [&o](const std::string &v) {
            o.checkFunctions.clear();
            for (size_t at = 0; at <= v.size();) {
              size_t comma = std::min(v.find(',', at), v.size());
              if (comma == at)
                bad("--functions needs names separated by commas, got " + einrt::quoted(v));
              o.checkFunctions.push_back(v.substr(at, comma - at));
              at = comma + 1;
            }
          });
  c.flag("--no-compare",
         "time only: no reference runs on the CPU (for models too large\n"
         "to run there in time)",
         o.checkNoCompare);
  c.value("--repeat", "N",
          "timed runs per step and per function, the median reported\n"
          "(default 5; 0: no timing)",
          [&o](const std::string &v) { o.checkRepeat = count("--repeat", v, 0); });
  c.value("--copy-mib", "N", "also time device-to-device copies of N MiB (default 0: none)",
          [&o](const std::string &v) { o.copyMiB = count("--copy-mib", v, 0); });
  addSeed(c, o, "the seed of the params and inputs the steps run on (default 0)");
  addThreads(c, o,
             "threads of the CPU device under test with --backend cpu (the\n"
             "reference runs on one; default: every hardware thread, at least 2)");
}

} // namespace einc::cli
