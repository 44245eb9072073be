//===- Schedule.cpp - Learning-rate schedules -----------------------------===//
#include "runtime/train/Schedule.h"
#include "runtime/base/TrainSettings.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

namespace einrt {

namespace {

/// One row per schedule: its name (the `schedule` setting and the
/// checkpoint's record), whether it ends at min_lr at `total`, whether it
/// has a cooldown.
struct ScheduleKind {
  Schedule::Kind kind;
  const char *name;
  bool ends, cooldown;
};
constexpr ScheduleKind kKinds[] = {
    {Schedule::Kind::Constant, "constant", false, false},
    {Schedule::Kind::Cosine, "cosine", true, false},
    {Schedule::Kind::Linear, "linear", true, false},
    {Schedule::Kind::Wsd, "wsd", true, true},
    {Schedule::Kind::InverseSqrt, "inverse_sqrt", false, false},
};

const ScheduleKind &rowOf(Schedule::Kind kind) {
  for (const ScheduleKind &k : kKinds)
    if (k.kind == kind)
      return k;
  return kKinds[0];
}

} // namespace

const char *Schedule::kindName(Kind k) { return rowOf(k).name; }

std::optional<Schedule::Kind> Schedule::kindNamed(const std::string &name) {
  for (const ScheduleKind &k : kKinds)
    if (name == k.name)
      return k.kind;
  return std::nullopt;
}

const char *Schedule::kindNames() {
  static const std::string names = [] {
    std::string s;
    for (const ScheduleKind &k : kKinds)
      s += (s.empty() ? "" : " ") + std::string(k.name);
    return s;
  }();
  return names.c_str();
}

bool Schedule::ends() const { return rowOf(kind).ends; }

int64_t Schedule::decayStart() const {
  int64_t span = std::max<int64_t>(total - warmup, 0);
  int64_t steps = std::clamp<int64_t>(int64_t(std::llround(cooldown * double(span))), 1,
                                      std::max<int64_t>(span, 1));
  return total - steps;
}

double Schedule::at(int64_t step) const {
  if (warmup > 0 && step <= warmup)
    return lr * double(step) / double(warmup);
  // The fraction of the way from `from` to total, clamped to [0, 1].
  auto progress = [&](int64_t from) {
    double span = double(total - from);
    double p = span > 0 ? double(step - from) / span : 1.0;
    return std::min(1.0, std::max(0.0, p));
  };
  switch (kind) {
  case Kind::Constant:
    return lr;
  case Kind::Cosine:
    return minLr + 0.5 * (lr - minLr) * (1.0 + std::cos(M_PI * progress(warmup)));
  case Kind::Linear:
    return lr + (minLr - lr) * progress(warmup);
  case Kind::Wsd:
    return step <= decayStart() ? lr : lr + (minLr - lr) * progress(decayStart());
  case Kind::InverseSqrt:
    return lr * std::sqrt(double(std::max<int64_t>(warmup, 1)) /
                          double(std::max<int64_t>(step, std::max<int64_t>(warmup, 1))));
  }
  return lr;
}

std::string Schedule::validate() const {
  if (!std::isfinite(lr) || lr < 0)
    return "the learning rate must be finite and >= 0";
  if (!std::isfinite(minLr) || minLr < 0)
    return "min_lr must be finite and >= 0";
  if (ends() && minLr > lr)
    return "min_lr " + formatShortest(minLr) + " is above lr " + formatShortest(lr) + ": the " +
           kindName(kind) + " schedule would climb from lr to min_lr (set min_lr <= lr)";
  if (warmup < 0)
    return "warmup must be >= 0";
  if (ends() && total <= warmup)
    return std::string("the ") + kindName(kind) + " schedule needs a length (total " +
           std::to_string(total) + ") above its warmup (" + std::to_string(warmup) + ")";
  if (rowOf(kind).cooldown && !(cooldown > 0 && cooldown <= 1))
    return "cooldown " + formatShortest(cooldown) +
           " is not a fraction of the steps in (0, 1] (wsd decays over that share of the steps "
           "after warmup)";
  if (!ends() && total > 0 && warmup > total)
    return "warmup " + std::to_string(warmup) + " is longer than the run (" +
           std::to_string(total) + " steps): the lr would never reach " + formatShortest(lr);
  return "";
}

namespace {
// The shortest text that parses back to the same double: the schedule is
// recorded in checkpoints and compared on resume.
std::string num(double v) { return formatShortest(v); }
} // namespace

std::string Schedule::describe() const {
  std::string s = std::string(kindName(kind)) + " lr=" + num(lr);
  if (ends())
    s += " min_lr=" + num(minLr);
  s += " warmup=" + std::to_string(warmup);
  if (rowOf(kind).cooldown)
    s += " cooldown=" + num(cooldown);
  if (ends())
    s += " total=" + std::to_string(total);
  return s;
}

std::string Schedule::describeShape() const {
  Schedule s = *this;
  s.total = 0;
  return s.describe();
}

Expected<Schedule> Schedule::parse(const std::string &text) {
  std::istringstream in(text);
  std::string word;
  Schedule s;
  std::optional<Kind> kind = in >> word ? kindNamed(word) : std::nullopt;
  if (!kind)
    return Status::invalid("schedule '" + text + "': expected one of " + kindNames() + " first");
  s.kind = *kind;
  while (in >> word) {
    size_t eq = word.find('=');
    std::string key = word.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
    char *end = nullptr;
    if (value.empty())
      return Status::invalid("schedule '" + text + "': '" + word + "' is not key=value");
    if (key == "lr" || key == "min_lr" || key == "cooldown") {
      double v = std::strtod(value.c_str(), &end);
      if (*end)
        return Status::invalid("schedule '" + text + "': bad number '" + value + "'");
      (key == "lr" ? s.lr : key == "min_lr" ? s.minLr : s.cooldown) = v;
    } else if (key == "warmup" || key == "total") {
      long long v = std::strtoll(value.c_str(), &end, 10);
      if (*end)
        return Status::invalid("schedule '" + text + "': bad integer '" + value + "'");
      (key == "warmup" ? s.warmup : s.total) = v;
    } else {
      return Status::invalid("schedule '" + text + "': unknown key '" + key + "'");
    }
  }
  std::string problem = s.validate();
  if (!problem.empty())
    return Status::invalid("schedule '" + text + "': " + problem);
  return s;
}

} // namespace einrt
