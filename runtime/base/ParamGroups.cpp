//===- ParamGroups.cpp - Per-param weight decay and lr scale --------------===//
#include "runtime/base/ParamGroups.h"
#include "runtime/base/TrainSettings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace einrt {
namespace {

std::string trimmed(const std::string &s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
    ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
    --e;
  return s.substr(b, e - b);
}

/// The comma-separated entries of `text`, trimmed ("" → none).
std::vector<std::string> entries(const std::string &text) {
  std::vector<std::string> out;
  if (trimmed(text).empty())
    return out;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    out.push_back(trimmed(text.substr(start, comma == std::string::npos ? comma : comma - start)));
    if (comma == std::string::npos)
      return out;
    start = comma + 1;
  }
}

bool isPatternChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '*';
}

Status checkPattern(const std::string &pattern, const char *setting) {
  if (pattern.empty())
    return Status::invalid(std::string(setting) +
                           ": an empty entry (entries are separated by ',')");
  for (char c : pattern)
    if (!isPatternChar(c))
      return Status::invalid(std::string(setting) + ": '" + pattern +
                             "' is not a name pattern (letters, digits, '_', '.' and '*' for "
                             "any run of characters)");
  return Status();
}

/// "a, b, c" ("none" when empty).
std::string nameList(const std::vector<std::string> &names) {
  std::string list;
  for (const std::string &n : names)
    list += (list.empty() ? "" : ", ") + n;
  return list.empty() ? std::string("none") : list;
}

} // namespace

bool matchesNamePattern(const std::string &pattern, const std::string &name) {
  // Greedy with backtracking to the last '*': linear for these short names.
  size_t p = 0, n = 0, star = std::string::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p, ++n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*')
    ++p;
  return p == pattern.size();
}

Expected<std::vector<std::string>> parseNamePatterns(const std::string &text, const char *setting) {
  std::vector<std::string> out = entries(text);
  for (const std::string &pattern : out)
    EINRT_TRY(checkPattern(pattern, setting));
  return out;
}

Expected<std::vector<LrScale>> parseLrScales(const std::string &text) {
  std::vector<LrScale> out;
  for (const std::string &entry : entries(text)) {
    size_t colon = entry.rfind(':');
    if (colon == std::string::npos)
      return Status::invalid("lr_scale: '" + entry +
                             "' is not pattern:factor (e.g. emb*:0.1, head:2)");
    LrScale s{trimmed(entry.substr(0, colon)), 0};
    EINRT_TRY(checkPattern(s.pattern, "lr_scale"));
    std::string factor = trimmed(entry.substr(colon + 1));
    char *end = nullptr;
    s.factor = std::strtod(factor.c_str(), &end);
    if (factor.empty() || *end != '\0' || !std::isfinite(s.factor) || s.factor < 0)
      return Status::invalid("lr_scale: the factor of '" + entry + "' is not a finite number >= 0");
    out.push_back(s);
  }
  return out;
}

Expected<std::vector<ParamGroup>> paramGroups(const std::vector<std::string> &params,
                                              const std::string &noDecay,
                                              const std::string &lrScale) {
  Expected<std::vector<std::string>> patterns = parseNamePatterns(noDecay);
  if (!patterns.ok())
    return patterns.takeStatus();
  Expected<std::vector<LrScale>> scales = parseLrScales(lrScale);
  if (!scales.ok())
    return scales.takeStatus();
  auto known = [&] { return nameList(params); };
  std::vector<ParamGroup> groups(params.size());
  std::vector<const LrScale *> scaledBy(params.size(), nullptr);
  for (const std::string &pattern : *patterns) {
    bool any = false;
    for (size_t i = 0; i < params.size(); ++i)
      if (matchesNamePattern(pattern, params[i]))
        groups[i].noDecay = any = true;
    if (!any)
      return Status::invalid("no_decay: '" + pattern + "' names no param (the params: " + known() +
                             ")");
  }
  for (const LrScale &s : *scales) {
    bool any = false;
    for (size_t i = 0; i < params.size(); ++i) {
      if (!matchesNamePattern(s.pattern, params[i]))
        continue;
      any = true;
      if (scaledBy[i] && scaledBy[i]->factor != s.factor)
        return Status::invalid("lr_scale: '" + params[i] + "' is named by '" +
                               scaledBy[i]->pattern + ":" + formatShortest(scaledBy[i]->factor) +
                               "' and by '" + s.pattern + ":" + formatShortest(s.factor) +
                               "'; give each param one factor");
      scaledBy[i] = &s;
      groups[i].lrScale = s.factor;
    }
    if (!any)
      return Status::invalid("lr_scale: '" + s.pattern +
                             "' names no param (the params: " + known() + ")");
  }
  return groups;
}

Expected<std::vector<bool>> frozenParams(const std::vector<std::string> &params,
                                         const std::string &freeze) {
  Expected<std::vector<std::string>> patterns = parseNamePatterns(freeze, "freeze");
  if (!patterns.ok())
    return patterns.takeStatus();
  std::vector<bool> frozen(params.size(), false);
  for (const std::string &pattern : *patterns) {
    bool any = false;
    for (size_t i = 0; i < params.size(); ++i)
      if (matchesNamePattern(pattern, params[i]))
        frozen[i] = any = true;
    if (!any)
      return Status::invalid("freeze: '" + pattern +
                             "' names no param (the params: " + nameList(params) + ")");
  }
  if (!params.empty() && std::find(frozen.begin(), frozen.end(), false) == frozen.end())
    return Status::invalid("freeze: every param is frozen (" + nameList(params) +
                           "): nothing is left to train");
  return frozen;
}

} // namespace einrt
