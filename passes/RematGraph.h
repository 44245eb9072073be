//===- RematGraph.h - Forward values, their late uses, a plan's cost -*- C++ -*-===//
//
// Rematerialization decides, for every forward value the backward reads,
// whether it is kept (live from the forward to its last backward use) or
// recomputed (its op cloned, tagged `ein.phase = "recompute"`, just before
// the first backward use). RematGraph is one function (a @grad, a
// @train_step) seen that way, built once: a node per forward op, the
// positions of its uses, its bytes and its recompute cost; evaluate()
// prices a plan — a keep bit per node — without touching the IR: which
// nodes are recomputed, where each clone goes, the recompute FLOPs and time,
// and the peak of live bytes over the schedule the pass would produce (the
// same liveness rules as the runtime's memory plan: runtime/core/Arena.h,
// docs/remat.md). Remat.cpp applies a plan; RematSolver.h searches them.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_PASSES_REMATGRAPH_H
#define EINC_PASSES_REMATGRAPH_H

#include "passes/Analysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir::ein {

/// One op of the forward phase (one result).
struct RematNode {
  Operation *op = nullptr;
  int64_t position = 0; // index of the op in the body (terminator aside)
  /// Bytes of its own storage: 0 for a view (a reshape, a broadcast every
  /// user reads in place) and for a constant (resident, not a temporary).
  int64_t bytes = 0;
  bool view = false; // a view of `operands[0]` (or of an argument)
  /// Always available to the backward, never recomputed: constants, iotas
  /// and what is derived from them by data movement alone.
  bool free = false;
  /// Can be cloned (one result, no regions); otherwise always kept.
  bool recomputable = true;
  bool pinned = false; // returned by the function (resident)
  bool contraction = false;
  bool elementwiseOrReduction = false;
  /// Its kernel when it is one of several ops run as one step (a fusion
  /// group, a row group, a contraction with its epilogue: StepKernels.h;
  /// when fusion ran before remat), -1 for none; and whether every forward
  /// op reading it is in that kernel (so that, read by nothing later, the
  /// kernel keeps it in registers; never a contraction's product).
  int64_t fusion = -1;
  /// Recomputed, which clones run as one kernel: the elementwise
  /// (passes/FuseElementwise.h isFusible) clones of one kernel's members
  /// that iterate one shape, placed before the same op. An id per (kernel,
  /// result shape); -1 for none. A row kernel's members iterate two shapes
  /// (a row's elements and the rows): their clones make two kernels.
  int64_t cloneKernel = -1;
  bool forwardUsersInGroup = false;
  /// The forward nodes it reads, one entry per operand that is a node.
  llvm::SmallVector<int32_t, 4> operands;
  /// The node whose storage it is: itself, or for a view what it views
  /// (-1: a view of an argument).
  int32_t root = -1;
  /// Uses by other forward ops (views aside): the last position, or -1.
  int64_t lastForwardUse = -1;
  /// Uses by ops of any later phase (backward, optimizer): first and last
  /// position, -1 when none. These are the uses a recompute clone serves.
  int64_t firstLateUse = -1, lastLateUse = -1;
  int64_t flops = 0;  // CostOpInterface FLOPs of recomputing it
  double seconds = 0; // its predicted time (RematGraph::Options::seconds)
  /// With RematGraph::Options::kernels: its FLOPs' time alone, the bytes of
  /// its result, and per operand the node defining it (-1: none) and the
  /// bytes read.
  double computeSeconds = 0;
  int64_t resultBytes = 0;
  llvm::SmallVector<std::pair<int32_t, int64_t>, 4> reads;
  int32_t iteration = -1; // index into RematGraph::iterations; -1 outside loops
  /// The `let` names bound to it (`ein.let`, recorded by the front end
  /// for the `names:` policy).
  llvm::SmallVector<std::string, 1> lets;
};

/// What a plan costs.
struct RematCost {
  int64_t recomputedOps = 0; // clones, views included
  int64_t recomputeFlops = 0;
  /// Options::kernels' time of the clone kernels, else the clones' seconds summed.
  double recomputeSeconds = 0;
  int64_t liveBytes = 0;   // the most temporaries live at once
  int64_t arenaBytes = -1; // their first-fit arena (RematEvalOptions::arena; else -1)
  /// resident + the arena when placed, else resident + liveBytes.
  int64_t peakBytes = 0;
  int64_t savedBytes = 0; // forward values live into the backward (kept and read late)
  int64_t keptCount = 0;  // how many such values
  /// savedBytes by the iteration defining the value (RematGraph::iterations;
  /// the last entry: outside loops).
  std::vector<int64_t> savedByIteration;
  /// The most temporaries live in each of RematEvalOptions::windows.
  std::vector<int64_t> windowLive;
};

/// Recompute priced as the step runs it (the report's kernel table): a
/// run of clones that form one kernel (RematNode::cloneKernel) takes
/// max(its FLOPs' time, the bytes it moves / bandwidth) + one launch, the
/// values its clones pass each other moving no bytes; a clone alone is its
/// own kernel; a view takes nothing.
struct RematKernelPricing {
  std::function<double(Operation *)> computeSeconds; // an op's FLOPs on its unit
  double bandwidth = 0;                              // bytes/s
  double latency = 0;                                // seconds per kernel launch
};

struct RematEvalOptions {
  /// Place the temporaries as the runtime's arena does (runtime/base/FirstFit.h):
  /// slower, exact where the liveness is.
  bool arena = false;
  /// Ranges of body positions [first, last] (clones placed before `first`
  /// count as inside) whose most live temporaries to report.
  const std::vector<std::pair<int64_t, int64_t>> *windows = nullptr;
};

/// Where a plan puts its clones (RematGraph::evaluate's detail).
struct RematSchedule {
  std::vector<char> recompute; // per node: cloned
  std::vector<int64_t> need;   // per cloned node: the position it is placed before
};

class RematGraph {
public:
  struct Options {
    ByteWidth width = irByteWidth;
    /// Predicted seconds of one op (recompute cost); null: 0.
    std::function<double(Operation *)> seconds;
    /// When set, a plan's recomputeSeconds is its clone kernels' time
    /// (RematKernelPricing) rather than the sum of `seconds` over its clones.
    std::optional<RematKernelPricing> kernels;
    /// Bytes resident besides the function's own (e.g. the mixed-precision
    /// master copy): added to every peak.
    int64_t extraResident = 0;
  };

  /// The forward ops of `fn`'s body (phase "forward"; an untagged op counts
  /// as forward only in a function without backward ops, so @forward has
  /// nothing to rematerialize).
  RematGraph(func::FuncOp fn, Options options);

  func::FuncOp function() const { return fn_; }
  const Options &options() const { return options_; }
  const std::vector<RematNode> &nodes() const { return nodes_; }
  /// The body's ops in order, terminator aside (positions index it).
  const std::vector<Operation *> &ops() const { return ops_; }
  /// The first position of the fused kernel the op at `p` belongs to (`p`
  /// itself outside fusion groups): clones go before a whole kernel.
  int64_t kernelStart(int64_t p) const { return runStart_[size_t(p)]; }
  int32_t nodeOf(Operation *op) const;
  /// The forward nodes reading node `i` (each once).
  const llvm::SmallVector<int32_t, 4> &users(int32_t i) const { return users_[size_t(i)]; }
  /// The loop iterations (`ein.layer` tags) in the order the forward runs
  /// them.
  const std::vector<std::string> &iterations() const { return iterations_; }
  /// Nodes the backward reads (directly or through views): the saved values
  /// of a plan that keeps everything.
  bool isSaved(int32_t node) const { return nodes_[node].firstLateUse >= 0; }

  /// The plan keeping every node: what the function does without remat.
  std::vector<char> keepAll() const { return std::vector<char>(nodes_.size(), 1); }

  /// Prices `keep` (one bit per node; views and free nodes follow their
  /// root). Fills `schedule` when given.
  RematCost evaluate(const std::vector<char> &keep, RematSchedule *schedule = nullptr,
                     const RematEvalOptions &options = {}) const;

  /// Bytes resident for the whole function: arguments, results, constants.
  int64_t residentBytes() const { return resident_; }

private:
  bool available(const std::vector<char> &keep, int32_t node) const;
  /// Options::kernels' time of one run of clones (`runOf`: each clone's
  /// run, by its first clone; filled for this run).
  double runSeconds(const std::vector<int32_t> &run, const std::vector<char> &clone,
                    const std::vector<int32_t> &runOf) const;

  func::FuncOp fn_;
  Options options_;
  std::vector<Operation *> ops_;
  std::vector<RematNode> nodes_;
  llvm::DenseMap<Operation *, int32_t> nodeIndex_;
  std::vector<std::string> iterations_;
  /// Per node: the forward nodes that read it (once each).
  std::vector<llvm::SmallVector<int32_t, 4>> users_;
  /// Temporaries no plan changes (values of later phases): live ranges in
  /// body positions, inclusive.
  struct Interval {
    int64_t first, last, bytes;
  };
  std::vector<Interval> fixed_; // in kernel positions (runEnd_)
  /// Per position: the first and last position of its fused kernel (a run
  /// of adjacent ops of one `ein.fusion` group, which the backend runs as
  /// one step at its last op); the position itself outside groups.
  std::vector<int64_t> runStart_, runEnd_;
  int64_t resident_ = 0;
};

} // namespace mlir::ein

#endif // EINC_PASSES_REMATGRAPH_H
