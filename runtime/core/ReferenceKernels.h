//===- ReferenceKernels.h - One plain kernel per primitive op -------------===//
//
// The reference backend: obviously-correct loops over row-major buffers with
// explicit multi-index arithmetic. (Elementwise ops are StepKinds.def rows
// over runtime/base/ScalarOps.h, run by ReferenceSteps.cpp.) Correctness first; they are the oracle
// every other backend is checked against. Shapes are assumed already checked
// by Program::validate(); data-dependent errors (bad gather indices, integer
// division by zero) are an Invalid Status, never a read or write out of
// bounds.
//
// Instantiated for T = float, double (floats), int32_t and, for the data
// movement kernels, uint8_t (i1).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_REFERENCEKERNELS_H
#define EINC_RUNTIME_REFERENCEKERNELS_H

#include "runtime/core/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace einrt {
namespace ref {

using Shape = std::vector<int64_t>;

/// Row-major strides (in elements) of a shape.
std::vector<int64_t> stridesOf(const Shape &shape);
int64_t elementCount(const Shape &shape);

/// dot_general: result dims = batch (lhsBatch order), lhs free, rhs free.
template <class T>
void contract(const T *lhs, const Shape &lhsShape, const T *rhs, const Shape &rhsShape,
              const std::vector<int64_t> &lhsBatch, const std::vector<int64_t> &rhsBatch,
              const std::vector<int64_t> &lhsContract, const std::vector<int64_t> &rhsContract,
              T *out, const Shape &outShape);

/// out dim i = in dim perm[i].
template <class T>
void transpose(const T *in, const Shape &inShape, const std::vector<int64_t> &perm, T *out);

/// in dim i -> out dim dims[i]; size-1 input dims broadcast.
template <class T>
void broadcast(const T *in, const Shape &inShape, const std::vector<int64_t> &dims, T *out,
               const Shape &outShape);

template <class T> void copy(const T *in, T *out, int64_t n);

/// A narrow float format's rounding (runtime/core/FloatFormats.h), applied to
/// an accumulator after every addition; null: none (f32, f64, i32).
using RoundFn = double (*)(double);

enum class ReduceKind { Sum, Max, Min };
/// Reduces over `dims` (strictly increasing): each output a fold of its
/// inputs in row-major order, a sum rounded by `round` after every addition
/// (a bf16/f16 accumulator). Max/min propagate NaN; the identity for an
/// empty reduction is 0, -inf (lowest int) or +inf (highest).
template <class T>
void reduce(ReduceKind kind, const T *in, const Shape &inShape, const std::vector<int64_t> &dims,
            T *out, RoundFn round = nullptr);

template <class T>
void select(const uint8_t *cond, const T *onTrue, const T *onFalse, T *out, int64_t n);

/// out[i_0, ..., i_n] = i_dim.
template <class T> void iota(T *out, const Shape &outShape, int64_t dim);

/// out[i..., j...] = table[ids[i...], j...]. An index outside
/// [0, table rows) is an error naming the position and the value.
template <class T>
Status gather(const T *table, const Shape &tableShape, const int32_t *ids, int64_t idCount, T *out);

/// out = 0; out[ids[i...], j...] += updates[i..., j...], in the order of
/// ids, each sum rounded by `round` (as reduce).
template <class T>
Status scatterAdd(const T *updates, const int32_t *ids, int64_t idCount, T *out,
                  const Shape &outShape, RoundFn round = nullptr);

} // namespace ref
} // namespace einrt

#endif // EINC_RUNTIME_REFERENCEKERNELS_H
