//===- GatherNodes.cpp - Moving each group's ops next to each other -------===//
#include "passes/GatherNodes.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <queue>

namespace mlir::ein {

FailureOr<std::vector<SmallVector<Operation *>>>
gatherNodes(Block &block, llvm::function_ref<int64_t(Operation *)> nodeKey) {
  std::vector<SmallVector<Operation *>> nodes;
  std::vector<int64_t> firstOf; // the block index of each node's first op
  llvm::DenseMap<Operation *, int64_t> node;
  llvm::DenseMap<int64_t, int64_t> nodeOfKey;
  int64_t index = 0;
  for (Operation &op : block.without_terminator()) {
    auto [it, fresh] = nodeOfKey.try_emplace(nodeKey(&op), int64_t(nodes.size()));
    if (fresh) {
      nodes.emplace_back();
      firstOf.push_back(index);
    }
    nodes[it->second].push_back(&op);
    node[&op] = it->second;
    ++index;
  }
  std::vector<llvm::SmallSetVector<int64_t, 4>> users(nodes.size());
  std::vector<int64_t> pending(nodes.size(), 0);
  for (int64_t n = 0; n < int64_t(nodes.size()); ++n)
    for (Operation *op : nodes[n])
      for (Value v : op->getOperands())
        if (Operation *d = v.getDefiningOp(); d && node.count(d)) {
          int64_t m = node[d];
          if (m != n && users[m].insert(n))
            ++pending[n];
        }
  using Item = std::pair<int64_t, int64_t>; // (first index, node)
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (int64_t n = 0; n < int64_t(nodes.size()); ++n)
    if (pending[n] == 0)
      ready.push({firstOf[n], n});
  SmallVector<int64_t> order;
  order.reserve(nodes.size());
  while (!ready.empty()) {
    int64_t n = ready.top().second;
    ready.pop();
    order.push_back(n);
    for (int64_t u : users[n])
      if (--pending[u] == 0)
        ready.push({firstOf[u], u});
  }
  if (order.size() != nodes.size())
    return failure();

  Operation *terminator = block.getTerminator();
  std::vector<SmallVector<Operation *>> ordered;
  ordered.reserve(nodes.size());
  for (int64_t n : order) {
    for (Operation *op : nodes[n])
      op->moveBefore(terminator);
    ordered.push_back(std::move(nodes[n]));
  }
  return ordered;
}

} // namespace mlir::ein
