//===- Remat.h - Checkpoint policies and applying a plan -------*- C++ -*-===//
//
// The named policies of `ein-remat` as plans over a RematGraph (which
// forward values the backward keeps; the rest are recomputed from them),
// and the rewrite that applies a plan: each recomputed value's op cloned
// with `ein.phase = "recompute"` just before its first use in the backward
// (or by another clone), the backward reading the clones. docs/remat.md.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_PASSES_REMAT_H
#define EINC_PASSES_REMAT_H

#include "passes/RematGraph.h"
#include "runtime/base/Status.h"

#include <string>
#include <vector>

namespace mlir::ein {

/// A named policy (the `policy`, `every` and `names` options of ein-remat).
struct RematPolicyChoice {
  std::string policy = "none"; // none | full | every | sqrt | selective | names
  int64_t every = 0;           // every: keep the input of iterations 0, K, 2K, ...
  std::vector<std::string> names;
};

/// The policies planForPolicy knows, as the pass's help and errors list them.
const char *rematPolicyNames();

/// The keep bits of `choice` on `graph`; Invalid when the choice is (an
/// unknown policy or name, every < 1).
einrt::Expected<std::vector<char>> planForPolicy(const RematGraph &graph,
                                                 const RematPolicyChoice &choice);

/// The checkpoint spacing of `sqrt` for `iterations` loop iterations: ⌈√L⌉.
int64_t sqrtSpacing(int64_t iterations);

/// Rewrites the graph's function to `keep`: clones placed as
/// RematGraph::evaluate schedules them, every later-phase use of a
/// recomputed value reading its clone, forward ops left unused erased.
/// Returns what evaluate predicted for the plan. The graph is stale after.
RematCost applyRematPlan(const RematGraph &graph, const std::vector<char> &keep);

} // namespace mlir::ein

#endif // EINC_PASSES_REMAT_H
