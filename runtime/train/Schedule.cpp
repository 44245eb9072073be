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

const char *Schedule::kindName(Kind k) { return k == Kind::Cosine ? "cosine" : "constant"; }

double Schedule::at(int64_t step) const {
  if (warmup > 0 && step <= warmup)
    return lr * double(step) / double(warmup);
  if (kind == Kind::Constant)
    return lr;
  double span = double(total - warmup);
  double p = span > 0 ? double(step - warmup) / span : 1.0;
  p = std::min(1.0, std::max(0.0, p));
  return minLr + 0.5 * (lr - minLr) * (1.0 + std::cos(M_PI * p));
}

std::string Schedule::validate() const {
  if (!std::isfinite(lr) || lr < 0)
    return "the learning rate must be finite and >= 0";
  if (!std::isfinite(minLr) || minLr < 0)
    return "min_lr must be finite and >= 0";
  if (kind == Kind::Cosine && minLr > lr)
    return "min_lr " + formatShortest(minLr) + " is above lr " + formatShortest(lr) +
           ": the cosine would climb from lr to min_lr (set min_lr <= lr)";
  if (warmup < 0)
    return "warmup must be >= 0";
  if (kind == Kind::Cosine && total <= warmup)
    return "the cosine schedule needs a length (total " + std::to_string(total) +
           ") above its warmup (" + std::to_string(warmup) + ")";
  if (kind == Kind::Constant && total > 0 && warmup > total)
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
  if (kind == Kind::Cosine)
    s += " min_lr=" + num(minLr);
  s += " warmup=" + std::to_string(warmup);
  if (kind == Kind::Cosine)
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
  if (!(in >> word) || (word != "constant" && word != "cosine"))
    return Status::invalid("schedule '" + text + "': expected 'constant' or 'cosine' first");
  s.kind = word == "cosine" ? Kind::Cosine : Kind::Constant;
  while (in >> word) {
    size_t eq = word.find('=');
    std::string key = word.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
    char *end = nullptr;
    if (value.empty())
      return Status::invalid("schedule '" + text + "': '" + word + "' is not key=value");
    if (key == "lr" || key == "min_lr") {
      double v = std::strtod(value.c_str(), &end);
      if (*end)
        return Status::invalid("schedule '" + text + "': bad number '" + value + "'");
      (key == "lr" ? s.lr : s.minLr) = v;
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
