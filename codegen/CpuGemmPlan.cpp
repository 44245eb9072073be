//===- CpuGemmPlan.cpp - A contraction as a BLAS GEMM ---------------------===//
#include "codegen/CpuGemmPlan.h"
#include "codegen/KernelSpec.h"

#include <algorithm>
#include <array>
#include <numeric>

namespace ein::codegen {
namespace {

using Dims = std::vector<int64_t>;

/// A group of dims acting as one: `size` elements `stride` apart (stride is
/// 0 when the group has at most one element: any stride will do).
struct Group {
  int64_t size = 1;
  int64_t stride = 0;
};

/// The dims `dims` (in this order) of a row-major tensor as one dim, or
/// nullopt when they are not consecutive in memory.
std::optional<Group> collapse(const Dims &shape, const Dims &dims) {
  Dims strides = stridesOf(shape);
  Group g;
  int64_t prev = -1;
  for (int64_t d : dims) {
    g.size *= shape[d];
    if (shape[d] == 1)
      continue;
    if (prev >= 0 && strides[prev] != strides[d] * shape[d])
      return std::nullopt;
    prev = d;
  }
  if (g.size <= 1)
    return Group{g.size, 0};
  g.stride = strides[prev];
  return g;
}

/// How BLAS reads one operand: a row-major rows x cols matrix (stored as
/// such, or as cols x rows with op = transpose).
struct View {
  bool trans = false;
  int64_t ld = 1;
};

/// The operand as rows x cols matrices, op(X) in BLAS's terms, or nullopt
/// when BLAS cannot read it in place.
std::optional<View> viewOf(const Dims &shape, const Dims &rowDims, const Dims &colDims) {
  auto rows = collapse(shape, rowDims);
  auto cols = collapse(shape, colDims);
  if (!rows || !cols)
    return std::nullopt;
  View v;
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

/// The batch dims as loops: runs of consecutive batch pairs that collapse
/// into one stride in both operands (C's batch dims are always dense), each
/// {count, strideA, strideB, strideC}, outermost first.
std::vector<std::array<int64_t, 4>> batchLoops(const Dims &aShape, const Dims &ab,
                                               const Dims &bShape, const Dims &bb,
                                               int64_t matrixC) {
  Dims as = stridesOf(aShape), bs = stridesOf(bShape);
  std::vector<std::array<int64_t, 4>> runs;
  int64_t prev = -1;
  for (size_t k = 0; k < ab.size(); ++k) {
    int64_t size = aShape[ab[k]];
    if (size == 1)
      continue;
    bool extends =
        prev >= 0 && as[ab[prev]] == as[ab[k]] * size && bs[bb[prev]] == bs[bb[k]] * size;
    if (extends) {
      runs.back()[0] *= size;
      runs.back()[1] = as[ab[k]];
      runs.back()[2] = bs[bb[k]];
    } else {
      runs.push_back({size, as[ab[k]], bs[bb[k]], 0});
    }
    prev = k;
  }
  int64_t inner = matrixC; // C is dense: strides from the inside out
  for (size_t r = runs.size(); r-- > 0;) {
    runs[r][3] = inner;
    inner *= runs[r][0];
  }
  return runs;
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

/// How one operand would be read under one order of K: in place, or after
/// a transpose.
struct OperandPlan {
  std::optional<View> view; // nullopt: needs a transpose
  Dims transposed;          // the permutation to (batch, rows, cols)
  int64_t elements = 0;
};

} // namespace

GemmPlan planGemm(const Dims &lhsShape, const Dims &rhsShape, const einrt::ContractDims &dims) {
  const Dims lb = dims.lhsBatch, rb = dims.rhsBatch, lc = dims.lhsContract, rc = dims.rhsContract;
  const Dims lf = freeDims(lhsShape.size(), lb, lc);
  const Dims rf = freeDims(rhsShape.size(), rb, rc);
  const int64_t m = product(lhsShape, lf), n = product(rhsShape, rf), k = product(lhsShape, lc);

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
    OperandPlan a, b;
    a.view = viewOf(lhsShape, lf, lk);
    a.transposed = concat({&lb, &lf, &lk});
    a.elements = product(lhsShape, a.transposed);
    b.view = viewOf(rhsShape, rk, rf);
    b.transposed = concat({&rb, &rk, &rf});
    b.elements = product(rhsShape, b.transposed);
    return std::make_pair(a, b);
  };
  auto cost = [](const std::pair<OperandPlan, OperandPlan> &p) {
    return (p.first.view ? 0 : p.first.elements) + (p.second.view ? 0 : p.second.elements);
  };
  auto chosen = plan(byLhs);
  if (cost(chosen) > 0) {
    auto other = plan(byRhs);
    if (cost(other) < cost(chosen))
      chosen = other;
  }

  // How BLAS reads operand `i` (0: lhs, 1: rhs): in place, or as its copy
  // transposed to (batch, rows, cols), whose batch dims lead and whose rows
  // are `cols` apart; `shape` and `batch` become the copy's.
  GemmPlan out;
  auto readOf = [&](int i, const OperandPlan &p, int64_t cols, Dims &shape, Dims &batch) {
    if (p.view)
      return *p.view;
    out.transpose[i] = p.transposed;
    Dims copy;
    for (int64_t d : p.transposed)
      copy.push_back(shape[d]);
    shape = std::move(copy);
    std::iota(batch.begin(), batch.end(), 0);
    return View{false, std::max<int64_t>(1, cols)};
  };
  Dims aShape = lhsShape, bShape = rhsShape, ab = lb, bb = rb;
  View a = readOf(0, chosen.first, k, aShape, ab);
  View b = readOf(1, chosen.second, n, bShape, bb);

  // The innermost run of batch dims is the Matmul's batch; the others
  // become outer loops.
  auto loops = batchLoops(aShape, ab, bShape, bb, m * n);
  std::array<int64_t, 4> inner = {1, 0, 0, 0};
  if (!loops.empty()) {
    inner = loops.back();
    loops.pop_back();
  }
  einrt::GemmDesc &g = out.gemm;
  g.batch = inner[0];
  g.m = m;
  g.n = n;
  g.k = k;
  g.transA = a.trans;
  g.transB = b.trans;
  g.lda = a.ld;
  g.ldb = b.ld;
  g.ldc = std::max<int64_t>(1, n);
  g.strideA = inner[1];
  g.strideB = inner[2];
  g.strideC = inner[3];
  for (const auto &loop : loops)
    g.outer.push_back({loop[0], loop[1], loop[2], loop[3]});
  return out;
}

} // namespace ein::codegen
