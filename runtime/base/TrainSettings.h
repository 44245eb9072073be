//===- TrainSettings.h - The typed settings of a training run ---*- C++ -*-===//
//
// One record of every `train { }` setting (optimizer, lr, ..., precision,
// remat, fusion), filled in one place: the front end reads the model's
// `train { }` section and the `--set` overrides into it through the table in
// TrainSettings.cpp, which knows each key's type, range and choices. Every
// consumer (the train-step pipeline's options, the report, the trainer)
// reads the fields, never a dictionary.
//
// Plain C++17 (runtime/ includes no MLIR): the trainer needs the values, and
// dsl/ and tools/ fill and read the same struct. Adding a setting is one
// field here and one row in the table.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_TRAINSETTINGS_H
#define EINC_RUNTIME_TRAINSETTINGS_H

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace einrt {

/// torch.optim's defaults of each optimizer for the settings whose default
/// depends on it: what `lr`, `eps`, `weight_decay` and `momentum` are when
/// neither the model nor --set gives them (setting `optimizer` applies its
/// row to those not given). docs/training.md lists them beside torch's
/// signatures. beta1 0.9 and beta2 0.999 are every Adam's. The first row is
/// the default optimizer's, and TrainSettings' own initial values.
struct OptimizerDefaults {
  const char *optimizer;
  double lr, eps, weightDecay, momentum;
};
inline constexpr OptimizerDefaults kOptimizerDefaults[] = {
    {"adamw", 1e-3, 1e-8, 1e-2, 0}, // torch.optim.AdamW
    {"adam", 1e-3, 1e-8, 0, 0},     // torch.optim.Adam
    {"sgd", 1e-3, 1e-8, 0, 0},      // torch.optim.SGD (reads no eps)
    {"adagrad", 1e-2, 1e-10, 0, 0}, // torch.optim.Adagrad
};
/// The row of `optimizer`, or null.
const OptimizerDefaults *findOptimizerDefaults(const std::string &optimizer);

struct TrainSettings {
  std::string optimizer = kOptimizerDefaults[0].optimizer; // adamw | adam | sgd | adagrad
  double lr = kOptimizerDefaults[0].lr;                    // peak learning rate
  std::optional<double> minLr;                             // default: lr / 10
  double beta1 = 0.9, beta2 = 0.999, eps = kOptimizerDefaults[0].eps;
  double weightDecay = kOptimizerDefaults[0].weightDecay;
  std::string decay = "matrices"; // matrices | all
  std::string noDecay;            // runtime/base/ParamGroups.h: params that never decay
  std::string lrScale;            // ... and learning-rate multipliers
  std::string freeze;             // ... and params never trained
  double momentum = kOptimizerDefaults[0].momentum;
  double clip = 1.0;               // 0: off
  std::string schedule = "cosine"; // runtime/train/Schedule.h: cosine | constant | linear | ...
  std::optional<int64_t> warmup;   // default: min(100, steps / 10)
  double cooldown = 0.2;           // wsd: the share of the steps after warmup spent decaying
  std::optional<int64_t> steps;    // default: the checkpoint's, else --steps
  int64_t accumulate = 1;
  std::optional<int64_t> evalEvery; // default: 100 with --val, else 0
  int64_t evalSteps = 10;
  int64_t checkpointEvery = 100; // steps between checkpoints (0: only at
                                 // evaluations and the end)
  int64_t seed = 0;
  std::optional<std::string> data; // next_token | shifted; default: inferred
  std::string precision = "fp32";  // fp32 | bf16-mixed | fp16-mixed | bf16 (PrecisionPolicy)
  std::string remat = "none";      // runtime/base/RematPolicy.h: none | full | every:K | ...
  std::string fusion = "all";      // all | on | elementwise | off (docs/fusion.md)
  std::string fp8 = "none";        // none | block | tensor (passes/Fp8Contractions.h)
  std::string tf32 = "off";        // off | on: f32 contractions on TF32 tensor cores (CUDA)

  /// The keys given (by the model or --set), in the table's order.
  std::vector<std::string> given;

  bool isGiven(const std::string &key) const;
  /// `key=value` for every given key, numbers in shortest round-trip form
  /// (`lr=0.003`), separated by spaces; "" when none was given.
  std::string describe() const;

  /// Every field (runtime/base/Fields.h): the table's rows in order, each under
  /// its key, then "given". Defined below the table.
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit);
};

/// When a setting takes effect. A `Compiled` one is built into the training
/// step (the optimizer and its constants, clip, accumulate, precision, remat,
/// fusion): changing it means compiling again. A `Run` one is read by the
/// trainer at run time (lr and its schedule, steps, evaluation, checkpoints,
/// seed, data), so a compiled executable takes it on its command line.
enum class SettingTime { Compiled, Run };

/// One row of the table: the key, the field it fills (its type says the
/// kind: a word from `choices`, a real or a whole number in [min, max]) and
/// when it takes effect.
struct SettingInfo {
  using Field =
      std::variant<std::string TrainSettings::*, std::optional<std::string> TrainSettings::*,
                   double TrainSettings::*, std::optional<double> TrainSettings::*,
                   int64_t TrainSettings::*, std::optional<int64_t> TrainSettings::*>;
  const char *key;
  Field field;
  const char *choices; // words: space-separated; numbers: nullptr
  double min, max;     // numbers: the closed range allowed
  const char *meaning;
  SettingTime time;
  /// A word setting with a grammar of its own (remat: every:K, names:a,b):
  /// "" when `word` is valid, else the problem; `choices` then lists its
  /// forms, the last one a valid word.
  std::string (*check)(const std::string &word) = nullptr;
  /// A word setting with aliases (precision: `mixed`): the canonical word
  /// of `word` (itself when it is no alias). An alias is accepted and the
  /// canonical word stored.
  std::string (*canonical)(const std::string &word) = nullptr;

  bool isWord() const { return choices != nullptr; }
  bool isCount() const;
};

const std::vector<SettingInfo> &trainSettingTable();
/// The row of `key`, or null.
const SettingInfo *findTrainSetting(const std::string &key);

template <class Self, class Visit> void TrainSettings::fields(Self &self, Visit &&visit) {
  for (const SettingInfo &info : trainSettingTable())
    std::visit([&](auto member) { visit(info.key, self.*member); }, info.field);
  visit("given", self.given);
}

/// "optimizer, lr, ..." (every key, in the table's order).
std::string trainSettingKeys();

/// Sets a word setting; returns "" or the problem ("'lion' is not a valid
/// optimizer; expected one of: ...").
std::string setTrainWord(TrainSettings &s, const SettingInfo &info, const std::string &word);
/// Sets a number setting, checking its range (and wholeness for counts).
std::string setTrainNumber(TrainSettings &s, const SettingInfo &info, double value);
/// Sets `key` from command-line text (`--set key=text`).
std::string setTrainText(TrainSettings &s, const std::string &key, const std::string &text);

/// The value of `info`'s field as text ("" when unset and without default).
std::string trainSettingValue(const TrainSettings &s, const SettingInfo &info);

/// Who is about to use the settings: values that are valid in a model but
/// that nothing implements for this use yet are refused.
enum class SettingsUse {
  Check,   // einc check: the model is valid for some command
  Report,  // einc report: prices precision bf16 / mixed analytically
  Execute, // einc emit, run, train, sample: build and run the step
};
/// "" when every value of `s` is implemented for `use`; else the problem for
/// the first one that is not, naming `key` (set to it) and the valid values.
std::string unsupportedSetting(const TrainSettings &s, SettingsUse use, std::string &key);

/// A precision policy, the `precision` setting (docs/precision.md). The
/// mixed-precision pass (passes/MixedPrecision.cpp) rewrites @forward by it;
/// everything downstream sees ordinary IR with casts.
struct PrecisionPolicy {
  const char *name;        // the canonical word: fp32 | bf16-mixed | fp16-mixed | bf16
  const char *narrow;      // the working float type: "bf16" | "f16" ("" under fp32)
  bool narrowParams;       // params themselves stored narrow (bf16: no fp32 master copy)
  bool lossScaling;        // dynamic loss scaling in the step (fp16-mixed)
  bool stochasticRounding; // the update stored into narrow params stochastically (bf16)
};
/// The policy `word` names (a canonical name or the alias `mixed` for
/// bf16-mixed), or null.
const PrecisionPolicy *findPrecisionPolicy(const std::string &word);
/// The canonical names, space-separated: "fp32 bf16-mixed fp16-mixed bf16".
const char *precisionPolicyNames();

/// Shortest text that reads back as exactly `v` (0.003, 1e-08, 2000).
std::string formatShortest(double v);

} // namespace einrt

#endif // EINC_RUNTIME_TRAINSETTINGS_H
