//===- TrainSettings.cpp - The keys of a `train { }` section --------------===//
//
// A table: each setting's key, what kind of value it takes, and its range.
// The values become the module's `ein.train` dictionary; the trainer reads
// them (command-line flags override them later).
//
//===----------------------------------------------------------------------===//
#include "dsl/ElaboratorImpl.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;

namespace ein::dsl {
namespace {

enum class Kind { Choice, Real, Count };

struct Setting {
  const char *key;
  Kind kind;
  const char *choices; // Choice: space-separated
  double min, max;     // Real / Count: the closed range allowed
  const char *meaning;
};

constexpr double kInf = 1e300;

const Setting kSettings[] = {
    {"optimizer", Kind::Choice, "adamw adam sgd adagrad", 0, 0, "the optimizer"},
    {"lr", Kind::Real, nullptr, 0, 10, "peak learning rate"},
    {"min_lr", Kind::Real, nullptr, 0, 10, "learning rate at the end of the schedule"},
    {"beta1", Kind::Real, nullptr, 0, 0.999999, "Adam first-moment decay"},
    {"beta2", Kind::Real, nullptr, 0, 0.999999999, "Adam second-moment decay"},
    {"eps", Kind::Real, nullptr, 0, 1, "Adam epsilon"},
    {"weight_decay", Kind::Real, nullptr, 0, 10, "decoupled weight decay"},
    {"decay", Kind::Choice, "matrices all", 0, 0, "which params weight decay applies to"},
    {"momentum", Kind::Real, nullptr, 0, 0.999999, "SGD momentum"},
    {"clip", Kind::Real, nullptr, 0, kInf, "global gradient-norm clip (0: off)"},
    {"schedule", Kind::Choice, "cosine constant", 0, 0, "learning-rate schedule"},
    {"warmup", Kind::Count, nullptr, 0, 1e12, "warmup steps"},
    {"steps", Kind::Count, nullptr, 1, 1e12, "schedule length in steps"},
    {"accumulate", Kind::Count, nullptr, 1, 1e6, "micro-batches per step"},
    {"eval_every", Kind::Count, nullptr, 0, 1e12, "steps between evaluations (0: never)"},
    {"eval_steps", Kind::Count, nullptr, 1, 1e9, "batches per evaluation"},
    {"seed", Kind::Count, nullptr, 0, 9.007199254740992e15, "random seed"},
    {"data", Kind::Choice, "next_token shifted", 0, 0,
     "how a token window maps onto the inputs"},
    {"precision", Kind::Choice, "fp32 bf16 mixed", 0, 0, "precision policy"},
    {"remat", Kind::Choice, "none layer sqrt", 0, 0, "activation checkpointing policy"},
    {"fusion", Kind::Choice, "on off", 0, 0, "elementwise fusion"},
};

const Setting *find(llvm::StringRef key) {
  for (const Setting &s : kSettings)
    if (key == s.key)
      return &s;
  return nullptr;
}

std::string knownKeys() {
  std::string out;
  for (const Setting &s : kSettings)
    out += (out.empty() ? "" : ", ") + std::string(s.key);
  return out;
}

} // namespace

bool isTrainKey(llvm::StringRef key) { return find(key) != nullptr; }

Attribute trainSetting(Elaborator &E, llvm::StringRef key, SourceLoc loc,
                       const Expr *value, llvm::StringRef overrideText, Builder &b) {
  std::string where = value ? "" : "--set " + key.str() + "=" + overrideText.str() + ": ";
  const Setting *s = find(key);
  if (!s) {
    E.diags.error(loc, "unknown train setting '" + key + "'; known settings: " + knownKeys());
    return {};
  }
  SourceLoc at = value ? value->loc : loc;
  if (s->kind == Kind::Choice) {
    std::string word;
    if (value) {
      if (value->kind != ExprKind::Name && value->kind != ExprKind::String) {
        E.diags.error(at, where + "'" + key + "' takes one of: " + s->choices);
        return {};
      }
      word = value->text;
    } else {
      word = overrideText.str();
    }
    llvm::SmallVector<llvm::StringRef> choices;
    llvm::SplitString(s->choices, choices);
    if (!llvm::is_contained(choices, word)) {
      E.diags.error(at, where + "'" + word + "' is not a valid " + key + "; expected one of: " +
                            s->choices);
      return {};
    }
    return b.getStringAttr(word);
  }
  double number;
  if (value) {
    auto v = E.constantNumber(*value);
    if (!v)
      return {};
    number = *v;
  } else if (llvm::StringRef(overrideText).trim().getAsDouble(number)) {
    E.diags.error(loc, where + "'" + key + "' takes a number");
    return {};
  }
  if (!(number >= s->min && number <= s->max)) {
    E.diags.error(at, where + "'" + key + "' (" + s->meaning + ") must be in [" +
                          formatNumber(s->min) + ", " + formatNumber(s->max) +
                          "], got " + formatNumber(number));
    return {};
  }
  if (s->kind == Kind::Count) {
    if (number != std::floor(number)) {
      E.diags.error(at, where + "'" + key + "' takes a whole number, got " +
                            formatNumber(number));
      return {};
    }
    return b.getI64IntegerAttr(static_cast<int64_t>(number));
  }
  return b.getF64FloatAttr(number);
}

} // namespace ein::dsl
