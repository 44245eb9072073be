//===- RematPolicy.h - The `remat` setting's grammar ------------*- C++ -*-===//
//
// The one reader of the `remat` train setting (`train { remat = "sqrt" }`,
// `--set remat=...`, `--remat`): the settings table validates with it and
// tools/ turns its result into ein-remat's options (docs/remat.md).
//
//   none | full | every:K | sqrt | selective | names:a,b,...
//
// Plain C++17 (runtime/ includes no MLIR).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_REMATPOLICY_H
#define EINC_RUNTIME_REMATPOLICY_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace einrt {

struct RematPolicy {
  enum class Kind { None, Full, Every, Sqrt, Selective, Names };
  Kind kind = Kind::None;
  int64_t every = 0;              // Every: K
  std::vector<std::string> names; // Names

  /// The pass's name for the kind: none, full, every, sqrt, selective,
  /// names.
  const char *kindName() const;
};

/// The valid forms, for messages: "none, full, every:K, ...".
const char *rematPolicyForms();

/// Parses `text`; std::nullopt with `error` saying what is wrong and
/// listing the valid forms.
std::optional<RematPolicy> parseRematPolicy(const std::string &text, std::string &error);

} // namespace einrt

#endif // EINC_RUNTIME_REMATPOLICY_H
