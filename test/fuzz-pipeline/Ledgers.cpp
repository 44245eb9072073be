//===- Ledgers.cpp - The report's ledgers, fused against unfused ----------===//
#include "Ledgers.h"

#include "passes/Analysis.h"

#include <map>

using namespace mlir;

namespace einc::pipelinefuzz {
namespace {

struct Totals {
  int64_t ops = 0, flops = 0, transcendentals = 0, bytes = 0, modelFlops = 0;
  bool operator==(const Totals &o) const {
    return ops == o.ops && flops == o.flops && transcendentals == o.transcendentals &&
           bytes == o.bytes && modelFlops == o.modelFlops;
  }
};

std::map<std::string, Totals> byPhase(const std::vector<ein::OpCost> &costs) {
  std::map<std::string, Totals> out;
  for (const ein::OpCost &c : costs) {
    Totals &t = out[c.phase];
    ++t.ops;
    t.flops += c.flops;
    t.transcendentals += c.transcendentals;
    t.bytes += c.bytesRead + c.bytesWritten;
    t.modelFlops += c.isModelFlop ? c.flops : 0;
  }
  return out;
}

std::string describe(const std::string &phase, const Totals &t) {
  return phase + ": " + std::to_string(t.ops) + " ops, " + std::to_string(t.flops) + " FLOPs, " +
         std::to_string(t.transcendentals) + " transcendentals, " + std::to_string(t.bytes) +
         " bytes, " + std::to_string(t.modelFlops) + " model FLOPs";
}

int64_t total(const std::map<std::string, Totals> &phases, int64_t Totals::*field) {
  int64_t n = 0;
  for (const auto &[phase, t] : phases)
    n += t.*field;
  return n;
}

} // namespace

std::string compareLedgers(func::FuncOp fused, func::FuncOp unfused) {
  std::string fn = "@" + unfused.getSymName().str() + ": ";
  std::vector<ein::OpCost> unfusedCosts = ein::analyzeCosts(unfused);
  std::vector<ein::OpCost> fusedCosts = ein::analyzeCosts(fused);
  auto before = byPhase(unfusedCosts), after = byPhase(fusedCosts);
  for (const auto &[phase, t] : before)
    if (!(after[phase] == t))
      return fn + "the fused function's cost ledger differs: unfused " + describe(phase, t) +
             "; fused " + describe(phase, after[phase]);
  ein::FusionSummary summary = ein::applyFusionToCosts(fused, fusedCosts);
  auto priced = byPhase(fusedCosts);
  if (summary.bytesUnfused != total(before, &Totals::bytes))
    return fn + "applyFusionToCosts starts from " + std::to_string(summary.bytesUnfused) +
           " bytes, the unfused ledger has " + std::to_string(total(before, &Totals::bytes));
  if (summary.bytes > summary.bytesUnfused)
    return fn + "fusion adds traffic: " + std::to_string(summary.bytesUnfused) + " -> " +
           std::to_string(summary.bytes) + " bytes";
  if (total(priced, &Totals::bytes) != summary.bytes)
    return fn + "the fused ops' byte shares add up to " +
           std::to_string(total(priced, &Totals::bytes)) + ", the summary says " +
           std::to_string(summary.bytes);
  if (total(priced, &Totals::flops) != total(before, &Totals::flops))
    return fn + "applyFusionToCosts changes the FLOPs";
  ein::MemoryLedger mu = ein::analyzeMemory(unfused);
  ein::FusedValues values = ein::fusedValues(fused);
  ein::MemoryLedger mf = ein::analyzeMemory(fused, ein::irByteWidth, &values);
  if (mu.paramCount != mf.paramCount || mu.params != mf.params || mu.grads != mf.grads ||
      mu.optimizerState != mf.optimizerState || mu.inputs != mf.inputs)
    return fn + "fusion moves the memory ledger's params, grads, optimizer state or inputs";
  if (mf.activations > mu.activations)
    return fn +
           "fusion adds activations saved for the backward: " + std::to_string(mu.activations) +
           " -> " + std::to_string(mf.activations) + " bytes";
  return "";
}

} // namespace einc::pipelinefuzz
