//===- KernelTable.cpp - The kernels of the step, longest first ----------===//
//
// The 20 kernels of most predicted time in a table that is open, every
// kernel in step order under a collapsed <details>: numbers right-aligned
// and never wrapped, each kernel's sources once as file:line (relative to
// the model's directory). A kernel repeated in identical layers (the same
// ops, FLOPs, bytes, time, sources and fusion stops) is one row with its
// count, ranked by the time of all of them.
//
//===----------------------------------------------------------------------===//
#include "Sections.h"
#include "SvgText.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

namespace einc::html {
namespace {

constexpr size_t kOpen = 20;

/// "gpt.ein:31,32 mlp.ein:4": the kernel's locations by file, lines once.
std::string sources(const Report &r, const ReportKernel &k) {
  std::vector<std::pair<std::string, std::vector<std::string>>> files;
  for (const std::string &loc : k.locations) {
    llvm::StringRef rest(loc), col, line;
    std::tie(rest, col) = rest.rsplit(':');
    std::tie(rest, line) = rest.rsplit(':');
    if (line.empty()) // no line:col: as written
      rest = loc, line = "";
    std::string file = shortSource(r, rest);
    auto it = std::find_if(files.begin(), files.end(), [&](auto &f) { return f.first == file; });
    if (it == files.end())
      it = files.insert(files.end(), {file, {}});
    if (!line.empty() && !llvm::is_contained(it->second, line.str()))
      it->second.push_back(line.str());
  }
  std::string out;
  for (auto &[file, lines] : files)
    out += (out.empty() ? "" : " ") + file + (lines.empty() ? "" : ":" + llvm::join(lines, ","));
  return out;
}

/// Kernels that are one kernel repeated in identical layers: the same
/// kind, phase, ops, FLOPs, bytes, time, sources and fusion stops.
struct Group {
  std::vector<const ReportKernel *> members; // in step order
  double seconds() const { return members.front()->seconds * double(members.size()); }
};

bool sameKernel(const ReportKernel &a, const ReportKernel &b) {
  if (a.kind != b.kind || a.phase != b.phase || a.ops != b.ops || a.flops != b.flops ||
      a.bytesRead != b.bytesRead || a.bytesWritten != b.bytesWritten ||
      std::fabs(a.seconds - b.seconds) > 1e-9 * std::max(a.seconds, b.seconds) ||
      a.locations != b.locations || a.stops.size() != b.stops.size())
    return false;
  for (size_t i = 0; i < a.stops.size(); ++i)
    if (a.stops[i].reason != b.stops[i].reason)
      return false;
  return true;
}

std::vector<Group> groups(const Report &r) {
  std::vector<Group> out;
  // Candidates by (kind, phase, FLOPs, bytes): few per key.
  std::map<std::tuple<std::string, std::string, int64_t, int64_t, int64_t>, std::vector<size_t>>
      byKey;
  for (const ReportKernel &k : r.kernels) {
    std::vector<size_t> &candidates =
        byKey[{k.kind, k.phase, k.flops, k.bytesRead, k.bytesWritten}];
    auto it = std::find_if(candidates.begin(), candidates.end(),
                           [&](size_t g) { return sameKernel(*out[g].members.front(), k); });
    if (it != candidates.end()) {
      out[*it].members.push_back(&k);
      continue;
    }
    candidates.push_back(out.size());
    out.push_back(Group{{&k}});
  }
  return out;
}

int layerNumber(llvm::StringRef name) {
  int n = -1;
  if (name.consume_front("layer.") && !name.getAsInteger(10, n))
    return n;
  return -1;
}

/// The layers of a group: "layer.3", "layers 0–47", or the distinct names.
std::string layers(const Group &g) {
  std::vector<std::string> names;
  for (const ReportKernel *k : g.members)
    if (!llvm::is_contained(names, k->layer))
      names.push_back(k->layer);
  if (names.size() == 1)
    return names.front();
  std::vector<int> numbers;
  for (const std::string &n : names)
    numbers.push_back(layerNumber(n));
  std::sort(numbers.begin(), numbers.end());
  if (numbers.front() >= 0 && numbers.back() - numbers.front() + 1 == int(numbers.size()))
    return "layers " + std::to_string(numbers.front()) + "–" + std::to_string(numbers.back());
  return names.front() + " and " + std::to_string(names.size() - 1) + " more";
}

void header(llvm::raw_ostream &os) {
  os << "<table class=\"t kernels\">\n<tr><th class=\"n\">#</th><th class=\"n\">×</th>"
        "<th>kind</th><th>phase</th><th>layer</th><th>ops</th><th class=\"n\">FLOPs</th>"
        "<th class=\"n\">read</th><th class=\"n\">written</th><th class=\"n\">FLOP/B</th>"
        "<th>bound</th><th class=\"n\">time</th><th class=\"n\">share</th><th>source</th>"
        "<th>fusion stopped before</th></tr>\n";
}

/// A group's row: its first kernel's figures (each of its kernels has them),
/// the count, and the share of the step of all of them.
void row(const Report &r, const Group &g, llvm::raw_ostream &os) {
  const ReportKernel &k = *g.members.front();
  std::string ops, stops;
  // Each op once, in order, with its count: "contract, mul ×9, add ×5".
  std::vector<std::pair<llvm::StringRef, int>> counts;
  for (const std::string &op : k.ops) {
    llvm::StringRef name = llvm::StringRef(op).drop_front(4);
    auto it = std::find_if(counts.begin(), counts.end(), [&](auto &c) { return c.first == name; });
    if (it == counts.end())
      counts.push_back({name, 1});
    else
      ++it->second;
  }
  for (auto &[name, count] : counts)
    ops += (ops.empty() ? "" : ", ") + name.str() +
           (count > 1 ? " ×" + std::to_string(count) : std::string());
  for (const ReportFusionStop &s : k.stops)
    stops += (stops.empty() ? "" : "; ") + ("#" + std::to_string(s.to)) + " " + s.reason +
             (s.detail.empty() ? "" : " (" + s.detail + ")");
  llvm::StringRef bound = k.bound();
  double share = r.kernelSeconds > 0 ? 100 * g.seconds() / r.kernelSeconds : 0;
  size_t n = g.members.size();
  os << "<tr data-kernels=\"" << n << "\"><td class=\"n\">" << k.index << "</td><td class=\"n\">"
     << (n > 1 ? "×" + std::to_string(n) : "") << "</td><td>" << escape(k.kind) << "</td><td>"
     << escape(k.phase) << "</td><td>" << escape(layers(g)) << "</td><td class=\"m\">"
     << escape(ops) << "</td><td class=\"n\">" << escape(formatFlops(double(k.flops)))
     << "</td><td class=\"n\">" << escape(formatBytes(double(k.bytesRead)))
     << "</td><td class=\"n\">" << escape(formatBytes(double(k.bytesWritten)))
     << "</td><td class=\"n\">" << escape(fixed(k.intensity, k.intensity >= 10 ? 0 : 2))
     << "</td><td>" << (bound == "none" ? "—" : bound.str()) << "</td><td class=\"n\">"
     << escape(formatSeconds(k.seconds)) << "</td><td class=\"n\">" << fixed(share, 1)
     << "%</td><td class=\"m\">" << escape(sources(r, k)) << "</td><td>" << escape(stops)
     << "</td></tr>\n";
}

} // namespace

void kernelTable(const Report &r, llvm::raw_ostream &os) {
  int64_t boundaries = 0;
  std::string reasons;
  for (const auto &[reason, count] : r.fusionStops) {
    boundaries += count;
    reasons += (reasons.empty() ? "" : ", ") + reason + " " + withThousands(count);
  }
  os << "<h2>Kernels</h2>\n<p>" << withThousands(int64_t(r.kernels.size()))
     << " kernels with fusion = " << escape(r.fusionSetting) << ", predicted "
     << escape(formatSeconds(r.kernelSeconds)) << "; fusion stopped at "
     << withThousands(boundaries) << " boundaries (" << escape(reasons)
     << "). A kernel repeated in identical layers is one row (×: how many; time: each; share: "
        "all of them; # and the fusion stops: the first).</p>\n";
  std::vector<Group> all = groups(r);
  std::vector<size_t> order(all.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return all[a].seconds() > all[b].seconds(); });
  size_t open = std::min(kOpen, order.size());
  os << "<div id=\"top-kernels\" class=\"scroll\"><p>The " << open
     << " kernels of most time:</p>\n";
  header(os);
  for (size_t i = 0; i < open; ++i)
    row(r, all[order[i]], os);
  os << "</table></div>\n";
  if (all.size() > open) {
    os << "<details id=\"all-kernels\" class=\"scroll\"><summary>every kernel, " << r.kernels.size()
       << " in " << all.size() << " rows, in step order</summary>\n";
    header(os);
    for (const Group &g : all)
      row(r, g, os);
    os << "</table>\n</details>\n";
  }
}

} // namespace einc::html
