//===- CublasLtMapping.cpp - A GemmDesc as cuBLASLt's column-major calls --===//
#include "runtime/cuda/CublasLtMapping.h"

#include <algorithm>
#include <iterator>
#include <limits>

namespace einrt {

namespace {

bool ltType(DType t, LtType &out) {
  switch (t) {
  case DType::F32:
    out = LtType::F32;
    return true;
  case DType::BF16:
    out = LtType::BF16;
    return true;
  case DType::F16:
    out = LtType::F16;
    return true;
  default:
    return false;
  }
}

int64_t typeBytes(LtType t) { return t == LtType::F32 ? 4 : 2; }

/// The largest power of two, at most 256, dividing `bytes` (256 for 0).
int32_t alignmentOf(int64_t bytes) {
  int32_t align = 256;
  while (align > 1 && bytes % align != 0)
    align /= 2;
  return align;
}

/// The alignment of every matrix an operand's calls touch: its first
/// address and each batch step from there.
int32_t operandAlignment(int64_t offset, int64_t stride, int64_t batch, LtType t) {
  int32_t a = alignmentOf(offset * typeBytes(t));
  if (batch > 1)
    a = std::min(a, alignmentOf(stride * typeBytes(t)));
  return a;
}

/// The index of buffer `b` among the epilogue's buffers (operands, then
/// outputs), or -1 when it is none of them.
int32_t postSpan(const GemmPost &p, int32_t b) {
  for (size_t i = 0; i < p.operands.size(); ++i)
    if (p.operands[i] == b)
      return int32_t(i);
  for (size_t i = 0; i < p.outputs.size(); ++i)
    if (p.outputs[i] == b)
      return int32_t(p.operands.size() + i);
  return -1;
}

/// Makes `out`'s calls compute g.post's typed reading; false (the calls
/// untouched) with out.unfusedWhy where cuBLASLt has no such epilogue.
bool fuseEpilogue(const GemmDesc &g, const std::vector<DType> *postTypes, const LtAlignments &bases,
                  CublasLtPlan &out) {
  const GemmPost &p = g.post;
  auto refuse = [&](std::string why) {
    out.unfusedWhy = std::move(why);
    return false;
  };
  if (!p.library)
    return refuse("its ops are not one of cuBLASLt's epilogues");
  if (!postTypes || postTypes->size() != p.operands.size() + p.outputs.size())
    return refuse("the types of its buffers are not known");
  if (out.emptySum || out.calls.empty())
    return refuse("there is no product to apply it to");
  LtPostPointers at;
  at.d = postSpan(p, p.result);
  if (at.d < 0 || (*postTypes)[size_t(at.d)] != g.c)
    return refuse("its result is not of the product's type");
  auto typeOf = [&](int32_t span) { return span < 0 ? g.c : (*postTypes)[size_t(span)]; };
  at.c = at.d;
  if (p.residual >= 0) {
    at.c = postSpan(p, p.residual);
    if (at.c < 0 || typeOf(at.c) != g.c)
      return refuse("its residual is not of the product's type");
  }
  if (p.bias >= 0) {
    at.bias = postSpan(p, p.bias);
    if (at.bias < 0 || typeOf(at.bias) != g.c)
      return refuse("its bias is not of the product's type");
  }
  const float alpha = float(p.alpha);
  if (double(alpha) != p.alpha)
    return refuse("its scale is not an f32 value");
  const bool bias = p.bias >= 0, aux = p.aux >= 0;
  LtEpilogue e = bias ? LtEpilogue::Bias : LtEpilogue::Default;
  switch (p.activation) {
  case GemmActivation::None:
    if (aux)
      return refuse("it keeps a value without an activation");
    break;
  case GemmActivation::Relu:
    // RELU_AUX keeps a bit mask; the backward here reads the input itself.
    if (aux)
      return refuse("it keeps ReLU's input (cuBLASLt's RELU_AUX keeps a bit mask)");
    e = bias ? LtEpilogue::ReluBias : LtEpilogue::Relu;
    break;
  case GemmActivation::Gelu:
    e = bias ? (aux ? LtEpilogue::GeluAuxBias : LtEpilogue::GeluBias)
             : (aux ? LtEpilogue::GeluAux : LtEpilogue::Gelu);
    break;
  }
  if (aux) {
    at.aux = postSpan(p, p.aux); // C itself is among the operands
    if (at.aux < 0 || typeOf(at.aux) != g.c)
      return refuse("its aux is not of the product's type");
  }
  for (CublasLtCall &call : out.calls) {
    if (aux && (call.ldc % 8 != 0 || (call.batch > 1 && call.strideC % 8 != 0)))
      return refuse("GELU_AUX needs the aux's leading dimension and batch stride in multiples "
                    "of 8, here " +
                    std::to_string(call.ldc) + " and " + std::to_string(call.strideC));
  }
  LtType biasType = LtType::F32;
  if (bias)
    ltType(typeOf(at.bias), biasType);
  auto base = [&](int32_t span) {
    return span < 0 ? bases.c : size_t(span) < bases.post.size() ? bases.post[size_t(span)] : 256;
  };
  for (CublasLtCall &call : out.calls) {
    // C, D and aux at the product's offsets in their own buffers.
    int32_t offsetC = operandAlignment(call.offsetC, call.strideC, call.batch, call.typeC);
    call.alignC = std::min({offsetC, base(at.c), base(at.d)});
    call.alignBias = bias ? base(at.bias) : 256;
    call.alignAux = aux ? std::min(offsetC, base(at.aux)) : 256;
    call.epilogue = e;
    call.alpha = alpha;
    call.beta = p.residual >= 0 ? 1.0f : 0.0f;
    call.separateD = true;
    call.typeBias = biasType;
    if (aux) {
      call.auxLd = call.ldc;
      call.auxStride = call.batch > 1 ? call.strideC : 0;
    }
  }
  out.pointers = at;
  return true;
}

} // namespace

int32_t addressAlignment(const void *address) {
  return alignmentOf(int64_t(reinterpret_cast<uintptr_t>(address) % 256));
}

std::string describeLtCall(const CublasLtCall &c) {
  return std::string("cuBLASLt ") + (c.transA ? "T" : "N") + (c.transB ? "T" : "N") +
         " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
         " batch=" + std::to_string(c.batch) + " " + ltTypeName(c.typeA) + "·" +
         ltTypeName(c.typeB) + "->" + ltTypeName(c.typeC) +
         (c.epilogue == LtEpilogue::Default ? "" : std::string(" ") + ltEpilogueName(c.epilogue));
}

const char *ltEpilogueName(LtEpilogue e) {
  static const char *names[] = {"DEFAULT", "BIAS",      "RELU",     "RELU_BIAS",
                                "GELU",    "GELU_BIAS", "GELU_AUX", "GELU_AUX_BIAS"};
  return size_t(e) < std::size(names) ? names[size_t(e)] : "?";
}

const char *ltTypeName(LtType t) {
  switch (t) {
  case LtType::F32:
    return "f32";
  case LtType::BF16:
    return "bf16";
  case LtType::F16:
    return "f16";
  }
  return "?";
}

std::string CublasLtCall::key() const {
  std::string text;
  auto add = [&text](int64_t v) { text += std::to_string(v) + ","; };
  for (int64_t v : {int64_t(typeA),
                    int64_t(typeB),
                    int64_t(typeC),
                    int64_t(compute),
                    int64_t(epilogue),
                    int64_t(transA),
                    int64_t(transB),
                    m,
                    n,
                    k,
                    lda,
                    ldb,
                    ldc,
                    batch,
                    strideA,
                    strideB,
                    strideC,
                    int64_t(beta != 0.0f),
                    int64_t(separateD),
                    int64_t(typeBias),
                    auxLd,
                    auxStride,
                    int64_t(alignA),
                    int64_t(alignB),
                    int64_t(alignC),
                    int64_t(alignBias),
                    int64_t(alignAux)})
    add(v);
  return text;
}

Expected<CublasLtPlan> mapGemmToCublasLt(const GemmDesc &g, const CublasLtOptions &options,
                                         const std::vector<DType> *postTypes,
                                         const LtAlignments *bases) {
  CublasLtPlan out;
  const LtAlignments aligned;
  const LtAlignments &at0 = bases ? *bases : aligned;
  LtType ta, tb, tc;
  if (!ltType(g.a, ta) || !ltType(g.b, tb) || !ltType(g.c, tc))
    return Status::invalid(
        std::string("cuBLASLt runs GEMMs of f32, bf16 and f16 matrices, not A '") + dtypeName(g.a) +
        "', B '" + dtypeName(g.b) + "', C '" + dtypeName(g.c) + "'");
  if (g.accumulate != DType::F32)
    return Status::invalid(std::string("the cuda device sums GEMMs in f32, not '") +
                           dtypeName(g.accumulate) + "' (float64 runs on the reference backend)");
  // cuBLASLt's f32-compute table: A and B of one type; C of that type or
  // f32.
  if (ta != tb || (tc != ta && tc != LtType::F32))
    return Status::invalid(std::string("cuBLASLt has no GEMM of A '") + dtypeName(g.a) +
                           "' and B '" + dtypeName(g.b) + "' into C '" + dtypeName(g.c) +
                           "' (A and B of one type; C of that type or f32)");
  if (g.m < 0 || g.n < 0 || g.k < 0 || g.batch < 0)
    return Status::invalid("a GEMM with a negative size");
  for (const GemmLoop &l : g.outer)
    if (l.count < 0)
      return Status::invalid("a GEMM with a negative loop count");
  if (g.matrices() == 0 || g.m == 0 || g.n == 0)
    return out; // nothing to compute or write

  // The column-major call of one row-major GEMM: A and B swap, m and n swap.
  CublasLtCall base;
  base.typeA = tb;
  base.typeB = ta;
  base.typeC = tc;
  base.compute = options.tf32 && ta == LtType::F32 ? LtCompute::F32FastTF32 : LtCompute::F32;
  base.transA = g.transB;
  base.transB = g.transA;
  base.m = g.n;
  base.n = g.m;
  base.k = g.k;
  base.lda = g.ldb;
  base.ldb = g.lda;
  base.ldc = g.ldc;
  base.rowsA = base.transA ? base.k : base.m;
  base.colsA = base.transA ? base.m : base.k;
  base.rowsB = base.transB ? base.n : base.k;
  base.colsB = base.transB ? base.k : base.n;
  base.rowsC = base.m;
  base.colsC = base.n;
  // A single column's leading dimension is never used, and cuBLASLt wants
  // it at least the rows (a one-row row-major matrix may state any);
  // otherwise rows must not overlap.
  auto leading = [&](const char *name, int64_t &ld, int64_t rows, int64_t cols) {
    if (cols <= 1)
      ld = std::max({ld, rows, int64_t(1)});
    if (ld >= std::max<int64_t>(rows, 1))
      return Status::success();
    return Status::invalid(std::string("cuBLASLt needs the step's ") + name +
                           " rows apart by at least their " + std::to_string(rows) +
                           " elements (leading dimension " + std::to_string(ld) + ")");
  };
  if (g.k > 0) {
    EINRT_TRY(leading("B", base.lda, base.rowsA, base.colsA));
    EINRT_TRY(leading("A", base.ldb, base.rowsB, base.colsB));
  }
  EINRT_TRY(leading("C", base.ldc, base.rowsC, base.colsC));
  base.beta = g.epilogue == GemmEpilogue::Accumulate ? 1.0f : 0.0f;
  base.batch = g.batch;
  base.strideA = g.strideB;
  base.strideB = g.strideA;
  base.strideC = g.strideC;

  // Fold the innermost outer loops into the strided batch while they
  // continue it: each operand's loop stride is batch x its batch stride (or
  // the batch is one matrix, which any stride continues).
  std::vector<GemmLoop> loops = g.outer;
  while (!loops.empty()) {
    const GemmLoop &l = loops.back();
    bool continues = base.batch == 1 || (l.strideB == base.batch * base.strideA &&
                                         l.strideA == base.batch * base.strideB &&
                                         l.strideC == base.batch * base.strideC);
    if (!continues)
      break;
    if (base.batch == 1) {
      base.strideA = l.strideB;
      base.strideB = l.strideA;
      base.strideC = l.strideC;
    }
    base.batch *= l.count;
    loops.pop_back();
  }
  if (base.batch > std::numeric_limits<int32_t>::max())
    return Status::invalid("a GEMM of " + std::to_string(base.batch) +
                           " matrices in one batch (cuBLASLt's batch count is an int32)");
  out.emptySum = g.k == 0;

  // One call per iteration of the loops left, outermost first.
  int64_t calls = 1;
  for (const GemmLoop &l : loops)
    calls *= l.count;
  out.calls.reserve(size_t(calls));
  std::vector<int64_t> at(loops.size(), 0);
  for (int64_t c = 0; c < calls; ++c) {
    CublasLtCall call = base;
    for (size_t d = 0; d < loops.size(); ++d) {
      call.offsetA += at[d] * loops[d].strideB;
      call.offsetB += at[d] * loops[d].strideA;
      call.offsetC += at[d] * loops[d].strideC;
    }
    // cuBLASLt's A is the step's B, its B the step's A.
    call.alignA =
        std::min(at0.b, operandAlignment(call.offsetA, call.strideA, call.batch, call.typeA));
    call.alignB =
        std::min(at0.a, operandAlignment(call.offsetB, call.strideB, call.batch, call.typeB));
    call.alignC =
        std::min(at0.c, operandAlignment(call.offsetC, call.strideC, call.batch, call.typeC));
    out.calls.push_back(call);
    for (size_t d = loops.size(); d-- > 0;) { // the innermost loop moves fastest
      if (++at[d] < loops[d].count)
        break;
      at[d] = 0;
    }
  }
  if (g.post.present() && !fuseEpilogue(g, postTypes, at0, out))
    out.epilogueKernel = true;
  return out;
}

Expected<bool> CublasLtPlanner::algorithms(const CublasLtPlan &plan) {
  if (plan.emptySum)
    return true;
  for (const CublasLtCall &call : plan.calls) {
    std::string key = call.key();
    auto known = found_.find(key);
    if (known == found_.end()) {
      Expected<LtHeuristic> answer = ask_(call);
      if (!answer.ok())
        return answer.takeStatus();
      known = found_.emplace(key, *answer == LtHeuristic::Found).first;
    }
    if (!known->second)
      return false;
  }
  return true;
}

Expected<CublasLtPlan> CublasLtPlanner::plan(const GemmDesc &g, const CublasLtOptions &options,
                                             const std::vector<DType> *postTypes,
                                             const LtAlignments *bases) {
  Expected<CublasLtPlan> out = mapGemmToCublasLt(g, options, postTypes, bases);
  if (!out.ok())
    return out;
  Expected<bool> found = algorithms(*out);
  if (!found.ok())
    return found.takeStatus();
  if (*found)
    return out;
  if (!out->epilogueKernel && g.post.present()) {
    // No algorithm fuses this epilogue here: the plain product, then the
    // epilogue's kernel.
    LtEpilogue fused = out->calls.front().epilogue;
    out = mapGemmToCublasLt(g, options, nullptr, bases);
    if (!out.ok())
      return out;
    out->unfusedWhy = std::string("cuBLASLt's heuristic has no algorithm for its ") +
                      ltEpilogueName(fused) + " epilogue on this call";
    found = algorithms(*out);
    if (!found.ok())
      return found.takeStatus();
    if (*found)
      return out;
  }
  for (const CublasLtCall &call : out->calls)
    if (auto it = found_.find(call.key()); it != found_.end() && !it->second)
      return Status(StatusCode::Unavailable,
                    "cuBLASLt's heuristic found no algorithm for " + describeLtCall(call));
  return Status::internal("cuBLASLt's heuristic found no algorithm"); // unreachable: one had none
}

} // namespace einrt
