//===- Ledgers.h - The report's ledgers, fused against unfused -*- C++ -*-===//
//
// Fusion only annotates and reorders (docs/fusion.md), so the FLOP ledger of
// a fused function is the unfused one's, op for op and phase for phase;
// applyFusionToCosts leaves FLOPs alone, starts from the unfused bytes and
// never adds traffic, and its per-op shares add up to its total; the memory
// ledger's params, grads, optimizer state and inputs do not move, and the
// values fusion keeps in registers only take memory away.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_FUZZ_PIPELINE_LEDGERS_H
#define EINC_TEST_FUZZ_PIPELINE_LEDGERS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace einc::pipelinefuzz {

/// "" when the ledgers of `fused` and `unfused` (the same function with and
/// without ein-fuse-elementwise) agree as above, else what differs.
std::string compareLedgers(mlir::func::FuncOp fused, mlir::func::FuncOp unfused);

} // namespace einc::pipelinefuzz

#endif // EINC_TEST_FUZZ_PIPELINE_LEDGERS_H
