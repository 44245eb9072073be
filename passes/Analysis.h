//===- Analysis.h - FLOP and byte ledgers of a compiled step ----*- C++ -*-===//
//
// Static analyses over one function (usually @train_step): every op's cost
// through CostOpInterface, tagged with its phase and layer; the memory
// ledger (params, grads, optimizer state, activations saved for backward,
// inputs, temporaries) and the peak of live bytes over the function's op
// order. Precision policies enter through `ByteWidth`: the bytes an element
// of a type takes under the policy.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_PASSES_ANALYSIS_H
#define EINC_PASSES_ANALYSIS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mlir::ein {

/// One op of the function, in order.
struct OpCost {
  Operation *op = nullptr;
  std::string name;            // "ein.contract"
  std::string kind;            // "contraction" | "elementwise" | "reduction" | "data"
  std::string phase;           // "forward" | "backward" | "optimizer"
  std::string layer;           // "layer.3", or "" outside any `for` iteration
  std::string location;        // "examples/gpt.ein:31:9", or ""
  int64_t flops = 0;           // all arithmetic (transcendentals count 1 here too)
  int64_t transcendentals = 0; // exp, log, tanh, sqrt, rsqrt, pow elements
  int64_t bytesRead = 0;       // each operand read once (under the ByteWidth)
  int64_t bytesWritten = 0;    // each result written once
  bool isModelFlop = false;    // counted by MFU: forward/backward contractions
  bool fp8 = false;            // a contraction of fp8 operands (ein.quantize results): bytes
                               // read at 1 per element + scales, priced at the fp8 peak
};

/// Bytes per element of `t` under a precision policy.
using ByteWidth = std::function<int64_t(Type)>;
/// The IR's own widths: f32/i32 4, bf16/f16 2, i1 1.
int64_t irByteWidth(Type t);

/// Every op of `fn` with its cost, in order.
std::vector<OpCost> analyzeCosts(func::FuncOp fn, const ByteWidth &width = irByteWidth);

struct MemoryLedger {
  int64_t paramCount = 0;         // elements of all `ein.kind = "param"` arguments
  int64_t params = 0;             // bytes
  int64_t grads = 0;              // bytes of the gradients (one per param)
  int64_t optimizerState = 0;     // bytes of `opt_state` arguments
  int64_t inputs = 0;             // bytes of `input` arguments
  int64_t activations = 0;        // forward values the backward reads (saved for backward)
  int64_t peak = 0;               // max over the op order of live bytes
  int64_t peakOpIndex = -1;       // index into analyzeCosts' order where the peak is reached
  std::string peakOp;             // its name and location
  std::vector<int64_t> liveAfter; // live bytes after each op (for plots)
  // Added after the contract (docs/analyses.md):
  int64_t savedInputs = 0;     // bytes of `input` arguments the backward reads
                               // (in `inputs`, not in `activations`)
  int64_t activationCount = 0; // distinct values counted in `activations`
  std::map<std::string, int64_t> activationsByDtype; // `activations` by element type ("bf16")
  int64_t paramCopies = 0; // saved casts of params (a precision policy's working copies),
                           // not in `activations`
};

/// Values a fusing backend never writes to memory (fusedValues).
struct FusedValues {
  llvm::DenseSet<Value> internal;         // fusion-group results read only inside the group
  llvm::DenseSet<Value> foldedBroadcasts; // broadcasts every user reads in place
  llvm::DenseSet<Value> computedIndices;  // iotas (and views of them) every reader computes
                                          // from its index (computedIndexOps)
};

/// The ledger of `fn` (a @train_step, @grad or @forward). Arguments and
/// results are live for the whole function; every other value from its
/// definition to its last use; a reshape is a view of its operand. With
/// `fused` (fusedValues(fn)), the values a fusing backend never materialises
/// take no memory and a folded broadcast is a view of its input, as a
/// reshape is.
MemoryLedger analyzeMemory(func::FuncOp fn, const ByteWidth &width = irByteWidth,
                           const FusedValues *fused = nullptr);

/// What fusion did to the byte ledger (applyFusionToCosts).
struct FusionSummary {
  int64_t fusedKernels = 0;     // groups of two or more ops (`ein.fusion`)
  int64_t fusedOps = 0;         // ops in those groups
  int64_t rowKernels = 0;       // row groups (`ein.rows`): reductions with their
  int64_t rowOps = 0;           // producers and consumers, and their ops
  int64_t foldedBroadcasts = 0; // broadcasts every user reads in place
  int64_t indexOpsComputed = 0; // iotas every reader computes from its index (no bytes)
  int64_t epilogues = 0;        // contractions with an epilogue (`ein.epilogue`)
  int64_t epilogueBytes = 0;    // their products' bytes, read by it from cache
  int64_t bytesUnfused = 0;     // Σ bytes read + written before
  int64_t bytes = 0;            // and after
};

/// Rewrites the bytes of `costs` (analyzeCosts of `fn`, same width) to what
/// a fusing backend moves: each fusion group — a contiguous run of ops with
/// one `ein.fusion` id (passes/FuseElementwise.h), or an elementwise op on
/// its own — reads each input once (a broadcast it can read in place at the
/// broadcast's input size) and writes only the results read after it; the
/// group's bytes are shared among its ops in proportion to their unfused
/// bytes, so that sums by op, layer and kind stay consistent. A broadcast
/// whose every user reads it in place moves nothing, nor does an iota every
/// reader computes from its index (computedIndexOps). A contraction's
/// epilogue (`ein.epilogue`, ein-fuse-epilogues) reads the product while it
/// is in cache: its reads of the product move nothing. FLOPs are unchanged.
FusionSummary applyFusionToCosts(func::FuncOp fn, std::vector<OpCost> &costs,
                                 const ByteWidth &width = irByteWidth);

/// The values of `fn` that a backend fusing its `ein.fusion` groups never
/// writes to memory (the same kernels as applyFusionToCosts).
FusedValues fusedValues(func::FuncOp fn);

// Helpers the analyses share (added after the contract):
/// Bytes of a statically shaped tensor type under `width`: elements ×
/// width(element type); 0 for any other type.
int64_t valueBytes(Type type, const ByteWidth &width = irByteWidth);
/// The attribute naming the part of the training step an op is in:
/// "backward", "recompute", "optimizer"; none for the forward.
inline constexpr llvm::StringLiteral kPhaseAttr = "ein.phase";
/// An op's `ein.phase`, "forward" when it has none.
llvm::StringRef opPhase(Operation *op);
/// "file:line:col" of the op's first FileLineColLoc, or "".
std::string opLocation(Operation *op);

} // namespace mlir::ein

#endif // EINC_PASSES_ANALYSIS_H
