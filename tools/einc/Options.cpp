//===- Options.cpp - einc's command line ----------------------------------===//
#include "Options.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>

namespace einc {

namespace {

const char *kOverview = R"(einc — compile einops-style model descriptions for training

Usage: einc <command> [options] FILE.ein

Commands:
  check    parse and check a model; print diagnostics (exit 0 when clean, 1 on errors)
  emit     print a stage of compilation: the syntax tree, the `ein` IR, its gradient
           or the whole training step
  run      run the forward, the gradient or training steps on one batch (CPU or
           reference backend); print the loss and gradient norms
  report   the static cost report of the training step: FLOPs by phase, layer and op,
           memory and peak, roofline time per op on a device, MFU, cluster time
  calibrate  measure this machine (sgemm, vector FLOP/s, memory bandwidth) and save
             it as the device profile "cpu" (takes no FILE.ein)
  data     turn a text file into byte tokens: DIR/train.bin and DIR/val.bin (takes TEXT)
  train    train a model on token files, with checkpoints, evaluation and resume
  sample   generate text from a trained checkpoint

Options common to every command:
  --set NAME=VALUE   override a `dim` (a positive integer) or a `train { }` setting;
                     repeatable. Example: --set d=512 --set layers=8
  -h, --help         show help (`einc <command> --help` for a command)

Exit status: 0 success, 1 errors in the model or its files, 2 a bad command line.
Run `einc <command> --help` for more.
)";

const char *kCheckHelp = R"(einc check — parse and check a model

Usage: einc check [--set NAME=VALUE]... FILE.ein

Reads FILE.ein (or standard input for `-`), checks syntax, dims, named axes,
einops patterns, element types and the train section, and lowers the model to
the `ein` dialect without printing it. Every problem is printed to stderr as
`file:line:col: error: ...` with the source line and a caret.

Options:
  --set NAME=VALUE   override a `dim` or a `train { }` setting (repeatable)
  -h, --help         show this help

Exit status: 0 when the model is clean, 1 when it has errors, 2 on a bad command line.
)";

const char *kEmitHelp = R"(einc emit — print a stage of compilation

Usage: einc emit [--stage=STAGE] [-o FILE] [--set NAME=VALUE]... FILE.ein

Stages:
  ast   the syntax tree as parsed (before any checking)
  ir    the `ein` dialect: func.func @forward(inputs..., params...) -> (loss, outputs...),
        as MLIR text that `ein-opt` parses back (the default)
  grad  after autodiff: @grad(inputs..., params...) -> (loss, d loss/d param...)
  step  the whole training step: @train_step(inputs..., params..., optimizer state...,
        step, lr) -> (loss, grad_norm, params'..., optimizer state'...), built with the
        model's train settings (optimizer, betas, eps, weight_decay, decay, momentum, clip)
  fused the step after ein-fuse-elementwise: members of a fusion group carry
        `ein.fusion = N` and sit next to each other, as the CPU backend compiles them
        (unless the settings say `fusion = off`)

Options:
  --stage=STAGE      ast, ir, grad, step or fused (default: ir)
  -o FILE            write to FILE instead of standard output
  --set NAME=VALUE   override a `dim` or a `train { }` setting (repeatable)
  -h, --help         show this help

Exit status: 0 on success, 1 when the model has errors, 2 on a bad command line.
)";

const char *kRunHelp = R"(einc run — run a model once on one batch

Usage: einc run [options] FILE.ein

Lowers the model for a backend and runs it once on random inputs and freshly
initialised params, or on tensors loaded from a safetensors file. The CPU
backend (float32) runs contractions through BLAS and every other op as a
kernel compiled for this machine; the reference backend runs the runtime's
reference kernels op by op (the oracle the CPU backend is checked against).

Modes:
  --forward          the forward only: print the loss
  (default)          forward and backward: print the loss and every gradient norm
  --step             training steps (forward, backward, clipping, optimizer) on one
                     batch: print loss and gradient norm per step
  --steps N          with --step: how many steps (default 1)

Options:
  --load FILE        read params and inputs from a safetensors file; tensors are named
                     as the model names them (per-layer params as layer.3.w_qkv);
                     anything not in the file is initialised / drawn at random
  --save-grads FILE  write the loss and every gradient (named as its param) to a
                     safetensors file (default mode only)
  --save-params FILE with --step: write the params and optimizer state after the
                     last step to a safetensors file (loadable with --load)
  --seed N           seed for parameter initialisation and random inputs (default 0)
  --backend B        cpu (BLAS and compiled kernels, float32) or reference; the
                     default is cpu, or reference with --f64 or --gradcheck
  --f64              compute in float64 instead of float32 (reference backend)
  --threads N        threads for the CPU backend: its kernels and BLAS (default:
                     EINC_NUM_THREADS, OMP_NUM_THREADS or OPENBLAS_NUM_THREADS if set,
                     else every hardware thread)
  --gradcheck        compare the gradients with central finite differences (float64)
  --samples K        with --gradcheck: entries checked per param (default 8)
  --profile          time every step of the lowered Program and print where the time
                     goes: by group (BLAS matmuls, kernels by op, fused kernels) and the
                     costliest steps. Forward / gradient mode: 5 more timed runs after
                     the first; --step: every step after the first (or the only one)
  --set NAME=VALUE   override a `dim` or a `train { }` setting (repeatable)
  -h, --help         show this help

Exit status: 0 on success, 1 on errors (or a failed gradient check), 2 on a bad
command line.
)";

const char *kCalibrateHelp = R"(einc calibrate — measure this machine as the device profile "cpu"

Usage: einc calibrate [-o FILE] [--seconds S]

Measures, on this machine and on all its hardware threads: matmul FLOP/s
(OpenBLAS cblas_sgemm on square matrices; OPENBLAS_CORETYPE, when set, picks
its kernel), vector FLOP/s (a float multiply-add loop in L1) and memory
bandwidth (STREAM copy and triad over 64 MiB arrays; the larger counts), each
the median of several runs, and the memory size (MemTotal).
Prints one line per measurement and writes them as the profile "cpu" (bf16
taken equal to f32) into a device profiles file; other profiles already in
that file are kept. See docs/devices.md.

Options:
  -o FILE            the profiles file to write (default:
                     $XDG_CONFIG_HOME/einc/devices.json, else
                     ~/.config/einc/devices.json; the folder is created)
  --seconds S        about how long to measure, in seconds (default 3, at most 60)
  -h, --help         show this help

Exit status: 0 on success, 1 when measuring or writing fails, 2 on a bad command line.
)";

const char *kReportHelp = R"(einc report — what one training step costs, before anything runs

Usage: einc report [options] FILE.ein

Builds the training step (forward, backward, clipping, optimizer), counts every
op's FLOPs and bytes under a precision policy, places each op on the device's
roofline, and prints: params; FLOPs by phase, layer and op kind (model FLOPs,
what MFU counts, apart); memory (params, grads, optimizer state, activations
saved for backward, inputs, peak and whether it fits); the predicted step time,
tokens/s and MFU; the top ops by predicted time. See docs/report.md.

Options:
  --device NAME      device profile (default h100); profiles: the built-in ones, then
                     $XDG_CONFIG_HOME/einc/devices.json (or ~/.config/einc/devices.json,
                     where `einc calibrate` writes "cpu"), then --device-file
  --device-file F    read more device profiles from F (same-named ones replace)
  --precision P      fp32 (the IR's types), mixed (bf16 compute, fp32 master weights and
                     optimizer state) or bf16 (default: the model's `precision`, else fp32)
  --optimizer O      adamw, adam, sgd or adagrad (default: the model's, else adamw)
  --format F         text (default), json or html (one self-contained file)
  -o FILE            write to FILE instead of standard output
  --gpus G           with --tokens: training time on G devices, and the largest model
                     that fits G devices
  --tokens D         training tokens in all (a number, or with K, M, B, T: 15T)
  --mfu M            assumed MFU for the cluster time (default: the predicted MFU)
  --set NAME=VALUE   override a `dim` or a `train { }` setting (repeatable)
  -h, --help         show this help

Exit status: 0 on success, 1 when the model has errors or the device is unknown,
2 on a bad command line.
)";

const char *kDataHelp = R"(einc data — turn a text file into byte-token files

Usage: einc data TEXT --out DIR [--val-fraction F]

Every byte of TEXT is one token (vocab 256, so any file works and decoding is
the identity). Writes DIR/train.bin (the first 1 - F of the tokens) and
DIR/val.bin (the tail, held out), as little-endian uint16 (nanoGPT's format);
DIR is created. Each file is written atomically (temporary file, fsync, rename).
Prints the counts.

Options:
  --out DIR          the folder to write (required)
  --val-fraction F   the share of tokens held out for validation, in [0, 1)
                     (default 0.1; 0 writes no val.bin)
  -h, --help         show this help

Exit status: 0 on success, 1 when TEXT cannot be read or DIR cannot be written,
2 on a bad command line.
)";

const char *kTrainHelp = R"(einc train — train a model on token files

Usage: einc train FILE.ein --data DIR/train.bin [--val DIR/val.bin] --steps N
                  --checkpoint-dir CK [options]

Compiles the whole training step with the model's `train { }` settings
(optimizer, lr, schedule, warmup, accumulate, clip, eval_every, ...; `--set`
overrides them), lowers it for the backend and runs it: random windows of the
token file (seeded), warmup + cosine (or constant) learning rate, clipping,
gradient accumulation over `accumulate` micro-batches, evaluation on --val
every `eval_every` steps. Checkpoints (safetensors: params, optimizer state,
step, RNG and data position) go to CK/last.safetensors and, on the best
validation loss, CK/best.safetensors; resuming from them is bit-exact.
Defaults for a model without a `train { }` section are in docs/training.md.

Options:
  --data FILE        training tokens: little-endian uint16 (`einc data` writes them;
                     llm.c's header is recognised)
  --val FILE         validation tokens (evaluation and best.safetensors need it)
  --steps N          the step at which this run stops: a total, not an increment
                     (`--steps 20`, then `--steps 40 --resume`, ends where `--steps 40`
                     does). The schedule's length is the `steps` setting; without one,
                     --steps of the first run (recorded in the checkpoint)
  --checkpoint-dir CK  where checkpoints are written (created)
  --resume           continue from CK/last.safetensors
  --reset-optimizer  with --resume: allow a checkpoint without optimizer state
                     (the state starts at zero)
  --log FILE         metrics as JSON lines: step, loss, lr, grad_norm,
                     tokens_per_second, and val_loss where evaluated
  --log-every N      report (progress line and log) every N steps (default 1); steps
                     with an evaluation and the last step are always reported
  --backend B        cpu (compiled kernels and BLAS; the default) or reference
  --threads N        threads for the CPU backend: its kernels and BLAS (default:
                     EINC_NUM_THREADS, OMP_NUM_THREADS or OPENBLAS_NUM_THREADS if set,
                     else every hardware thread)
  --set NAME=VALUE   override a `dim` or a `train { }` setting (repeatable)
  -h, --help         show this help

Exit status: 0 on success, 1 on errors in the model, its data or checkpoints
(or a non-finite loss), 2 on a bad command line.
)";

const char *kSampleHelp = R"(einc sample — generate text from a trained checkpoint

Usage: einc sample FILE.ein --checkpoint CK/best.safetensors [options]

Runs the model's forward on a sliding window of the text so far (its context:
the `window`/`ctx` tokens the model reads), takes the logits that predict the
next token, samples one (temperature, top-k) from a seeded generator and
appends it. Tokens are bytes: the prompt and the generated bytes are printed
to standard output as they are. The same seed gives the same text.

Options:
  --checkpoint FILE  the params to load (CK/best.safetensors or CK/last.safetensors)
  --prompt TEXT      the text to continue (default: a newline)
  --tokens N         how many tokens (bytes) to generate (default 200)
  --temperature T    divide the logits by T > 0 (default 1); small T is nearly greedy
  --top-k K          sample among the K most likely tokens only (default 0: all)
  --seed N           the sampling seed (default 0)
  --backend B        cpu (the default) or reference
  --threads N        threads for the CPU backend (default: EINC_NUM_THREADS,
                     OMP_NUM_THREADS or OPENBLAS_NUM_THREADS if set, else every
                     hardware thread)
  --set NAME=VALUE   override a `dim` (must match the checkpoint's shapes)
  -h, --help         show this help

Exit status: 0 on success, 1 on errors in the model or checkpoint, 2 on a bad
command line.
)";

bool isCommand(llvm::StringRef s) {
  return s == "check" || s == "emit" || s == "run" || s == "calibrate" || s == "report" ||
         s == "data" || s == "train" || s == "sample";
}

bool fail(const std::string &message) {
  llvm::errs() << "einc: " << message << "\n";
  return false;
}

bool parseCount(const std::string &text, int64_t &out, int64_t min) {
  long long v;
  if (llvm::StringRef(text).getAsInteger(10, v) || v < min)
    return false;
  out = v;
  return true;
}

/// A positive number, optionally with a suffix K, M, B or G, T (10^3 .. 10^12).
bool parseQuantity(const std::string &text, double &out) {
  llvm::StringRef s = text;
  double scale = 1;
  if (!s.empty()) {
    switch (s.back()) {
    case 'k': case 'K': scale = 1e3; break;
    case 'M': scale = 1e6; break;
    case 'B': case 'G': scale = 1e9; break;
    case 'T': scale = 1e12; break;
    default: break;
    }
    if (scale != 1)
      s = s.drop_back();
  }
  double v;
  if (s.getAsDouble(v) || !(v > 0) || v * scale > 1e30)
    return false;
  out = v * scale;
  return true;
}

} // namespace

void printHelp(const std::string &command) {
  if (command == "check")
    llvm::outs() << kCheckHelp;
  else if (command == "emit")
    llvm::outs() << kEmitHelp;
  else if (command == "run")
    llvm::outs() << kRunHelp;
  else if (command == "calibrate")
    llvm::outs() << kCalibrateHelp;
  else if (command == "report")
    llvm::outs() << kReportHelp;
  else if (command == "data")
    llvm::outs() << kDataHelp;
  else if (command == "train")
    llvm::outs() << kTrainHelp;
  else if (command == "sample")
    llvm::outs() << kSampleHelp;
  else
    llvm::outs() << kOverview;
}

std::optional<Options> parseOptions(int argc, char **argv) {
  Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string problem;
  auto usage = [&](const std::string &message) -> std::optional<Options> {
    fail(message + " (see 'einc " + (o.command.empty() ? "" : o.command + " ") + "--help')");
    return std::nullopt;
  };
  if (args.empty())
    return usage("missing command");
  if (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    o.help = true;
    if (args.size() > 1 && isCommand(args[1]))
      o.command = args[1];
    return o;
  }
  if (!isCommand(args[0]))
    return usage("unknown command '" + args[0] + "'; expected check, emit, run, report, calibrate, data, train or sample");
  o.command = args[0];

  // The flags: name, the commands that take it ("" = all), whether it takes
  // a value, and what it does (returns "" or a problem).
  struct Flag {
    const char *name;
    const char *commands;
    bool takesValue;
    std::function<std::string(const std::string &)> apply;
  };
  const Flag flags[] = {
      {"--set", "", true,
       [&](const std::string &v) -> std::string {
         size_t eq = v.find('=');
         if (eq == std::string::npos || eq == 0)
           return "--set needs NAME=VALUE, got '" + v + "'";
         o.overrides.emplace_back(v.substr(0, eq), v.substr(eq + 1));
         return "";
       }},
      {"--stage", "emit", true,
       [&](const std::string &v) -> std::string {
         if (v != "ast" && v != "ir" && v != "grad" && v != "step" && v != "fused")
           return "unknown stage '" + v + "'; expected ast, ir, grad, step or fused";
         o.stage = v;
         return "";
       }},
      {"-o", "emit calibrate report", true,
       [&](const std::string &v) { o.output = v; return std::string(); }},
      {"--seconds", "calibrate", true,
       [&](const std::string &v) -> std::string {
         double s;
         if (llvm::StringRef(v).getAsDouble(s) || !(s > 0 && s <= 60))
           return "--seconds needs a number of seconds in (0, 60], got '" + v + "'";
         o.seconds = s;
         return "";
       }},
      {"--device", "report", true, [&](const std::string &v) { o.device = v; return std::string(); }},
      {"--device-file", "report", true,
       [&](const std::string &v) { o.deviceFile = v; return std::string(); }},
      {"--precision", "report", true,
       [&](const std::string &v) -> std::string {
         if (v != "fp32" && v != "mixed" && v != "bf16")
           return "unknown precision '" + v + "'; expected fp32, mixed or bf16";
         o.precision = v;
         return "";
       }},
      {"--optimizer", "report", true,
       [&](const std::string &v) -> std::string {
         if (v != "adamw" && v != "adam" && v != "sgd" && v != "adagrad")
           return "unknown optimizer '" + v + "'; expected adamw, adam, sgd or adagrad";
         o.optimizer = v;
         return "";
       }},
      {"--format", "report", true,
       [&](const std::string &v) -> std::string {
         if (v != "text" && v != "json" && v != "html")
           return "unknown format '" + v + "'; expected text, json or html";
         o.format = v;
         return "";
       }},
      {"--gpus", "report", true,
       [&](const std::string &v) -> std::string {
         return parseCount(v, o.gpus, 1) ? "" : "--gpus needs a positive integer, got '" + v + "'";
       }},
      {"--out", "data", true, [&](const std::string &v) { o.dataOut = v; return std::string(); }},
      {"--val-fraction", "data", true,
       [&](const std::string &v) -> std::string {
         double f;
         if (llvm::StringRef(v).getAsDouble(f) || !(f >= 0 && f < 1))
           return "--val-fraction needs a fraction in [0, 1), got '" + v + "'";
         o.valFraction = f;
         return "";
       }},
      {"--data", "train", true, [&](const std::string &v) { o.trainData = v; return std::string(); }},
      {"--val", "train", true, [&](const std::string &v) { o.valData = v; return std::string(); }},
      {"--checkpoint-dir", "train", true,
       [&](const std::string &v) { o.checkpointDir = v; return std::string(); }},
      {"--resume", "train", false, [&](const std::string &) { o.resume = true; return std::string(); }},
      {"--reset-optimizer", "train", false,
       [&](const std::string &) { o.resetOptimizer = true; return std::string(); }},
      {"--log", "train", true, [&](const std::string &v) { o.logFile = v; return std::string(); }},
      {"--log-every", "train", true,
       [&](const std::string &v) -> std::string {
         return parseCount(v, o.logEvery, 1) ? "" : "--log-every needs a positive integer, got '" + v + "'";
       }},
      {"--backend", "train sample run", true,
       [&](const std::string &v) -> std::string {
         if (v != "cpu" && v != "reference")
           return "unknown backend '" + v + "'; expected cpu or reference";
         o.backend = v;
         o.backendGiven = true;
         return "";
       }},
      {"--threads", "train sample run", true,
       [&](const std::string &v) -> std::string {
         return parseCount(v, o.threads, 1) && o.threads <= 1024
                    ? ""
                    : "--threads needs an integer in [1, 1024], got '" + v + "'";
       }},
      {"--checkpoint", "sample", true,
       [&](const std::string &v) { o.checkpoint = v; return std::string(); }},
      {"--prompt", "sample", true, [&](const std::string &v) { o.prompt = v; return std::string(); }},
      {"--tokens", "sample", true,
       [&](const std::string &v) -> std::string {
         return parseCount(v, o.sampleTokens, 0) ? ""
                : "--tokens needs a non-negative integer, got '" + v + "'";
       }},
      {"--temperature", "sample", true,
       [&](const std::string &v) -> std::string {
         double t;
         if (llvm::StringRef(v).getAsDouble(t) || !(t > 0 && t <= 1e6))
           return "--temperature needs a positive number, got '" + v + "'";
         o.temperature = t;
         return "";
       }},
      {"--top-k", "sample", true,
       [&](const std::string &v) -> std::string {
         return parseCount(v, o.topK, 0) ? "" : "--top-k needs a non-negative integer, got '" + v + "'";
       }},
      {"--tokens", "report", true,
       [&](const std::string &v) -> std::string {
         return parseQuantity(v, o.clusterTokens)
                    ? ""
                    : "--tokens needs a positive number such as 15e12 or 15T, got '" + v + "'";
       }},
      {"--mfu", "report", true,
       [&](const std::string &v) -> std::string {
         double m;
         if (llvm::StringRef(v).getAsDouble(m) || !(m > 0 && m <= 1))
           return "--mfu needs a fraction in (0, 1], got '" + v + "'";
         o.mfu = m;
         return "";
       }},
      {"--forward", "run", false, [&](const std::string &) { o.mode = "forward"; return std::string(); }},
      {"--step", "run", false, [&](const std::string &) { o.mode = "step"; return std::string(); }},
      {"--steps", "run train", true,
       [&](const std::string &v) -> std::string {
         o.stepsGiven = true;
         return parseCount(v, o.steps, 1) ? "" : "--steps needs a positive integer, got '" + v + "'";
       }},
      {"--load", "run", true, [&](const std::string &v) { o.load = v; return std::string(); }},
      {"--save-grads", "run", true,
       [&](const std::string &v) { o.saveGrads = v; return std::string(); }},
      {"--save-params", "run", true,
       [&](const std::string &v) { o.saveParams = v; return std::string(); }},
      {"--seed", "run sample", true,
       [&](const std::string &v) -> std::string {
         int64_t s;
         if (!parseCount(v, s, 0))
           return "--seed needs a non-negative integer, got '" + v + "'";
         o.seed = static_cast<uint64_t>(s);
         return "";
       }},
      {"--f64", "run", false, [&](const std::string &) { o.f64 = true; return std::string(); }},
      {"--gradcheck", "run", false,
       [&](const std::string &) { o.gradcheck = true; return std::string(); }},
      {"--profile", "run", false,
       [&](const std::string &) { o.profile = true; return std::string(); }},
      {"--samples", "run", true,
       [&](const std::string &v) -> std::string {
         return parseCount(v, o.samples, 1) ? "" : "--samples needs a positive integer, got '" + v + "'";
       }},
  };

  for (size_t i = 1; i < args.size(); ++i) {
    llvm::StringRef arg = args[i];
    if (arg == "-h" || arg == "--help") {
      o.help = true;
      continue;
    }
    const Flag *matched = nullptr;
    std::string value;
    // A name may have one row per command (--tokens: report, sample): the
    // row for this command first, then any (for the error message).
    auto appliesHere = [&](const Flag &f) {
      llvm::SmallVector<llvm::StringRef> takers;
      llvm::StringRef(f.commands).split(takers, ' ');
      return llvm::StringRef(f.commands).empty() || llvm::is_contained(takers, o.command);
    };
    std::vector<const Flag *> order;
    for (const Flag &f : flags)
      if (appliesHere(f))
        order.push_back(&f);
    for (const Flag &f : flags)
      if (!appliesHere(f))
        order.push_back(&f);
    for (const Flag *fp : order) {
      const Flag &f = *fp;
      llvm::StringRef name = f.name;
      if (arg == name) {
        matched = &f;
        if (f.takesValue) {
          if (i + 1 >= args.size())
            return usage(std::string(f.name) + " needs a value");
          value = args[++i];
        }
        break;
      }
      if (f.takesValue && arg.starts_with(name.str() + "=")) {
        matched = &f;
        value = arg.drop_front(name.size() + 1).str();
        break;
      }
    }
    if (matched) {
      llvm::StringRef commands = matched->commands;
      llvm::SmallVector<llvm::StringRef> takers;
      commands.split(takers, ' ');
      if (!commands.empty() && !llvm::is_contained(takers, o.command)) {
        std::string list;
        for (size_t t = 0; t < takers.size(); ++t)
          list += std::string(t == 0 ? "" : t + 1 == takers.size() ? " or " : ", ") +
                  "'einc " + takers[t].str() + "'";
        return usage(std::string(matched->name) + " applies to " + list + " only");
      }
      std::string problem = matched->apply(value);
      if (!problem.empty())
        return usage(problem);
      continue;
    }
    if (arg.starts_with("-") && arg != "-")
      return usage("unknown option '" + arg.str() + "'");
    if (o.command == "calibrate")
      return usage("'einc calibrate' takes no input file, got '" + arg.str() + "'");
    if (!o.input.empty())
      return usage("more than one input file ('" + o.input + "' and '" + arg.str() + "')");
    o.input = arg.str();
  }
  if (o.help)
    return o;
  if (o.input.empty() && o.command != "calibrate")
    return usage("missing input file");
  if (o.command == "report" && (o.gpus > 0) != (o.clusterTokens > 0))
    return usage("--gpus and --tokens go together");
  if (o.command == "report" && o.mfu >= 0 && o.gpus == 0)
    return usage("--mfu needs --gpus and --tokens");
  if (o.command == "data" && o.dataOut.empty())
    return usage("missing --out DIR");
  if (o.command == "train") {
    if (o.trainData.empty())
      return usage("missing --data FILE (training tokens; `einc data` writes them)");
    if (!o.stepsGiven)
      return usage("missing --steps N (the step at which this run stops)");
    if (o.checkpointDir.empty())
      return usage("missing --checkpoint-dir DIR");
    if (o.resetOptimizer && !o.resume)
      return usage("--reset-optimizer needs --resume");
  }
  if (o.command == "sample" && o.checkpoint.empty())
    return usage("missing --checkpoint FILE");
  if (o.command == "run") {
    if (o.steps != 1 && o.mode != "step")
      return usage("--steps needs --step");
    if (!o.saveGrads.empty() && o.mode != "grad")
      return usage("--save-grads needs the default (gradient) mode");
    if (!o.saveParams.empty() && o.mode != "step")
      return usage("--save-params needs --step");
    if (o.gradcheck && o.mode != "grad")
      return usage("--gradcheck needs the default (gradient) mode");
    if (o.profile && o.gradcheck)
      return usage("--profile and --gradcheck go in separate runs");
    if (!o.backendGiven)
      o.backend = o.f64 || o.gradcheck ? "reference" : "cpu";
    else if (o.backend == "cpu" && o.f64)
      return usage("--backend cpu runs float32 only; drop --f64 or use --backend reference");
  }
  return o;
}

} // namespace einc
