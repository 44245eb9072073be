//===- ParamGroups.h - Per-param weight decay and lr scale ------*- C++ -*-===//
//
// The settings that split a model's params into groups, as torch.optim's
// param groups do (docs/training.md, Param groups):
//   no_decay = "b*, *norm*"          params weight decay never applies to
//   lr_scale = "emb*:0.1, head:2"    learning-rate multipliers
//   freeze   = "wte, layer.0.*"       params never trained (no gradient,
//                                    no optimizer state, no update)
// A pattern is a param name with `*` for any run of characters. Both are
// read by the settings table (their grammar) and by ein-train-step (which
// params they name: a pattern that names none is an error, a typo caught).
// Plain C++17: the settings and the passes share it.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_BASE_PARAMGROUPS_H
#define EINC_RUNTIME_BASE_PARAMGROUPS_H

#include "runtime/base/Status.h"

#include <string>
#include <vector>

namespace einrt {

/// Whether `name` matches `pattern` (`*`: any run of characters, even none).
bool matchesNamePattern(const std::string &pattern, const std::string &name);

/// The patterns of `no_decay` or `freeze` (`setting`, which messages
/// name; "" → none); Invalid names the bad one.
Expected<std::vector<std::string>> parseNamePatterns(const std::string &text,
                                                     const char *setting = "no_decay");

struct LrScale {
  std::string pattern;
  double factor = 1;
};
/// `lr_scale`'s `pattern:factor` entries ("" → none; factor finite, >= 0).
Expected<std::vector<LrScale>> parseLrScales(const std::string &text);

/// What the settings say of one param.
struct ParamGroup {
  bool noDecay = false; // a `no_decay` pattern names it
  double lrScale = 1;   // the factor of the `lr_scale` entry naming it
};

/// The groups of `params` (their names) under both settings. Invalid when
/// a pattern names no param or two entries give one param different
/// factors.
Expected<std::vector<ParamGroup>> paramGroups(const std::vector<std::string> &params,
                                              const std::string &noDecay,
                                              const std::string &lrScale);

/// Which of `params` (their names) the `freeze` setting names. Invalid
/// when a pattern names no param or every param is frozen (nothing to
/// train).
Expected<std::vector<bool>> frozenParams(const std::vector<std::string> &params,
                                         const std::string &freeze);

} // namespace einrt

#endif // EINC_RUNTIME_BASE_PARAMGROUPS_H
