//===- CudaRenderMovement.cpp - Data movement as CUDA kernels -------------===//
//
// transpose, broadcast, iota: one thread per output element (consecutive
// threads write consecutive elements), the input offset from the output's
// coordinates; a transpose or broadcast that keeps the last dim moves
// 16-byte vectors of it. gather: 16-byte vectors of a row where the row length
// allows; an index outside [0, rows) gives a row of zeros, as the CPU
// kernel. scatter_add: one thread per column and chunk of 1024 rows,
// zeroing them and then adding the updates of each index in its chunk, in
// order (a narrow sum rounded after every addition): deterministic, no
// atomics; an index out of range adds nothing. Elements are moved as stored (no conversion) except
// where they are added or made.
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaRenderInternal.h"

namespace ein::codegen::cuda {

namespace {

/// Rows of a scatter_add's result one thread owns (per column): more rows
/// make fewer threads, each walking every index once.
constexpr int64_t kScatterRowsPerThread = 1024;

std::string zeroOf(ElemKind k) {
  return isFloatKind(k) ? "0.0f" : k == ElemKind::I32 ? "0" : "false";
}

/// The sum over output dims d of coordinate_d(o) * stride[d] (size-1 dims
/// and zero strides skipped).
std::string offsetOf(const std::vector<int64_t> &shape, const std::vector<int64_t> &stride,
                     int64_t count) {
  std::vector<int64_t> os = stridesOf(shape);
  std::string e;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1 || stride[d] == 0)
      continue;
    std::string c = divIndex("o", os[d], count);
    if (d > 0) // the leading coordinate needs no modulo
      c = modIndex(c, shape[d], count);
    e += (e.empty() ? "" : " + ") + std::string("(long long)(") + c + ") * " + ll(stride[d]);
  }
  return e.empty() ? "0" : e;
}

/// `out0[o] = in0[offset(o)]` over every output element; 16-byte vectors
/// where the last output dim is the input's last (stride 1) and a multiple
/// of the vector (every vector then starts aligned in both).
void renderGatherLoop(Kernel &k, const std::vector<int64_t> &stride) {
  const KernelSpec &s = k.spec;
  const std::vector<int64_t> &shape = s.result.shape;
  int64_t n = s.result.count();
  int32_t v = int32_t(16 / storageBytes(s.result.elem));
  if (shape.empty() || stride.back() != 1 || shape.back() % v != 0)
    v = 1;
  std::string offset = offsetOf(shape, stride, n);
  k.out.info.kind = einrt::CudaLaunchKind::Elements;
  k.out.info.work = n / v;
  k.out.info.vector = v;
  if (v > 1)
    k.out.info.aligned = {0, 1};
  k.openEntry();
  std::string vs = std::to_string(v);
  if (v == 1) {
    k.src.open("for (long long o = ein_thread(); o < " + ll(n) + "; o += ein_threads())");
    k.src.line("out0[o] = in0[" + offset + "];");
  } else {
    k.src.open("for (long long w = ein_thread(); w < " + ll(n / v) + "; w += ein_threads())");
    k.src.line("const long long o = w * " + vs + ";");
    k.src.line("ein_store<" + vs + ">(out0 + o, ein_load<" + vs + ">(in0 + " + offset + "));");
  }
  k.src.close();
  k.src.close();
}

} // namespace

void renderTranspose(Kernel &k) {
  // out dim d = in dim perm[d].
  const KernelSpec &s = k.spec;
  std::vector<int64_t> is = stridesOf(s.operands[0].shape);
  std::vector<int64_t> stride(s.result.shape.size(), 0);
  for (size_t d = 0; d < s.dims.size(); ++d)
    stride[d] = is[size_t(s.dims[d])];
  renderGatherLoop(k, stride);
}

void renderBroadcast(Kernel &k) {
  // Input dim j is result dim dims[j]; the others repeat it (stride 0).
  const KernelSpec &s = k.spec;
  const std::vector<int64_t> &inShape = s.operands[0].shape;
  std::vector<int64_t> is = stridesOf(inShape);
  std::vector<int64_t> stride(s.result.shape.size(), 0);
  for (size_t j = 0; j < s.dims.size(); ++j)
    if (inShape[j] != 1)
      stride[size_t(s.dims[j])] = is[j];
  renderGatherLoop(k, stride);
}

void renderIota(Kernel &k) {
  const KernelSpec &s = k.spec;
  int64_t n = s.result.count();
  std::vector<int64_t> os = stridesOf(s.result.shape);
  size_t d = size_t(s.scalar);
  std::string c = divIndex("o", os[d], n);
  if (d > 0)
    c = modIndex(c, s.result.shape[d], n);
  k.out.info.kind = einrt::CudaLaunchKind::Elements;
  k.out.info.work = n;
  k.openEntry();
  k.src.open("for (long long o = ein_thread(); o < " + ll(n) + "; o += ein_threads())");
  k.src.line("const long long c = " + c + "; // the coordinate along dim " + std::to_string(d));
  k.src.line(isFloatKind(s.result.elem) ? "ein_put(out0[o], __ll2float_rn(c));"
                                        : "ein_put(out0[o], (int)c);");
  k.src.close();
  k.src.close();
}

void renderGather(Kernel &k) {
  // out[i, j] = table[ids[i], j].
  const KernelSpec &s = k.spec;
  const KernelTensor &table = s.operands[0];
  int64_t rows = table.shape[0];
  int64_t n = s.result.count(), ids = s.operands[1].count();
  int64_t rowSize = ids ? n / ids : 0;
  ElemKind e = s.result.elem;
  int32_t v = int32_t(16 / storageBytes(e));
  if (rowSize % v != 0)
    v = 1;
  std::string t = storageType(e), vs = std::to_string(v);
  k.out.info.kind = einrt::CudaLaunchKind::Elements;
  k.out.info.work = n / v;
  k.out.info.vector = v;
  if (v > 1)
    k.out.info.aligned = {0, 2}; // the table and the result
  k.src.line("// " + std::to_string(ids) + " rows of " + std::to_string(rowSize) +
             " elements from a table of " + std::to_string(rows) +
             "; an index out of range gives zeros");
  k.openEntry();
  k.src.open("for (long long w = ein_thread(); w < " + ll(n / v) + "; w += ein_threads())");
  k.src.line("const long long i = w * " + vs + ";");
  k.src.line("const int id = in1[" + divIndex("i", rowSize, n) + "];");
  k.src.line("const long long j = " + modIndex("i", rowSize, n) + ";");
  k.src.open("if (id >= 0 && id < " + ll(rows) + ")");
  if (v > 1) {
    k.src.line("ein_store<" + vs + ">(out0 + i, ein_load<" + vs + ">(in0 + (long long)id * " +
               ll(rowSize) + " + j));");
    k.src.middle("} else {");
    k.src.line("ein_vec<" + t + ", " + vs + "> z;");
    k.src.line("#pragma unroll");
    k.src.line("for (int e = 0; e < " + vs + "; ++e)");
    k.src.line("  ein_put(z.v[e], " + zeroOf(e) + ");");
    k.src.line("ein_store<" + vs + ">(out0 + i, z);");
  } else {
    k.src.line("out0[i] = in0[(long long)id * " + ll(rowSize) + " + j];");
    k.src.middle("} else {");
    k.src.line("ein_put(out0[i], " + zeroOf(e) + ");");
  }
  k.src.close();
  k.src.close();
  k.src.close();
}

void renderScatterAdd(Kernel &k) {
  // out = 0; out[ids[i], j] += updates[i, j], i in order. A thread owns a
  // column of a chunk of rows: it zeroes them, then walks every index in
  // order, adding the updates of those in its chunk (so each output element
  // is still the fold of its updates in index order).
  const KernelSpec &s = k.spec;
  int64_t rows = s.result.shape[0], n = s.result.count();
  int64_t columns = rows ? n / rows : 0, ids = s.operands[1].count();
  int64_t chunks = (rows + kScatterRowsPerThread - 1) / kScatterRowsPerThread;
  int64_t chunk = chunks > 1 ? kScatterRowsPerThread : rows;
  ElemKind e = s.result.elem;
  k.out.info.kind = einrt::CudaLaunchKind::Elements;
  k.out.info.work = columns * chunks;
  k.src.line("// " + std::to_string(columns) + " columns of " + std::to_string(rows) +
             " rows in chunks of " + std::to_string(chunk) +
             ", a thread per column and chunk, the " + std::to_string(ids) +
             " indices in order; an index out of range adds nothing");
  k.openEntry();
  k.src.open("for (long long w = ein_thread(); w < " + ll(columns * chunks) +
             "; w += ein_threads())");
  k.src.line("const long long j = " + modIndex("w", columns, columns * chunks) + ";");
  k.src.line("const long long lo = (long long)(" + divIndex("w", columns, columns * chunks) +
             ") * " + ll(chunk) + ";");
  k.src.line("const long long hi = lo + " + ll(chunk) + " < " + ll(rows) + " ? lo + " + ll(chunk) +
             " : " + ll(rows) + ";");
  k.src.line("for (long long r = lo; r < hi; ++r)");
  k.src.line("  ein_put(out0[r * " + ll(columns) + " + j], " + zeroOf(e) + ");");
  k.src.open("for (long long i = 0; i < " + ll(ids) + "; ++i)");
  k.src.line("const int id = in1[i];");
  k.src.open("if (id >= lo && id < hi)");
  k.src.line(std::string(storageType(e)) + " &o = out0[(long long)id * " + ll(columns) + " + j];");
  k.src.line("ein_put(o, " +
             reduceCombine("sum", e, "ein_val(o)", "ein_val(in0[i * " + ll(columns) + " + j])") +
             ");");
  k.src.close();
  k.src.close();
  k.src.close();
  k.src.close();
}

} // namespace ein::codegen::cuda
