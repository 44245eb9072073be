//===- KernelSpec.h - A kernel described for any backend --------*- C++ -*-===//
//
// What the backends share about a kernel: a KernelSpec is plain data (op
// name, element kinds, shapes, integer attributes; a fused or row kernel's
// body) from which the CPU backend generates MLIR (codegen/CpuKernelGen.h)
// and the CUDA renderer writes CUDA C++ (codegen/CudaRenderer.h); both read
// it through the helpers here. Nothing in this header knows either backend.
//
// Buffer layout (the runtime's): f32 as f32, i32 as i32, i1 as one byte
// (0 or 1), bf16 as its 16 bits, f16 as f16; row-major and flat (the
// kernels compute offsets themselves), one buffer per operand and result.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_KERNELSPEC_H
#define EINC_CODEGEN_KERNELSPEC_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ein::codegen {

enum class ElemKind : uint8_t { F32, I32, I1, BF16, F16 };
/// f32, bf16, f16: computed as f32.
inline bool isFloatKind(ElemKind k) {
  return k == ElemKind::F32 || k == ElemKind::BF16 || k == ElemKind::F16;
}
inline bool isNarrowKind(ElemKind k) { return k == ElemKind::BF16 || k == ElemKind::F16; }
/// "f32", "i32", "i1", "bf16", "f16": in dedupe keys and kernel names.
const char *elemName(ElemKind k);

/// How an elementwise kernel reads an operand (see operandAccess in
/// codegen/CpuKernelGen.h).
enum class Access : uint8_t { Full, Scalar, Prefix, Suffix };

struct KernelTensor {
  ElemKind elem = ElemKind::F32;
  Access access = Access::Full; // operands of elementwise kernels
  std::vector<int64_t> shape;
  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

/// One op of a fused kernel's body, in SSA order.
struct FusedNode {
  std::string op;                       // "ein.add", "ein.cmp", ...
  std::string kind;                     // cmp predicate
  ElemKind elem = ElemKind::F32;        // the result's
  ElemKind operandElem = ElemKind::F32; // the operands' (cmp, cast)
  std::vector<int32_t> args;            // >= 0: kernel operand j; < 0: node -(k + 1)
  // "ein.rows": computed once per row (a reduction, `kind` its kind, and
  // what reads only per-row values).
  bool perRow = false;
  // "ein.iota" (no args): an iota, or a view of one, computed from the index
  // i of the kernel's element (of the row, for a per-row node) instead of
  // read: (i / stride) % size (passes/FuseElementwise.h, IndexRead).
  int64_t stride = 0, size = 0;
};

struct KernelSpec {
  std::string op;                     // "ein.add", "ein.reduce", "ein.fused"...
  std::vector<KernelTensor> operands; // in order
  KernelTensor result;
  std::vector<int64_t> dims; // permutation / dimensions (transpose,
                             // broadcast, reduce)
  int64_t scalar = 0;        // iota: the dimension
  std::string kind;          // reduce kind or cmp predicate ("sum", "lt")
  std::string key;           // the dedupe signature

  // "ein.fused" only: the body, the nodes written (the first to `result`,
  // the rest to `extraResults`, in order) and the loop split (outer ×
  // inner; 0: a flat loop) by which Prefix / Suffix operands are read.
  std::vector<FusedNode> body;
  std::vector<int32_t> outputNodes;
  std::vector<KernelTensor> extraResults;
  int64_t outer = 0, inner = 0;
  // "ein.rows" (describeRowsKernel) has the same fields: outer rows of inner
  // elements; body nodes computed per element of a row, or per row
  // (FusedNode::perRow: "ein.reduce" nodes and what reads only them), and
  // "ein.broadcast" nodes (a per-row node's value at every element). An
  // operand is read per element (Full: element r·inner + j; Suffix: j),
  // per row (Prefix: element r) or once (Scalar).
};

/// The kernels of a table as a backend reads them: distinct kernels by
/// index (the CPU backend's KernelCompiler is one; the CUDA renderer renders
/// every entry).
class KernelSpecTable {
public:
  virtual ~KernelSpecTable() = default;
  virtual int64_t kernelCount() const = 0;
  virtual const KernelSpec &spec(int64_t index) const = 0;
};

/// A Matmul step's note with an epilogue kernel: "<the contraction's note>"
/// + kEpilogueNote + "<the epilogue kernel's note>", e.g. "ein.contract at
/// m.ein:3:5 + epilogue fused 2 ops (ein.add ein.max) at m.ein:3:20"
/// (written by the CPU lowering, read back for the kernel's notes).
inline constexpr const char *kEpilogueNote = " + epilogue ";

/// Row-major strides of `shape`, in elements.
inline std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// The elementwise op families kernels distinguish (the rows of
/// runtime/base/ElementwiseOps.def).
bool isUnary(llvm::StringRef opName);
bool isBinary(llvm::StringRef opName);

/// A reduction's loops: runs of adjacent input dims with the same status
/// (reduced or kept) merged into one loop each (size-1 dims dropped); the
/// row-major iteration order (and so the accumulation order) does not
/// change. Strides in elements of the input and of the result.
struct ReduceGroup {
  int64_t size, inStride, outStride;
  bool reduced;
};
std::vector<ReduceGroup> reduceGroups(const KernelSpec &spec);

} // namespace ein::codegen

#endif // EINC_CODEGEN_KERNELSPEC_H
