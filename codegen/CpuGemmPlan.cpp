//===- CpuGemmPlan.cpp - A contraction as a strided batched GEMM ----------===//
#include "codegen/CpuGemmPlan.h"

#include <algorithm>
#include <array>
#include <numeric>

namespace ein::codegen {
namespace {

/// A group of dims acting as one: `size` elements `stride` apart (stride is
/// 0 when the group has at most one element: any stride will do).
struct Group {
  int64_t size = 1;
  int64_t stride = 0;
};

/// The dims `dims` (in this order) of `t` as one dim, or nullopt when they
/// are not consecutive in memory.
std::optional<Group> collapse(const StridedLayout &t, const Dims &dims) {
  Group g;
  int64_t prev = -1;
  for (int64_t d : dims) {
    g.size *= t.shape[d];
    if (t.shape[d] == 1)
      continue;
    if (prev >= 0 && t.strides[prev] != t.strides[d] * t.shape[d])
      return std::nullopt;
    prev = d;
  }
  if (g.size <= 1)
    return Group{g.size, 0};
  g.stride = t.strides[prev];
  return g;
}

/// The operand as rows x cols matrices, op(X) in BLAS's terms, or nullopt
/// when BLAS cannot read it in place.
std::optional<MatrixView> viewOf(const StridedLayout &t, const Dims &rowDims, const Dims &colDims) {
  auto rows = collapse(t, rowDims);
  auto cols = collapse(t, colDims);
  if (!rows || !cols)
    return std::nullopt;
  MatrixView v;
  auto unit = [](const Group &g) { return g.size <= 1 || g.stride == 1; };
  // Stored rows x cols: cols contiguous, rows `ld` apart.
  if (unit(*cols)) {
    int64_t minLd = std::max<int64_t>(1, cols->size);
    v.ld = rows->size <= 1 ? minLd : rows->stride;
    if (v.ld >= minLd)
      return v;
  }
  // Stored cols x rows (op = transpose): rows contiguous, cols `ld` apart.
  if (unit(*rows)) {
    int64_t minLd = std::max<int64_t>(1, rows->size);
    v.trans = true;
    v.ld = cols->size <= 1 ? minLd : cols->stride;
    if (v.ld >= minLd)
      return v;
  }
  return std::nullopt;
}

Dims freeDims(int64_t rank, const Dims &a, const Dims &b) {
  Dims f;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end())
      f.push_back(d);
  return f;
}

int64_t product(const Dims &shape, const Dims &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= shape[d];
  return n;
}

Dims concat(std::initializer_list<const Dims *> parts) {
  Dims r;
  for (const Dims *p : parts)
    r.insert(r.end(), p->begin(), p->end());
  return r;
}

Dims range(int64_t begin, int64_t end) {
  Dims r(size_t(std::max<int64_t>(0, end - begin)));
  std::iota(r.begin(), r.end(), begin);
  return r;
}

/// The batch dims as loops: runs of consecutive batch dims that collapse
/// into one stride in A, B and C (C's batch dims are its leading ones),
/// each {count, strideA, strideB, strideC}, outermost first.
std::vector<std::array<int64_t, 4>> batchLoops(const StridedLayout &a, const Dims &ab,
                                               const StridedLayout &b, const Dims &bb,
                                               const StridedLayout &c) {
  std::vector<std::array<int64_t, 4>> runs;
  int64_t prev = -1;
  for (size_t k = 0; k < ab.size(); ++k) {
    int64_t size = a.shape[ab[k]];
    if (size == 1)
      continue;
    bool extends = prev >= 0 && a.strides[ab[prev]] == a.strides[ab[k]] * size &&
                   b.strides[bb[prev]] == b.strides[bb[k]] * size &&
                   c.strides[prev] == c.strides[k] * size;
    if (extends) {
      runs.back()[0] *= size;
      runs.back()[1] = a.strides[ab[k]];
      runs.back()[2] = b.strides[bb[k]];
      runs.back()[3] = c.strides[k];
    } else {
      runs.push_back({size, a.strides[ab[k]], b.strides[bb[k]], c.strides[k]});
    }
    prev = int64_t(k);
  }
  return runs;
}

} // namespace

StridedLayout rowMajorLayout(const Dims &shape) {
  StridedLayout t{shape, Dims(shape.size(), 1)};
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    t.strides[d] = t.strides[d + 1] * shape[d + 1];
  return t;
}

StridedLayout permuteLayout(const StridedLayout &in, const Dims &perm) {
  StridedLayout t;
  for (int64_t d : perm) {
    t.shape.push_back(in.shape[d]);
    t.strides.push_back(in.strides[d]);
  }
  return t;
}

std::optional<StridedLayout> reshapeLayout(const StridedLayout &in, const Dims &shape) {
  int64_t count = product(in.shape, range(0, int64_t(in.shape.size())));
  if (count == 0 || in.shape.empty())
    return rowMajorLayout(shape); // nothing to address, or one element at 0
  // From the innermost dim out: `in`'s dims in chunks that collapse to one
  // stride; each chunk must be a whole number of the new dims, which take
  // strides inside the chunk.
  StridedLayout t{shape, Dims(shape.size(), 0)};
  int64_t next = int64_t(shape.size()) - 1;
  int64_t base = in.strides.back(), chunk = 1, made = 1;
  for (int64_t d = int64_t(in.shape.size()) - 1; d >= 0; --d) {
    chunk *= in.shape[d];
    bool ends = d == 0 || (in.shape[d - 1] != 1 && in.strides[d - 1] != chunk * base);
    if (!ends)
      continue;
    while (next >= 0 && (made < chunk || shape[next] == 1)) {
      t.strides[next] = made * base;
      made *= shape[next];
      --next;
    }
    if (made != chunk)
      return std::nullopt;
    if (d > 0) {
      base = in.strides[d - 1];
      chunk = made = 1;
    }
  }
  if (next >= 0)
    return std::nullopt;
  return t;
}

bool isRowMajor(const StridedLayout &layout) {
  StridedLayout dense = rowMajorLayout(layout.shape);
  for (size_t d = 0; d < layout.shape.size(); ++d)
    if (layout.shape[d] != 1 && layout.strides[d] != dense.strides[d])
      return false;
  return true;
}

ContractPlan planContract(const StridedLayout &lhs, const StridedLayout &rhs,
                          const einrt::ContractDims &dims) {
  const Dims &lb = dims.lhsBatch, &rb = dims.rhsBatch, &lc = dims.lhsContract,
             &rc = dims.rhsContract;
  const Dims lf = freeDims(lhs.shape.size(), lb, lc);
  const Dims rf = freeDims(rhs.shape.size(), rb, rc);

  // K orders to try: the pairs sorted by lhs position, then by rhs position.
  std::vector<size_t> byLhs(lc.size()), byRhs(lc.size());
  std::iota(byLhs.begin(), byLhs.end(), 0);
  std::iota(byRhs.begin(), byRhs.end(), 0);
  std::stable_sort(byLhs.begin(), byLhs.end(), [&](size_t a, size_t b) { return lc[a] < lc[b]; });
  std::stable_sort(byRhs.begin(), byRhs.end(), [&](size_t a, size_t b) { return rc[a] < rc[b]; });

  auto plan = [&](const std::vector<size_t> &order) {
    Dims lk, rk;
    for (size_t i : order) {
      lk.push_back(lc[i]);
      rk.push_back(rc[i]);
    }
    ContractPlan p;
    p.m = product(lhs.shape, lf);
    p.n = product(rhs.shape, rf);
    p.k = product(lhs.shape, lc);
    p.a.view = viewOf(lhs, lf, lk);
    p.a.perm = concat({&lb, &lf, &lk});
    p.a.elements = product(lhs.shape, range(0, int64_t(lhs.shape.size())));
    p.b.view = viewOf(rhs, rk, rf);
    p.b.perm = concat({&rb, &rk, &rf});
    p.b.elements = product(rhs.shape, range(0, int64_t(rhs.shape.size())));
    return p;
  };
  ContractPlan chosen = plan(byLhs);
  if (chosen.cost() > 0) {
    ContractPlan other = plan(byRhs);
    if (other.cost() < chosen.cost())
      chosen = other;
  }
  return chosen;
}

std::optional<int64_t> resultLd(const StridedLayout &c, int64_t batchDims, int64_t mDims,
                                int64_t n) {
  const int64_t rank = int64_t(c.shape.size());
  auto rows = collapse(c, range(batchDims, batchDims + mDims));
  auto cols = collapse(c, range(batchDims + mDims, rank));
  if (!rows || !cols || (cols->size > 1 && cols->stride != 1))
    return std::nullopt;
  const int64_t minLd = std::max<int64_t>(1, n);
  if (rows->size <= 1 || n == 0)
    return minLd;
  if (rows->stride < minLd)
    return std::nullopt;
  return rows->stride;
}

void describeGemm(einrt::GemmDesc &g, const ContractPlan &plan, const StridedLayout &a,
                  const Dims &ab, MatrixView av, const StridedLayout &b, const Dims &bb,
                  MatrixView bv, const StridedLayout &c, int64_t ldc) {
  auto loops = batchLoops(a, ab, b, bb, c);
  std::array<int64_t, 4> inner = {1, 0, 0, 0};
  if (!loops.empty()) {
    inner = loops.back();
    loops.pop_back();
  }
  g.batch = inner[0];
  g.m = plan.m;
  g.n = plan.n;
  g.k = plan.k;
  g.transA = av.trans;
  g.transB = bv.trans;
  g.lda = av.ld;
  g.ldb = bv.ld;
  g.ldc = ldc;
  g.strideA = inner[1];
  g.strideB = inner[2];
  g.strideC = inner[3];
  for (const auto &loop : loops)
    g.outer.push_back({loop[0], loop[1], loop[2], loop[3]});
}

} // namespace ein::codegen
