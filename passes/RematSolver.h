//===- RematSolver.h - The remat plan that fits a memory budget --*- C++ -*-===//
//
// `budget:BYTES` asks for the plan of least predicted recompute time whose
// peak (RematGraph::evaluate with the arena placed: the memory plan the
// runtime will allocate) fits. solveRematFrontier builds the trade-off once
// per function: a pool of candidate plans — a segment DP over the loop
// iterations (exact on chains of iterations for its additive model of the
// backward's peak) run for a ladder of budgets, the named policies, and a
// greedy walk over single values where the graph is small — each priced
// exactly, reduced to its Pareto frontier (peak up, recompute down).
// pickForBudget takes the frontier point of least recompute whose placed
// peak fits: the candidates are fixed and each point's placed peak is a
// fixed number, so a larger budget never gives more recompute and a smaller
// one never a higher peak (monotonic by construction), and every pick's
// peak is within its budget.
//
// solveRematExact is the bounded method for small graphs: branch and bound
// over every keep bit, under a time limit, with the optimality gap when it
// stops early; tests hold the frontier's plan within 1% of it.
// docs/remat.md.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_PASSES_REMATSOLVER_H
#define EINC_PASSES_REMATSOLVER_H

#include "passes/RematGraph.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace mlir::ein {

struct DeviceProfile;

/// The recompute time of an op on `device`: its roofline (FLOPs on the
/// matrix units for a contraction, else the vector units, at its element
/// type; every operand read and result written once).
std::function<double(Operation *)> recomputeSecondsOn(const DeviceProfile &device);

/// The clone kernels' pricing on `device` (RematKernelPricing): what the
/// report's kernel table charges a kernel.
RematKernelPricing cloneKernelsOn(const DeviceProfile &device);

/// The options every plan of einc's is priced with on `device`: a plan's
/// recompute time is that of the kernels its clones run as (so `budget:`
/// minimises the time the lowered step spends recomputing).
RematGraph::Options rematPricingOn(const DeviceProfile &device);

/// One plan on the trade-off, priced exactly.
struct RematPoint {
  std::vector<char> keep;
  RematCost cost;  // liveness only: cost.peakBytes = resident + the most live bytes
  std::string how; // where the plan came from ("dp", "greedy", "sqrt", ...)
  /// resident + the arena placed as the runtime places it (>= peakBytes,
  /// the difference being first fit's fragmentation); -1 until placed.
  int64_t placedPeak = -1;
};

struct RematFrontier {
  /// Pareto-optimal plans by liveness, peak ascending, recompute time
  /// strictly descending; the last keeps everything (no recompute).
  std::vector<RematPoint> points;
  int64_t candidates = 0; // plans priced to find them
  double seconds = 0;     // time spent
};

struct RematSolverOptions {
  /// Budgets the DP is run for: this many, spread between the least and the
  /// most memory the named plans need.
  int64_t ladder = 24;
  /// The greedy walk over single values runs on graphs with at most this
  /// many candidate values.
  int64_t greedyLimit = 160;
};

RematFrontier solveRematFrontier(const RematGraph &graph, const RematSolverOptions &options = {});

/// The point of least recompute whose placed peak is at most `budget`
/// (placing the points it needs to look at); null when none fits. A point
/// whose liveness alone exceeds the budget cannot fit and is not placed.
const RematPoint *pickForBudget(const RematGraph &graph, RematFrontier &frontier, int64_t budget);

/// Places every point (its placedPeak), e.g. to draw the whole frontier.
void placeFrontier(const RematGraph &graph, RematFrontier &frontier);

struct RematExactResult {
  bool feasible = false; // some plan fits
  bool finished = false; // the search space was exhausted (the plan is optimal)
  RematPoint best;
  double lowerBound = 0; // on the least recompute time of a plan that fits
  double gap = 0;        // (best - lowerBound) / best when not finished
  int64_t leaves = 0;    // plans priced
};

/// Branch and bound over the keep bit of every value a plan can keep: the
/// least recompute time whose placed peak is at most `budget`, searched for
/// at most `seconds`. `incumbent` (optional) seeds the bound.
RematExactResult solveRematExact(const RematGraph &graph, int64_t budget, double seconds,
                                 const RematPoint *incumbent = nullptr);

} // namespace mlir::ein

#endif // EINC_PASSES_REMATSOLVER_H
