//===- StepProfile.cpp - Where a Program's time goes ----------------------===//
#include "runtime/core/StepProfile.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <numeric>

namespace einrt {

std::string stepGroup(const Step &step) {
  if (step.kind == StepKind::Matmul) {
    const auto *gemm = std::get_if<GemmDesc>(&step.payload);
    return gemm && gemm->post.present() ? "matmul+epilogue" : "matmul";
  }
  if (step.kind != StepKind::Kernel)
    return stepKindName(step.kind);
  // Kernel notes start with the op name ("ein.exp at f.ein:3:5") or, for a
  // fused kernel, "fused N ops (", for a row kernel "rows N ops (" (codegen/CpuLowering.cpp).
  std::string head = step.note.substr(0, step.note.find_first_of(" ("));
  return head.empty() ? std::string("kernel") : head;
}

int64_t matmulFlops(const Step &step) {
  const auto *gemm = std::get_if<GemmDesc>(&step.payload);
  return gemm ? int64_t(gemm->flops()) : 0;
}

namespace {
std::string line(const char *format, ...) __attribute__((format(printf, 1, 2)));
std::string line(const char *format, ...) {
  char text[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  return text;
}
} // namespace

std::string formatStepProfile(const Program &program, const std::vector<double> &seconds,
                              int64_t runs, int top) {
  if (runs <= 0 || seconds.size() != program.steps.size())
    return "no profile: no run was timed\n";
  double total = std::accumulate(seconds.begin(), seconds.end(), 0.0);
  struct Group {
    double seconds = 0;
    int64_t steps = 0;
  };
  std::map<std::string, Group> groups;
  for (size_t i = 0; i < seconds.size(); ++i) {
    Group &g = groups[stepGroup(program.steps[i])];
    g.seconds += seconds[i];
    ++g.steps;
  }
  std::vector<std::pair<std::string, Group>> sorted(groups.begin(), groups.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) {
    return a.second.seconds > b.second.seconds;
  });
  const double perRun = 1e3 / static_cast<double>(runs);
  auto share = [&](double s) { return total > 0 ? 100.0 * s / total : 0.0; };
  std::string out =
      line("profile of @%s: %zu steps, %.3f ms per run (mean of %lld runs)\n", program.name.c_str(),
           program.steps.size(), total * perRun, static_cast<long long>(runs));
  out += line("  %-22s %7s %11s %7s\n", "group", "steps", "ms/run", "share");
  for (const auto &[name, g] : sorted)
    out += line("  %-22s %7lld %11.3f %6.1f%%\n", name.c_str(), static_cast<long long>(g.steps),
                g.seconds * perRun, share(g.seconds));

  std::vector<size_t> order(seconds.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return seconds[a] > seconds[b]; });
  if (top > 0 && !order.empty()) {
    out += line("  costliest steps:\n");
    for (size_t k = 0; k < order.size() && k < static_cast<size_t>(top); ++k) {
      const Step &s = program.steps[order[k]];
      const Buffer &b = program.buffers[s.output];
      std::string shape;
      for (size_t d = 0; d < b.shape.size(); ++d)
        shape += (d ? "x" : "") + std::to_string(b.shape[d]);
      double sec = seconds[order[k]] / static_cast<double>(runs);
      std::string rate =
          matmulFlops(s) > 0 && sec > 0 ? line(" %.1f GFLOP/s", matmulFlops(s) / sec * 1e-9) : "";
      out += line("  %6zu %9.3f ms %5.1f%%  %-8s [%s]%s %s\n", order[k], sec * 1e3,
                  share(seconds[order[k]]), stepKindName(s.kind), shape.c_str(), rate.c_str(),
                  s.note.c_str());
    }
  }
  return out;
}

} // namespace einrt
