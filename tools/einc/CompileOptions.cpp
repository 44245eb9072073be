//===- CompileOptions.cpp - einc's command line as a compile request ------===//
#include "CompileOptions.h"

namespace einc {

einrt::SettingsUse settingsUse(const Options &o) {
  if (o.command == "report")
    return einrt::SettingsUse::Report;
  bool executes = o.command != "check" && !(o.command == "emit" && o.stage == "ir");
  return executes ? einrt::SettingsUse::Execute : einrt::SettingsUse::Check;
}

CompileRequest compileRequest(const Options &o, const einrt::TrainSettings &settings,
                              const std::string &source, const Frontend *parsed,
                              CompileRequest what) {
  CompileRequest r = std::move(what);
  r.modelPath = o.input;
  r.source = source;
  r.frontend = parsed;
  r.overrides = o.overrides;
  r.use = settingsUse(o);
  r.settings = settings;
  r.optimizer = o.optimizer;
  r.deviceFile = o.deviceFile;
  r.reportFlags.kernelTable = o.kernels;
  r.reportFlags.rematSweep = o.rematSweep;
  r.reportFlags.gpus = o.gpus;
  r.reportFlags.nodes = o.nodes;
  r.reportFlags.clusterTokens = o.clusterTokens;
  r.reportFlags.mfu = o.mfu;
  r.reportFlags.shardOptimizer = o.shardOptimizer;
  return r;
}

bool compileModel(mlir::ModuleOp module, const Options &o, const einrt::TrainSettings &settings,
                  const std::string &source, const CompileRequest &request, CompiledModel &out,
                  const Frontend *parsed) {
  return compileModel(module, compileRequest(o, settings, source, parsed, request), out);
}

} // namespace einc
