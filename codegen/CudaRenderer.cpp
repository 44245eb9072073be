//===- CudaRenderer.cpp - The CPU backend's kernels as CUDA C++ -----------===//
//
// The translation unit (renderCudaBundle), the prelude its kernels share,
// kernel names and notes, the scalar math of the CPU kernels
// (codegen/CpuKernelBuilder.h) as calls to the prelude's helpers, and the
// dispatch to the kernel families (CudaRenderElementwise.cpp,
// CudaRenderRows.cpp, CudaRenderMovement.cpp).
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaRenderer.h"
#include "codegen/CudaRenderInternal.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

namespace ein::codegen {
namespace cuda {

const char *storageType(ElemKind k) {
  static const char *names[] = {"float", "int", "unsigned char", "__nv_bfloat16", "__half"};
  return names[int(k)];
}
const char *valueType(ElemKind k) {
  return isFloatKind(k) ? "float" : k == ElemKind::I32 ? "int" : "bool";
}
int64_t storageBytes(ElemKind k) {
  static const int64_t bytes[] = {4, 4, 1, 2, 2};
  return bytes[int(k)];
}

void Source::line(const std::string &text) {
  if (!text.empty())
    text_.append(size_t(indent_) * 2, ' ');
  text_ += text;
  text_ += "\n";
}
void Source::open(const std::string &text) {
  line(text + " {");
  ++indent_;
}
void Source::close(const std::string &tail) {
  --indent_;
  line(tail);
}
void Source::middle(const std::string &text) {
  --indent_;
  line(text);
  ++indent_;
}

void Kernel::uses(ElemKind k) {
  out.bf16 |= k == ElemKind::BF16;
  out.f16 |= k == ElemKind::F16;
}

std::string Kernel::parameters() {
  std::string p;
  auto add = [&](const std::string &param) { p += (p.empty() ? "" : ", ") + param; };
  for (size_t j = 0; j < spec.operands.size(); ++j) {
    uses(spec.operands[j].elem);
    add(std::string("const ") + storageType(spec.operands[j].elem) + " *__restrict__ in" +
        std::to_string(j));
  }
  uses(spec.result.elem);
  add(std::string(storageType(spec.result.elem)) + " *__restrict__ out0");
  for (size_t t = 0; t < spec.extraResults.size(); ++t) {
    uses(spec.extraResults[t].elem);
    add(std::string(storageType(spec.extraResults[t].elem)) + " *__restrict__ out" +
        std::to_string(t + 1));
  }
  return p;
}

void Kernel::openEntry(int minBlocks) {
  out.info.entry = name;
  out.info.params = int32_t(spec.operands.size() + 1 + spec.extraResults.size());
  // Any block of up to kCudaKernelMaxBlock threads (runtime/cuda/CudaKernels.h):
  // ptxas keeps the registers within what such a block may use.
  std::string bounds = std::to_string(einrt::kCudaKernelMaxBlock);
  if (minBlocks > 0)
    bounds += ", " + std::to_string(minBlocks);
  src.open("extern \"C\" __global__ void __launch_bounds__(" + bounds + ") " + name + "(" +
           parameters() + ")");
}

std::string ll(int64_t v) {
  if (v > std::numeric_limits<int32_t>::max() || v < std::numeric_limits<int32_t>::min())
    return std::to_string(v) + "LL";
  return std::to_string(v);
}

namespace {
bool fits32(int64_t count) { return count <= int64_t(std::numeric_limits<uint32_t>::max()); }
} // namespace

std::string divIndex(const std::string &expr, int64_t d, int64_t count) {
  if (d == 1)
    return expr;
  return fits32(count) ? "(unsigned)(" + expr + ") / " + std::to_string(d) + "u"
                       : "(" + expr + ") / " + ll(d);
}
std::string modIndex(const std::string &expr, int64_t d, int64_t count) {
  if (d == 1)
    return "0";
  return fits32(count) ? "(unsigned)(" + expr + ") % " + std::to_string(d) + "u"
                       : "(" + expr + ") % " + ll(d);
}

std::string roundTo(ElemKind k, const std::string &v) {
  if (k == ElemKind::BF16)
    return "ein_round_bf16(" + v + ")";
  if (k == ElemKind::F16)
    return "ein_round_f16(" + v + ")";
  return v;
}

namespace {

std::string castExpr(ElemKind from, ElemKind to, const std::string &x) {
  if (from == to || (isFloatKind(from) && isFloatKind(to)))
    return x; // a narrow result is rounded where it is stored or used
  if (to == ElemKind::I1)
    return isFloatKind(from) ? "(" + x + " != 0.0f)" : "(" + x + " != 0)"; // NaN is true
  if (from == ElemKind::I1)
    return isFloatKind(to) ? "(" + x + " ? 1.0f : 0.0f)" : "(" + x + " ? 1 : 0)";
  if (isFloatKind(to)) // i32 → f32, to nearest
    return "__int2float_rn(" + x + ")";
  return "ein_f32_to_i32(" + x + ")";
}

const char *cmpOperator(const std::string &pred) {
  if (pred == "eq")
    return "==";
  if (pred == "ne")
    return "!="; // true when either is NaN, as C++ and the CPU kernels
  if (pred == "lt")
    return "<";
  if (pred == "le")
    return "<=";
  if (pred == "gt")
    return ">";
  return ">=";
}

} // namespace

std::string scalarExpr(const FusedNode &n, const std::vector<std::string> &a,
                       const std::string &index, int64_t indexCount) {
  const std::string &op = n.op;
  std::string bare = op.substr(4); // "ein.add" → "add"
  if (isUnary(op) || isBinary(op)) {
    std::string call = "ein_" + bare + "(" + a[0];
    if (a.size() > 1)
      call += ", " + a[1];
    return call + ")";
  }
  if (op == "ein.cmp")
    return "(" + a[0] + " " + cmpOperator(n.kind) + " " + a[1] + ")";
  if (op == "ein.select")
    return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
  if (op == "ein.iota") { // (i / stride) % size, as the iota kernel converts it
    std::string c = modIndex(divIndex(index, n.stride, indexCount), n.size, indexCount);
    return isFloatKind(n.elem) ? "__ll2float_rn((long long)(" + c + "))" : "(int)(" + c + ")";
  }
  if (op == "ein.stochastic_round")
    return std::string(n.elem == ElemKind::BF16 ? "ein_sround_bf16(" : "ein_sround_f16(") + a[0] +
           ", ein_stochastic_bits(" + a[1] + ", " + index + "))";
  return castExpr(n.operandElem, n.elem, a[0]); // ein.cast
}

std::string reduceInit(const std::string &kind, ElemKind k) {
  if (kind == "sum")
    return isFloatKind(k) ? "0.0f" : "0";
  if (isFloatKind(k))
    return kind == "max" ? "-__int_as_float(0x7f800000)" : "__int_as_float(0x7f800000)";
  return kind == "max" ? "(-2147483647 - 1)" : "2147483647";
}

std::string reduceCombine(const std::string &kind, ElemKind k, const std::string &acc,
                          const std::string &x) {
  std::string call = "ein_" + kind + "(" + acc + ", " + x + ")";
  if (kind == "sum")
    call = "ein_add(" + acc + ", " + x + ")";
  return kind == "sum" ? roundTo(k, call) : call;
}

} // namespace cuda

using namespace cuda;

std::string cudaKernelBaseName(const KernelSpec &s) {
  std::string bare = s.op.substr(0, 4) == "ein." ? s.op.substr(4) : s.op;
  if (s.op == "ein.fused" || s.op == "ein.rows") {
    // The ops in body order, at most six named.
    std::string name = s.op == "ein.rows" ? "rows" : "fused";
    size_t shown = std::min<size_t>(s.body.size(), 6);
    for (size_t k = 0; k < shown; ++k)
      name += "_" + s.body[k].op.substr(4);
    if (s.body.size() > shown)
      name += "_etc";
    return name;
  }
  if (s.op == "ein.cmp")
    return "cmp_" + s.kind;
  if (s.op == "ein.reduce")
    return "reduce_" + s.kind;
  if (s.op == "ein.cast")
    return std::string("cast_") + elemName(s.operands[0].elem) + "_" + elemName(s.result.elem);
  return bare;
}

CudaKernelSource renderCudaKernel(const KernelSpec &spec, int64_t index, const std::string &note) {
  Kernel k(spec, "k" + std::to_string(index) + "_" + cudaKernelBaseName(spec));
  k.out.info.note = note;
  // The comment: what it computes and where, its operands and results.
  k.src.line("// " + k.name + ": " + (note.empty() ? spec.op : note));
  auto describe = [](const KernelTensor &t) {
    std::string d = elemName(t.elem);
    d += "[";
    for (size_t i = 0; i < t.shape.size(); ++i)
      d += (i ? "x" : "") + std::to_string(t.shape[i]);
    d += "]";
    static const char *access[] = {"", " (scalar)", " (prefix: element i / inner)",
                                   " (suffix: element i % inner)"};
    return d + access[int(t.access)];
  };
  for (size_t j = 0; j < spec.operands.size(); ++j)
    k.src.line("//   in" + std::to_string(j) + ": " + describe(spec.operands[j]));
  k.src.line("//   out0: " + describe(spec.result));
  for (size_t t = 0; t < spec.extraResults.size(); ++t)
    k.src.line("//   out" + std::to_string(t + 1) + ": " + describe(spec.extraResults[t]));

  const std::string &op = spec.op;
  if (op == "ein.fused" || isUnary(op) || isBinary(op) || op == "ein.cmp" || op == "ein.select" ||
      op == "ein.cast" || op == "ein.stochastic_round")
    renderElementwise(k);
  else if (op == "ein.reshape")
    renderReshape(k);
  else if (op == "ein.reduce")
    renderReduce(k);
  else if (op == "ein.rows")
    renderRowsKernel(k);
  else if (op == "ein.transpose")
    renderTranspose(k);
  else if (op == "ein.broadcast")
    renderBroadcast(k);
  else if (op == "ein.iota")
    renderIota(k);
  else if (op == "ein.gather")
    renderGather(k);
  else if (op == "ein.scatter_add")
    renderScatterAdd(k);
  else // describeKernel admits no other op
    k.src.line("#error \"the CUDA renderer has no kernel for " + op + "\"");
  k.out.text = k.src.take();
  return std::move(k.out);
}

namespace {

/// The elementwise ops' helpers, `ein_<name>` for float and (where the op
/// takes i32) int, from runtime/base/ElementwiseOps.def's CUDA columns: the
/// reference's scalar ops (runtime/base/ScalarOps.h). Binary first: unary
/// helpers may call them.
std::string elementwiseHelpers() {
  std::string p = "// The reference's scalar ops (runtime/base/ScalarOps.h), "
                  "runtime/base/ElementwiseOps.def's rows.\n";
  auto helper = [&](const char *name, const char *type, const char *params, const char *body) {
    if (body)
      p += std::string("EIN_DEVICE ") + type + " ein_" + name + "(" + params + ") { return " +
           body + "; }\n";
  };
#define EIN_FLOAT_ONLY nullptr
#define EIN_BINARY_OP(Kind, name, Types, Rounding, Ref, CudaF32, CudaI32, CpuF32, CpuI32)          \
  helper(name, "float", "float x, float y", CudaF32);                                              \
  helper(name, "int", "int x, int y", CudaI32);
#include "runtime/base/ElementwiseOps.def"
#define EIN_UNARY_OP(Kind, name, Types, Rounding, Dsl, Ref, CudaF32, CudaI32, CpuF32, CpuI32)      \
  helper(name, "float", "float x", CudaF32);                                                       \
  helper(name, "int", "int x", CudaI32);
#include "runtime/base/ElementwiseOps.def"
#undef EIN_FLOAT_ONLY
  return p;
}

} // namespace

std::string cudaPrelude(bool bf16, bool f16) {
  std::string p;
  p += R"(// The einc CUDA kernels (codegen/CudaRenderer.h): every kernel runs for any
// launch shape (grid-stride loops, blockDim a multiple of 32 up to 1024) and
// gives the same bits for all of them; f32 arithmetic is explicitly rounded
// (never contracted to FMA); no value goes through an atomic (a chunked
// row's counter only picks the warp that combines its chunks).
)";
  if (bf16)
    p += "#include <cuda_bf16.h>\n";
  if (f16)
    p += "#include <cuda_fp16.h>\n";
  p += R"(
#define EIN_DEVICE __device__ __forceinline__ // inline, not static: unused helpers are no warning

// Grid-stride loops: thread t of T computes work items t, t + T, ...
EIN_DEVICE long long ein_thread() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
EIN_DEVICE long long ein_threads() { return (long long)gridDim.x * blockDim.x; }
EIN_DEVICE long long ein_warp() { return ein_thread() / 32; }
EIN_DEVICE long long ein_warps() { return ein_threads() / 32; }

// Elements as values: f32 and i32 as such, i1 (one byte) as bool; bf16 and
// f16 widened to f32 (exact). Values into elements: narrow floats rounded to
// nearest even.
EIN_DEVICE float ein_val(float x) { return x; }
EIN_DEVICE int ein_val(int x) { return x; }
EIN_DEVICE bool ein_val(unsigned char x) { return x != 0; }
EIN_DEVICE void ein_put(float &e, float v) { e = v; }
EIN_DEVICE void ein_put(int &e, int v) { e = v; }
EIN_DEVICE void ein_put(unsigned char &e, bool v) { e = v ? 1 : 0; }
)";
  if (bf16)
    p += R"(EIN_DEVICE float ein_val(__nv_bfloat16 x) { return __bfloat162float(x); }
EIN_DEVICE void ein_put(__nv_bfloat16 &e, float v) { e = __float2bfloat16_rn(v); }
EIN_DEVICE float ein_round_bf16(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }
)";
  if (f16)
    p += R"(EIN_DEVICE float ein_val(__half x) { return __half2float(x); }
EIN_DEVICE void ein_put(__half &e, float v) { e = __float2half_rn(v); }
EIN_DEVICE float ein_round_f16(float v) { return __half2float(__float2half_rn(v)); }
)";
  p += R"(
// `V` consecutive elements, loaded and stored as one (16-byte) access.
template <class T, int V> struct alignas(sizeof(T) * V) ein_vec { T v[V]; };
template <int V, class T> EIN_DEVICE ein_vec<T, V> ein_load(const T *p) {
  return *reinterpret_cast<const ein_vec<T, V> *>(p);
}
template <int V, class T> EIN_DEVICE void ein_store(T *p, const ein_vec<T, V> &x) {
  *reinterpret_cast<ein_vec<T, V> *>(p) = x;
}

)";
  p += elementwiseHelpers();
  p += R"(// f32 to i32: toward zero, saturating, NaN to 0 (runtime/core/FloatFormats.h).
EIN_DEVICE int ein_f32_to_i32(float x) {
  return x != x ? 0 : x >= 2147483648.0f ? 2147483647 : x <= -2147483648.0f ? (-2147483647 - 1) : (int)x;
}

// ein.stochastic_round, bit for bit runtime/core/FloatFormats.h's.
EIN_DEVICE unsigned ein_mix32(unsigned h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  return h ^ (h >> 16);
}
EIN_DEVICE unsigned ein_stochastic_bits(int seed, long long index) {
  unsigned key = ein_mix32((unsigned)seed + (unsigned)((unsigned long long)index >> 32) * 0x85EBCA77u);
  return ein_mix32((unsigned)index * 0x9E3779B1u + key);
}
EIN_DEVICE float ein_sround_bf16(float x, unsigned bits) {
  unsigned u = __float_as_uint(x);
  if (x != x)
    return __uint_as_float((u & 0x80000000u) | 0x7FC00000u);
  return __uint_as_float((u + (bits >> 16)) & 0xFFFF0000u);
}
EIN_DEVICE float ein_sround_f16(float x, unsigned bits) {
  float a = fabsf(x);
  int e = (int)((__float_as_uint(a) >> 23) & 0xFF) - 127;
  int qe = max(e, -14) - 10;
  float q = __int_as_float((qe + 127) << 23), inv = __int_as_float((127 - qe) << 23);
  float s = __fmul_rn(a, inv), fl = floorf(s), frac = __fsub_rn(s, fl);
  float draw = __fmul_rn((float)(int)(bits >> 8), 0x1p-24f);
  float r = __fmul_rn(__fadd_rn(fl, draw < frac ? 1.0f : 0.0f), q);
  return copysignf(r, x);
}
)";
  return p;
}

std::vector<std::string> cudaKernelNotes(llvm::ArrayRef<const einrt::Program *> programs,
                                         int64_t count) {
  constexpr size_t kShown = 4;
  std::vector<std::vector<std::string>> seen(size_t(std::max<int64_t>(count, 0)));
  std::vector<size_t> more(seen.size(), 0);
  for (const einrt::Program *p : programs)
    for (const einrt::Step &s : p->steps) {
      int64_t k = -1; // a Kernel step's kernel, or a Matmul's epilogue's
      std::string note = s.note;
      if (const auto *launch = std::get_if<einrt::KernelLaunch>(&s.payload)) {
        k = launch->kernel;
      } else if (const auto *g = std::get_if<einrt::GemmDesc>(&s.payload)) {
        k = g->post.kernel;
        size_t at = note.find(kEpilogueNote);
        note = at == std::string::npos ? note : note.substr(at + std::strlen(kEpilogueNote));
      }
      if (k < 0 || k >= count)
        continue;
      std::vector<std::string> &notes = seen[size_t(k)];
      if (std::find(notes.begin(), notes.end(), note) != notes.end())
        continue;
      if (notes.size() < kShown)
        notes.push_back(note);
      else
        ++more[size_t(k)];
    }
  std::vector<std::string> out(seen.size());
  for (size_t k = 0; k < seen.size(); ++k) {
    for (const std::string &n : seen[k])
      out[k] += (out[k].empty() ? "" : "; ") + n;
    if (more[k])
      out[k] += "; and " + std::to_string(more[k]) + " more";
  }
  return out;
}

einrt::CudaKernelBundle renderCudaBundle(const KernelSpecTable &kernels,
                                         llvm::ArrayRef<const einrt::Program *> programs) {
  einrt::CudaKernelBundle bundle;
  int64_t count = kernels.kernelCount();
  std::vector<std::string> notes = cudaKernelNotes(programs, count);
  std::string body;
  bool bf16 = false, f16 = false;
  for (int64_t i = 0; i < count; ++i) {
    CudaKernelSource k = renderCudaKernel(kernels.spec(i), i, notes[size_t(i)]);
    bf16 |= k.bf16;
    f16 |= k.f16;
    body += "\n" + k.text;
    bundle.kernels.push_back(std::move(k.info));
  }
  bundle.source = cudaPrelude(bf16, f16) + body;
  return bundle;
}

} // namespace ein::codegen
