//===- CudaRenderInternal.h - Shared pieces of the CUDA renderer -*- C++ -*-===//
//
// What the kernel families of the CUDA renderer (CudaRenderElementwise.cpp,
// CudaRenderRows.cpp, CudaRenderMovement.cpp) share: C++ type names of
// elements, the kernel's signature and comment, index expressions, the
// scalar math of the CPU kernels (codegen/CpuKernelBuilder.h) as calls to the
// prelude's helpers (CudaRenderer.cpp). Internal to codegen/.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_CUDARENDERINTERNAL_H
#define EINC_CODEGEN_CUDARENDERINTERNAL_H

#include "codegen/CudaRenderer.h"
#include "codegen/KernelSpec.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ein::codegen::cuda {

/// How an element is stored in a buffer (runtime layout: i1 as one byte).
const char *storageType(ElemKind k);
/// How a kernel holds an element's value: f32 for the float kinds.
const char *valueType(ElemKind k);
int64_t storageBytes(ElemKind k);

/// Source text with indentation.
class Source {
public:
  void line(const std::string &text);
  void open(const std::string &text); // text + " {", then indent
  void close(const std::string &tail = "}");
  /// A line between two blocks ("} else {"): one level out, then in again.
  void middle(const std::string &text);
  void blank() { text_ += "\n"; }
  std::string take() { return std::move(text_); }

private:
  std::string text_;
  int indent_ = 0;
};

/// The kernel under construction: its name, parameters (in0.., out0..) and
/// info; the families fill the body.
struct Kernel {
  const KernelSpec &spec;
  std::string name;
  CudaKernelSource out;
  Source src;

  Kernel(const KernelSpec &spec, std::string name) : spec(spec), name(std::move(name)) {}
  /// Records the element kinds the source uses (bf16 / f16 headers).
  void uses(ElemKind k);
  /// `extern "C" __global__ void __launch_bounds__(1024) NAME(params) {`;
  /// `minBlocks` > 0: `__launch_bounds__(1024, minBlocks)`.
  void openEntry(int minBlocks = 0);
  /// The parameter list: `const T *__restrict__ in0, ..., T *__restrict__ out0, ...`.
  std::string parameters();
};

/// `expr / d` and `expr % d` with constant d for tensors of `count` elements:
/// 32-bit unsigned arithmetic where it fits (a cheaper division by a
/// constant), 64-bit otherwise.
std::string divIndex(const std::string &expr, int64_t d, int64_t count);
std::string modIndex(const std::string &expr, int64_t d, int64_t count);
std::string ll(int64_t v); // "123LL" / "123" literals

/// A scalar op of the CPU kernels as an expression of the operands' value
/// expressions: op is "ein.add", "ein.cmp" (with predicate `kind`), ...;
/// `elem` the result's kind, `operandElem` the first operand's. `index` is
/// the element's index (of `indexCount`): stochastic rounding's and an
/// "ein.iota" node's input.
std::string scalarExpr(const FusedNode &node, const std::vector<std::string> &args,
                       const std::string &index, int64_t indexCount);
/// `v` rounded to what kind `k` holds (identity but for bf16 / f16).
std::string roundTo(ElemKind k, const std::string &v);

/// The initial value of a reduction of `kind` ("sum", "max", "min") over `k`.
std::string reduceInit(const std::string &kind, ElemKind k);
/// `acc = combine(acc, x)`'s right-hand side: f32 / i32 sums add, narrow
/// sums add and round (a fold in the result type), max / min propagate NaN.
std::string reduceCombine(const std::string &kind, ElemKind k, const std::string &acc,
                          const std::string &x);

// The families.
void renderElementwise(Kernel &k);
void renderReshape(Kernel &k);
void renderReduce(Kernel &k);
void renderRowsKernel(Kernel &k); // "ein.rows" (CudaRenderRowsKernel.cpp)
void renderTranspose(Kernel &k);
void renderBroadcast(Kernel &k);
void renderIota(Kernel &k);
void renderGather(Kernel &k);
void renderScatterAdd(Kernel &k);

/// A reduction of rows long enough to be combined in chunks
/// (codegen/RowOrder.h), as renderChunkedRows writes it: the renderer's
/// parts of the loop. Inside them `row`, `base` (row × length) and `acc`
/// are in scope.
struct ChunkedRows {
  int64_t rows = 0, length = 0;
  std::string kind;              // "sum", "max", "min"
  ElemKind elem = ElemKind::F32; // the result's (acc's) kind
  ElemKind operandElem = ElemKind::F32;
  std::function<void()> rowPrologue; // per-row values (may be empty)
  std::function<void(const std::string &q)>
      combineVector;            // acc = combine(acc, vector q's elements)
  std::function<void()> finish; // lane 0: store `acc`, the row's result
};
/// A warp per chunk over rows × kRowChunks work items; the row's last warp
/// combines the chunks' results (CudaRenderChunks.cpp).
void renderChunkedRows(Kernel &k, const ChunkedRows &c);

/// Elements per thread of an elementwise kernel: 16 bytes of its widest
/// Full operand or result (1 where that is not worth it: fewer elements).
int32_t elementwiseVector(const KernelSpec &spec);

/// The rows of a reduction over trailing dims (rows × rowLength), or false.
bool trailingRows(const KernelSpec &spec, int64_t &rows, int64_t &rowLength);
/// The rows and columns of a reduction over leading dims (the kept ones
/// trailing), or false.
bool leadingRows(const KernelSpec &spec, int64_t &rows, int64_t &columns);

/// Partials per row of a BlockRows reduction: the largest block, so that any
/// block has at most one per thread; the order of its sums is fixed by the
/// row length alone, whatever the block size.
inline constexpr int kBlockRowSlots = einrt::kCudaKernelMaxBlock;

} // namespace ein::codegen::cuda

#endif // EINC_CODEGEN_CUDARENDERINTERNAL_H
