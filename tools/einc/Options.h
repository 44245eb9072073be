//===- Options.h - einc's command line -------------------------*- C++ -*-===//
//
// The command, its flags and one input file, parsed with CLI11 (Options.cpp,
// library EincCommandLine: compiled with exceptions, none escapes). Not
// llvm::cl, so that `--help` lists einc's options only; a bad flag is a
// one-line message and exit status 2.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_EINC_OPTIONS_H
#define EINC_TOOLS_EINC_OPTIONS_H

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace einc {

struct Options {
  std::string command;                                        // check | emit | run | ...
  std::string input;                                          // the model file ("-" for stdin)
  std::string output;                                         // -o FILE ("" = stdout)
  std::string stage = "ir";                                   // emit: ast | ir | grad | step
  std::vector<std::pair<std::string, std::string>> overrides; // --set k=v
  bool help = false;

  // run
  std::string mode = "grad"; // forward | grad | step
  int64_t steps = 1;         // --steps N (step mode)
  std::string load;          // --load FILE.safetensors
  std::string saveGrads;     // --save-grads FILE.safetensors
  std::string saveParams;    // --save-params FILE.safetensors (step mode)
  uint64_t seed = 0;         // --seed N
  bool f64 = false;          // --f64
  bool gradcheck = false;    // --gradcheck
  int64_t samples = 8;       // --samples K (gradcheck entries per param)
  bool profile = false;      // --profile (time every step of the Program)
  int64_t threads = 0;       // --threads N (0: einrt::defaultThreadCount())

  // calibrate
  double seconds = 3;         // --seconds S (the measuring budget)
  bool calibrateGemm = false; // calibrate --gemm MODEL.ein: the GEMM table of its shapes

  // report
  std::string device = "h100"; // --device NAME
  std::string deviceFile;      // --device-file FILE
  std::string optimizer;       // --optimizer ("" = the model's, else adamw)
  std::string format = "text"; // --format text|json|html
  int64_t gpus = 0;            // --gpus G
  int64_t nodes = 1;           // --nodes M (with --gpus: the ring crosses nodes when M > 1)
  double clusterTokens = 0;    // --tokens D (training tokens in all)
  double mfu = -1;             // --mfu M (< 0: use the predicted MFU)
  bool kernels = false;        // --kernels: the kernel table in the text report
  bool rematSweep = false;     // --remat-sweep: the remat frontier in the report

  // data
  std::string dataOut;      // --out DIR
  double valFraction = 0.1; // --val-fraction F

  // train (also: --steps, --seed is the settings' `seed` via --set)
  std::string trainData;       // --data FILE.bin
  std::string valData;         // --val FILE.bin
  std::string checkpointDir;   // --checkpoint-dir DIR
  bool resume = false;         // --resume
  bool resetOptimizer = false; // --reset-optimizer
  bool overwrite = false;      // --overwrite (start over in a CK with a checkpoint)
  std::string initFrom;        // --init-from CKPT (a new run from its params)
  bool keepOptimizer = false;  // --keep-optimizer (with --init-from)
  std::string logFile;         // --log FILE (JSON lines)
  int64_t logEvery = 1;        // --log-every N (progress and log lines)
  std::string backend = "cpu"; // --backend cpu|reference|cuda
  bool backendGiven = false;   // --backend was on the command line (run:
                               // the default is reference with --f64/--gradcheck)
  bool stepsGiven = false;     // --steps was on the command line
  std::string distributed;     // --distributed mpi|nccl ("" : this process alone)
  bool fastAllreduce = false;  // --allreduce fast (else ordered: bit-identical to one process)
  bool shardOptimizer = false; // --shard-optimizer (ZeRO-1, with --distributed)

  // compile (also: -o, --set, --device, --device-file)
  bool force = false;         // --force: replace a file that is not an einc executable
  std::string programFile;    // --program-file FILE: also write the program file
  std::string target = "cpu"; // compile --target cpu|cuda (cuda: the CPU kernels too)

  // sample (also: --seed, --backend)
  std::string checkpoint;     // --checkpoint FILE.safetensors
  std::string prompt;         // --prompt TEXT
  int64_t sampleTokens = 200; // --tokens N
  bool noKvCache = false;     // --no-kv-cache
  double temperature = 1.0;   // --temperature T
  int64_t topK = 0;           // --top-k K (0: all)

  // an executable's check (also: --backend, --threads, --seed)
  std::string checkJson;                   // --json FILE
  std::vector<std::string> checkFunctions; // --functions a,b ("": every one)
  bool checkNoCompare = false;             // --no-compare: timings only
  int64_t checkRepeat = 5;                 // --repeat N (timed runs; 0: none)
  int64_t copyMiB = 0;                     // --copy-mib N (0: no copy bandwidth)
};

/// What the command line asks for.
struct CommandLine {
  enum class Action { Run, Help, Version, Error };
  Action action = Action::Run;
  Options options;
  std::string text; // Help: the help to print; Error: the one-line message
};

/// Parses the words after the program name. Never throws.
CommandLine parseCommandLine(const std::vector<std::string> &args);

/// The same for an executable of `einc compile` called `name`: its commands
/// (train, sample, report, info) take einc's flags but no model file (and
/// no --backend); messages and help say `name`. Never throws.
CommandLine parseExecutableCommandLine(const std::string &name,
                                       const std::vector<std::string> &args);

} // namespace einc

#endif // EINC_TOOLS_EINC_OPTIONS_H
