//===- Combinations.cpp - The settings one program is checked under -------===//
#include "Combinations.h"

#include "runtime/core/Init.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <vector>

namespace einc::pipelinefuzz {
namespace {

/// The words of a setting's `choices` in the settings table.
std::vector<std::string> choicesOf(const char *key) {
  std::vector<std::string> out;
  const einrt::SettingInfo *info = einrt::findTrainSetting(key);
  llvm::SmallVector<llvm::StringRef> words;
  llvm::StringRef(info && info->choices ? info->choices : "").split(words, ' ', -1, false);
  for (llvm::StringRef w : words)
    out.push_back(w.str());
  return out;
}

/// Remat policies: each recomputes different values (everything but the
/// layer boundaries, all but contraction outputs, one layer in two, sqrt
/// spacing, a budget the plan must fit), and none.
const char *const kRematPolicies[] = {"none",    "full", "selective",
                                      "every:2", "sqrt", "budget:1MiB"};

struct OptimizerChoice {
  std::string name;
  double momentum;
};

template <typename T> const T &pick(const std::vector<T> &from, uint64_t seed, const char *stream) {
  return from[einrt::Rng::forStream(seed, stream).below(from.size())];
}

} // namespace

std::string Combination::label() const {
  std::string opt = optimizer;
  if (optimizer == "sgd")
    opt += momentum > 0 ? " with momentum" : " without momentum";
  return "precision " + precision + ", fp8 " + fp8 + ", remat " + remat + ", fusion " + fusion +
         ", optimizer " + opt;
}

einrt::TrainSettings Combination::applied(const einrt::TrainSettings &base) const {
  einrt::TrainSettings s = base;
  s.precision = precision;
  s.fp8 = fp8;
  s.remat = remat;
  s.fusion = fusion;
  s.optimizer = optimizer;
  s.momentum = momentum;
  return s;
}

Combination drawCombination(uint64_t seed, const einrt::TrainSettings &program) {
  Combination c;
  c.precision = pick(choicesOf("precision"), seed, "precision");
  c.fp8 = pick(choicesOf("fp8"), seed, "fp8");
  c.remat = pick(std::vector<std::string>(std::begin(kRematPolicies), std::end(kRematPolicies)),
                 seed, "remat");
  std::vector<std::string> fusions = choicesOf("fusion");
  llvm::erase(fusions, "off");
  c.fusion = pick(fusions, seed, "fusion");
  // An optimizer the program's settings did not pick (sgd with the other
  // momentum counts as another).
  std::vector<OptimizerChoice> others;
  for (const std::string &name : choicesOf("optimizer"))
    for (double momentum : name == "sgd" ? std::vector<double>{0.0, 0.9} : std::vector<double>{0.9})
      if (name != program.optimizer || (name == "sgd" && (momentum > 0) != (program.momentum > 0)))
        others.push_back({name, momentum});
  const OptimizerChoice &o = pick(others, seed, "optimizer");
  c.optimizer = o.name;
  c.momentum = o.momentum;
  return c;
}

} // namespace einc::pipelinefuzz
