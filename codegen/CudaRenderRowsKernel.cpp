//===- CudaRenderRowsKernel.cpp - Row kernels as CUDA kernels -------------===//
//
// An "ein.rows" kernel (codegen/CpuKernelGen.h: a row group's reductions
// with their producers and consumers) as one CUDA kernel per row, launched
// as the unfused reduce of that row length is (CudaRenderRows.cpp): a warp
// per row (WarpRows), a block per row from kBlockRowsFrom elements
// (BlockRows), one thread per row for rows shorter than a warp (Elements).
// Each reduction is a pass over the row combined in RowOrder's order — the
// unfused reduce kernel's and the CPU's (codegen/RowOrder.h) — its result
// then spread to the row's threads (a shuffle from lane 0, or shared memory);
// the per-row nodes are computed by every thread of the row; a last pass
// computes and stores the per-element results. A pass evaluates the
// producers of its reduction again from the operands (the row is read from
// L1/L2 after the first pass).
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaRenderInternal.h"
#include "codegen/RowOrder.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <set>

namespace ein::codegen::cuda {

namespace {

enum class Shape { Thread, Warp, Block };

class RowsRender {
public:
  explicit RowsRender(Kernel &k) : k(k), s(k.spec) {}

  void run() {
    const int64_t rows = s.outer, L = s.inner;
    for (size_t i = 0; i < s.body.size(); ++i)
      if (s.body[i].op == "ein.reduce" &&
          rowOrder(L, s.body[i].operandElem, s.body[i].kind).chunks > 0)
        return runChunked(int32_t(i));
    shape = L < 32 ? Shape::Thread : L >= kBlockRowsFrom ? Shape::Block : Shape::Warp;
    k.out.info.kind = shape == Shape::Thread  ? einrt::CudaLaunchKind::Elements
                      : shape == Shape::Block ? einrt::CudaLaunchKind::BlockRows
                                              : einrt::CudaLaunchKind::WarpRows;
    k.out.info.work = rows;
    k.out.info.rowLength = shape == Shape::Thread ? 0 : L;
    int reductions = 0;
    for (const FusedNode &n : s.body)
      reductions += n.op == "ein.reduce";
    k.src.line("// " + std::to_string(rows) + " rows of " + std::to_string(L) + " elements, " +
               std::to_string(reductions) + " reductions, " +
               (shape == Shape::Thread  ? "a thread"
                : shape == Shape::Block ? "a block"
                                        : "a warp") +
               " per row");
    // One block per SM at least: without it ptxas aimed at two 1024-thread
    // blocks (32 registers) for some layernorms and spilled 4 bytes (bf16 /
    // fp16-mixed gpt on sm_80 and sm_90); with it they take 40-50 registers.
    k.openEntry(1);
    if (shape == Shape::Block)
      for (size_t i = 0; i < s.body.size(); ++i)
        if (s.body[i].op == "ein.reduce") {
          std::string t = valueType(s.body[i].elem);
          k.src.line("__shared__ " + t + " part" + std::to_string(i) + "[" +
                     std::to_string(kRowBlockPartials / 32) + "];");
          k.src.line("__shared__ " + t + " red" + std::to_string(i) + ";");
        }
    if (shape != Shape::Thread)
      k.src.line("const int lane = threadIdx.x % 32;");
    k.src.open(
        shape == Shape::Thread
            ? "for (long long row = ein_thread(); row < " + ll(rows) + "; row += ein_threads())"
        : shape == Shape::Block
            ? "for (long long row = blockIdx.x; row < " + ll(rows) + "; row += gridDim.x)"
            : "for (long long row = ein_warp(); row < " + ll(rows) + "; row += ein_warps())");
    k.src.line("const long long base = row * " + ll(L) + ";");
    loadRowOperands();
    // Per-row nodes in body order (a topological order).
    for (size_t i = 0; i < s.body.size(); ++i) {
      const FusedNode &n = s.body[i];
      if (!n.perRow)
        continue;
      if (n.op == "ein.reduce") {
        renderPass(int32_t(i));
        continue;
      }
      std::vector<std::string> args;
      for (int32_t a : n.args)
        args.push_back(a >= 0 ? "p" + std::to_string(a) : "r" + std::to_string(-a - 1));
      k.src.line("const " + std::string(valueType(n.elem)) + " r" + std::to_string(i) + " = " +
                 rounded(n, scalarExpr(n, args, "row", rows)) + "; // " + n.op);
    }
    // Per-row results, then the per-element ones in a last pass.
    std::vector<size_t> elementOutputs;
    for (size_t t = 0; t < s.outputNodes.size(); ++t) {
      if (!s.body[size_t(s.outputNodes[t])].perRow) {
        elementOutputs.push_back(t);
        continue;
      }
      k.src.line(std::string(shape == Shape::Thread ? ""
                             : shape == Shape::Warp ? "if (lane == 0) "
                                                    : "if (threadIdx.x == 0) ") +
                 "ein_put(out" + std::to_string(t) + "[row], r" + std::to_string(s.outputNodes[t]) +
                 ");");
    }
    if (!elementOutputs.empty()) {
      k.src.open(shape == Shape::Thread ? "for (long long j = 0; j < " + ll(L) + "; ++j)"
                 : shape == Shape::Block
                     ? "for (long long j = threadIdx.x; j < " + ll(L) + "; j += blockDim.x)"
                     : "for (long long j = lane; j < " + ll(L) + "; j += 32)");
      std::vector<int32_t> targets;
      for (size_t t : elementOutputs)
        targets.push_back(-(s.outputNodes[t] + 1));
      emitElement(targets);
      for (size_t t : elementOutputs)
        k.src.line("ein_put(out" + std::to_string(t) + "[base + j], " +
                   nameOf(-(s.outputNodes[t] + 1)) + ");");
      k.src.close();
    }
    if (shape == Shape::Block)
      k.src.line("__syncthreads(); // the shared values are reused by the next row");
    k.src.close();
    k.src.close();
  }

private:
  /// Rows long enough to combine in chunks (renderChunkedRows): row fusion
  /// gives such a kernel only its reduction and the reduction's producers
  /// (passes/FuseRows.h rowKernelTakesProducersOnly), so the row's last warp
  /// has nothing to do but store the sum.
  void runChunked(int32_t reduction) {
    const FusedNode &n = s.body[size_t(reduction)];
    bool producersOnly = s.outputNodes.size() == 1 && s.outputNodes[0] == reduction;
    for (size_t i = 0; i < s.body.size(); ++i)
      producersOnly &= int32_t(i) == reduction || !s.body[i].perRow;
    if (!producersOnly)
      llvm::report_fatal_error("einc: internal error: a row kernel of rows of " +
                               llvm::Twine(s.inner) +
                               " elements holds more than a reduction and its producers");
    RowOrder order = rowOrder(s.inner, n.operandElem, n.kind);
    ChunkedRows c;
    c.rows = s.outer;
    c.length = s.inner;
    c.kind = n.kind;
    c.elem = n.elem;
    c.operandElem = n.operandElem;
    c.rowPrologue = [&] { loadRowOperands(); };
    c.combineVector = [&](const std::string &q) {
      k.src.line("#pragma unroll");
      k.src.open("for (int e = 0; e < " + std::to_string(order.vector) + "; ++e)");
      k.src.line("const long long j = " + q + " * " + std::to_string(order.vector) + " + e;");
      emitElement({n.args[0]});
      k.src.line("acc = " + reduceCombine(n.kind, n.elem, "acc", nameOf(n.args[0])) + ";");
      k.src.close();
    };
    c.finish = [&] { k.src.line("ein_put(out0[row], acc);"); };
    renderChunkedRows(k, c);
  }

  /// The row's per-row (Prefix) and Scalar operands, loaded once: `pJ`.
  void loadRowOperands() {
    for (size_t j = 0; j < s.operands.size(); ++j) {
      const KernelTensor &t = s.operands[j];
      if (t.access == Access::Prefix || t.access == Access::Scalar)
        k.src.line("const " + std::string(valueType(t.elem)) + " p" + std::to_string(j) +
                   " = ein_val(in" + std::to_string(j) + "[" +
                   (t.access == Access::Prefix ? "row" : "0") + "]);");
    }
  }

  std::string rounded(const FusedNode &n, const std::string &e) {
    if (n.op == "ein.select" || n.op == "ein.stochastic_round" || n.op == "ein.broadcast")
      return e;
    return roundTo(n.elem, e);
  }

  /// The name of an operand or node's value inside a pass (at element j).
  std::string nameOf(int32_t arg) {
    if (arg >= 0) {
      Access a = s.operands[size_t(arg)].access;
      return (a == Access::Prefix || a == Access::Scalar ? "p" : "a") + std::to_string(arg);
    }
    size_t i = size_t(-arg - 1);
    return (s.body[i].perRow ? "r" : "v") + std::to_string(i);
  }

  /// Declares, at element j of the row, the operands and per-element nodes
  /// `targets` read (in body order).
  void emitElement(const std::vector<int32_t> &targets) {
    std::set<size_t> nodes;
    std::set<int32_t> operands;
    std::vector<int32_t> work(targets.begin(), targets.end());
    while (!work.empty()) {
      int32_t a = work.back();
      work.pop_back();
      if (a >= 0) {
        operands.insert(a);
        continue;
      }
      size_t i = size_t(-a - 1);
      if (s.body[i].perRow || !nodes.insert(i).second)
        continue;
      for (int32_t b : s.body[i].args)
        work.push_back(b);
    }
    for (int32_t j : operands) {
      const KernelTensor &t = s.operands[size_t(j)];
      if (t.access == Access::Full || t.access == Access::Suffix)
        k.src.line("const " + std::string(valueType(t.elem)) + " a" + std::to_string(j) +
                   " = ein_val(in" + std::to_string(j) + "[" +
                   (t.access == Access::Suffix ? "j" : "base + j") + "]);");
    }
    for (size_t i : nodes) {
      const FusedNode &n = s.body[i];
      std::vector<std::string> args;
      for (int32_t a : n.args)
        args.push_back(nameOf(a));
      std::string e =
          n.op == "ein.broadcast" ? args[0] : scalarExpr(n, args, "(base + j)", s.outer * s.inner);
      k.src.line("const " + std::string(valueType(n.elem)) + " v" + std::to_string(i) + " = " +
                 rounded(n, e) + "; // " + n.op);
    }
  }

  void tree(const FusedNode &n) {
    k.src.line("#pragma unroll");
    k.src.line("for (int d = 16; d > 0; d /= 2)");
    k.src.line("  acc = " +
               reduceCombine(n.kind, n.elem, "acc", "__shfl_xor_sync(0xffffffffu, acc, d)") + ";");
  }

  /// The loop of one partial: vectors first, first + step, ... of the row,
  /// each vector's elements in order.
  void partialLoop(const FusedNode &n, const std::string &first, const std::string &step) {
    RowOrder order = rowOrder(s.inner, n.operandElem, n.kind);
    int64_t v = order.vector;
    k.src.open("for (long long q = " + first + "; q < " + ll(s.inner / v) + "; q += " + step + ")");
    if (v > 1) {
      k.src.line("#pragma unroll");
      k.src.open("for (int e = 0; e < " + std::to_string(v) + "; ++e)");
      k.src.line("const long long j = q * " + std::to_string(v) + " + e;");
    } else {
      k.src.open("");
      k.src.line("const long long j = q;");
    }
    emitElement({n.args[0]});
    k.src.line("acc = " + reduceCombine(n.kind, n.elem, "acc", nameOf(n.args[0])) + ";");
    k.src.close();
    k.src.close();
  }

  /// Reduction node i: one pass over the row into `r<i>`, for every thread
  /// of the row.
  void renderPass(int32_t i) {
    const FusedNode &n = s.body[size_t(i)];
    std::string t = valueType(n.elem), r = "r" + std::to_string(i), is = std::to_string(i);
    std::string init = reduceInit(n.kind, n.elem);
    k.src.line(t + " " + r + ";");
    k.src.open("");
    if (shape == Shape::Thread) {
      k.src.line(t + " acc = " + init + ";");
      k.src.open("for (long long j = 0; j < " + ll(s.inner) + "; ++j)");
      emitElement({n.args[0]});
      k.src.line("acc = " + reduceCombine(n.kind, n.elem, "acc", nameOf(n.args[0])) + ";");
      k.src.close();
      k.src.line(r + " = acc;");
    } else if (shape == Shape::Warp) {
      k.src.line(t + " acc = " + init + ";");
      partialLoop(n, "lane", "32");
      tree(n);
      k.src.line(r + " = __shfl_sync(0xffffffffu, acc, 0);");
    } else {
      std::string slots = std::to_string(kRowBlockPartials);
      k.src.open("for (int p = threadIdx.x; p < " + slots + "; p += blockDim.x)");
      k.src.line(t + " acc = " + init + ";");
      partialLoop(n, "p", slots);
      tree(n);
      k.src.line("if (lane == 0)");
      k.src.line("  part" + is + "[p / 32] = acc;");
      k.src.close();
      k.src.line("__syncthreads();");
      k.src.open("if (threadIdx.x < 32)");
      k.src.line(t + " acc = part" + is + "[lane];");
      tree(n);
      k.src.line("if (lane == 0)");
      k.src.line("  red" + is + " = acc;");
      k.src.close();
      k.src.line("__syncthreads();");
      k.src.line(r + " = red" + is + ";");
    }
    k.src.close();
  }

  Kernel &k;
  const KernelSpec &s;
  Shape shape = Shape::Warp;
};

} // namespace

void renderRowsKernel(Kernel &k) { RowsRender(k).run(); }

} // namespace ein::codegen::cuda
