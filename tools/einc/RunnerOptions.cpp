//===- RunnerOptions.cpp - einc's command line as the runner's options ----===//
#include "RunnerOptions.h"

namespace einc {

runner::RunOptions runOptions(const Options &o) {
  runner::RunOptions r;
  r.overrides = o.overrides;
  r.output = o.output;
  r.format = o.format;
  r.seed = o.seed;
  r.profile = o.profile;
  r.steps = o.steps;
  r.trainData = o.trainData;
  r.valData = o.valData;
  r.checkpointDir = o.checkpointDir;
  r.resume = o.resume;
  r.resetOptimizer = o.resetOptimizer;
  r.overwrite = o.overwrite;
  r.initFrom = o.initFrom;
  r.keepOptimizer = o.keepOptimizer;
  r.logFile = o.logFile;
  r.logEvery = o.logEvery;
  r.distributed = o.distributed;
  r.fastAllreduce = o.fastAllreduce;
  r.shardOptimizer = o.shardOptimizer;
  r.checkpoint = o.checkpoint;
  r.prompt = o.prompt;
  r.sampleTokens = o.sampleTokens;
  r.noKvCache = o.noKvCache;
  r.temperature = o.temperature;
  r.topK = o.topK;
  r.checkJson = o.checkJson;
  r.checkFunctions = o.checkFunctions;
  r.checkNoCompare = o.checkNoCompare;
  r.checkRepeat = o.checkRepeat;
  r.copyMiB = o.copyMiB;
  return r;
}

} // namespace einc
