//===- StepKernels.h - The kernels a fusing backend runs, and why -*- C++ -*-===//
//
// One place for "which ops run as one kernel": after the fusion passes
// (ein-fuse-elementwise, ein-fuse-epilogues, ein-fuse-rows) annotated a
// function, stepKernels() partitions its ops into the steps a backend runs —
// a fusion group, a row group, a contraction with its epilogue, a lone op —
// in program order, exactly as the CPU lowering collects them
// (codegen/CpuLowering.cpp). The byte ledger (FusedCosts.cpp), remat's
// schedule model (RematGraph.cpp) and the report's kernel table read it.
//
// fusionBoundaries() explains the partition: for every value one kernel
// writes and another reads, the first rule of the fusion passes that kept
// the two apart (docs/fusion.md, "Why fusion stopped").
//
//===----------------------------------------------------------------------===//
#ifndef EINC_PASSES_STEPKERNELS_H
#define EINC_PASSES_STEPKERNELS_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::ein {

enum class KernelKind : uint8_t {
  Fused,       // an `ein.fusion` group of two or more elementwise ops
  Rows,        // an `ein.rows` group: reductions with producers and consumers
  Epilogue,    // a contraction (first member) and its epilogue group
  Contraction, // a contraction alone (a library GEMM)
  Op,          // any other op alone
  View,        // no step: a reshape or a slice (views), a constant (resident), or an iota
               // (and views of it) that every reader computes from its index
};

/// The kind's name in reports: fused, rows, matmul+epilogue, matmul, op, view.
/// (A concat whose inputs are written in place is still an `op` here: the
/// lowering decides per input, codegen/CpuViews.cpp.)
llvm::StringRef kernelKindName(KernelKind kind);

struct StepKernel {
  KernelKind kind = KernelKind::Op;
  llvm::SmallVector<Operation *, 4> members; // in program order
  int64_t first = 0, last = 0;               // body positions of the first and last member
  /// The ops a fused kernel computes elementwise: the members, but for an
  /// Epilogue without its contraction.
  llvm::ArrayRef<Operation *> elementwiseMembers() const {
    return kind == KernelKind::Epilogue ? llvm::ArrayRef<Operation *>(members).drop_front()
                                        : llvm::ArrayRef<Operation *>(members);
  }
};

/// The kernels of `body` in program order; every op but the terminator is a
/// member of exactly one. Members of a kernel are adjacent in `body` (the
/// fusion passes reorder them so).
std::vector<StepKernel> stepKernels(Block &body);

/// Whether kernel `k` computes the value `use` (an operand of one of its
/// members) from the element's index instead of reading it: an iota or a
/// view of one (classifyIndexRead) read by an elementwise member of a fused
/// kernel, an epilogue, a row kernel or, where fusion ran (fusionMarked), an
/// elementwise op alone (which the backends then describe as a fused kernel
/// of one op: codegen/CpuKernelGen.h).
bool computesIndex(const StepKernel &k, OpOperand &use);

/// The iotas, and reshapes / broadcasts of them, among `kernels`' ops that
/// no step writes: every reader computes them (computesIndex), directly or
/// through another such op. stepKernels makes each a View.
llvm::DenseSet<Operation *> computedIndexOps(llvm::ArrayRef<StepKernel> kernels);

/// Why two kernels stayed apart: the first rule that applies.
enum class FusionStop : uint8_t {
  Policy,      // the `fusion` setting leaves it out (off; epilogues need `on`, row kernels `all`)
  Contraction, // a library GEMM reads it (no prologues), or writes it to a consumer no epilogue
               // takes
  Movement,  // a data-movement op (transpose, gather, scatter_add, iota, a materialised broadcast)
  Reduction, // a reduction no row kernel takes (over leading dims, a narrow sum), or one that
             // ends its kernel (to a scalar, of long rows: FuseRows.h)
  Phase,     // forward / backward / optimizer: fusing would keep a value alive across phases
  Shape,     // the kernels iterate different shapes
  Cycle,     // a path leaves one and enters the other: as one kernel they would wait on themselves
  InputBudget, // one kernel would read more than max-inputs buffers
  Order,       // none of these: the greedy grouping put them apart
};

/// The stop's name in reports ("policy", "contraction", ...) and a sentence.
llvm::StringRef fusionStopName(FusionStop stop);
llvm::StringRef fusionStopMeaning(FusionStop stop);

/// What the fusion passes ran (the `fusion` setting: off, elementwise, on, all).
struct FusionPolicy {
  bool elementwise = true; // ein-fuse-elementwise
  bool epilogues = false;  // ein-fuse-epilogues (`on`, `all`)
  bool rows = false;       // ein-fuse-rows (`all`)
  unsigned maxInputs = 16; // the passes' max-inputs
};

/// A value written by kernel `from` and read by kernel `to` (views skipped:
/// a read of a reshape of it counts as a read of it).
struct KernelBoundary {
  int32_t from = 0, to = 0; // indices into the kernels
  FusionStop stop = FusionStop::Order;
  std::string detail; // e.g. "f32[8x64x256] vs f32[8x64]", "would read 17 buffers"
  int32_t via = -1;   // Cycle: the kernel the path leaves `from` through
};

/// One boundary per pair of kernels (from < to) that a value crosses, in
/// order of `from` then `to`; View kernels are never an end.
std::vector<KernelBoundary> fusionBoundaries(llvm::ArrayRef<StepKernel> kernels,
                                             const FusionPolicy &policy);

} // namespace mlir::ein

#endif // EINC_PASSES_STEPKERNELS_H
