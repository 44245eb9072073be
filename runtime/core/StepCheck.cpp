//===- StepCheck.cpp - One step against its kind's validation rule --------===//
//
// Per rule of the step-kind table (runtime/core/StepKinds.def's Rule column):
// the payload's type, the arity, the element types and the shapes a kernel
// reads and writes. Program::validate (ProgramValidate.cpp) calls it once
// the step's buffer indices are known to be in range.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/StepCheck.h"
#include "runtime/base/TerminalText.h"

#include <algorithm>
#include <limits>

namespace einrt {

namespace {

bool isNumeric(DType t) { return isFloat(t) || t == DType::I32; }

std::string shapeStr(const std::vector<int64_t> &shape) { return shapeText(shape); }

std::string listStr(const std::vector<int64_t> &l) { return shapeStr(l); }

std::string typeStr(const Buffer &b) { return shapeStr(b.shape) + " '" + dtypeName(b.dtype) + "'"; }

const char *payloadName(size_t index) {
  static const char *names[] = {"no payload",        "an axis list",      "contraction dims",
                                "an iota dimension", "a GEMM descriptor", "a kernel launch",
                                "a quantize spec",   "a slice offset"};
  static_assert(sizeof(names) / sizeof(names[0]) == std::variant_size_v<StepPayload>);
  return index < std::variant_size_v<StepPayload> ? names[index] : "unknown";
}

/// Checks one step against its kind's rules; returns "" or the problem
/// (without the step prefix). Buffer indices are already known valid.
class StepChecker {
public:
  StepChecker(const Program &p, const Step &s) : p(p), s(s) {}

  std::string check() {
    const StepKindInfo &info = *stepKindInfo(s.kind);
    if (s.payload.index() != info.payloadIndex)
      return std::string("carries ") + payloadName(s.payload.index()) + " where '" + info.name +
             "' steps carry " + payloadName(info.payloadIndex);
    switch (info.rule) {
    case ValidationRule::Contract:
      return contract();
    case ValidationRule::Transpose:
      return transpose();
    case ValidationRule::Reshape:
      return reshape();
    case ValidationRule::Broadcast:
      return broadcast();
    case ValidationRule::Reduce:
      return reduce();
    case ValidationRule::UnaryNumeric:
      return unary(/*floatOnly=*/false);
    case ValidationRule::UnaryFloat:
      return unary(/*floatOnly=*/true);
    case ValidationRule::BinaryNumeric:
      return binary(/*floatOnly=*/false);
    case ValidationRule::BinaryFloat:
      return binary(/*floatOnly=*/true);
    case ValidationRule::Compare:
      return cmp();
    case ValidationRule::Select:
      return select();
    case ValidationRule::Cast:
      return cast();
    case ValidationRule::StochasticRound:
      return stochasticRound();
    case ValidationRule::Quantize:
      return quantize();
    case ValidationRule::Iota:
      return iota();
    case ValidationRule::Gather:
      return gather();
    case ValidationRule::ScatterAdd:
      return scatterAdd();
    case ValidationRule::Slice:
      return slice();
    case ValidationRule::Concat:
      return concat();
    case ValidationRule::Copy:
      return copy();
    case ValidationRule::Gemm:
      return gemm();
    case ValidationRule::Launch:
      return launch();
    }
    return "unknown validation rule";
  }

private:
  const Program &p;
  const Step &s;

  const Buffer &in(size_t i) const { return p.buffers[s.inputs[i]]; }
  const Buffer &out() const { return p.buffers[s.output]; }

  std::string arity(size_t n) const {
    if (s.inputs.size() != n)
      return "expects " + std::to_string(n) + " input(s), got " + std::to_string(s.inputs.size());
    return "";
  }
  std::string contract() {
    if (auto e = arity(2); !e.empty())
      return e;
    const Buffer &l = in(0), &r = in(1), &o = out();
    if (!isFloat(l.dtype) || l.dtype != r.dtype)
      return std::string("operands must share one float type, got '") + dtypeName(l.dtype) +
             "' and '" + dtypeName(r.dtype) + "'";
    if (!isFloat(o.dtype))
      return std::string("result must be float, got '") + dtypeName(o.dtype) + "'";
    const ContractDims &dims = s.as<ContractDims>();
    const auto &lb = dims.lhsBatch, &rb = dims.rhsBatch, &lc = dims.lhsContract,
               &rc = dims.rhsContract;
    if (lb.size() != rb.size())
      return "lhs_batch " + listStr(lb) + " and rhs_batch " + listStr(rb) + " differ in length";
    if (lc.size() != rc.size())
      return "lhs_contract " + listStr(lc) + " and rhs_contract " + listStr(rc) +
             " differ in length";
    int64_t lr = l.shape.size(), rr = r.shape.size();
    std::vector<int> lUsed(lr, 0), rUsed(rr, 0);
    auto mark = [](const std::vector<int64_t> &dims, std::vector<int> &used, int64_t rank,
                   const char *what) -> std::string {
      for (int64_t d : dims) {
        if (d < 0 || d >= rank)
          return std::string(what) + " dim " + std::to_string(d) + " out of range for rank " +
                 std::to_string(rank);
        if (used[d]++)
          return std::string(what) + " dim " + std::to_string(d) + " is used twice";
      }
      return "";
    };
    if (auto e = mark(lb, lUsed, lr, "lhs_batch"); !e.empty())
      return e;
    if (auto e = mark(lc, lUsed, lr, "lhs_contract"); !e.empty())
      return e;
    if (auto e = mark(rb, rUsed, rr, "rhs_batch"); !e.empty())
      return e;
    if (auto e = mark(rc, rUsed, rr, "rhs_contract"); !e.empty())
      return e;
    std::vector<int64_t> expected;
    for (size_t k = 0; k < lb.size(); ++k) {
      if (l.shape[lb[k]] != r.shape[rb[k]])
        return "batch pair " + std::to_string(k) + ": lhs dim " + std::to_string(lb[k]) +
               " has size " + std::to_string(l.shape[lb[k]]) + " but rhs dim " +
               std::to_string(rb[k]) + " has size " + std::to_string(r.shape[rb[k]]);
      expected.push_back(l.shape[lb[k]]);
    }
    for (size_t k = 0; k < lc.size(); ++k)
      if (l.shape[lc[k]] != r.shape[rc[k]])
        return "contract pair " + std::to_string(k) + ": lhs dim " + std::to_string(lc[k]) +
               " has size " + std::to_string(l.shape[lc[k]]) + " but rhs dim " +
               std::to_string(rc[k]) + " has size " + std::to_string(r.shape[rc[k]]);
    for (int64_t d = 0; d < lr; ++d)
      if (!lUsed[d])
        expected.push_back(l.shape[d]);
    for (int64_t d = 0; d < rr; ++d)
      if (!rUsed[d])
        expected.push_back(r.shape[d]);
    return resultShape(expected);
  }

  /// "" when the output has the shape the step computes.
  std::string resultShape(const std::vector<int64_t> &expected) const {
    if (expected != out().shape)
      return "result shape " + shapeStr(out().shape) + " differs from the computed " +
             shapeStr(expected);
    return "";
  }

  std::string sameType(const Buffer &a, const Buffer &b, const char *what) {
    if (a.dtype != b.dtype)
      return std::string(what) + ": element types '" + dtypeName(a.dtype) + "' and '" +
             dtypeName(b.dtype) + "' differ";
    return "";
  }

  std::string transpose() {
    if (auto e = arity(1); !e.empty())
      return e;
    const Buffer &i = in(0), &o = out();
    if (auto e = sameType(i, o, "input and result"); !e.empty())
      return e;
    const auto &perm = s.as<AxisList>().axes;
    int64_t rank = i.shape.size();
    if ((int64_t)perm.size() != rank)
      return "permutation " + listStr(perm) + " is not a permutation of [0, " +
             std::to_string(rank) + ")";
    std::vector<int> seen(rank, 0);
    for (int64_t d : perm)
      if (d < 0 || d >= rank || seen[d]++)
        return "permutation " + listStr(perm) + " is not a permutation of [0, " +
               std::to_string(rank) + ")";
    std::vector<int64_t> expected;
    for (int64_t d : perm)
      expected.push_back(i.shape[d]);
    return resultShape(expected);
  }

  std::string reshape() {
    if (auto e = arity(1); !e.empty())
      return e;
    const Buffer &i = in(0), &o = out();
    if (auto e = sameType(i, o, "input and result"); !e.empty())
      return e;
    if (i.elementCount() != o.elementCount())
      return "input " + shapeStr(i.shape) + " and result " + shapeStr(o.shape) +
             " have different element counts";
    return "";
  }

  std::string broadcast() {
    if (auto e = arity(1); !e.empty())
      return e;
    const Buffer &i = in(0), &o = out();
    if (auto e = sameType(i, o, "input and result"); !e.empty())
      return e;
    const auto &dims = s.as<AxisList>().axes;
    if (dims.size() != i.shape.size())
      return "dimensions " + listStr(dims) + " has " + std::to_string(dims.size()) +
             " entries but the input has rank " + std::to_string(i.shape.size());
    int64_t orank = o.shape.size();
    for (size_t k = 0; k < dims.size(); ++k) {
      if (dims[k] < 0 || dims[k] >= orank)
        return "dimensions " + listStr(dims) + ": " + std::to_string(dims[k]) +
               " out of range for result rank " + std::to_string(orank);
      if (k && dims[k] <= dims[k - 1])
        return "dimensions " + listStr(dims) + " must be strictly increasing";
      int64_t isz = i.shape[k], osz = o.shape[dims[k]];
      if (isz != osz && isz != 1)
        return "input dim " + std::to_string(k) + " has size " + std::to_string(isz) +
               " but result dim " + std::to_string(dims[k]) + " has size " + std::to_string(osz);
    }
    return "";
  }

  std::string reduce() {
    if (auto e = arity(1); !e.empty())
      return e;
    const Buffer &i = in(0), &o = out();
    if (auto e = sameType(i, o, "input and result"); !e.empty())
      return e;
    if (!isNumeric(i.dtype))
      return std::string("element type must be float or i32, got '") + dtypeName(i.dtype) + "'";
    const auto &dims = s.as<AxisList>().axes;
    int64_t rank = i.shape.size();
    for (size_t k = 0; k < dims.size(); ++k) {
      if (dims[k] < 0 || dims[k] >= rank)
        return "dimensions " + listStr(dims) + ": " + std::to_string(dims[k]) +
               " out of range for rank " + std::to_string(rank);
      if (k && dims[k] <= dims[k - 1])
        return "dimensions " + listStr(dims) + " must be strictly increasing";
    }
    std::vector<int64_t> expected;
    for (int64_t d = 0; d < rank; ++d)
      if (std::find(dims.begin(), dims.end(), d) == dims.end())
        expected.push_back(i.shape[d]);
    return resultShape(expected);
  }

  std::string elementType(DType t, bool floatOnly) {
    if (floatOnly ? !isFloat(t) : !isNumeric(t))
      return std::string("element type must be ") + (floatOnly ? "float" : "float or i32") +
             ", got '" + dtypeName(t) + "'";
    return "";
  }

  std::string sameShapeType(const Buffer &a, const Buffer &b, const char *what) {
    if (a.shape != b.shape || a.dtype != b.dtype)
      return std::string(what) + " types differ: " + typeStr(a) + " vs " + typeStr(b);
    return "";
  }

  std::string unary(bool floatOnly) {
    if (auto e = arity(1); !e.empty())
      return e;
    if (auto e = sameShapeType(in(0), out(), "input and result"); !e.empty())
      return e;
    return elementType(out().dtype, floatOnly);
  }

  std::string binary(bool floatOnly) {
    if (auto e = arity(2); !e.empty())
      return e;
    if (auto e = sameShapeType(in(0), in(1), "lhs and rhs"); !e.empty())
      return e;
    if (auto e = sameShapeType(in(0), out(), "operand and result"); !e.empty())
      return e;
    return elementType(out().dtype, floatOnly);
  }

  std::string cmp() {
    if (auto e = arity(2); !e.empty())
      return e;
    if (auto e = sameShapeType(in(0), in(1), "lhs and rhs"); !e.empty())
      return e;
    if (out().dtype != DType::I1)
      return std::string("result must be 'i1', got '") + dtypeName(out().dtype) + "'";
    if (out().shape != in(0).shape)
      return "result shape " + shapeStr(out().shape) + " differs from the operand shape " +
             shapeStr(in(0).shape);
    return "";
  }

  std::string select() {
    if (auto e = arity(3); !e.empty())
      return e;
    if (in(0).dtype != DType::I1)
      return std::string("cond must be 'i1', got '") + dtypeName(in(0).dtype) + "'";
    if (in(0).shape != out().shape)
      return "cond shape " + shapeStr(in(0).shape) + " differs from the result shape " +
             shapeStr(out().shape);
    if (auto e = sameShapeType(in(1), out(), "on_true and result"); !e.empty())
      return e;
    return sameShapeType(in(2), out(), "on_false and result");
  }

  std::string cast() {
    if (auto e = arity(1); !e.empty())
      return e;
    if (in(0).shape != out().shape)
      return "input shape " + shapeStr(in(0).shape) + " differs from the result shape " +
             shapeStr(out().shape);
    return "";
  }

  std::string stochasticRound() {
    if (auto e = arity(2); !e.empty())
      return e;
    if (in(0).dtype != DType::F32)
      return std::string("input must be 'f32', got '") + dtypeName(in(0).dtype) + "'";
    if (in(1).dtype != DType::I32)
      return std::string("seed must be 'i32', got '") + dtypeName(in(1).dtype) + "'";
    if (out().dtype != DType::BF16 && out().dtype != DType::F16)
      return std::string("result must be 'bf16' or 'f16', got '") + dtypeName(out().dtype) + "'";
    if (in(0).shape != out().shape || in(1).shape != out().shape)
      return "input shape " + shapeStr(in(0).shape) + " and seed shape " + shapeStr(in(1).shape) +
             " must equal the result shape " + shapeStr(out().shape);
    return "";
  }

  // The input is read with the result's shape: the CPU backend passes a
  // reshape's input in place of its result (the same row-major bytes).
  std::string quantize() {
    if (auto e = arity(1); !e.empty())
      return e;
    if (in(0).dtype != out().dtype || in(0).elementCount() != out().elementCount())
      return "input " + typeStr(in(0)) + " is no view of the result " + typeStr(out());
    if (auto e = elementType(out().dtype, /*floatOnly=*/true); !e.empty())
      return e;
    const QuantizeSpec &q = s.as<QuantizeSpec>();
    if (q.format != "none" && q.format != "e4m3" && q.format != "e5m2")
      return "format must be none, e4m3 or e5m2, got '" + q.format + "'";
    int64_t rank = int64_t(out().shape.size());
    if (q.block < 0)
      return "block must be >= 0, got " + std::to_string(q.block);
    if (q.block > 0 && (q.axis < 0 || q.axis >= rank))
      return "axis " + std::to_string(q.axis) + " is out of range for rank " + std::to_string(rank);
    return "";
  }

  std::string iota() {
    if (auto e = arity(0); !e.empty())
      return e;
    int64_t rank = out().shape.size(), dim = s.as<IotaDim>().dimension;
    if (dim < 0 || dim >= rank)
      return "dimension " + std::to_string(dim) + " out of range for result rank " +
             std::to_string(rank);
    return elementType(out().dtype, false);
  }

  std::string gather() {
    if (auto e = arity(2); !e.empty())
      return e;
    const Buffer &t = in(0), &ids = in(1), &o = out();
    if (t.shape.empty())
      return "table must have rank >= 1";
    if (ids.dtype != DType::I32)
      return std::string("indices must be 'i32', got '") + dtypeName(ids.dtype) + "'";
    if (auto e = sameType(t, o, "table and result"); !e.empty())
      return e;
    std::vector<int64_t> expected = ids.shape;
    expected.insert(expected.end(), t.shape.begin() + 1, t.shape.end());
    return resultShape(expected);
  }

  std::string scatterAdd() {
    if (auto e = arity(2); !e.empty())
      return e;
    const Buffer &u = in(0), &ids = in(1), &o = out();
    if (o.shape.empty())
      return "result must have rank >= 1";
    if (ids.dtype != DType::I32)
      return std::string("indices must be 'i32', got '") + dtypeName(ids.dtype) + "'";
    if (auto e = sameType(u, o, "updates and result"); !e.empty())
      return e;
    if (auto e = elementType(o.dtype, false); !e.empty())
      return e;
    std::vector<int64_t> expected = ids.shape;
    expected.insert(expected.end(), o.shape.begin() + 1, o.shape.end());
    if (expected != u.shape)
      return "updates shape " + shapeStr(u.shape) +
             " differs from indices shape ++ result shape[1:] = " + shapeStr(expected);
    return "";
  }

  /// Same dtype, rank >= 1 and dims after the first as `o`.
  static std::string rowsOf(const Buffer &b, const Buffer &o, const std::string &what) {
    if (b.dtype != o.dtype)
      return what + " has dtype '" + dtypeName(b.dtype) + "' but the result '" +
             dtypeName(o.dtype) + "'";
    if (b.shape.empty() || o.shape.empty() || b.shape.size() != o.shape.size() ||
        !std::equal(b.shape.begin() + 1, b.shape.end(), o.shape.begin() + 1))
      return what + " shape " + shapeStr(b.shape) + " and result shape " + shapeStr(o.shape) +
             " must have rank >= 1 and equal dims after the first";
    return "";
  }

  std::string slice() {
    if (auto e = arity(1); !e.empty())
      return e;
    if (auto e = rowsOf(in(0), out(), "input"); !e.empty())
      return e;
    int64_t offset = s.as<SliceOffset>().offset, rows = out().shape[0];
    if (offset < 0 || offset > in(0).shape[0] - rows)
      return "rows [" + std::to_string(offset) + ", " + std::to_string(offset + rows) +
             ") are outside the input's " + std::to_string(in(0).shape[0]);
    return "";
  }

  std::string concat() {
    if (s.inputs.empty())
      return "expects at least one input";
    int64_t rows = 0;
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      if (auto e = rowsOf(in(i), out(), "input " + std::to_string(i)); !e.empty())
        return e;
      rows += in(i).shape[0];
    }
    if (rows != out().shape[0])
      return "the inputs have " + std::to_string(rows) + " rows but the result " +
             std::to_string(out().shape[0]);
    return "";
  }

  std::string copy() {
    if (auto e = arity(1); !e.empty())
      return e;
    return sameShapeType(in(0), out(), "input and result");
  }

  /// Every element a strided batch of row-major rows x cols matrices
  /// touches lies inside a buffer of `size` elements. Computed in 128 bits:
  /// the factors are at most 2^48 each.
  static std::string inBounds(const char *what, int64_t batch, int64_t rows, int64_t cols,
                              int64_t ld, int64_t stride, __int128 size) {
    if (batch == 0 || rows == 0 || cols == 0)
      return "";
    __int128 last = __int128(batch - 1) * stride + __int128(rows - 1) * ld + (cols - 1);
    if (last >= size)
      return std::string(what) + ": " + std::to_string(batch) + " x " + std::to_string(rows) +
             " x " + std::to_string(cols) + " elements with leading dimension " +
             std::to_string(ld) + " and batch stride " + std::to_string(stride) +
             " reach beyond the buffer's " + std::to_string(int64_t(size)) + " elements";
    return "";
  }

  std::string gemm() {
    const GemmDesc &g = s.as<GemmDesc>();
    if (auto e = g.post.present() ? gemmPost(g) : arity(2); !e.empty())
      return e;
    // The element types the descriptor states are the buffers'; the sums
    // are f32 (ir/EinOps.td), the operands one of f32, bf16, f16 (the cpu
    // device widens narrow ones), the result any of them.
    if (g.a != in(0).dtype || g.b != in(1).dtype || g.c != out().dtype)
      return std::string("descriptor types '") + dtypeName(g.a) + "', '" + dtypeName(g.b) +
             "' -> '" + dtypeName(g.c) + "' differ from the buffers' '" + dtypeName(in(0).dtype) +
             "', '" + dtypeName(in(1).dtype) + "' -> '" + dtypeName(out().dtype) + "'";
    auto gemmType = [](DType t) { return t == DType::F32 || t == DType::BF16 || t == DType::F16; };
    if (!gemmType(g.a) || g.b != g.a || !gemmType(g.c) || g.accumulate != DType::F32)
      return std::string("operands must share one of 'f32', 'bf16', 'f16', the result be one "
                         "of them and the sums 'f32', got '") +
             dtypeName(g.a) + "', '" + dtypeName(g.b) + "' -> '" + dtypeName(g.c) +
             "' summed in '" + dtypeName(g.accumulate) + "'";
    if (uint8_t(g.epilogue) > uint8_t(GemmEpilogue::Accumulate))
      return "unknown epilogue " + std::to_string(int(g.epilogue));
    const std::string plan = "GEMM " + std::to_string(g.batch) + " x (" + std::to_string(g.m) +
                             " x " + std::to_string(g.k) + ") . (" + std::to_string(g.k) + " x " +
                             std::to_string(g.n) + ")";
    const int64_t kIntMax = 2147483647; // BLAS takes 32-bit sizes
    if (g.batch < 0 || g.m < 0 || g.n < 0 || g.k < 0 || g.m > kIntMax || g.n > kIntMax ||
        g.k > kIntMax)
      return plan + ": batch, M, N, K must be in [0, 2^31) (batch >= 0)";
    if (g.strideA < 0 || g.strideB < 0 || g.strideC < 0)
      return plan + ": batch strides must be >= 0";
    // Row-major storage: A is M x K (K x M when transposed), B is K x N
    // (N x K), C is M x N.
    int64_t aRows = g.transA ? g.k : g.m, aCols = g.transA ? g.m : g.k;
    int64_t bRows = g.transB ? g.n : g.k, bCols = g.transB ? g.k : g.n;
    auto leading = [&](const char *what, int64_t ld, int64_t cols) -> std::string {
      if (ld < std::max<int64_t>(1, cols) || ld > kIntMax)
        return plan + ": " + what + " " + std::to_string(ld) + " must be at least " +
               std::to_string(std::max<int64_t>(1, cols));
      return "";
    };
    if (auto e = leading("lda", g.lda, aCols); !e.empty())
      return e;
    if (auto e = leading("ldb", g.ldb, bCols); !e.empty())
      return e;
    if (auto e = leading("ldc", g.ldc, g.n); !e.empty())
      return e;
    // Outer loops: their reach is added to the inner batch's (offsets of
    // the last iteration; every stride is >= 0).
    __int128 matrices = g.batch, reachA = 0, reachB = 0, reachC = 0;
    if (!g.outer.empty()) {
      // C must be dense row-major: each loop's strideC the product of the
      // sizes inside it.
      if (g.ldc != std::max<int64_t>(1, g.n) || (g.batch > 1 && g.strideC != g.m * g.n))
        return plan + ": with outer loops, C must be dense (ldc = N, strideC = M*N)";
      __int128 inner = __int128(g.batch) * g.m * g.n;
      for (size_t i = g.outer.size(); i-- > 0;) {
        const GemmLoop &l = g.outer[i];
        if (l.count < 0 || l.strideA < 0 || l.strideB < 0 || l.strideC < 0)
          return plan + ": outer loop " + std::to_string(i) + ": counts and strides must be >= 0";
        if (l.count > 1 && l.strideC != inner)
          return plan + ": outer loop " + std::to_string(i) + ": strideC " +
                 std::to_string(l.strideC) + " is not the dense stride " +
                 std::to_string(int64_t(inner));
        if (l.count > 0) {
          reachA += __int128(l.count - 1) * l.strideA;
          reachB += __int128(l.count - 1) * l.strideB;
          reachC += __int128(l.count - 1) * l.strideC;
        }
        inner *= l.count;
        matrices *= l.count;
        if (matrices > (__int128(1) << 62))
          return plan + ": too many matrices";
      }
    }
    if (matrices > 0) {
      if (auto e =
              inBounds("A", g.batch, aRows, aCols, g.lda, g.strideA, in(0).elementCount() - reachA);
          !e.empty())
        return e;
      if (auto e =
              inBounds("B", g.batch, bRows, bCols, g.ldb, g.strideB, in(1).elementCount() - reachB);
          !e.empty())
        return e;
      if (auto e =
              inBounds("C", g.batch, g.m, g.n, g.ldc, g.strideC, out().elementCount() - reachC);
          !e.empty())
        return e;
    }
    // C must be written whole: matrices * M * N elements, none twice.
    if (matrices * g.m * g.n != out().elementCount())
      return plan + ": writes " + std::to_string(int64_t(matrices * g.m * g.n)) +
             " elements but the result " + shapeStr(out().shape) + " has " +
             std::to_string(out().elementCount());
    if (g.batch > 1 && g.m > 0 && g.n > 0 && __int128(g.strideC) < __int128(g.m - 1) * g.ldc + g.n)
      return plan + ": strideC " + std::to_string(g.strideC) +
             " makes the batch's result matrices overlap";
    return "";
  }

  /// A GEMM epilogue (GemmPost): the kernel reads C and inputs after A
  /// and B (every one of them), writes buffers of C's shape, and the typed
  /// reading names buffers the kernel reads or writes.
  std::string gemmPost(const GemmDesc &g) {
    const GemmPost &post = g.post;
    const std::string what = "epilogue: ";
    if (s.inputs.size() < 2)
      return "expects at least 2 inputs (A, B), got " + std::to_string(s.inputs.size());
    if (g.epilogue != GemmEpilogue::Store)
      return what + "only a storing GEMM has one (this one accumulates)";
    if (post.outputs.empty())
      return what + "writes no buffer";
    auto isInput = [&](int32_t b) {
      return std::find(s.inputs.begin() + 2, s.inputs.end(), b) != s.inputs.end();
    };
    for (size_t i = 0; i < post.operands.size(); ++i)
      if (post.operands[i] != s.output && !isInput(post.operands[i]))
        return what + "operand " + std::to_string(i) + " (buffer " +
               std::to_string(post.operands[i]) + ") is neither C nor an input after A and B";
    for (size_t i = 2; i < s.inputs.size(); ++i)
      if (std::find(post.operands.begin(), post.operands.end(), s.inputs[i]) == post.operands.end())
        return what + "input " + std::to_string(i) + " is not one of its operands";
    for (size_t i = 0; i < post.outputs.size(); ++i) {
      const Buffer &o = p.buffers[post.outputs[i]]; // in range: checked with the outputs
      if (o.shape != out().shape)
        return what + "output " + std::to_string(i) + " " + shapeStr(o.shape) +
               " is not shaped like C " + shapeStr(out().shape);
      if (o.dtype == DType::F64)
        return what + "output " + std::to_string(i) +
               " is 'f64'; compiled kernels take f32, "
               "bf16, f16, i32 and i1 buffers only";
    }
    if (!post.library)
      return "";
    auto among = [](const std::vector<int32_t> &list, int32_t b) {
      return std::find(list.begin(), list.end(), b) != list.end();
    };
    if (uint8_t(post.activation) > uint8_t(GemmActivation::Gelu))
      return what + "unknown activation " + std::to_string(int(post.activation));
    if (!among(post.outputs, post.result))
      return what + "its result (buffer " + std::to_string(post.result) +
             ") is not one of its outputs";
    // A residual's bytes are C's layout (a reshape's alias may name them).
    if (post.residual >= 0 && (!isInput(post.residual) ||
                               p.buffers[post.residual].elementCount() != out().elementCount()))
      return what + "the residual (buffer " + std::to_string(post.residual) +
             ") must be an input of C's elements";
    if (post.bias >= 0 &&
        (!isInput(post.bias) || p.buffers[post.bias].elementCount() != std::max<int64_t>(1, g.n)))
      return what + "the bias (buffer " + std::to_string(post.bias) + ") must be an input of " +
             std::to_string(g.n) + " elements (N)";
    if (post.aux >= 0 && post.aux != s.output && !among(post.outputs, post.aux))
      return what + "its aux (buffer " + std::to_string(post.aux) + ") is neither C nor an output";
    return "";
  }

  std::string launch() {
    const KernelLaunch &k = s.as<KernelLaunch>();
    if (k.kernel < 0)
      return "kernel index " + std::to_string(k.kernel) + " is negative";
    auto supported = [](DType t) { return t != DType::F64; };
    for (size_t i = 0; i < s.inputs.size(); ++i)
      if (!supported(in(i).dtype))
        return "input " + std::to_string(i) + " is '" + dtypeName(in(i).dtype) +
               "'; compiled kernels take f32, bf16, f16, i32 and i1 buffers only";
    for (size_t i = 0; i < k.extraOutputs.size(); ++i)
      if (!supported(p.buffers[k.extraOutputs[i]].dtype))
        return "extra output " + std::to_string(i) + " is '" +
               dtypeName(p.buffers[k.extraOutputs[i]].dtype) +
               "'; compiled kernels take f32, bf16, f16, i32 and i1 buffers only";
    if (!supported(out().dtype))
      return std::string("result is '") + dtypeName(out().dtype) +
             "'; compiled kernels take f32, bf16, f16, i32 and i1 buffers only";
    return "";
  }
};

} // namespace

std::string checkStepRule(const Program &p, const Step &s) { return StepChecker(p, s).check(); }

} // namespace einrt
