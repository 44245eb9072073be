//===- CudaRenderRows.cpp - Reductions as CUDA kernels --------------------===//
//
// A reduce over trailing dims (rows × rowLength: softmax's max and sum,
// layernorm's moments, cross-entropy's log-sum-exp) reads each row once:
//
//   WarpRows   one warp per row: lane l combines the row's vectors l, l + 32,
//              ... in order, then the 32 lanes a fixed xor-shuffle tree;
//   BlockRows  one block per row (rows of kBlockRowsFrom elements or more):
//              kBlockRowSlots partials, partial s combining vectors s, s +
//              1024, ... in order; each warp-sized group of partials by a
//              shuffle tree, the 32 groups by another. A thread takes the
//              partials threadIdx.x, threadIdx.x + blockDim.x, ...: whatever
//              the block size, the same partials are combined the same way.
//
//   chunked    rows of kChunkedRowsFrom elements or more: a warp per chunk
//              across the device, the last chunk's warp combines the row
//              (CudaRenderChunks.cpp).
//
// So the order of the combination depends on the row length alone. Vectors
// are 16 bytes where the row length allows (every row then starts 16-byte
// aligned), else single elements. This reassociates f32 sums (ir/EinOps.td
// allows it: equal to the CPU's up to f32 rounding); i32 sums wrap (exact in
// any order), max / min are exact in any order. A bf16 / f16 sum is a fold
// in its own type, in row-major order: one thread per output walks its
// elements in that order, the CPU kernel's order exactly, as do rows shorter
// than a warp and every other reduction whose reduced dims are not the
// trailing ones. A sum (max, min) over the leading dims of 256 rows or more
// (a bias gradient) is BlockRows over tiles of columns (renderColumns: each
// block reads 32-byte row segments; its 1024 partials are row slots of the
// tile, combined in slot order); fewer rows, or a narrow sum, one thread per
// kept column walking the rows in order.
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaRenderInternal.h"
#include "codegen/RowOrder.h"

namespace ein::codegen::cuda {

namespace {

/// Rows from which a sum over rows gets blocks of column tiles instead of a
/// thread per column walking every row.
constexpr int64_t kColumnTilesFrom = 256;

/// `acc = combine(acc, other lane's acc)` over a 32-lane xor tree.
void shuffleTree(Source &src, const KernelSpec &s) {
  src.line("#pragma unroll");
  src.line("for (int d = 16; d > 0; d /= 2)");
  src.line("  acc = " +
           reduceCombine(s.kind, s.result.elem, "acc", "__shfl_xor_sync(0xffffffffu, acc, d)") +
           ";");
}

/// acc combined with vector j of the row at x (its elements in order).
void combineVector(Kernel &k, int32_t v, const std::string &j) {
  const KernelSpec &s = k.spec;
  std::string t = storageType(s.operands[0].elem), vs = std::to_string(v);
  if (v == 1) {
    k.src.line("acc = " + reduceCombine(s.kind, s.result.elem, "acc", "ein_val(x[" + j + "])") +
               ";");
    return;
  }
  k.src.line("const ein_vec<" + t + ", " + vs + "> c = ein_load<" + vs + ">(x + " + j + " * " + vs +
             ");");
  k.src.line("#pragma unroll");
  k.src.line("for (int e = 0; e < " + vs + "; ++e)");
  k.src.line("  acc = " + reduceCombine(s.kind, s.result.elem, "acc", "ein_val(c.v[e])") + ";");
}

/// The loop combining a row's vectors j = first, first + step, ... into acc.
void rowLoop(Kernel &k, int64_t rowLength, int32_t v, const std::string &first,
             const std::string &step) {
  k.src.open("for (long long j = " + first + "; j < " + ll(rowLength / v) + "; j += " + step + ")");
  combineVector(k, v, "j");
  k.src.close();
}

void renderRows(Kernel &k, int64_t rows, int64_t rowLength) {
  const KernelSpec &s = k.spec;
  ElemKind e = s.result.elem;
  std::string acc = valueType(e), init = reduceInit(s.kind, e);
  std::string t = storageType(s.operands[0].elem);
  // The order (vectors, partials) is codegen/RowOrder.h's, shared with the
  // CPU kernels and the row kernels.
  RowOrder order = rowOrder(rowLength, s.operands[0].elem, s.kind);
  int32_t v = int32_t(order.vector);
  if (order.chunks > 0) {
    ChunkedRows c;
    c.rows = rows;
    c.length = rowLength;
    c.kind = s.kind;
    c.elem = e;
    c.operandElem = s.operands[0].elem;
    c.rowPrologue = [&] { k.src.line("const " + t + " *x = in0 + base;"); };
    c.combineVector = [&](const std::string &q) { combineVector(k, v, q); };
    c.finish = [&] { k.src.line("ein_put(out0[row], acc);"); };
    return renderChunkedRows(k, c);
  }
  bool block = order.partials > 32;
  k.out.info.kind = block ? einrt::CudaLaunchKind::BlockRows : einrt::CudaLaunchKind::WarpRows;
  k.out.info.work = rows;
  k.out.info.rowLength = rowLength;
  if (v > 1)
    k.out.info.aligned = {0};
  k.src.line("// " + std::to_string(rows) + (rows == 1 ? " row of " : " rows of ") +
             std::to_string(rowLength) + " elements, " + (block ? "a block" : "a warp") +
             " per row, " + std::to_string(v * storageBytes(s.operands[0].elem)) + "-byte loads");
  k.openEntry();
  if (block)
    k.src.line("__shared__ " + acc + " partial[" + std::to_string(kBlockRowSlots / 32) + "];");
  k.src.line("const int lane = threadIdx.x % 32;");
  k.src.open(block
                 ? "for (long long row = blockIdx.x; row < " + ll(rows) + "; row += gridDim.x)"
                 : "for (long long row = ein_warp(); row < " + ll(rows) + "; row += ein_warps())");
  k.src.line("const " + t + " *x = in0 + row * " + ll(rowLength) + ";");
  if (!block) {
    k.src.line(acc + " acc = " + init + ";");
    rowLoop(k, rowLength, v, "lane", "32");
    shuffleTree(k.src, s);
    k.src.line("if (lane == 0)");
    k.src.line("  ein_put(out0[row], acc);");
  } else {
    std::string slots = std::to_string(kBlockRowSlots);
    k.src.line("// Partial p combines vectors p, p + " + slots + ", ...; in warp-sized groups.");
    k.src.open("for (int p = threadIdx.x; p < " + slots + "; p += blockDim.x)");
    k.src.line(acc + " acc = " + init + ";");
    rowLoop(k, rowLength, v, "p", slots);
    shuffleTree(k.src, s);
    k.src.line("if (lane == 0)");
    k.src.line("  partial[p / 32] = acc;");
    k.src.close();
    k.src.line("__syncthreads();");
    k.src.open("if (threadIdx.x < 32)");
    k.src.line(acc + " acc = partial[lane];");
    shuffleTree(k.src, s);
    k.src.line("if (lane == 0)");
    k.src.line("  ein_put(out0[row], acc);");
    k.src.close();
    k.src.line("__syncthreads(); // partial is reused by the next row");
  }
  k.src.close();
  k.src.close();
}

/// A sum (or max, min) over the leading dims: R rows of C columns. A block
/// per tile of W columns (32 bytes of a row: one memory sector), the
/// kBlockRowSlots partials of a tile as S = kBlockRowSlots / W row slots of
/// W columns: slot s combines rows s, s + S, ... in order, then each
/// column's S slots combine in slot order. Virtual threads as in BlockRows,
/// so any block size gives the same order.
void renderColumns(Kernel &k, int64_t rows, int64_t columns) {
  const KernelSpec &s = k.spec;
  ElemKind e = s.result.elem;
  std::string acc = valueType(e), init = reduceInit(s.kind, e);
  int64_t width = 32 / storageBytes(s.operands[0].elem);
  int64_t slots = kBlockRowSlots / width;
  int64_t tiles = (columns + width - 1) / width;
  std::string w = std::to_string(width), sl = std::to_string(slots);
  k.out.info.kind = einrt::CudaLaunchKind::BlockRows;
  k.out.info.work = tiles;
  k.out.info.rowLength = width * rows; // the elements one block reads
  k.src.line("// " + std::to_string(rows) + " rows of " + std::to_string(columns) +
             " columns combined over the rows: a block per " + w + " columns, " + sl +
             " row slots");
  k.openEntry();
  k.src.line("__shared__ " + acc + " partial[" + sl + "][" + w + "];");
  k.src.open("for (long long tile = blockIdx.x; tile < " + ll(tiles) + "; tile += gridDim.x)");
  k.src.open("for (int p = threadIdx.x; p < " + std::to_string(kBlockRowSlots) +
             "; p += blockDim.x)");
  k.src.line("const long long column = tile * " + w + " + p % " + w + ";");
  k.src.line(acc + " acc = " + init + ";");
  k.src.line("if (column < " + ll(columns) + ")");
  k.src.line("  for (long long r = p / " + w + "; r < " + ll(rows) + "; r += " + sl + ")");
  k.src.line("    acc = " +
             reduceCombine(s.kind, e, "acc", "ein_val(in0[r * " + ll(columns) + " + column])") +
             ";");
  k.src.line("partial[p / " + w + "][p % " + w + "] = acc;");
  k.src.close();
  k.src.line("__syncthreads();");
  k.src.open("for (int p = threadIdx.x; p < " + w + "; p += blockDim.x)");
  k.src.line("const long long column = tile * " + w + " + p;");
  k.src.line(acc + " acc = partial[0][p];");
  k.src.line("for (int slot = 1; slot < " + sl + "; ++slot)");
  k.src.line("  acc = " + reduceCombine(s.kind, e, "acc", "partial[slot][p]") + ";");
  k.src.line("if (column < " + ll(columns) + ")");
  k.src.line("  ein_put(out0[column], acc);");
  k.src.close();
  k.src.line("__syncthreads(); // partial is reused by the next tile");
  k.src.close();
  k.src.close();
}

/// One thread per output element, its inputs combined in row-major order.
void renderPerOutput(Kernel &k) {
  const KernelSpec &s = k.spec;
  ElemKind e = s.result.elem;
  int64_t outputs = s.result.count(), inputs = s.operands[0].count();
  std::vector<ReduceGroup> groups = reduceGroups(s);
  k.out.info.kind = einrt::CudaLaunchKind::Elements;
  k.out.info.work = outputs;
  k.src.line("// one thread per output, its " + std::to_string(outputs ? inputs / outputs : 0) +
             " inputs in row-major order");
  k.openEntry();
  k.src.open("for (long long o = ein_thread(); o < " + ll(outputs) + "; o += ein_threads())");
  std::string base;
  for (const ReduceGroup &g : groups)
    if (!g.reduced) {
      std::string c = modIndex(divIndex("o", g.outStride, outputs), g.size, outputs);
      base +=
          (base.empty() ? "" : " + ") + std::string("(long long)(") + c + ") * " + ll(g.inStride);
    }
  k.src.line("const long long base = " + (base.empty() ? std::string("0") : base) + ";");
  k.src.line(std::string(valueType(e)) + " acc = " + reduceInit(s.kind, e) + ";");
  std::string at = "base";
  int loops = 0;
  for (const ReduceGroup &g : groups)
    if (g.reduced) {
      std::string r = "r" + std::to_string(loops++);
      k.src.open("for (long long " + r + " = 0; " + r + " < " + ll(g.size) + "; ++" + r + ")");
      at += " + " + r + " * " + ll(g.inStride);
    }
  if (inputs > 0)
    k.src.line("acc = " + reduceCombine(s.kind, e, "acc", "ein_val(in0[" + at + "])") + ";");
  for (int l = 0; l < loops; ++l)
    k.src.close();
  k.src.line("ein_put(out0[o], acc);");
  k.src.close();
  k.src.close();
}

} // namespace

bool trailingRows(const KernelSpec &s, int64_t &rows, int64_t &rowLength) {
  if (s.operands[0].count() == 0)
    return false;
  std::vector<ReduceGroup> groups = reduceGroups(s);
  if (groups.empty() || !groups.back().reduced)
    return false;
  if (groups.size() == 1) {
    rows = 1;
  } else if (groups.size() == 2 && !groups[0].reduced) {
    rows = groups[0].size;
  } else {
    return false;
  }
  rowLength = groups.back().size;
  return true;
}

bool leadingRows(const KernelSpec &s, int64_t &rows, int64_t &columns) {
  if (s.operands[0].count() == 0)
    return false;
  std::vector<ReduceGroup> groups = reduceGroups(s);
  if (groups.size() != 2 || !groups[0].reduced || groups[1].reduced)
    return false;
  rows = groups[0].size;
  columns = groups[1].size;
  return true;
}

void renderReduce(Kernel &k) {
  const KernelSpec &s = k.spec;
  int64_t rows = 0, rowLength = 0;
  // A narrow sum folds in order (ir/EinOps.td): never reassociated.
  bool anyOrder = !(isNarrowKind(s.result.elem) && s.kind == "sum");
  if (anyOrder && trailingRows(s, rows, rowLength) && rowLength >= 32)
    return renderRows(k, rows, rowLength);
  int64_t columns = 0;
  if (anyOrder && leadingRows(s, rows, columns) && rows >= kColumnTilesFrom)
    return renderColumns(k, rows, columns);
  renderPerOutput(k);
}

} // namespace ein::codegen::cuda
