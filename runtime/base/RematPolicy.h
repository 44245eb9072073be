//===- RematPolicy.h - The `remat` setting's grammar ------------*- C++ -*-===//
//
// The one reader of the `remat` train setting (`train { remat = "sqrt" }`,
// `--set remat=...`, `--remat`): the settings table validates with it and
// tools/ turns its result into ein-remat's options (docs/remat.md).
//
//   none | full | every:K | sqrt | selective | names:a,b,... | budget:SIZE
//   SIZE: bytes with an optional unit (B, KB, MB, GB, TB, KiB, MiB, GiB,
//         TiB; 1e9 and 2.5GiB work), or a percentage of the device's memory
//         (60%)
//
// Plain C++17 (runtime/ includes no MLIR).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_REMATPOLICY_H
#define EINC_RUNTIME_REMATPOLICY_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace einrt {

struct RematPolicy {
  enum class Kind { None, Full, Every, Sqrt, Selective, Names, Budget };
  Kind kind = Kind::None;
  int64_t every = 0;              // Every: K
  std::vector<std::string> names; // Names
  double budgetBytes = 0;         // Budget in bytes, or
  double budgetPercent = 0;       // Budget as a percentage of the device's memory (0, 100]

  /// The pass's name for the kind: none, full, every, sqrt, selective,
  /// names, budget.
  const char *kindName() const;
  /// The budget in bytes on a device of `deviceMemory` bytes.
  double budgetOn(double deviceMemory) const {
    return budgetPercent > 0 ? deviceMemory * budgetPercent / 100 : budgetBytes;
  }
};

/// One row per kind: the one list of policy names that the parser, the
/// remat pass (passes/Remat.cpp), the solver's named plans and the sweep read.
struct RematPolicyForm {
  RematPolicy::Kind kind;
  const char *name;     // "every"
  const char *form;     // as rematPolicyForms lists it: "every:K"
  const char *argument; // its example where one is missing ("every:K"); nullptr: takes none
};
/// Every kind, in the order messages list them.
const std::vector<RematPolicyForm> &rematPolicyTable();

/// The kind called `name` ("sqrt"), without its argument.
std::optional<RematPolicy::Kind> rematKindNamed(const std::string &name);

/// The kinds that take no argument — none, full, sqrt, selective — in the
/// table's order: the named plans a sweep and the solver price.
std::vector<const char *> rematPlainPolicies();

/// The kinds' names, for messages: "none, full, every, sqrt, ...".
const char *rematKindNames();

/// The valid forms, for messages: "none, full, every:K, ...".
const char *rematPolicyForms();

/// Parses `text`; else Invalid, saying what is wrong and listing the valid
/// forms.
Expected<RematPolicy> parseRematPolicy(const std::string &text);

} // namespace einrt

#endif // EINC_RUNTIME_REMATPOLICY_H
