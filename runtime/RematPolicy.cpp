//===- RematPolicy.cpp - The `remat` setting's grammar --------------------===//
#include "runtime/RematPolicy.h"

#include <cctype>
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

} // namespace

const char *RematPolicy::kindName() const {
  switch (kind) {
  case Kind::None:
    return "none";
  case Kind::Full:
    return "full";
  case Kind::Every:
    return "every";
  case Kind::Sqrt:
    return "sqrt";
  case Kind::Selective:
    return "selective";
  case Kind::Names:
    return "names";
  }
  return "none";
}

const char *rematPolicyForms() { return "none, full, every:K, sqrt, selective, names:a,b,..."; }

std::optional<RematPolicy> parseRematPolicy(const std::string &text, std::string &error) {
  RematPolicy p;
  size_t colon = text.find(':');
  std::string head = text.substr(0, colon);
  std::string arg = colon == std::string::npos ? "" : text.substr(colon + 1);
  auto plain = [&](RematPolicy::Kind kind) -> std::optional<RematPolicy> {
    if (colon != std::string::npos) {
      error = "'" + head + "' takes no argument, got '" + text + "'";
      return std::nullopt;
    }
    p.kind = kind;
    return p;
  };
  if (head == "none")
    return plain(RematPolicy::Kind::None);
  if (head == "full")
    return plain(RematPolicy::Kind::Full);
  if (head == "sqrt")
    return plain(RematPolicy::Kind::Sqrt);
  if (head == "selective")
    return plain(RematPolicy::Kind::Selective);
  if (colon == std::string::npos && (head == "every" || head == "names")) {
    error =
        "'" + head + "' needs an argument (" + (head == "every" ? "every:K" : "names:a,b") + ")";
    return std::nullopt;
  }
  if (head == "every") {
    char *end = nullptr;
    long long k = std::strtoll(arg.c_str(), &end, 10);
    if (arg.empty() || *end != '\0' || k < 1 || k > 1000000) {
      error = "every:K takes a whole number of iterations K >= 1, got '" + arg + "'";
      return std::nullopt;
    }
    p.kind = RematPolicy::Kind::Every;
    p.every = k;
    return p;
  }
  if (head == "names") {
    size_t start = 0;
    while (start <= arg.size()) {
      size_t comma = arg.find(',', start);
      std::string name = arg.substr(start, comma == std::string::npos ? comma : comma - start);
      if (!isIdentifier(name)) {
        error = "names: '" + name + "' is not a name (names:a,b lists let-bound names)";
        return std::nullopt;
      }
      p.names.push_back(name);
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
    p.kind = RematPolicy::Kind::Names;
    return p;
  }
  error = "unknown policy '" + text + "'; valid: " + rematPolicyForms();
  return std::nullopt;
}

} // namespace einrt
