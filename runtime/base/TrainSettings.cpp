//===- TrainSettings.cpp - The table of train settings --------------------===//
#include "runtime/base/TrainSettings.h"
#include "runtime/base/ParamGroups.h"
#include "runtime/base/RematPolicy.h"
#include "runtime/base/TerminalText.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <sstream>

namespace einrt {
namespace {

constexpr double kInf = 1e300;
using S = TrainSettings;
constexpr SettingTime Compiled = SettingTime::Compiled, Run = SettingTime::Run;

/// Values a model may name that no pass implements yet for some uses (none
/// today: every precision policy and remat plan is built; the mechanism
/// stays for the next setting that is priced before it runs).
struct Unimplemented {
  const char *key, *value;
  bool priced; // the report prices it (`einc report` and `einc check` accept it)
  const char *why;
};

const std::vector<Unimplemented> kUnimplemented = {};

const PrecisionPolicy kPrecisionPolicies[] = {
    {"fp32", "", false, false, false},
    {"bf16-mixed", "bf16", false, false, false},
    {"fp16-mixed", "f16", false, true, false},
    {"bf16", "bf16", true, false, true},
};

std::vector<std::string> words(const char *text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;)
    out.push_back(w);
  return out;
}

const Unimplemented *unimplemented(const std::string &key, const std::string &value,
                                   SettingsUse use) {
  for (const Unimplemented &u : kUnimplemented)
    if (key == u.key && value == u.value && !(u.priced && use != SettingsUse::Execute))
      return &u;
  return nullptr;
}

void markGiven(S &s, const SettingInfo &info) {
  if (!s.isGiven(info.key))
    s.given.push_back(info.key);
  // Keep the table's order, so that describe() does not depend on the
  // order of the section's lines.
  const auto &table = trainSettingTable();
  auto rank = [&](const std::string &k) {
    return std::find_if(table.begin(), table.end(),
                        [&](const SettingInfo &r) { return k == r.key; }) -
           table.begin();
  };
  std::sort(s.given.begin(), s.given.end(),
            [&](const std::string &a, const std::string &b) { return rank(a) < rank(b); });
}

std::string canonicalPrecision(const std::string &word) {
  const PrecisionPolicy *p = findPrecisionPolicy(word);
  return p ? p->name : word;
}

std::string checkNoDecay(const std::string &word) {
  Expected<std::vector<std::string>> patterns = parseNamePatterns(word);
  return patterns.ok() ? "" : patterns.status().message();
}

std::string checkFreeze(const std::string &word) {
  Expected<std::vector<std::string>> patterns = parseNamePatterns(word, "freeze");
  return patterns.ok() ? "" : patterns.status().message();
}

std::string checkLrScale(const std::string &word) {
  Expected<std::vector<LrScale>> scales = parseLrScales(word);
  return scales.ok() ? "" : scales.status().message();
}

std::string checkRemat(const std::string &word) {
  Expected<RematPolicy> policy = parseRematPolicy(word);
  return policy.ok() ? "" : policy.status().message();
}

} // namespace

const std::vector<SettingInfo> &trainSettingTable() {
  static const std::vector<SettingInfo> table = {
      {"optimizer", &S::optimizer, "adamw adam sgd adagrad", 0, 0, "the optimizer", Compiled},
      {"lr", &S::lr, nullptr, 0, 10, "peak learning rate", Run},
      {"min_lr", &S::minLr, nullptr, 0, 10, "learning rate at the end of the schedule", Run},
      {"beta1", &S::beta1, nullptr, 0, 0.999999, "Adam first-moment decay", Compiled},
      {"beta2", &S::beta2, nullptr, 0, 0.999999999, "Adam second-moment decay", Compiled},
      {"eps", &S::eps, nullptr, 0, 1, "Adam and Adagrad epsilon", Compiled},
      {"weight_decay", &S::weightDecay, nullptr, 0, 10,
       "weight decay (adamw: decoupled; adam, sgd, adagrad: L2 added to the gradient)", Compiled},
      {"decay", &S::decay, "matrices all", 0, 0, "which params weight decay applies to", Compiled},
      {"no_decay", &S::noDecay, "PATTERN,... b*", 0, 0,
       "params weight decay never applies to, by name ('*': any run of characters)", Compiled,
       checkNoDecay},
      {"lr_scale", &S::lrScale, "PATTERN:FACTOR,... emb*:0.1", 0, 0,
       "learning-rate multipliers by param name", Compiled, checkLrScale},
      {"freeze", &S::freeze, "PATTERN,... emb*", 0, 0,
       "params never trained (no gradient, no optimizer state), by name", Compiled, checkFreeze},
      {"momentum", &S::momentum, nullptr, 0, 0.999999, "SGD momentum", Compiled},
      {"clip", &S::clip, nullptr, 0, kInf, "global gradient-norm clip (0: off)", Compiled},
      {"schedule", &S::schedule, "cosine constant linear wsd inverse_sqrt", 0, 0,
       "learning-rate schedule", Run},
      {"warmup", &S::warmup, nullptr, 0, 1e12, "warmup steps", Run},
      {"cooldown", &S::cooldown, nullptr, 0, 1,
       "wsd: the share of the steps after warmup spent decaying to min_lr", Run},
      {"steps", &S::steps, nullptr, 1, 1e12, "schedule length in steps", Run},
      {"accumulate", &S::accumulate, nullptr, 1, 1e6, "micro-batches per step", Compiled},
      {"eval_every", &S::evalEvery, nullptr, 0, 1e12, "steps between evaluations (0: never)", Run},
      {"eval_steps", &S::evalSteps, nullptr, 1, 1e9, "batches per evaluation", Run},
      {"checkpoint_every", &S::checkpointEvery, nullptr, 0, 1e12,
       "steps between checkpoints, with or without evaluation (0: only at evaluations and the "
       "end)",
       Run},
      {"seed", &S::seed, nullptr, 0, 9.007199254740992e15, "random seed", Run},
      {"data", &S::data, "next_token shifted", 0, 0, "how a token window maps onto the inputs",
       Run},
      {"precision", &S::precision, precisionPolicyNames(), 0, 0,
       "precision policy (mixed: an alias of bf16-mixed)", Compiled, nullptr, canonicalPrecision},
      {"remat", &S::remat, "every:K names:a,b budget:SIZE none full sqrt selective", 0, 0,
       "activation checkpointing policy", Compiled, checkRemat},
      {"fusion", &S::fusion, "all on elementwise off", 0, 0,
       "fusion: elementwise groups, GEMM epilogues and row kernels (all, the default), groups and "
       "epilogues (on), elementwise groups only, or none",
       Compiled},
      {"fp8", &S::fp8, "none block tensor", 0, 0,
       "fp8 contractions: E4M3 operands, E5M2 gradients, scaled per block of 32 or per tensor",
       Compiled},
      {"tf32", &S::tf32, "off on", 0, 0,
       "f32 contractions on TF32 tensor cores (CUDA: cuBLASLt's CUBLAS_COMPUTE_32F_FAST_TF32; "
       "the report prices them at the device's tf32 peak); read when the device opens",
       Run},
  };
  return table;
}

bool SettingInfo::isCount() const {
  return std::holds_alternative<int64_t S::*>(field) ||
         std::holds_alternative<std::optional<int64_t> S::*>(field);
}

const SettingInfo *findTrainSetting(const std::string &key) {
  for (const SettingInfo &info : trainSettingTable())
    if (key == info.key)
      return &info;
  return nullptr;
}

std::string trainSettingKeys() {
  std::string out;
  for (const SettingInfo &info : trainSettingTable())
    out += (out.empty() ? "" : ", ") + std::string(info.key);
  return out;
}

bool TrainSettings::isGiven(const std::string &key) const {
  return std::find(given.begin(), given.end(), key) != given.end();
}

const OptimizerDefaults *findOptimizerDefaults(const std::string &optimizer) {
  for (const OptimizerDefaults &d : kOptimizerDefaults)
    if (optimizer == d.optimizer)
      return &d;
  return nullptr;
}

namespace {
/// The optimizer's defaults for the settings that depend on it and that
/// were not given (a given value stands, whichever line came first).
void applyOptimizerDefaults(S &s) {
  const OptimizerDefaults *d = findOptimizerDefaults(s.optimizer);
  if (!d)
    return;
  const std::pair<const char *, double S::*> dependent[] = {{"lr", &S::lr},
                                                            {"eps", &S::eps},
                                                            {"weight_decay", &S::weightDecay},
                                                            {"momentum", &S::momentum}};
  const double values[] = {d->lr, d->eps, d->weightDecay, d->momentum};
  for (size_t i = 0; i < std::size(dependent); ++i)
    if (!s.isGiven(dependent[i].first))
      s.*dependent[i].second = values[i];
}
} // namespace

std::string setTrainWord(S &s, const SettingInfo &info, const std::string &given) {
  std::string word = info.canonical ? info.canonical(given) : given;
  if (!info.isWord())
    return "'" + std::string(info.key) + "' takes a number";
  if (info.check) {
    std::string problem = info.check(word);
    if (!problem.empty())
      return std::string(info.key) + " " + einrt::quoted(word) + ": " + problem;
  } else {
    std::vector<std::string> choices = words(info.choices);
    if (std::find(choices.begin(), choices.end(), word) == choices.end())
      return einrt::quoted(word) + " is not a valid " + info.key +
             "; expected one of: " + info.choices;
  }
  if (auto *f = std::get_if<std::string S::*>(&info.field))
    s.*(*f) = word;
  else
    s.*std::get<std::optional<std::string> S::*>(info.field) = word;
  markGiven(s, info);
  if (std::string(info.key) == "optimizer")
    applyOptimizerDefaults(s);
  return "";
}

std::string setTrainNumber(S &s, const SettingInfo &info, double value) {
  if (info.isWord())
    return "'" + std::string(info.key) + "' takes one of: " + info.choices;
  if (!(value >= info.min && value <= info.max))
    return "'" + std::string(info.key) + "' (" + info.meaning + ") must be in [" +
           formatShortest(info.min) + ", " + formatShortest(info.max) + "], got " +
           formatShortest(value);
  if (info.isCount() && value != std::floor(value))
    return "'" + std::string(info.key) + "' takes a whole number, got " + formatShortest(value);
  std::visit(
      [&](auto member) {
        using Field = std::remove_reference_t<decltype(s.*member)>;
        if constexpr (std::is_same_v<Field, double> || std::is_same_v<Field, std::optional<double>>)
          s.*member = value;
        else if constexpr (std::is_same_v<Field, int64_t> ||
                           std::is_same_v<Field, std::optional<int64_t>>)
          s.*member = static_cast<int64_t>(value);
      },
      info.field);
  markGiven(s, info);
  return "";
}

std::string setTrainText(S &s, const std::string &key, const std::string &text) {
  const SettingInfo *info = findTrainSetting(key);
  if (!info)
    return "unknown train setting " + einrt::quoted(key) +
           "; known settings: " + trainSettingKeys();
  if (info->isWord())
    return setTrainWord(s, *info, text);
  // The whole text must be a number (strtod accepts what the language's
  // literals write: 3e-4, 0.1, 2000).
  const char *begin = text.c_str();
  char *end = nullptr;
  double v = std::strtod(begin, &end);
  if (text.empty() || end != begin + text.size() || !std::isfinite(v))
    return einrt::quoted(key) + " takes a number";
  return setTrainNumber(s, *info, v);
}

std::string trainSettingValue(const S &s, const SettingInfo &info) {
  return std::visit(
      [&](auto member) -> std::string {
        const auto &v = s.*member;
        using Field = std::remove_const_t<std::remove_reference_t<decltype(v)>>;
        if constexpr (std::is_same_v<Field, std::string>)
          return v;
        else if constexpr (std::is_same_v<Field, std::optional<std::string>>)
          return v.value_or("");
        else if constexpr (std::is_same_v<Field, double>)
          return formatShortest(v);
        else if constexpr (std::is_same_v<Field, std::optional<double>>)
          return v ? formatShortest(*v) : "";
        else if constexpr (std::is_same_v<Field, int64_t>)
          return std::to_string(v);
        else
          return v ? std::to_string(*v) : "";
      },
      info.field);
}

std::string TrainSettings::describe() const {
  std::string out;
  for (const std::string &key : given)
    out += (out.empty() ? "" : " ") + key + "=" + trainSettingValue(*this, *findTrainSetting(key));
  return out;
}

std::string unsupportedSetting(const S &s, SettingsUse use, std::string &key) {
  for (const SettingInfo &info : trainSettingTable()) {
    if (!info.isWord())
      continue;
    std::string value = trainSettingValue(s, info);
    const Unimplemented *u = unimplemented(info.key, value, use);
    if (!u)
      continue;
    key = info.key;
    std::string valid, priced;
    for (const std::string &w : words(info.choices)) {
      if (!unimplemented(info.key, w, use))
        valid += (valid.empty() ? "" : " ") + w;
      else if (unimplemented(info.key, w, SettingsUse::Execute) &&
               !unimplemented(info.key, w, SettingsUse::Report))
        priced += (priced.empty() ? "" : " and ") + w;
    }
    std::string message = std::string(info.key) + " " + einrt::quoted(value) +
                          " is not implemented yet (" + u->why + "); valid here: " + valid;
    if (!priced.empty())
      message += " (`einc report` prices " + priced + ")";
    return message;
  }
  return "";
}

const PrecisionPolicy *findPrecisionPolicy(const std::string &word) {
  std::string name = word == "mixed" ? "bf16-mixed" : word;
  for (const PrecisionPolicy &p : kPrecisionPolicies)
    if (name == p.name)
      return &p;
  return nullptr;
}

const char *precisionPolicyNames() { return "fp32 bf16-mixed fp16-mixed bf16"; }

std::string formatShortest(double v) {
  // Both forms hold the fewest digits that read back as `v`; fixed reads
  // more naturally (0.0003, 2000) unless it is much longer (1e-08, 1e+12).
  char fixed[400], scientific[64];
  auto f = std::to_chars(fixed, fixed + sizeof fixed, v, std::chars_format::fixed);
  auto e =
      std::to_chars(scientific, scientific + sizeof scientific, v, std::chars_format::scientific);
  if (f.ec == std::errc() && f.ptr - fixed <= e.ptr - scientific + 2)
    return std::string(fixed, f.ptr);
  return std::string(scientific, e.ptr);
}

} // namespace einrt
