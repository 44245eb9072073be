//===- RematPolicy.cpp - The `remat` setting's grammar --------------------===//
#include "runtime/base/RematPolicy.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace einrt {
namespace {

bool isIdentifier(const std::string &s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

struct Unit {
  const char *name;
  double bytes;
};
// Longest names first, so that "GiB" is not read as "G" + "iB".
const Unit kUnits[] = {{"KiB", 1024.0},
                       {"MiB", 1024.0 * 1024},
                       {"GiB", 1024.0 * 1024 * 1024},
                       {"TiB", 1024.0 * 1024 * 1024 * 1024},
                       {"KB", 1e3},
                       {"MB", 1e6},
                       {"GB", 1e9},
                       {"TB", 1e12},
                       {"B", 1}};

/// "2GiB", "1e9", "60%": the budget into `p`, or why not.
Status parseSize(const std::string &text, RematPolicy &p) {
  const char *begin = text.c_str();
  char *end = nullptr;
  double v = std::strtod(begin, &end);
  std::string rest(end);
  if (end == begin || !std::isfinite(v) || v <= 0) {
    return Status::invalid("budget: '" + text +
                           "' is not a positive size (e.g. 2GiB, 512MiB, 1e9, 60%)");
  }
  if (rest == "%") {
    if (v > 100) {
      return Status::invalid("budget: " + text +
                             " is more than the device's memory (at most 100%)");
    }
    p.budgetPercent = v;
    return Status();
  }
  double scale = rest.empty() ? 1 : 0;
  for (const Unit &u : kUnits)
    if (rest == u.name)
      scale = u.bytes;
  if (scale == 0) {
    return Status::invalid(
        "budget: unknown unit '" + rest + "' in '" + text +
        "' (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, or % of the device's memory)");
  }
  p.budgetBytes = v * scale;
  if (p.budgetBytes < 1) {
    return Status::invalid("budget: '" + text + "' is less than a byte");
  }
  return Status();
}

} // namespace

const std::vector<RematPolicyForm> &rematPolicyTable() {
  using Kind = RematPolicy::Kind;
  static const std::vector<RematPolicyForm> table = {
      {Kind::None, "none", "none", nullptr},
      {Kind::Full, "full", "full", nullptr},
      {Kind::Every, "every", "every:K", "every:K"},
      {Kind::Sqrt, "sqrt", "sqrt", nullptr},
      {Kind::Selective, "selective", "selective", nullptr},
      {Kind::Names, "names", "names:a,b,...", "names:a,b"},
      {Kind::Budget, "budget",
       "budget:BYTES (2GiB, 512MiB, 1e9) or budget:N% of the device's memory", "budget:2GiB"},
  };
  return table;
}

namespace {

const RematPolicyForm *formNamed(const std::string &name) {
  for (const RematPolicyForm &f : rematPolicyTable())
    if (name == f.name)
      return &f;
  return nullptr;
}

std::string joined(const char *RematPolicyForm::*column) {
  std::string text;
  for (const RematPolicyForm &f : rematPolicyTable())
    text += (text.empty() ? "" : ", ") + std::string(f.*column);
  return text;
}

} // namespace

const char *RematPolicy::kindName() const {
  for (const RematPolicyForm &f : rematPolicyTable())
    if (f.kind == kind)
      return f.name;
  return "none"; // every kind has a row
}

std::optional<RematPolicy::Kind> rematKindNamed(const std::string &name) {
  if (const RematPolicyForm *f = formNamed(name))
    return f->kind;
  return std::nullopt;
}

std::vector<const char *> rematPlainPolicies() {
  std::vector<const char *> names;
  for (const RematPolicyForm &f : rematPolicyTable())
    if (!f.argument)
      names.push_back(f.name);
  return names;
}

const char *rematKindNames() {
  static const std::string text = joined(&RematPolicyForm::name);
  return text.c_str();
}

const char *rematPolicyForms() {
  static const std::string text = joined(&RematPolicyForm::form);
  return text.c_str();
}

Expected<RematPolicy> parseRematPolicy(const std::string &text) {
  RematPolicy p;
  size_t colon = text.find(':');
  std::string head = text.substr(0, colon);
  std::string arg = colon == std::string::npos ? "" : text.substr(colon + 1);
  const RematPolicyForm *form = formNamed(head);
  if (form && !form->argument) {
    if (colon != std::string::npos) {
      return Status::invalid("'" + head + "' takes no argument, got '" + text + "'");
    }
    p.kind = form->kind;
    return p;
  }
  if (!form) {
    return Status::invalid("unknown policy '" + text + "'; valid: " + rematPolicyForms());
  }
  if (colon == std::string::npos) {
    return Status::invalid("'" + head + "' needs an argument (" + form->argument + ")");
  }
  switch (form->kind) {
  case RematPolicy::Kind::Every: {
    char *end = nullptr;
    long long k = std::strtoll(arg.c_str(), &end, 10);
    if (arg.empty() || *end != '\0' || k < 1 || k > 1000000) {
      return Status::invalid("every:K takes a whole number of iterations K >= 1, got '" + arg +
                             "'");
    }
    p.kind = RematPolicy::Kind::Every;
    p.every = k;
    return p;
  }
  case RematPolicy::Kind::Names: {
    size_t start = 0;
    while (start <= arg.size()) {
      size_t comma = arg.find(',', start);
      std::string name = arg.substr(start, comma == std::string::npos ? comma : comma - start);
      if (!isIdentifier(name)) {
        return Status::invalid("names: '" + name +
                               "' is not a name (names:a,b lists let-bound names)");
      }
      p.names.push_back(name);
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
    p.kind = RematPolicy::Kind::Names;
    return p;
  }
  case RematPolicy::Kind::Budget:
    EINRT_TRY(parseSize(arg, p));
    p.kind = RematPolicy::Kind::Budget;
    return p;
  case RematPolicy::Kind::None:
  case RematPolicy::Kind::Full:
  case RematPolicy::Kind::Sqrt:
  case RematPolicy::Kind::Selective:
    break; // no argument: returned above
  }
  return p;
}

} // namespace einrt
