//===- CudaRenderElementwise.cpp - Elementwise and fused CUDA kernels -----===//
//
// One element function per kernel (the op, or a fused body's nodes in order,
// each narrow value rounded where it is made, as the CPU kernel and so the
// unfused kernels do), called by a grid-stride loop over work items: a
// vector of `V` elements (16 bytes of the widest Full operand or result,
// loaded and stored as one access each: such buffers must start 16-byte
// aligned, CudaKernelInfo::aligned) or, for the last n % V elements, one
// element each. Scalar operands are read once per thread, Prefix / Suffix
// operands in place (element i / inner, i % inner); an iota node is
// computed from i.
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaRenderInternal.h"

#include <algorithm>

namespace ein::codegen::cuda {

namespace {

/// The kernel's body as nodes (a single op is a body of one node).
struct Body {
  std::vector<FusedNode> nodes;
  std::vector<int32_t> outputs; // nodes stored, in result order
  int64_t inner = 0;            // the split Prefix / Suffix operands are read by
};

Body bodyOf(const KernelSpec &s) {
  Body b;
  if (s.op == "ein.fused") {
    b.nodes = s.body;
    b.outputs = s.outputNodes;
    b.inner = s.outer > 0 ? s.inner : 0;
    return b;
  }
  FusedNode n;
  n.op = s.op;
  n.kind = s.kind;
  n.elem = s.result.elem;
  n.operandElem = s.operands[0].elem;
  for (size_t j = 0; j < s.operands.size(); ++j)
    n.args.push_back(int32_t(j));
  b.nodes.push_back(n);
  b.outputs.push_back(0);
  // A single op's one Prefix / Suffix operand fixes the split (as
  // CpuKernelGen.cpp's elementwise loop).
  int64_t count = s.result.count();
  for (const KernelTensor &t : s.operands)
    if (t.access == Access::Prefix && t.count() > 0)
      b.inner = count / t.count();
    else if (t.access == Access::Suffix)
      b.inner = t.count();
  return b;
}

const KernelTensor &resultTensor(const KernelSpec &s, size_t t) {
  return t == 0 ? s.result : s.extraResults[t - 1];
}

/// f32 divisions one thread may have in flight (see elementwiseVector).
constexpr int64_t kDivisionsPerThread = 2;

} // namespace

int32_t elementwiseVector(const KernelSpec &s) {
  int64_t widest = storageBytes(s.result.elem);
  for (const KernelTensor &t : s.extraResults)
    widest = std::max(widest, storageBytes(t.elem));
  for (const KernelTensor &t : s.operands)
    if (t.access == Access::Full)
      widest = std::max(widest, storageBytes(t.elem));
  int32_t v = int32_t(16 / widest);
  // ptxas makes an f32 division's slow path (denormals, overflow) a call,
  // and under 1024-thread launch bounds (64 registers) the values live
  // across more than two such calls per thread spill on sm_80 (measured:
  // 4 per thread spill 16 bytes; 8 bf16 quotients spill 8 bytes on sm_90).
  int64_t divisions = 0;
  if (s.op == "ein.fused") {
    for (const FusedNode &n : s.body)
      divisions += n.op == "ein.div" && isFloatKind(n.elem);
  } else {
    divisions = s.op == "ein.div" && isFloatKind(s.result.elem);
  }
  while (v > 1 && v * divisions > kDivisionsPerThread)
    v /= 2;
  return s.result.count() >= v ? v : 1;
}

void renderElementwise(Kernel &k) {
  const KernelSpec &s = k.spec;
  Body body = bodyOf(s);
  int64_t n = s.result.count();
  int32_t v = elementwiseVector(s);
  int64_t vectors = n / v, work = vectors + n % v;
  k.out.info.kind = einrt::CudaLaunchKind::Elements;
  k.out.info.work = work;
  k.out.info.vector = v;
  for (size_t j = 0; v > 1 && j < s.operands.size(); ++j)
    if (s.operands[j].access == Access::Full)
      k.out.info.aligned.push_back(int32_t(j));
  for (size_t t = 0; v > 1 && t < body.outputs.size(); ++t)
    k.out.info.aligned.push_back(int32_t(s.operands.size() + t));

  // The element function: operands' values in, results' values out.
  std::vector<bool> usedByNode(body.nodes.size(), false);
  bool needsIndex = false;
  for (const FusedNode &node : body.nodes) {
    for (int32_t a : node.args)
      if (a < 0)
        usedByNode[size_t(-a - 1)] = true;
    needsIndex |= node.op == "ein.stochastic_round" || node.op == "ein.iota";
  }
  std::string fn = k.name + "_element";
  std::string params = needsIndex ? "long long i" : "long long /*i*/";
  for (size_t j = 0; j < s.operands.size(); ++j)
    params += std::string(", ") + valueType(s.operands[j].elem) + " a" + std::to_string(j);
  for (size_t t = 0; t < body.outputs.size(); ++t)
    params += std::string(", ") + valueType(resultTensor(s, t).elem) + " &r" + std::to_string(t);
  k.src.open("static __device__ __forceinline__ void " + fn + "(" + params + ")");
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    const FusedNode &node = body.nodes[i];
    std::vector<std::string> args;
    for (int32_t a : node.args)
      args.push_back(a >= 0 ? "a" + std::to_string(a) : "v" + std::to_string(-a - 1));
    std::string e = scalarExpr(node, args, "i", n);
    // Every narrow value rounded where it is made (a select picks values
    // already rounded; a stochastic rounding is one); an output is rounded
    // by its store.
    if (usedByNode[i] && node.op != "ein.select" && node.op != "ein.stochastic_round")
      e = roundTo(node.elem, e);
    k.src.line("const " + std::string(valueType(node.elem)) + " v" + std::to_string(i) + " = " + e +
               "; // " + node.op + (node.kind.empty() ? "" : " " + node.kind));
  }
  for (size_t t = 0; t < body.outputs.size(); ++t)
    k.src.line("r" + std::to_string(t) + " = v" + std::to_string(body.outputs[t]) + ";");
  k.src.close();
  k.src.blank();

  // One element's call: operand values at element `at` ("i + e" in a vector).
  auto call = [&](const std::string &at, bool vector) {
    std::string c = fn + "(" + at;
    for (size_t j = 0; j < s.operands.size(); ++j) {
      const KernelTensor &t = s.operands[j];
      std::string in = "in" + std::to_string(j);
      c += ", ";
      if (t.access == Access::Scalar)
        c += "s" + std::to_string(j);
      else if (t.access == Access::Prefix)
        c += "ein_val(" + in + "[" + divIndex(at, body.inner, n) + "])";
      else if (t.access == Access::Suffix)
        c += "ein_val(" + in + "[" + modIndex(at, body.inner, n) + "])";
      else
        c +=
            vector ? "ein_val(x" + std::to_string(j) + ".v[e])" : "ein_val(" + in + "[" + at + "])";
    }
    for (size_t t = 0; t < body.outputs.size(); ++t)
      c += ", r" + std::to_string(t);
    return c + ");";
  };
  auto declareResults = [&]() {
    for (size_t t = 0; t < body.outputs.size(); ++t)
      k.src.line(std::string(valueType(resultTensor(s, t).elem)) + " r" + std::to_string(t) + ";");
  };
  auto scalarPath = [&]() {
    declareResults();
    k.src.line(call("i", false));
    for (size_t t = 0; t < body.outputs.size(); ++t)
      k.src.line("ein_put(out" + std::to_string(t) + "[i], r" + std::to_string(t) + ");");
  };

  // A fused kernel asks for one block per SM at least, as the row kernels:
  // without it ptxas aimed its loop at 32 registers and spilled where an
  // f32 division's slow-path call or a 64-bit index (an iota computed in
  // the kernel) kept more values live (the scores' scale and causal mask,
  // one kernel: 16 bytes; a 29-op AdamW of two params under bf16: 16).
  k.openEntry(s.op == "ein.fused" ? 1 : 0);
  for (size_t j = 0; j < s.operands.size(); ++j)
    if (s.operands[j].access == Access::Scalar)
      k.src.line("const " + std::string(valueType(s.operands[j].elem)) + " s" + std::to_string(j) +
                 " = ein_val(in" + std::to_string(j) + "[0]);");
  k.src.open("for (long long w = ein_thread(); w < " + ll(work) + "; w += ein_threads())");
  if (v > 1) {
    std::string vs = std::to_string(v);
    bool tail = n % v != 0;
    if (tail)
      k.src.open("if (w < " + ll(vectors) + ")");
    k.src.line("const long long i = w * " + vs + ";");
    for (size_t j = 0; j < s.operands.size(); ++j)
      if (s.operands[j].access == Access::Full)
        k.src.line("const ein_vec<" + std::string(storageType(s.operands[j].elem)) + ", " + vs +
                   "> x" + std::to_string(j) + " = ein_load<" + vs + ">(in" + std::to_string(j) +
                   " + i);");
    for (size_t t = 0; t < body.outputs.size(); ++t)
      k.src.line("ein_vec<" + std::string(storageType(resultTensor(s, t).elem)) + ", " + vs +
                 "> y" + std::to_string(t) + ";");
    k.src.line("#pragma unroll");
    k.src.open("for (int e = 0; e < " + vs + "; ++e)");
    declareResults();
    k.src.line(call("i + e", true));
    for (size_t t = 0; t < body.outputs.size(); ++t)
      k.src.line("ein_put(y" + std::to_string(t) + ".v[e], r" + std::to_string(t) + ");");
    k.src.close();
    for (size_t t = 0; t < body.outputs.size(); ++t)
      k.src.line("ein_store<" + vs + ">(out" + std::to_string(t) + " + i, y" + std::to_string(t) +
                 ");");
    if (tail) {
      k.src.middle("} else { // the last n % " + vs + " elements, one each");
      k.src.line("const long long i = " + ll(vectors * v) + " + (w - " + ll(vectors) + ");");
      scalarPath();
      k.src.close();
    }
  } else {
    k.src.line("const long long i = w;");
    scalarPath();
  }
  k.src.close();
  k.src.close();
}

void renderReshape(Kernel &k) {
  // A copy of the bytes (a reshape that is a function result).
  const KernelSpec &s = k.spec;
  int64_t n = s.result.count();
  int32_t v = int32_t(16 / storageBytes(s.result.elem));
  if (n < v)
    v = 1;
  int64_t vectors = n / v, work = vectors + n % v;
  k.out.info.kind = einrt::CudaLaunchKind::Elements;
  k.out.info.work = work;
  k.out.info.vector = v;
  if (v > 1)
    k.out.info.aligned = {0, 1};
  k.openEntry();
  k.src.open("for (long long w = ein_thread(); w < " + ll(work) + "; w += ein_threads())");
  std::string vs = std::to_string(v);
  if (v > 1) {
    k.src.line("if (w < " + ll(vectors) + ")");
    k.src.line("  ein_store<" + vs + ">(out0 + w * " + vs + ", ein_load<" + vs + ">(in0 + w * " +
               vs + "));");
    k.src.line("else");
    k.src.line("  out0[" + ll(vectors * v) + " + (w - " + ll(vectors) + ")] = in0[" +
               ll(vectors * v) + " + (w - " + ll(vectors) + ")];");
  } else {
    k.src.line("out0[w] = in0[w];");
  }
  k.src.close();
  k.src.close();
}

} // namespace ein::codegen::cuda
