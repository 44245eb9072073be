//===- CudaRenderChunks.cpp - Long rows reduced across the device ---------===//
//
// A row of kChunkedRowsFrom elements or more (codegen/RowOrder.h: a
// gradient's sum of squares over 38.6 M elements) is not one block's work:
// its kRowChunks chunks are work items of a WarpRows launch, a warp per
// chunk over the whole GPU. Each warp combines its chunk as 32 partials and
// a shuffle tree, and lane 0 writes the result into a module-global array
// (`<entry>_chunks`, a slot per chunk of every row) and then, after a
// __threadfence, counts the chunk done (`<entry>_done`, a counter per row).
// The warp that counts a row's last chunk combines the row's chunk results
// in rowOrder(kRowChunks)'s order — the CPU's (CpuRowsKernel.cpp
// reduceRow) — stores the row's result and sets the counter back to 0 for
// the next launch. The counter is the kernel's only atomic: it decides
// which warp combines, never what is combined or in which order, so the
// bits depend on the row length alone. Launches of one kernel never
// overlap (one stream per device, graph replays in order), so the globals
// are the kernel's own.
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaRenderInternal.h"
#include "codegen/RowOrder.h"

namespace ein::codegen::cuda {

namespace {

void tree(Source &src, const std::string &kind, ElemKind e) {
  src.line("#pragma unroll");
  src.line("for (int d = 16; d > 0; d /= 2)");
  src.line("  acc = " + reduceCombine(kind, e, "acc", "__shfl_xor_sync(0xffffffffu, acc, d)") +
           ";");
}

} // namespace

void renderChunkedRows(Kernel &k, const ChunkedRows &c) {
  RowOrder order = rowOrder(c.length, c.operandElem, c.kind);
  const int64_t chunks = order.chunks, Q = order.chunkVectors, v = order.vector;
  const int64_t vectors = c.length / v, items = c.rows * chunks;
  std::string acc = valueType(c.elem), init = reduceInit(c.kind, c.elem);
  std::string slots = k.name + "_chunks", done = k.name + "_done";
  k.out.info.kind = einrt::CudaLaunchKind::WarpRows;
  k.out.info.work = items;
  k.out.info.rowLength = Q * v; // the elements one warp reads
  k.src.line("// " + std::to_string(c.rows) + (c.rows == 1 ? " row of " : " rows of ") +
             std::to_string(c.length) + " elements in " + std::to_string(chunks) + " chunks of " +
             std::to_string(Q) + " " + std::to_string(v) +
             "-element vectors: a warp per chunk; the row's last warp combines the chunks");
  k.src.line("__device__ " + acc + " " + slots + "[" + ll(items) + "];");
  k.src.line("__device__ unsigned int " + done + "[" + ll(c.rows) + "];");
  // One block per SM at least, as the row kernels: without it ptxas aimed
  // the chunks' loops at 32 registers and spilled (the fp16-mixed unfused
  // sums of squares on sm_80 and sm_90).
  k.openEntry(1);
  k.src.line("const int lane = threadIdx.x % 32;");
  k.src.open("for (long long w = ein_warp(); w < " + ll(items) + "; w += ein_warps())");
  k.src.line("const long long row = w / " + ll(chunks) + ", chunk = w % " + ll(chunks) + ";");
  k.src.line("const long long base = row * " + ll(c.length) + ";");
  if (c.rowPrologue)
    c.rowPrologue();
  k.src.line(acc + " acc = " + init + ";");
  k.src.line("const long long first = chunk * " + ll(Q) + ";");
  k.src.line("const long long end = first + " + ll(Q) + " < " + ll(vectors) + " ? first + " +
             ll(Q) + " : " + ll(vectors) + ";");
  k.src.open("for (long long q = first + lane; q < end; q += 32)");
  c.combineVector("q");
  k.src.close();
  tree(k.src, c.kind, c.elem);
  k.src.line("int last = 0;");
  k.src.open("if (lane == 0)");
  k.src.line(slots + "[w] = acc;");
  k.src.line("__threadfence(); // the slot before the count");
  k.src.line("last = atomicAdd(&" + done + "[row], 1u) == " + std::to_string(chunks - 1) + "u;");
  k.src.close();
  k.src.open("if (__shfl_sync(0xffffffffu, last, 0))");
  k.src.line("__threadfence(); // every slot of the row after its count");
  k.src.line("const volatile " + acc + " *part = " + slots + " + row * " + ll(chunks) + ";");
  // The chunks' results as a row of `chunks` elements, in RowOrder's order:
  // P partials over vectors of v2, in groups of 32 (a tree each), then the
  // groups' results by a tree — a block's order, taken by this one warp.
  RowOrder second = rowOrder(chunks, c.elem, c.kind);
  const int64_t P = second.partials, v2 = second.vector, vectors2 = chunks / v2;
  k.src.line(acc + " group = " + init + ";");
  k.src.open("for (int g = 0; g < " + std::to_string(P / 32) + "; ++g)");
  k.src.line("acc = " + init + ";");
  k.src.open("for (long long q = g * 32 + lane; q < " + ll(vectors2) + "; q += " + ll(P) + ")");
  k.src.line("#pragma unroll");
  k.src.line("for (int e = 0; e < " + std::to_string(v2) + "; ++e)");
  k.src.line("  acc = " + reduceCombine(c.kind, c.elem, "acc", "part[q * " + ll(v2) + " + e]") +
             ";");
  k.src.close();
  tree(k.src, c.kind, c.elem);
  k.src.line("if (lane == g)");
  k.src.line("  group = acc;");
  k.src.close();
  k.src.line("acc = group;");
  if (P > 32)
    tree(k.src, c.kind, c.elem);
  k.src.open("if (lane == 0)");
  c.finish();
  k.src.line(done + "[row] = 0; // for the next launch");
  k.src.close();
  k.src.close();
  k.src.close();
  k.src.close();
}

} // namespace ein::codegen::cuda
