//===- RunOptions.h - What the runner reads of a command line ---*- C++ -*-===//
//
// The flags of train, sample, report and check that the runner itself
// reads, as `einc` and an executable of `einc compile` both fill them from
// their command line (tools/einc/RunnerOptions.h): the runner knows no
// command-line parser and no compile flags.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_RUNNER_RUNOPTIONS_H
#define EINC_TOOLS_RUNNER_RUNOPTIONS_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace einc::runner {

struct RunOptions {
  std::vector<std::pair<std::string, std::string>> overrides; // --set k=v (run-time settings)
  std::string output;                                         // -o FILE ("" = stdout)
  std::string format = "text";                                // report --format text|json
  uint64_t seed = 0;                                          // --seed N
  bool profile = false;                                       // --profile

  // train
  int64_t steps = 1;           // --steps N
  std::string trainData;       // --data FILE.bin
  std::string valData;         // --val FILE.bin
  std::string checkpointDir;   // --checkpoint-dir DIR
  bool resume = false;         // --resume
  bool resetOptimizer = false; // --reset-optimizer
  bool overwrite = false;      // --overwrite
  std::string initFrom;        // --init-from CKPT
  bool keepOptimizer = false;  // --keep-optimizer
  std::string logFile;         // --log FILE (JSON lines)
  int64_t logEvery = 1;        // --log-every N
  std::string distributed;     // --distributed mpi|nccl ("": this process alone)
  bool fastAllreduce = false;  // --allreduce fast
  bool shardOptimizer = false; // --shard-optimizer (ZeRO-1)

  // sample
  std::string checkpoint;     // --checkpoint FILE.safetensors
  std::string prompt;         // --prompt TEXT
  int64_t sampleTokens = 200; // --tokens N
  bool noKvCache = false;     // --no-kv-cache
  double temperature = 1.0;   // --temperature T
  int64_t topK = 0;           // --top-k K (0: all)

  // an executable's check
  std::string checkJson;                   // --json FILE
  std::vector<std::string> checkFunctions; // --functions a,b ("": every one)
  bool checkNoCompare = false;             // --no-compare
  int64_t checkRepeat = 5;                 // --repeat N
  int64_t copyMiB = 0;                     // --copy-mib N
};

} // namespace einc::runner

#endif // EINC_TOOLS_RUNNER_RUNOPTIONS_H
