//===- CpuGroupKernel.h - A group of ops described as one kernel -*- C++ -*-===//
//
// What describeFusedKernel (CpuFusedKernel.cpp) and describeRowsKernel
// (CpuRowsKernel.cpp) share: a FusedKernel built member by member — body
// nodes in SSA order, the operands the group reads from outside (one per
// value and access), iotas computed from the element's index instead of
// read, the results read after the group, and the dedupe key. Which
// operands are read how (the fusion split, the row levels) stays with each
// describer. Internal to codegen/.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_CPUGROUPKERNEL_H
#define EINC_CODEGEN_CPUGROUPKERNEL_H

#include "codegen/CpuKernelGen.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <string>

namespace ein::codegen {

class GroupKernelBuilder {
public:
  /// A kernel of op `op` ("ein.fused", "ein.rows") computing `members`.
  GroupKernelBuilder(llvm::StringRef op, llvm::ArrayRef<mlir::Operation *> members);

  FusedKernel fk;
  KernelSpec &spec() { return fk.spec; }

  /// A member's node as `own` (the member described alone) computes it:
  /// op, kind and element kinds; no arguments yet.
  static FusedNode nodeFor(const KernelSpec &own);
  /// The body node of `v`'s defining op when that is a member already
  /// added, else -1.
  int32_t memberNode(mlir::Value v) const;
  /// When `v` is a member's result: appends its node to `node`'s arguments.
  bool readMember(mlir::Value v, FusedNode &node);
  /// When `use` reads an iota (or a view of one): appends the node computing
  /// it from the element's index (one per value; once per row if `perRow`)
  /// to `node`'s arguments and records the use as an index read.
  bool readIndex(mlir::OpOperand &use, const KernelSpec &own, bool perRow, FusedNode &node);
  /// Appends the kernel operand reading `source` (the use's value, or its
  /// broadcast's input when `through`) with `access` to `node`'s arguments:
  /// one operand per value and access, of the element kind `own` gives it.
  void readOperand(mlir::OpOperand &use, mlir::Value source, Access access, bool through,
                   const KernelSpec &own, FusedNode &node);
  /// Appends `node` as member `op`'s.
  void addMember(mlir::Operation *op, FusedNode node);

  /// Whether a later op or the return reads member `op`.
  bool readOutside(mlir::Operation *op) const;
  /// Makes member `op`'s node a kernel result (the first `result`, the rest
  /// `extraResults`).
  void addOutput(mlir::Operation *op);
  /// The dedupe key: `header` ("ein.fused<...>"), then the operands, the
  /// body and the output nodes.
  void writeKey(const std::string &header);

private:
  llvm::SmallPtrSet<mlir::Operation *, 16> inGroup_;
  llvm::DenseMap<mlir::Operation *, int32_t> nodeOf_;
  llvm::DenseMap<std::pair<mlir::Value, int>, int32_t> operandOf_;
  llvm::DenseMap<mlir::Value, int32_t> indexNodeOf_; // iotas computed in the kernel
};

} // namespace ein::codegen

#endif // EINC_CODEGEN_CPUGROUPKERNEL_H
