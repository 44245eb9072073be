//===- CudaRendererTest.cpp - The CUDA renderer's decisions, per spec -----===//
//
// Kernel descriptions (codegen/CpuKernelGen.h's KernelSpec, written by hand
// here) rendered by codegen/CudaRenderer.h: the launch kind, work count, row
// length, vector width and parameter count each gets, and the source
// features those decisions stand for (16-byte loads, in-place broadcast
// reads, warp shuffles, the in-order narrow sum, no atomics). Where NVRTC is
// available, every kernel here also compiles (sm_90) without spills.
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaRenderer.h"
#include "codegen/CpuKernelGen.h"
#include "runtime/cuda/Nvrtc.h"
#include "test/unit/StatusTesting.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

using ein::codegen::Access;
using ein::codegen::ElemKind;
using ein::codegen::FusedNode;
using ein::codegen::KernelSpec;
using ein::codegen::KernelTensor;
using einrt::CudaLaunchKind;

KernelTensor tensor(ElemKind e, std::vector<int64_t> shape, Access a = Access::Full) {
  KernelTensor t;
  t.elem = e;
  t.shape = std::move(shape);
  t.access = a;
  return t;
}

KernelSpec op(std::string name, std::vector<KernelTensor> operands, KernelTensor result,
              std::string kind = "", std::vector<int64_t> dims = {}) {
  KernelSpec s;
  s.op = std::move(name);
  s.operands = std::move(operands);
  s.result = std::move(result);
  s.kind = std::move(kind);
  s.dims = std::move(dims);
  return s;
}

bool has(const std::string &text, const std::string &what) {
  return text.find(what) != std::string::npos;
}

std::vector<KernelSpec> &rendered() {
  static std::vector<KernelSpec> all; // every spec a test rendered, for NVRTC
  return all;
}

ein::codegen::CudaKernelSource render(const KernelSpec &s, int64_t index = 0) {
  rendered().push_back(s);
  auto k = ein::codegen::renderCudaKernel(s, index, "test note at t.ein:1:1");
  EXPECT_FALSE(has(k.text, "atomic")) << k.text;
  EXPECT_TRUE(has(k.text, "extern \"C\" __global__")) << k.text;
  return k;
}

TEST(CudaRenderer, ElementwiseF32IsVectorisedBy4) {
  const ElemKind f = ElemKind::F32;
  auto k = render(op("ein.add", {tensor(f, {4096}), tensor(f, {4096})}, tensor(f, {4096})), 3);
  EXPECT_EQ(k.info.entry, "k3_add");
  EXPECT_EQ(k.info.kind, CudaLaunchKind::Elements);
  EXPECT_EQ(k.info.vector, 4);
  EXPECT_EQ(k.info.work, 1024);
  EXPECT_EQ(k.info.params, 3);
  EXPECT_EQ(k.info.note, "test note at t.ein:1:1");
  EXPECT_TRUE(has(k.text, "ein_load<4>(in0 + i)")) << k.text;
  EXPECT_TRUE(has(k.text, "ein_store<4>(out0 + i, y0)")) << k.text;
  EXPECT_FALSE(has(k.text, "the last n %")) << "4096 elements need no tail";
  EXPECT_TRUE(has(k.text, "const float *__restrict__ in0")) << k.text;
  EXPECT_TRUE(has(k.text, "ein_add(a0, a1)")) << k.text;
  EXPECT_FALSE(k.bf16 || k.f16);
}

TEST(CudaRenderer, ElementwiseTailIsScalar) {
  const ElemKind f = ElemKind::F32;
  auto k = render(op("ein.exp", {tensor(f, {1003})}, tensor(f, {1003})));
  EXPECT_EQ(k.info.vector, 4);
  EXPECT_EQ(k.info.work, 250 + 3); // 250 vectors, 3 single elements
  EXPECT_TRUE(has(k.text, "the last n % 4 elements")) << k.text;
  // Fewer elements than a vector: scalar.
  auto small = render(op("ein.exp", {tensor(f, {3})}, tensor(f, {3})));
  EXPECT_EQ(small.info.vector, 1);
  EXPECT_EQ(small.info.work, 3);
}

TEST(CudaRenderer, NarrowVectorsAre16Bytes) {
  const ElemKind b = ElemKind::BF16, f = ElemKind::F32;
  auto k = render(op("ein.mul", {tensor(b, {4096}), tensor(b, {4096})}, tensor(b, {4096})));
  EXPECT_EQ(k.info.vector, 8);
  EXPECT_EQ(k.info.work, 512);
  EXPECT_TRUE(k.bf16);
  EXPECT_TRUE(has(k.text, "const __nv_bfloat16 *__restrict__ in0")) << k.text;
  // f32 → bf16: the widest element decides (16 bytes of f32, 8 of bf16).
  auto c = render(op("ein.cast", {tensor(f, {4096})}, tensor(b, {4096})));
  EXPECT_EQ(c.info.entry, "k0_cast_f32_bf16");
  EXPECT_EQ(c.info.vector, 4);
  auto h = render(op("ein.cast", {tensor(ElemKind::F16, {64})}, tensor(f, {64})));
  EXPECT_TRUE(h.f16);
}

TEST(CudaRenderer, DivisionsNarrowTheVector) {
  // At most two f32 divisions per thread (ptxas spills the values live
  // across more of their slow-path calls on sm_80).
  const ElemKind b = ElemKind::BF16, f = ElemKind::F32;
  auto d = render(op("ein.div", {tensor(b, {2048}), tensor(b, {2048})}, tensor(b, {2048})));
  EXPECT_EQ(d.info.vector, 2);
  EXPECT_EQ(d.info.work, 1024);
  KernelSpec s;
  s.op = "ein.fused";
  s.operands = {tensor(f, {1024}), tensor(f, {1024})};
  s.result = tensor(f, {1024});
  s.body.push_back({"ein.div", "", f, f, {0, 1}});
  s.body.push_back({"ein.exp", "", f, f, {-1}});
  s.outputNodes = {1};
  auto one = render(s);
  EXPECT_EQ(one.info.vector, 2);
  EXPECT_TRUE(has(one.text, "ein_load<2>(in0 + i)")) << one.text;
  s.body[1] = {"ein.div", "", f, f, {-1, 1}};
  auto two = render(s);
  EXPECT_EQ(two.info.vector, 1);
  // i32 division is no call: the full vector.
  auto i = render(op("ein.div", {tensor(ElemKind::I32, {1024}), tensor(ElemKind::I32, {1024})},
                     tensor(ElemKind::I32, {1024})));
  EXPECT_EQ(i.info.vector, 4);
}

TEST(CudaRenderer, BroadcastsAreReadInPlace) {
  const ElemKind f = ElemKind::F32;
  // A bias (suffix) and a per-row statistic (prefix) over [32, 768].
  auto bias = render(op("ein.add", {tensor(f, {32, 768}), tensor(f, {768}, Access::Suffix)},
                        tensor(f, {32, 768})));
  EXPECT_EQ(bias.info.vector, 4);
  EXPECT_TRUE(has(bias.text, "in1[(unsigned)(i + e) % 768u]")) << bias.text;
  // Moved in 16-byte vectors, so to start 16-byte aligned: the full
  // operand and the result, not the bias.
  EXPECT_EQ(bias.info.aligned, (std::vector<int32_t>{0, 2}));
  auto mean = render(
      op("ein.sub", {tensor(f, {32, 768}), tensor(f, {32}, Access::Prefix)}, tensor(f, {32, 768})));
  EXPECT_TRUE(has(mean.text, "in1[(unsigned)(i + e) / 768u]")) << mean.text;
  auto scalar = render(
      op("ein.mul", {tensor(f, {32, 768}), tensor(f, {}, Access::Scalar)}, tensor(f, {32, 768})));
  EXPECT_TRUE(has(scalar.text, "const float s1 = ein_val(in1[0]);")) << scalar.text;
}

TEST(CudaRenderer, FusedBodyRoundsNarrowIntermediates) {
  const ElemKind b = ElemKind::BF16;
  KernelSpec s;
  s.op = "ein.fused";
  s.operands = {tensor(b, {64, 256}), tensor(b, {64}, Access::Prefix)};
  s.result = tensor(b, {64, 256});
  s.outer = 64;
  s.inner = 256;
  // sub(x, max) → exp → mul(exp, x); exp also an output.
  s.body.push_back({"ein.sub", "", b, b, {0, 1}});
  s.body.push_back({"ein.exp", "", b, b, {-1}});
  s.body.push_back({"ein.mul", "", b, b, {-2, 0}});
  s.outputNodes = {2, 1};
  s.extraResults = {tensor(b, {64, 256})};
  auto k = render(s, 12);
  EXPECT_EQ(k.info.entry, "k12_fused_sub_exp_mul");
  EXPECT_EQ(k.info.params, 4);
  EXPECT_EQ(k.info.vector, 8);
  EXPECT_TRUE(has(k.text, "const float v0 = ein_round_bf16(ein_sub(a0, a1));")) << k.text;
  EXPECT_TRUE(has(k.text, "const float v1 = ein_round_bf16(ein_exp(v0));")) << k.text;
  // The output only: rounded by its store.
  EXPECT_TRUE(has(k.text, "const float v2 = ein_mul(v1, a0);")) << k.text;
  EXPECT_TRUE(has(k.text, "ein_store<8>(out1 + i, y1)")) << k.text;
  EXPECT_TRUE(has(k.text, "in1[(unsigned)(i + e) / 256u]")) << k.text;
}

TEST(CudaRenderer, TrailingReductionsAreRows) {
  const ElemKind f = ElemKind::F32;
  auto warp = render(op("ein.reduce", {tensor(f, {256, 768})}, tensor(f, {256}), "sum", {1}));
  EXPECT_EQ(warp.info.kind, CudaLaunchKind::WarpRows);
  EXPECT_EQ(warp.info.work, 256);
  EXPECT_EQ(warp.info.rowLength, 768);
  EXPECT_EQ(warp.info.params, 2);
  EXPECT_TRUE(has(warp.text, "__shfl_xor_sync(0xffffffffu, acc, d)")) << warp.text;
  EXPECT_TRUE(has(warp.text, "ein_load<4>(x + j * 4)")) << warp.text;
  EXPECT_FALSE(has(warp.text, "blockDim")) << "a warp's order must not depend on the block";

  // A vocabulary-long row: a block per row, fixed partials.
  auto block = render(op("ein.reduce", {tensor(f, {8, 50304})}, tensor(f, {8}), "max", {1}));
  EXPECT_EQ(block.info.kind, CudaLaunchKind::BlockRows);
  EXPECT_EQ(block.info.work, 8);
  EXPECT_EQ(block.info.rowLength, 50304);
  EXPECT_TRUE(has(block.text, "__shared__ float partial[32];")) << block.text;
  EXPECT_TRUE(has(block.text, "for (int p = threadIdx.x; p < 1024; p += blockDim.x)"))
      << block.text;
  EXPECT_TRUE(has(block.text, "ein_max(acc, ")) << block.text;

  // Rows whose length is no multiple of a vector: single loads.
  auto odd = render(op("ein.reduce", {tensor(f, {10, 50})}, tensor(f, {10}), "sum", {1}));
  EXPECT_EQ(odd.info.kind, CudaLaunchKind::WarpRows);
  EXPECT_TRUE(has(odd.text, "ein_val(x[j])")) << odd.text;
  // A whole-tensor sum is one row.
  auto all = render(op("ein.reduce", {tensor(f, {4, 8, 16})}, tensor(f, {}), "sum", {0, 1, 2}));
  EXPECT_EQ(all.info.kind, CudaLaunchKind::WarpRows);
  EXPECT_EQ(all.info.work, 1);
  EXPECT_EQ(all.info.rowLength, 512);
}

TEST(CudaRenderer, NarrowSumsFoldInOrder) {
  const ElemKind b = ElemKind::BF16;
  auto k = render(op("ein.reduce", {tensor(b, {256, 768})}, tensor(b, {256}), "sum", {1}));
  EXPECT_EQ(k.info.kind, CudaLaunchKind::Elements);
  EXPECT_EQ(k.info.work, 256);
  EXPECT_FALSE(has(k.text, "__shfl")) << k.text;
  EXPECT_TRUE(has(k.text, "acc = ein_round_bf16(ein_add(acc, ein_val(in0[base + r0 * 1])));"))
      << k.text;
  // bf16 max is exact in any order: rows.
  auto m = render(op("ein.reduce", {tensor(b, {256, 768})}, tensor(b, {256}), "max", {1}));
  EXPECT_EQ(m.info.kind, CudaLaunchKind::WarpRows);
  EXPECT_TRUE(has(m.text, "ein_load<8>(x + j * 8)")) << m.text;
}

TEST(CudaRenderer, LeadingReductionsAreColumns) {
  const ElemKind f = ElemKind::F32;
  // A bias gradient: a sum over 1024 rows, blocks of 8-column tiles (32
  // bytes of a row), 128 row slots each.
  auto k = render(op("ein.reduce", {tensor(f, {1024, 768})}, tensor(f, {768}), "sum", {0}));
  EXPECT_EQ(k.info.kind, CudaLaunchKind::BlockRows);
  EXPECT_EQ(k.info.work, 96);
  EXPECT_EQ(k.info.rowLength, 8 * 1024);
  EXPECT_TRUE(has(k.text, "__shared__ float partial[128][8];")) << k.text;
  EXPECT_TRUE(has(k.text, "for (long long r = p / 8; r < 1024; r += 128)")) << k.text;
  EXPECT_TRUE(has(k.text, "for (int slot = 1; slot < 128; ++slot)")) << k.text;
  // bf16 max: 16-column tiles.
  auto bm = render(op("ein.reduce", {tensor(ElemKind::BF16, {4, 256, 100})},
                      tensor(ElemKind::BF16, {100}), "max", {0, 1}));
  EXPECT_EQ(bm.info.kind, CudaLaunchKind::BlockRows);
  EXPECT_EQ(bm.info.work, 7); // ceil(100 / 16)
  // A narrow sum over rows folds in order: one thread per column.
  auto bs = render(op("ein.reduce", {tensor(ElemKind::BF16, {1024, 768})},
                      tensor(ElemKind::BF16, {768}), "sum", {0}));
  EXPECT_EQ(bs.info.kind, CudaLaunchKind::Elements);
  EXPECT_EQ(bs.info.work, 768);
  // Fewer rows: one thread per kept column walking the rows.
  auto few = render(op("ein.reduce", {tensor(f, {64, 768})}, tensor(f, {768}), "sum", {0}));
  EXPECT_EQ(few.info.kind, CudaLaunchKind::Elements);
  EXPECT_EQ(few.info.work, 768);
  EXPECT_TRUE(has(few.text, "for (long long r0 = 0; r0 < 64; ++r0)")) << few.text;
  EXPECT_TRUE(has(few.text, "in0[base + r0 * 768]")) << few.text;
  // Short rows: one thread per row.
  auto s = render(op("ein.reduce", {tensor(f, {4, 10})}, tensor(f, {4}), "min", {1}));
  EXPECT_EQ(s.info.kind, CudaLaunchKind::Elements);
  EXPECT_EQ(s.info.work, 4);
  // A middle dim: [kept, reduced, kept].
  auto mid = render(op("ein.reduce", {tensor(f, {4, 6, 8})}, tensor(f, {4, 8}), "sum", {1}));
  EXPECT_EQ(mid.info.kind, CudaLaunchKind::Elements);
  EXPECT_EQ(mid.info.work, 32);
  // i32 sums wrap: exact in any order, rows.
  auto i = render(
      op("ein.reduce", {tensor(ElemKind::I32, {16, 64})}, tensor(ElemKind::I32, {16}), "sum", {1}));
  EXPECT_EQ(i.info.kind, CudaLaunchKind::WarpRows);
}

TEST(CudaRenderer, DataMovement) {
  const ElemKind f = ElemKind::F32, i32 = ElemKind::I32;
  auto t = render(op("ein.transpose", {tensor(f, {8, 16})}, tensor(f, {16, 8}), "", {1, 0}));
  EXPECT_EQ(t.info.kind, CudaLaunchKind::Elements);
  EXPECT_EQ(t.info.work, 128);
  EXPECT_EQ(t.info.entry, "k0_transpose");
  EXPECT_EQ(t.info.vector, 1); // the last dim moves: element by element
  // A bias materialised along rows keeps its last dim: vectors of it.
  auto b = render(op("ein.broadcast", {tensor(f, {16})}, tensor(f, {8, 16}), "", {1}));
  EXPECT_EQ(b.info.vector, 4);
  EXPECT_EQ(b.info.work, 32);
  // Attention's head split keeps hd last: 16-byte vectors of it.
  auto heads = render(op("ein.transpose", {tensor(ElemKind::BF16, {16, 128, 4, 64})},
                         tensor(ElemKind::BF16, {16, 4, 128, 64}), "", {0, 2, 1, 3}));
  EXPECT_EQ(heads.info.vector, 8);
  EXPECT_EQ(heads.info.work, 16 * 128 * 4 * 64 / 8);
  EXPECT_TRUE(has(heads.text, "ein_store<8>(out0 + o, ein_load<8>(in0 + ")) << heads.text;
  // Along the last dim a broadcast repeats one element: no vectors.
  auto col = render(op("ein.broadcast", {tensor(f, {8})}, tensor(f, {8, 16}), "", {0}));
  EXPECT_EQ(col.info.vector, 1);
  KernelSpec iota = op("ein.iota", {}, tensor(i32, {4, 5}));
  iota.scalar = 1;
  auto io = render(iota);
  EXPECT_EQ(io.info.params, 1);
  EXPECT_TRUE(has(io.text, "% 5u")) << io.text;

  auto g = render(op("ein.gather", {tensor(f, {100, 64}), tensor(i32, {8})}, tensor(f, {8, 64})));
  EXPECT_EQ(g.info.vector, 4);
  EXPECT_EQ(g.info.work, 8 * 64 / 4);
  EXPECT_TRUE(has(g.text, "if (id >= 0 && id < 100)")) << g.text;
  auto s =
      render(op("ein.scatter_add", {tensor(f, {8, 64}), tensor(i32, {8})}, tensor(f, {100, 64})));
  EXPECT_EQ(s.info.kind, CudaLaunchKind::Elements);
  EXPECT_EQ(s.info.work, 64); // one thread per column: 100 rows are one chunk
  EXPECT_TRUE(has(s.text, "for (long long i = 0; i < 8; ++i)")) << s.text;
  // A vocabulary's embedding gradient: chunks of 1024 rows.
  auto big = render(
      op("ein.scatter_add", {tensor(f, {64, 768}), tensor(i32, {64})}, tensor(f, {50304, 768})));
  EXPECT_EQ(big.info.work, 768 * 50); // ceil(50304 / 1024) chunks per column
  EXPECT_TRUE(has(big.text, "if (id >= lo && id < hi)")) << big.text;
  auto r =
      render(op("ein.reshape", {tensor(ElemKind::BF16, {4, 64})}, tensor(ElemKind::BF16, {256})));
  EXPECT_EQ(r.info.vector, 8);
  EXPECT_EQ(r.info.work, 32);
}

TEST(CudaRenderer, StochasticRoundAndCompare) {
  const ElemKind f = ElemKind::F32;
  auto s = render(op("ein.stochastic_round",
                     {tensor(f, {256}), tensor(ElemKind::I32, {}, Access::Scalar)},
                     tensor(ElemKind::BF16, {256})));
  EXPECT_TRUE(has(s.text, "ein_sround_bf16(a0, ein_stochastic_bits(a1, i))")) << s.text;
  auto c = render(
      op("ein.cmp", {tensor(f, {256}), tensor(f, {256})}, tensor(ElemKind::I1, {256}), "lt"));
  EXPECT_EQ(c.info.entry, "k0_cmp_lt");
  EXPECT_TRUE(has(c.text, "(a0 < a1)")) << c.text;
  EXPECT_TRUE(has(c.text, "unsigned char *__restrict__ out0")) << c.text;
}

// Last: every kernel the tests above rendered, through NVRTC.
TEST(CudaRenderer, ZRenderedKernelsCompile) {
  einrt::Expected<const einrt::Nvrtc *> loaded = einrt::Nvrtc::load();
  if (!loaded.ok())
    GTEST_SKIP() << loaded.status().message();
  const einrt::Nvrtc *nvrtc = *loaded;
  if (rendered().empty()) // run alone (a --gtest_filter): the others render the kernels
    GTEST_SKIP() << "no kernels rendered: run the whole CudaRenderer suite";
  std::string body;
  bool bf16 = false, f16 = false;
  for (size_t i = 0; i < rendered().size(); ++i) {
    auto k = ein::codegen::renderCudaKernel(rendered()[i], int64_t(i), "");
    body += k.text;
    bf16 |= k.bf16;
    f16 |= k.f16;
  }
  einrt::NvrtcOptions o;
  o.arch = "sm_90";
  o.cache = false;
  einrt::NvrtcOutput out;
  EINC_ASSERT_OK_AND_ASSIGN(out, nvrtc->compile(ein::codegen::cudaPrelude(bf16, f16) + body, o));
  size_t entries = 0;
  for (const einrt::PtxasReport &r : out.functions) {
    entries += r.entry;
    EXPECT_FALSE(r.spills()) << r.function;
  }
  EXPECT_EQ(entries, rendered().size());
}

} // namespace
