//===- RematSolver.cpp - The remat plan that fits a memory budget ---------===//
//
// The segment DP. Loop iterations 0..L-1 are cut into segments [a, c), each
// in a mode: K keeps all its values, S keeps its contraction outputs, R
// keeps nothing of its own; every mode keeps what crosses the segment's
// boundary (its inputs and outputs), so segments are independent. The
// backward runs the segments last to first; while segment s's runs, the
// kept values of the segments before it are live besides s's own working
// set. So, with
//   kept(s)  the bytes s keeps into the backward,
//   work(s)  the most bytes live during s's backward, less the bytes the
//            segments before s keep when everything is kept (a probe: the
//            plan with s in its mode and all else kept, priced exactly),
//   rec(s)   its recompute time,
// a plan fits a budget B when, for every segment, the kept bytes of those
// before it plus work(s) are at most B, and at the end of the forward
// (everything kept is live) when all kept bytes plus what else is live
// then are at most B. That is a shortest path over (iteration, kept bytes
// so far): exact for this additive model, which is exact on chains of
// iterations whose working sets do not reach across segments. Each DP plan
// is then priced exactly; the frontier is made of exact prices only.
//
//===----------------------------------------------------------------------===//
#include "passes/RematSolver.h"
#include "passes/DeviceProfile.h"
#include "passes/Remat.h"

#include "ir/EinOps.h"
#include "runtime/base/RematPolicy.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>

namespace mlir::ein {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Less recompute: time, then FLOPs (time is 0 without a device model).
bool cheaper(const RematCost &a, const RematCost &b) {
  if (a.recomputeSeconds != b.recomputeSeconds)
    return a.recomputeSeconds < b.recomputeSeconds;
  return a.recomputeFlops < b.recomputeFlops;
}

/// Nodes a plan decides on: storage of their own that can be recomputed.
bool decidable(const RematNode &n) {
  return !n.view && !n.free && !n.pinned && n.recomputable && n.bytes > 0;
}

enum Mode { Keep, Selective, Recompute };

/// The plans of segmented iterations.
class Segments {
public:
  explicit Segments(const RematGraph &g) : g_(g) {
    const auto &nodes = g.nodes();
    viewsOf_.assign(nodes.size(), {});
    for (size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i].root >= 0)
        viewsOf_[size_t(nodes[i].root)].push_back(int32_t(i));
    // Where each iteration's backward runs: the later-phase ops of its layer.
    const int64_t L = int64_t(g.iterations().size());
    first_.assign(L, -1);
    last_.assign(L, -1);
    llvm::DenseMap<StringRef, int64_t> index;
    for (int64_t j = 0; j < L; ++j)
      index[g.iterations()[j]] = j;
    for (size_t p = 0; p < g.ops().size(); ++p) {
      Operation *op = g.ops()[p];
      auto layer = op->getAttrOfType<StringAttr>("ein.layer");
      if (!layer || g.nodeOf(op) >= 0)
        continue;
      auto it = index.find(layer.getValue());
      if (it == index.end())
        continue;
      int64_t j = it->second;
      first_[j] = first_[j] < 0 ? int64_t(p) : std::min(first_[j], int64_t(p));
      last_[j] = std::max(last_[j], int64_t(p));
    }
  }

  /// Keep bits: iteration j in segment regionOf[j] of mode modeOf[segment];
  /// outside loops everything kept, or (selectiveOutside) contractions only.
  std::vector<char> plan(const std::vector<int64_t> &regionOf, const std::vector<Mode> &modeOf,
                         bool selectiveOutside) const {
    const auto &nodes = g_.nodes();
    std::vector<char> keep(nodes.size(), 0);
    auto region = [&](int32_t i) {
      return nodes[i].iteration < 0 ? int64_t(-1) : regionOf[size_t(nodes[i].iteration)];
    };
    for (size_t i = 0; i < nodes.size(); ++i) {
      const RematNode &n = nodes[i];
      if (n.iteration < 0) {
        keep[i] = !selectiveOutside || n.contraction;
        continue;
      }
      Mode m = modeOf[size_t(region(int32_t(i)))];
      keep[i] = m == Keep || (m == Selective && n.contraction);
    }
    // What crosses a boundary stays.
    for (size_t r = 0; r < nodes.size(); ++r) {
      if (keep[r] || nodes[r].view)
        continue;
      for (int32_t w : viewsOf_[r])
        for (int32_t u : g_.users(w))
          if (region(u) != region(int32_t(r)))
            keep[r] = 1;
    }
    return keep;
  }

  /// The body positions of the backward of iterations [a, c), or false.
  bool window(int64_t a, int64_t c, std::pair<int64_t, int64_t> &w) const {
    int64_t lo = -1, hi = -1;
    for (int64_t j = a; j < c; ++j) {
      if (first_[j] < 0)
        continue;
      lo = lo < 0 ? first_[j] : std::min(lo, first_[j]);
      hi = std::max(hi, last_[j]);
    }
    w = {lo, hi};
    return lo >= 0;
  }

  int64_t firstBackward() const {
    int64_t lo = -1;
    for (int64_t f : first_)
      if (f >= 0)
        lo = lo < 0 ? f : std::min(lo, f);
    return lo;
  }

private:
  const RematGraph &g_;
  std::vector<std::vector<int32_t>> viewsOf_;
  std::vector<int64_t> first_, last_;
};

struct SegmentPrice {
  bool valid = false;
  double rec = 0;
  int64_t kept = 0, work = 0;
};

/// The segment DP for one budget: the cheapest segmentation under the
/// additive model, as region and mode per iteration (empty: none fits).
struct DpPlan {
  std::vector<int64_t> regionOf;
  std::vector<Mode> modeOf;
};

DpPlan segmentDp(const std::vector<std::vector<std::array<SegmentPrice, 3>>> &price,
                 int64_t endExtra, int64_t budget, int64_t quantum) {
  const size_t L = price.size();
  const int64_t buckets = 512;
  struct State {
    double cost = std::numeric_limits<double>::infinity();
    int64_t kept = 0;
    int32_t from = -1, fromBucket = -1;
    int8_t mode = 0;
  };
  std::vector<std::vector<State>> dp(L + 1, std::vector<State>(size_t(buckets)));
  dp[0][0].cost = 0;
  for (size_t a = 0; a < L; ++a)
    for (int64_t b = 0; b < buckets; ++b) {
      const State &s = dp[a][size_t(b)];
      if (!std::isfinite(s.cost))
        continue;
      for (size_t len = 1; len <= price[a].size(); ++len)
        for (int m = 0; m < 3; ++m) {
          const SegmentPrice &p = price[a][len - 1][size_t(m)];
          if (!p.valid || s.kept + p.work > budget)
            continue;
          int64_t kept = s.kept + p.kept;
          int64_t nb = std::min<int64_t>(buckets - 1, (kept + quantum - 1) / quantum);
          State &t = dp[a + len][size_t(nb)];
          double cost = s.cost + p.rec;
          if (cost < t.cost || (cost == t.cost && kept < t.kept))
            t = State{cost, kept, int32_t(a), int32_t(b), int8_t(m)};
        }
    }
  int64_t best = -1;
  for (int64_t b = 0; b < buckets; ++b) {
    const State &s = dp[L][size_t(b)];
    if (std::isfinite(s.cost) && s.kept + endExtra <= budget &&
        (best < 0 || s.cost < dp[L][size_t(best)].cost))
      best = b;
  }
  DpPlan plan;
  if (best < 0)
    return plan;
  plan.regionOf.assign(L, 0);
  plan.modeOf.clear();
  std::vector<std::pair<size_t, Mode>> segments; // (start, mode), last first
  size_t at = L;
  int64_t b = best;
  while (at > 0) {
    const State &s = dp[at][size_t(b)];
    segments.push_back({size_t(s.from), Mode(s.mode)});
    for (size_t j = size_t(s.from); j < at; ++j)
      plan.regionOf[j] = int64_t(segments.size() - 1);
    at = size_t(s.from);
    b = s.fromBucket;
  }
  // Number the segments first to last.
  const int64_t count = int64_t(segments.size());
  for (int64_t &r : plan.regionOf)
    r = count - 1 - r;
  for (int64_t k = count - 1; k >= 0; --k)
    plan.modeOf.push_back(segments[size_t(k)].second);
  return plan;
}

void addPoint(std::vector<RematPoint> &pool, const RematGraph &g, std::vector<char> keep,
              std::string how) {
  RematPoint p;
  p.cost = g.evaluate(keep);
  p.keep = std::move(keep);
  p.how = std::move(how);
  pool.push_back(std::move(p));
}

std::vector<int32_t> decidableNodes(const RematGraph &g) {
  std::vector<int32_t> out;
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (decidable(g.nodes()[i]))
      out.push_back(int32_t(i));
  return out;
}

/// Keeps again, one at a time, the recomputed value whose keeping saves the
/// most recompute without raising the peak, while there is one: a plan no
/// single kept value improves.
std::vector<char> polish(const RematGraph &g, std::vector<char> keep,
                         const std::vector<int32_t> &candidates, int64_t &priced) {
  RematCost current = g.evaluate(keep);
  for (;;) {
    int32_t choice = -1;
    RematCost chosen = current;
    for (int32_t c : candidates) {
      if (keep[c])
        continue;
      keep[c] = 1;
      RematCost t = g.evaluate(keep);
      ++priced;
      keep[c] = 0;
      if (t.peakBytes <= current.peakBytes && cheaper(t, chosen)) {
        choice = c;
        chosen = t;
      }
    }
    if (choice < 0)
      return keep;
    keep[choice] = 1;
    current = chosen;
  }
}

/// Greedy over single values: from `keep`, recompute one more value at a
/// time, the one that lowers the peak most per unit of recompute time;
/// each plan on the way, polished, joins the pool.
void greedyWalk(const RematGraph &g, std::vector<char> keep, std::vector<RematPoint> &pool,
                int64_t &priced) {
  std::vector<int32_t> candidates = decidableNodes(g);
  RematCost current = g.evaluate(keep);
  for (size_t step = 0; step < candidates.size(); ++step) {
    int32_t choice = -1;
    double bestRatio = -1;
    RematCost chosen;
    for (int32_t c : candidates) {
      if (!keep[c])
        continue;
      keep[c] = 0;
      RematCost t = g.evaluate(keep);
      ++priced;
      keep[c] = 1;
      int64_t saved = current.peakBytes - t.peakBytes;
      if (saved <= 0)
        continue;
      double extra =
          std::max(1e-15, t.recomputeSeconds - current.recomputeSeconds) +
          1e-18 * double(std::max<int64_t>(0, t.recomputeFlops - current.recomputeFlops));
      double ratio = double(saved) / extra;
      if (ratio > bestRatio) {
        bestRatio = ratio;
        choice = c;
        chosen = t;
      }
    }
    if (choice < 0)
      return;
    keep[choice] = 0;
    current = chosen;
    addPoint(pool, g, polish(g, keep, candidates, priced), "greedy");
  }
}

} // namespace

std::function<double(Operation *)> recomputeSecondsOn(const DeviceProfile &device) {
  return [device](Operation *op) {
    auto cost = dyn_cast<CostOpInterface>(op);
    if (!cost)
      return 0.0;
    int64_t bytes = 0;
    for (Type t : op->getOperandTypes())
      bytes += valueBytes(t);
    for (Type t : op->getResultTypes())
      bytes += valueBytes(t);
    Type e = op->getNumResults() ? getElementTypeOrSelf(op->getResult(0).getType()) : Type();
    std::string dtype = e && e.isBF16() ? "bf16" : e && e.isF16() ? "f16" : "f32";
    return roofline(device, dtype, op->hasTrait<OpTrait::ein::EinContraction>(),
                    double(cost.getFlops()), double(bytes))
        .seconds;
  };
}

RematKernelPricing cloneKernelsOn(const DeviceProfile &device) {
  RematKernelPricing k;
  k.computeSeconds = [device](Operation *op) {
    auto cost = dyn_cast<CostOpInterface>(op);
    if (!cost)
      return 0.0;
    Type e = op->getNumResults() ? getElementTypeOrSelf(op->getResult(0).getType()) : Type();
    std::string dtype = e && e.isBF16() ? "bf16" : e && e.isF16() ? "f16" : "f32";
    return roofline(device, dtype, op->hasTrait<OpTrait::ein::EinContraction>(),
                    double(cost.getFlops()), 0)
        .seconds;
  };
  k.bandwidth = device.bandwidth;
  k.latency = device.kernelLatency;
  return k;
}

RematGraph::Options rematPricingOn(const DeviceProfile &device) {
  RematGraph::Options options;
  options.seconds = recomputeSecondsOn(device);
  options.kernels = cloneKernelsOn(device);
  return options;
}

RematFrontier solveRematFrontier(const RematGraph &g, const RematSolverOptions &options) {
  auto start = Clock::now();
  RematFrontier frontier;
  std::vector<RematPoint> pool;
  const auto &nodes = g.nodes();

  // The named plans.
  for (const char *policy : einrt::rematPlainPolicies()) {
    RematPolicyChoice choice;
    choice.policy = policy;
    einrt::Expected<std::vector<char>> keep = planForPolicy(g, choice);
    if (keep.ok() && !keep->empty())
      addPoint(pool, g, keep.take(), policy);
  }

  // The segment DP over the loop iterations.
  const int64_t L = int64_t(g.iterations().size());
  if (L > 0) {
    Segments seg(g);
    const int64_t maxLen = std::min<int64_t>(L, std::max<int64_t>(4, 2 * sqrtSpacing(L) + 2));
    std::vector<int64_t> alone(static_cast<size_t>(L));
    for (int64_t j = 0; j < L; ++j)
      alone[size_t(j)] = j;
    std::vector<Mode> allKeep(static_cast<size_t>(L), Keep);
    std::vector<char> keepAll = seg.plan(alone, allKeep, false);
    // Under keep-all: what each iteration keeps, and the most live up to
    // the first loop iteration's backward (the forward's end).
    std::vector<std::pair<int64_t, int64_t>> windows;
    int64_t firstBackward = seg.firstBackward();
    bool haveWindows = firstBackward > 0;
    if (haveWindows)
      windows.push_back({0, firstBackward - 1});
    RematEvalOptions withWindows;
    withWindows.windows = &windows;
    RematCost all = g.evaluate(keepAll, nullptr, withWindows);
    frontier.candidates += 1;
    std::vector<int64_t> keptBefore(static_cast<size_t>(L) + 1, 0); // Σ kept by iterations < j
    for (int64_t j = 0; j < L; ++j)
      keptBefore[size_t(j) + 1] = keptBefore[size_t(j)] + all.savedByIteration[size_t(j)];
    int64_t endExtra =
        haveWindows ? std::max<int64_t>(0, all.windowLive.back() - keptBefore[size_t(L)]) : 0;

    // Price every segment in every mode.
    std::vector<std::vector<std::array<SegmentPrice, 3>>> price(static_cast<size_t>(L));
    int64_t keptCap = 0;
    for (const RematNode &n : nodes)
      if (n.iteration >= 0 && decidable(n))
        keptCap += n.bytes;
    for (int64_t a = 0; a < L; ++a) {
      int64_t lengths = std::min(maxLen, L - a);
      price[size_t(a)].resize(size_t(lengths));
      for (int64_t len = 1; len <= lengths; ++len) {
        int64_t c = a + len;
        std::pair<int64_t, int64_t> w;
        if (!seg.window(a, c, w))
          continue;
        std::vector<int64_t> regionOf(static_cast<size_t>(L), 0);
        for (int64_t j = 0; j < L; ++j)
          regionOf[size_t(j)] = j < a ? j : j < c ? a : j - len + 1;
        std::vector<std::pair<int64_t, int64_t>> one{w};
        RematEvalOptions probe;
        probe.windows = &one;
        for (int m = 0; m < 3; ++m) {
          if (m == Keep && len > 1)
            continue; // the same as one-iteration segments
          std::vector<Mode> modeOf(static_cast<size_t>(L - len + 1), Keep);
          modeOf[size_t(a)] = Mode(m);
          std::vector<char> keep = seg.plan(regionOf, modeOf, false);
          RematCost t = g.evaluate(keep, nullptr, probe);
          ++frontier.candidates;
          SegmentPrice &p = price[size_t(a)][size_t(len - 1)][size_t(m)];
          p.valid = true;
          p.rec = t.recomputeSeconds + 1e-18 * double(t.recomputeFlops);
          for (int64_t j = a; j < c; ++j)
            p.kept += t.savedByIteration[size_t(j)];
          p.work = std::max<int64_t>(0, t.windowLive[0] - keptBefore[size_t(a)]);
        }
      }
    }

    // The DP for a ladder of budgets between the lightest named plan and
    // keeping everything.
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = 0;
    for (const RematPoint &p : pool) {
      lo = std::min(lo, p.cost.liveBytes);
      hi = std::max(hi, p.cost.liveBytes);
    }
    lo = lo / 2;
    int64_t quantum = std::max<int64_t>(1, keptCap / 500);
    for (int64_t k = 0; k < options.ladder; ++k) {
      int64_t budget = lo + (hi - lo) * (k + 1) / options.ladder;
      DpPlan plan = segmentDp(price, endExtra, budget, quantum);
      if (plan.regionOf.empty())
        continue;
      addPoint(pool, g, seg.plan(plan.regionOf, plan.modeOf, false), "dp");
      addPoint(pool, g, seg.plan(plan.regionOf, plan.modeOf, true), "dp+selective outside");
    }
  }

  // Single values, where there are few.
  int64_t decidableCount = 0;
  for (const RematNode &n : nodes)
    decidableCount += decidable(n);
  if (decidableCount <= options.greedyLimit) {
    // From keeping everything, and from each plan found so far (polished
    // first: the DP's segments leave single values to keep).
    std::vector<int32_t> candidates = decidableNodes(g);
    size_t found = pool.size();
    greedyWalk(g, g.keepAll(), pool, frontier.candidates);
    for (size_t i = 0; i < found; ++i) {
      std::vector<char> start = polish(g, pool[i].keep, candidates, frontier.candidates);
      addPoint(pool, g, start, pool[i].how + "+polish");
      greedyWalk(g, std::move(start), pool, frontier.candidates);
    }
  }

  // The frontier: exact prices only; peak up, recompute strictly down.
  frontier.candidates += int64_t(pool.size());
  std::stable_sort(pool.begin(), pool.end(), [](const RematPoint &a, const RematPoint &b) {
    if (a.cost.peakBytes != b.cost.peakBytes)
      return a.cost.peakBytes < b.cost.peakBytes;
    return cheaper(a.cost, b.cost);
  });
  for (RematPoint &p : pool)
    if (frontier.points.empty() || cheaper(p.cost, frontier.points.back().cost))
      frontier.points.push_back(std::move(p));
  frontier.seconds = since(start);
  return frontier;
}

static void place(const RematGraph &g, RematPoint &p) {
  if (p.placedPeak >= 0)
    return;
  RematEvalOptions placed;
  placed.arena = true;
  p.placedPeak = g.evaluate(p.keep, nullptr, placed).peakBytes;
}

const RematPoint *pickForBudget(const RematGraph &g, RematFrontier &frontier, int64_t budget) {
  // Least recompute first (the end of the frontier).
  for (size_t i = frontier.points.size(); i-- > 0;) {
    RematPoint &p = frontier.points[i];
    if (p.cost.peakBytes > budget)
      continue; // the arena holds at least the live bytes
    place(g, p);
    if (p.placedPeak <= budget)
      return &p;
  }
  return nullptr;
}

void placeFrontier(const RematGraph &g, RematFrontier &frontier) {
  for (RematPoint &p : frontier.points)
    place(g, p);
}

RematExactResult solveRematExact(const RematGraph &g, int64_t budget, double seconds,
                                 const RematPoint *incumbent) {
  auto start = Clock::now();
  RematExactResult result;
  const auto &nodes = g.nodes();
  std::vector<int32_t> vars;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (decidable(nodes[i]))
      vars.push_back(int32_t(i));
  RematEvalOptions placed;
  placed.arena = true;
  auto objective = [](const RematCost &c) {
    return c.recomputeSeconds + 1e-18 * double(c.recomputeFlops);
  };
  double best = std::numeric_limits<double>::infinity();
  if (incumbent && incumbent->placedPeak >= 0 && incumbent->placedPeak <= budget) {
    result.best = *incumbent;
    result.feasible = true;
    best = objective(incumbent->cost);
  }
  // Depth-first over the values last to first, so that all readers of a
  // value are decided before it: recomputing it matters only when a reader
  // that is recomputed or read late needs it, and otherwise its branch is
  // the kept one again and is skipped. A node's bound is its plan with every
  // undecided value kept (keeping more never recomputes more); memory
  // cannot prune, since recomputing more can raise the peak.
  std::reverse(vars.begin(), vars.end());
  std::vector<char> keep = g.keepAll();
  double openBound = std::numeric_limits<double>::infinity(); // least bound left unexplored
  bool timedOut = false;
  std::function<void(size_t, double)> search = [&](size_t depth, double lb) {
    if (lb >= best)
      return;
    if (timedOut || since(start) > seconds) {
      timedOut = true;
      openBound = std::min(openBound, lb);
      return;
    }
    if (depth == vars.size()) {
      ++result.leaves;
      RematCost live = g.evaluate(keep); // the arena holds at least this
      if (live.peakBytes > budget || objective(live) >= best)
        return;
      RematCost exact = g.evaluate(keep, nullptr, placed);
      if (exact.peakBytes <= budget) {
        best = objective(exact);
        result.best = RematPoint{keep, exact, "exact", exact.peakBytes};
        result.feasible = true;
      }
      return;
    }
    int32_t v = vars[depth];
    search(depth + 1, lb); // kept: the bound does not change
    keep[size_t(v)] = 0;
    RematSchedule schedule;
    RematCost bound = g.evaluate(keep, &schedule);
    if (schedule.recompute[size_t(v)]) // else the same plan as kept
      search(depth + 1, objective(bound));
    keep[size_t(v)] = 1;
  };
  search(0, objective(g.evaluate(keep)));
  result.finished = !timedOut;
  result.lowerBound = result.finished ? best : std::min(best, openBound);
  result.gap = result.feasible && best > 0 ? (best - result.lowerBound) / best : 0;
  return result;
}

} // namespace mlir::ein
