//===- Program.h - The Program ABI: buffers and an ordered list of steps --===//
//
// What codegen/ produces and runtime/ executes. Plain C++ (no MLIR, no LLVM):
// a compiled executable carries this header's data and the runtime only.
//
// A Program is a list of typed buffers and a list of steps in execution
// order. Each step reads input buffers and writes one output buffer (a fused
// Kernel step may write more: extraOutputs); the kinds map one to one onto
// the primitive `ein` ops, so the reference executor has one kernel per kind.
// The CPU backend adds library-call (Matmul) and compiled-kernel steps.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_PROGRAM_H
#define EINC_RUNTIME_PROGRAM_H

#include <cstdint>
#include <string>
#include <vector>

namespace einrt {

enum class DType : uint8_t { F32, BF16, F16, F64, I32, I1 };

/// Bytes per element as stored (i1 is one byte).
int64_t dtypeSize(DType t);
const char *dtypeName(DType t);
bool isFloat(DType t);

/// Why a buffer exists; arguments and results are listed in Program order.
enum class BufferRole : uint8_t {
  Input,    // data fed each step (tokens, targets)
  Param,    // model parameters
  OptState, // optimizer state (moments, ...)
  Scalar,   // runtime scalars passed as arguments (step, lr)
  Constant, // holds `constant` bytes, set once
  Temp,     // produced by a step
};

/// How a Param buffer is initialised (from the model's `~` initialiser).
struct Init {
  std::string kind = "zeros";         // normal | uniform | zeros | ones
  double mean = 0, std = 0, clip = 0; // normal; clip in standard deviations (0: none)
  double low = 0, high = 0;           // uniform
};

struct Buffer {
  std::string name; // argument/result name, or "%N" for temporaries
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  BufferRole role = BufferRole::Temp;
  /// Constant buffers: the values in row-major order, or one value that
  /// fills the whole buffer.
  std::vector<double> constant;
  Init init; // Param buffers
  int64_t elementCount() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

/// One kind per primitive `ein` op.
enum class StepKind : uint8_t {
  Contract,  // ints: lhs_batch | rhs_batch | lhs_contract | rhs_contract (see lists)
  Transpose, // lists[0] = permutation
  Reshape,   //
  Broadcast, // lists[0] = dimensions (operand dim i → result dim)
  ReduceSum, // lists[0] = reduced dimensions
  ReduceMax,
  ReduceMin,
  Neg,
  Exp,
  Log,
  Tanh,
  Sqrt,
  Rsqrt,
  Abs, // unary elementwise
  Add,
  Sub,
  Mul,
  Div,
  Max,
  Min,
  Pow, // binary elementwise, same shapes
  CmpEq,
  CmpNe,
  CmpLt,
  CmpLe,
  CmpGt,
  CmpGe,  // → i1
  Select, // inputs: cond (i1), on_true, on_false
  Cast,
  Iota,       // scalar = the dimension
  Gather,     // inputs: table, indices (i32); gathers along table dim 0
  ScatterAdd, // inputs: updates, indices; output zeroed, then rows added
  Copy,       // output = input (same shape), e.g. a result aliasing an argument

  // The CPU backend's steps (f32 buffers only):
  Matmul, // inputs A, B; output C. lists[0] = {batch, M, N, K, transA,
          // transB, lda, ldb, ldc, strideA, strideB, strideC}: for each of
          // `batch` matrices, C = op(A) · op(B), row-major, as cblas_sgemm
          // (op = transpose when trans* is 1), strides in elements.
          // Optional lists[1]: outer batch loops around those, outermost
          // first, 4 entries each {count, strideA, strideB, strideC}
          // (batch dims that do not collapse into one stride); C is
          // then dense row-major.
  Kernel, // a compiled kernel: scalar = its index in the executor's kernel
          // table; called with the data pointers of inputs..., output,
          // extraOutputs... (a fused kernel writes several buffers).
};

/// A compiled kernel: `args[i]` points to a variable holding the data pointer
/// of the step's i-th buffer (its inputs in order, then its outputs), and
/// the two entries after those to int64_t variables `begin` and `end`: the
/// call computes iterations [begin, end) of the kernel's parallel loop.
using KernelFn = void (*)(void **args);

/// A kernel and the trip count of its parallel loop: calls over disjoint
/// ranges covering [0, extent) may run at the same time and together
/// compute the whole step. An extent of 1 means one call does everything.
struct KernelEntry {
  KernelEntry(KernelFn fn = nullptr, int64_t extent = 1) : fn(fn), extent(extent) {}
  KernelFn fn;
  int64_t extent;
};

const char *stepKindName(StepKind k);

struct Step {
  StepKind kind;
  std::vector<int32_t> inputs; // buffer indices
  int32_t output = -1;         // buffer index
  /// Kernel steps only: more buffers the step writes (a fused kernel's
  /// other results); empty for every other kind.
  std::vector<int32_t> extraOutputs;
  std::vector<std::vector<int64_t>> lists; // integer attributes (see StepKind)
  int64_t scalar = 0;
  std::string note; // the op and source location, for errors and traces
};

struct Program {
  std::string name; // the function lowered, e.g. "forward", "train_step"
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  std::vector<int32_t> arguments; // buffer indices, in function-argument order
  std::vector<int32_t> results;   // buffer indices, in function-result order
  std::vector<std::string> resultNames;

  /// Checks indices, shapes and dtypes of every step; returns "" or the
  /// first problem (so a corrupt Program is an error, never a crash).
  std::string validate() const;
};

} // namespace einrt

#endif // EINC_RUNTIME_PROGRAM_H
