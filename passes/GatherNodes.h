//===- GatherNodes.h - Moving each group's ops next to each other -*- C++ -*-===//
//
// What elementwise fusion (FuseElementwise.cpp) and row fusion
// (FuseRows.cpp) do last: the ops of a block form nodes (a group, or an op
// alone) and each node's ops must stand next to each other, every value
// still defined before its uses.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_PASSES_GATHERNODES_H
#define EINC_PASSES_GATHERNODES_H

#include "mlir/IR/Block.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <vector>

namespace mlir::ein {

/// Moves the ops of `block` (but its terminator) so that the ops of each
/// node stand next to each other, in block order: ops with the same
/// `nodeKey` are one node. The nodes are ordered by Kahn's algorithm,
/// taking the ready node whose first op comes first. The order is planned
/// in full before anything moves: where the nodes depend on each other in
/// a cycle (a bug in the grouping), the block is left untouched and it
/// fails. Returns the nodes in their new order.
FailureOr<std::vector<SmallVector<Operation *>>>
gatherNodes(Block &block, llvm::function_ref<int64_t(Operation *)> nodeKey);

} // namespace mlir::ein

#endif // EINC_PASSES_GATHERNODES_H
