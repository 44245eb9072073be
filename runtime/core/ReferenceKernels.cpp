//===- ReferenceKernels.cpp - One plain kernel per primitive op -----------===//
#include "runtime/core/ReferenceKernels.h"
#include "runtime/base/ScalarOps.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace einrt {
namespace ref {

std::vector<int64_t> stridesOf(const Shape &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

int64_t elementCount(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace {

/// Splits a row-major linear index into a multi-index of `shape`.
void unravel(int64_t linear, const Shape &shape, std::vector<int64_t> &idx) {
  idx.resize(shape.size());
  for (int64_t i = int64_t(shape.size()) - 1; i >= 0; --i) {
    idx[i] = linear % shape[i];
    linear /= shape[i];
  }
}

} // namespace

template <class T>
void contract(const T *lhs, const Shape &lhsShape, const T *rhs, const Shape &rhsShape,
              const std::vector<int64_t> &lhsBatch, const std::vector<int64_t> &rhsBatch,
              const std::vector<int64_t> &lhsContract, const std::vector<int64_t> &rhsContract,
              T *out, const Shape &outShape) {
  std::vector<int64_t> ls = stridesOf(lhsShape), rs = stridesOf(rhsShape);
  std::vector<char> lUsed(lhsShape.size(), 0), rUsed(rhsShape.size(), 0);
  for (int64_t d : lhsBatch)
    lUsed[d] = 1;
  for (int64_t d : lhsContract)
    lUsed[d] = 1;
  for (int64_t d : rhsBatch)
    rUsed[d] = 1;
  for (int64_t d : rhsContract)
    rUsed[d] = 1;

  // Per result dim: how far one step along it moves in lhs and in rhs.
  std::vector<int64_t> outL, outR;
  for (size_t k = 0; k < lhsBatch.size(); ++k) {
    outL.push_back(ls[lhsBatch[k]]);
    outR.push_back(rs[rhsBatch[k]]);
  }
  for (size_t d = 0; d < lhsShape.size(); ++d)
    if (!lUsed[d]) {
      outL.push_back(ls[d]);
      outR.push_back(0);
    }
  for (size_t d = 0; d < rhsShape.size(); ++d)
    if (!rUsed[d]) {
      outL.push_back(0);
      outR.push_back(rs[d]);
    }
  // The contracted index space.
  Shape cShape;
  std::vector<int64_t> cL, cR;
  for (size_t k = 0; k < lhsContract.size(); ++k) {
    cShape.push_back(lhsShape[lhsContract[k]]);
    cL.push_back(ls[lhsContract[k]]);
    cR.push_back(rs[rhsContract[k]]);
  }

  int64_t nOut = elementCount(outShape), nCon = elementCount(cShape);
  // The offsets of every contracted position, walked once in row-major order
  // (an odometer, no divisions) and reused for every output element.
  std::vector<int64_t> conL(nCon), conR(nCon), cidx(cShape.size(), 0);
  int64_t lOff = 0, rOff = 0;
  for (int64_t c = 0; c < nCon; ++c) {
    conL[c] = lOff;
    conR[c] = rOff;
    for (int64_t k = static_cast<int64_t>(cShape.size()) - 1; k >= 0; --k) {
      lOff += cL[k];
      rOff += cR[k];
      if (++cidx[k] < cShape[k])
        break;
      lOff -= cL[k] * cShape[k];
      rOff -= cR[k] * cShape[k];
      cidx[k] = 0;
    }
  }
  std::vector<int64_t> idx;
  for (int64_t o = 0; o < nOut; ++o) {
    unravel(o, outShape, idx);
    int64_t lBase = 0, rBase = 0;
    for (size_t i = 0; i < idx.size(); ++i) {
      lBase += idx[i] * outL[i];
      rBase += idx[i] * outR[i];
    }
    const T *l = lhs + lBase;
    const T *r = rhs + rBase;
    T acc = 0;
    for (int64_t c = 0; c < nCon; ++c)
      acc += l[conL[c]] * r[conR[c]];
    out[o] = acc;
  }
}

template <class T>
void transpose(const T *in, const Shape &inShape, const std::vector<int64_t> &perm, T *out) {
  std::vector<int64_t> is = stridesOf(inShape);
  Shape outShape;
  for (int64_t d : perm)
    outShape.push_back(inShape[d]);
  int64_t n = elementCount(outShape);
  std::vector<int64_t> idx;
  for (int64_t o = 0; o < n; ++o) {
    unravel(o, outShape, idx);
    int64_t off = 0;
    for (size_t i = 0; i < idx.size(); ++i)
      off += idx[i] * is[perm[i]];
    out[o] = in[off];
  }
}

template <class T>
void broadcast(const T *in, const Shape &inShape, const std::vector<int64_t> &dims, T *out,
               const Shape &outShape) {
  std::vector<int64_t> is = stridesOf(inShape);
  int64_t n = elementCount(outShape);
  std::vector<int64_t> idx;
  for (int64_t o = 0; o < n; ++o) {
    unravel(o, outShape, idx);
    int64_t off = 0;
    for (size_t k = 0; k < dims.size(); ++k)
      if (inShape[k] != 1)
        off += idx[dims[k]] * is[k];
    out[o] = in[off];
  }
}

template <class T> void copy(const T *in, T *out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = in[i];
}

template <class T>
void reduce(ReduceKind kind, const T *in, const Shape &inShape, const std::vector<int64_t> &dims,
            T *out, RoundFn round) {
  std::vector<char> reduced(inShape.size(), 0);
  for (int64_t d : dims)
    reduced[d] = 1;
  Shape outShape;
  for (size_t d = 0; d < inShape.size(); ++d)
    if (!reduced[d])
      outShape.push_back(inShape[d]);
  std::vector<int64_t> os = stridesOf(outShape);
  // Output stride of each input dim (0 for reduced dims).
  std::vector<int64_t> inToOut(inShape.size(), 0);
  for (size_t d = 0, o = 0; d < inShape.size(); ++d)
    if (!reduced[d])
      inToOut[d] = os[o++];

  T init = 0;
  if (kind == ReduceKind::Max)
    init = isFloatT<T>() ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  else if (kind == ReduceKind::Min)
    init = isFloatT<T>() ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  int64_t nOut = elementCount(outShape), nIn = elementCount(inShape);
  for (int64_t o = 0; o < nOut; ++o)
    out[o] = init;
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < nIn; ++i) {
    unravel(i, inShape, idx);
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      off += idx[d] * inToOut[d];
    switch (kind) {
    case ReduceKind::Sum:
      out[off] = addT(out[off], in[i]);
      if constexpr (isFloatT<T>())
        if (round)
          out[off] = T(round(double(out[off])));
      break;
    case ReduceKind::Max:
      out[off] = maxProp(out[off], in[i]);
      break;
    case ReduceKind::Min:
      out[off] = minProp(out[off], in[i]);
      break;
    }
  }
}

template <class T>
void select(const uint8_t *cond, const T *onTrue, const T *onFalse, T *out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = cond[i] ? onTrue[i] : onFalse[i];
}

template <class T> void iota(T *out, const Shape &outShape, int64_t dim) {
  int64_t n = elementCount(outShape);
  std::vector<int64_t> idx;
  for (int64_t o = 0; o < n; ++o) {
    unravel(o, outShape, idx);
    out[o] = T(idx[dim]);
  }
}

namespace {
Status indexOutOfRange(int64_t id, int64_t position, int64_t rows) {
  return Status::invalid("index " + std::to_string(id) + " at position " +
                         std::to_string(position) + " is out of range [0, " + std::to_string(rows) +
                         ")");
}
} // namespace

template <class T>
Status gather(const T *table, const Shape &tableShape, const int32_t *ids, int64_t idCount,
              T *out) {
  int64_t rows = tableShape[0];
  int64_t rowSize = elementCount(Shape(tableShape.begin() + 1, tableShape.end()));
  for (int64_t i = 0; i < idCount; ++i) {
    int64_t id = ids[i];
    if (id < 0 || id >= rows)
      return indexOutOfRange(id, i, rows);
    for (int64_t j = 0; j < rowSize; ++j)
      out[i * rowSize + j] = table[id * rowSize + j];
  }
  return Status::success();
}

template <class T>
Status scatterAdd(const T *updates, const int32_t *ids, int64_t idCount, T *out,
                  const Shape &outShape, RoundFn round) {
  int64_t rows = outShape[0];
  int64_t rowSize = elementCount(Shape(outShape.begin() + 1, outShape.end()));
  int64_t n = elementCount(outShape);
  for (int64_t o = 0; o < n; ++o)
    out[o] = 0;
  for (int64_t i = 0; i < idCount; ++i) {
    int64_t id = ids[i];
    if (id < 0 || id >= rows)
      return indexOutOfRange(id, i, rows);
    for (int64_t j = 0; j < rowSize; ++j) {
      T &acc = out[id * rowSize + j];
      acc = addT(acc, updates[i * rowSize + j]);
      if constexpr (isFloatT<T>())
        if (round)
          acc = T(round(double(acc)));
    }
  }
  return Status::success();
}

// Explicit instantiations.
#define EINRT_NUMERIC(T)                                                                           \
  template void contract<T>(const T *, const Shape &, const T *, const Shape &,                    \
                            const std::vector<int64_t> &, const std::vector<int64_t> &,            \
                            const std::vector<int64_t> &, const std::vector<int64_t> &, T *,       \
                            const Shape &);                                                        \
  template void reduce<T>(ReduceKind, const T *, const Shape &, const std::vector<int64_t> &, T *, \
                          RoundFn);                                                                \
  template void iota<T>(T *, const Shape &, int64_t);                                              \
  template Status scatterAdd<T>(const T *, const int32_t *, int64_t, T *, const Shape &, RoundFn);
#define EINRT_ANY(T)                                                                               \
  template void transpose<T>(const T *, const Shape &, const std::vector<int64_t> &, T *);         \
  template void broadcast<T>(const T *, const Shape &, const std::vector<int64_t> &, T *,          \
                             const Shape &);                                                       \
  template void copy<T>(const T *, T *, int64_t);                                                  \
  template void select<T>(const uint8_t *, const T *, const T *, T *, int64_t);                    \
  template Status gather<T>(const T *, const Shape &, const int32_t *, int64_t, T *);

EINRT_NUMERIC(float)
EINRT_NUMERIC(double)
EINRT_NUMERIC(int32_t)
EINRT_ANY(float)
EINRT_ANY(double)
EINRT_ANY(int32_t)
EINRT_ANY(uint8_t)

} // namespace ref
} // namespace einrt
