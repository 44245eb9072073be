//===- GemmEpilogueTest.cpp - Matmul steps with an epilogue (GemmPost) ----===//
//
// The cpu device runs a Matmul step's epilogue kernel on each tile of C
// right after the tile's product: its results must be the bits of the
// unfused path (the product, then the kernel as its own step) at every
// thread count, for single matrices cut into tiles, batches and outer
// loops, kernels whose iterations are rows or elements, and (whole-C
// fallback) kernels whose iterations span rows. The kernels are written
// here in C++ against the KernelFn ABI (runtime/core/Program.h). Validation of
// the epilogue's buffers and the program file's round trip of the fields.
//
//===----------------------------------------------------------------------===//
#include "ProgramBuilder.h"
#include "test/unit/StatusOut.h"

#include "runtime/core/Executor.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/ParallelChunks.h"
#include "runtime/io/ModelBundle.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <random>

using namespace einrt;
using einrt::test::ProgramBuilder;

namespace {

int64_t gColumns = 0; // N of the GEMM under test (the kernels' row length)
std::atomic<int64_t> gCalls{0};

int64_t beginOf(void **args, int n) { return *static_cast<int64_t *>(args[n]); }
int64_t endOf(void **args, int n) { return *static_cast<int64_t *>(args[n + 1]); }

/// Iterations are rows: out = tanh(c + bias[j]) · 0.5, pre = c + bias[j].
void biasTanh(void **args) {
  const float *c = *static_cast<float **>(args[0]);
  const float *bias = *static_cast<float **>(args[1]);
  float *out = *static_cast<float **>(args[2]);
  float *pre = *static_cast<float **>(args[3]);
  ++gCalls;
  for (int64_t r = beginOf(args, 4); r < endOf(args, 4); ++r)
    for (int64_t j = 0; j < gColumns; ++j) {
      int64_t i = r * gColumns + j;
      pre[i] = c[i] + bias[j];
      out[i] = std::tanh(pre[i]) * 0.5f;
    }
}

/// Iterations are elements: out = c · c + residual.
void squarePlus(void **args) {
  const float *c = *static_cast<float **>(args[0]);
  const float *res = *static_cast<float **>(args[1]);
  float *out = *static_cast<float **>(args[2]);
  ++gCalls;
  for (int64_t i = beginOf(args, 3); i < endOf(args, 3); ++i)
    out[i] = c[i] * c[i] + res[i];
}

std::vector<double> randoms(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<size_t>(n));
  for (double &x : v)
    x = float(u(gen));
  return v;
}

/// A GEMM shape: `matrices` C matrices m x n (as a batch, or as an outer
/// loop around a batch of 1), A m x k, B k x n.
struct Shape {
  int64_t batch, loops, m, n, k;
};

/// One Matmul (fused: with `kernel` as its epilogue; else followed by a
/// Kernel step of it) over inputs A, B and `extra` (the kernel's second
/// operand, `extraShape`), writing `outputs` buffers shaped like C.
Program matmulProgram(const Shape &s, bool fused, int64_t kernel, std::vector<int64_t> extraShape,
                      int outputs) {
  const int64_t matrices = s.batch * s.loops;
  ProgramBuilder pb;
  int32_t a = pb.arg(DType::F32, {matrices, s.m, s.k});
  int32_t b = pb.arg(DType::F32, {matrices, s.k, s.n});
  int32_t extra = pb.arg(DType::F32, std::move(extraShape));
  std::vector<int64_t> plan = {s.batch, s.m, s.n, s.k,       0,         0,
                               s.k,     s.n, s.n, s.m * s.k, s.k * s.n, s.m * s.n};
  std::vector<int64_t> loops;
  if (s.loops > 1)
    loops = {s.loops, s.batch * s.m * s.k, s.batch * s.k * s.n, s.batch * s.m * s.n};
  std::vector<int64_t> shapeC = {matrices, s.m, s.n};
  int32_t c = pb.step(StepKind::Matmul, {a, b}, DType::F32, shapeC, {plan, loops});
  std::vector<int32_t> outs;
  for (int o = 0; o < outputs; ++o)
    outs.push_back(pb.buffer(DType::F32, shapeC, BufferRole::Temp));
  if (fused) {
    Step &st = pb.p.steps.back();
    st.inputs.push_back(extra);
    GemmPost &post = st.as<GemmDesc>().post;
    post.kernel = kernel;
    post.operands = {c, extra};
    post.outputs = outs;
  } else {
    KernelLaunch launch{kernel, {}};
    launch.extraOutputs.assign(outs.begin() + 1, outs.end());
    pb.p.steps.emplace_back(StepKind::Kernel, std::vector<int32_t>{c, extra}, outs[0], launch,
                            "test kernel");
  }
  for (int32_t o : outs)
    pb.result(o);
  return pb.p;
}

/// The results' bits of `p` on a cpu device with `kernels` at `threads`.
std::vector<std::vector<float>> run(const Program &p, std::vector<KernelEntry> kernels, int threads,
                                    unsigned seed) {
  std::string error;
  auto ex = statusOut(Executor::create(p, std::make_shared<CpuDevice>(std::move(kernels), threads)),
                      error);
  EXPECT_TRUE(ex) << error;
  if (!ex)
    return {};
  for (size_t i = 0; i < p.arguments.size(); ++i) {
    std::vector<double> v = randoms(p.buffers[p.arguments[i]].elementCount(), seed + unsigned(i));
    EXPECT_TRUE(statusOut(ex->setArgument(i, v.data(), v.size()), error)) << error;
  }
  EXPECT_TRUE(statusOut(ex->run(), error)) << error;
  std::vector<std::vector<float>> out;
  for (size_t r = 0; r < p.results.size(); ++r) {
    std::vector<double> v = einrt::test::valuesOf(*ex, size_t(p.results[r]));
    out.emplace_back(v.begin(), v.end());
  }
  return out;
}

bool sameBits(const std::vector<std::vector<float>> &x, const std::vector<std::vector<float>> &y) {
  if (x.size() != y.size())
    return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i].size() != y[i].size() ||
        std::memcmp(x[i].data(), y[i].data(), x[i].size() * sizeof(float)) != 0)
      return false;
  return true;
}

TEST(GemmEpilogue, RowBlocksGiveTheUnfusedBits) {
  // 256 x 96 x 192: 9.4 MFLOP, cut into row blocks; a batch of 3 and an
  // outer loop of 2 around a batch of 2 (chunks of whole matrices); one
  // small GEMM (a single chunk).
  const Shape shapes[] = {
      {1, 1, 256, 96, 192}, {3, 1, 64, 48, 80}, {2, 2, 40, 24, 300}, {1, 1, 5, 7, 3}};
  for (const Shape &s : shapes) {
    gColumns = s.n;
    std::vector<KernelEntry> table = {KernelEntry(&biasTanh, s.batch * s.loops * s.m)};
    Program fused = matmulProgram(s, true, 0, {s.n}, 2);
    Program unfused = matmulProgram(s, false, 0, {s.n}, 2);
    ASSERT_EQ(fused.validate().message(), "");
    std::vector<std::vector<float>> want = run(unfused, table, 1, 7);
    for (int threads : {1, 2}) {
      gCalls = 0;
      EXPECT_TRUE(sameBits(run(fused, table, threads, 7), want))
          << s.m << "x" << s.n << "x" << s.k << " batch " << s.batch << " at " << threads
          << " threads";
      // The kernel ran in the GEMM's chunks: the big single matrix in
      // several row blocks, not one pass over C after the product.
      if (s.m == 256) {
        EXPECT_GT(gCalls.load(), 1);
      }
    }
  }
}

// A matrix wide enough to be cut into column tiles too (300 x 640: 2 x 2
// tiles of ParallelChunks.h). A kernel whose iterations are elements runs
// on each tile, one range per row of it; one whose iterations are rows
// cannot run on part of a row, so it runs over C after the product — the
// GEMM cut as without an epilogue, so fused and unfused are the same bits.
TEST(GemmEpilogue, ColumnTilesGiveTheUnfusedBits) {
  const Shape s = {1, 1, 300, 640, 64};
  gColumns = s.n;
  MatmulChunks plan = planMatmulChunks(1, s.m, s.n, s.k);
  ASSERT_EQ(plan.rowBlocks, 2);
  ASSERT_EQ(plan.colBlocks, 2);
  std::vector<KernelEntry> flat = {KernelEntry(&squarePlus, s.m * s.n)};
  Program fused = matmulProgram(s, true, 0, {1, s.m, s.n}, 1);
  Program unfused = matmulProgram(s, false, 0, {1, s.m, s.n}, 1);
  std::vector<std::vector<float>> want = run(unfused, flat, 1, 5);
  for (int threads : {1, 2, 3}) {
    gCalls = 0;
    EXPECT_TRUE(sameBits(run(fused, flat, threads, 5), want)) << threads << " threads";
    EXPECT_EQ(gCalls.load(), 2 * s.m) << "one call per row of each of the two columns of tiles";
  }
  std::vector<KernelEntry> rows = {KernelEntry(&biasTanh, s.m)};
  Program fusedRows = matmulProgram(s, true, 0, {s.n}, 2);
  Program unfusedRows = matmulProgram(s, false, 0, {s.n}, 2);
  std::vector<std::vector<float>> wantRows = run(unfusedRows, rows, 1, 5);
  for (int threads : {1, 2})
    EXPECT_TRUE(sameBits(run(fusedRows, rows, threads, 5), wantRows)) << threads << " threads";
}

TEST(GemmEpilogue, ElementIterationsAndWholeCFallback) {
  const Shape s = {1, 1, 128, 72, 256};
  gColumns = s.n;
  const int64_t elements = s.m * s.n;
  // Iterations are elements (per = 1): row blocks.
  std::vector<KernelEntry> flat = {KernelEntry(&squarePlus, elements)};
  Program fused = matmulProgram(s, true, 0, {1, s.m, s.n}, 1);
  Program unfused = matmulProgram(s, false, 0, {1, s.m, s.n}, 1);
  std::vector<std::vector<float>> want = run(unfused, flat, 1, 3);
  for (int threads : {1, 2})
    EXPECT_TRUE(sameBits(run(fused, flat, threads, 3), want)) << threads << " threads";
  // One iteration spans several rows (extent 2: 64 rows each): the
  // device computes the product whole first, then the kernel once.
  gCalls = 0;
  std::vector<KernelEntry> coarse = {KernelEntry(&squarePlus, 1)};
  EXPECT_TRUE(sameBits(run(fused, coarse, 2, 3), run(unfused, coarse, 1, 3)));
}

TEST(GemmEpilogue, Validation) {
  const Shape s = {1, 1, 4, 8, 6};
  auto problem = [&](auto edit) {
    Program p = matmulProgram(s, true, 0, {s.n}, 2);
    edit(p.steps.back());
    return p.validate().message();
  };
  auto contains = [](const std::string &text, const char *what) {
    return text.find(what) != std::string::npos;
  };
  EXPECT_EQ(problem([](Step &) {}), "");
  EXPECT_TRUE(contains(problem([](Step &st) { st.as<GemmDesc>().post.operands[1] = 0; }),
                       "is neither C nor an input after A and B"));
  EXPECT_TRUE(contains(problem([](Step &st) { st.as<GemmDesc>().post.operands.pop_back(); }),
                       "input 2 is not one of its operands"));
  EXPECT_TRUE(contains(problem([](Step &st) { st.as<GemmDesc>().post.outputs.clear(); }),
                       "epilogue: writes no buffer"));
  EXPECT_TRUE(
      contains(problem([](Step &st) { st.as<GemmDesc>().epilogue = GemmEpilogue::Accumulate; }),
               "accumulat"));
  EXPECT_TRUE(contains(problem([](Step &st) {
                         st.as<GemmDesc>().post.outputs[1] = st.as<GemmDesc>().post.outputs[0];
                       }),
                       "is written twice"));
  // The typed reading names the kernel's buffers.
  EXPECT_TRUE(contains(problem([](Step &st) {
                         GemmPost &post = st.as<GemmDesc>().post;
                         post.library = true;
                         post.result = st.inputs[0];
                       }),
                       "is not one of its outputs"));
  EXPECT_TRUE(contains(problem([](Step &st) {
                         GemmPost &post = st.as<GemmDesc>().post;
                         post.library = true;
                         post.result = post.outputs[0];
                         post.residual = st.inputs[2]; // the 8-element bias
                       }),
                       "the residual (buffer 2) must be an input of C's elements"));
  EXPECT_EQ(problem([](Step &st) {
              GemmPost &post = st.as<GemmDesc>().post;
              post.library = true;
              post.result = post.outputs[0];
              post.bias = st.inputs[2];
              post.activation = GemmActivation::Gelu;
              post.aux = post.outputs[1];
            }),
            "");
  // The device checks the epilogue's kernel is in its table.
  std::string error;
  Program p = matmulProgram(s, true, 3, {s.n}, 2);
  EXPECT_FALSE(statusOut(Executor::create(p, std::make_shared<CpuDevice>()), error));
  EXPECT_TRUE(contains(error, "launches kernel 3")) << error;
}

TEST(GemmEpilogue, ProgramFileRoundTrip) {
  Program p = matmulProgram({1, 1, 4, 8, 6}, true, 0, {8}, 2);
  GemmPost &post = p.steps.back().as<GemmDesc>().post;
  post.library = true;
  post.alpha = 0.125;
  post.bias = p.steps.back().inputs[2];
  post.activation = GemmActivation::Gelu;
  post.result = post.outputs[0];
  post.aux = post.outputs[1];
  p.name = "forward";
  ModelBundle bundle;
  bundle.writtenBy = "einc 0.1.0 (test)";
  bundle.modelName = "tiny";
  bundle.programs.push_back({"cpu", p});
  auto bytes = serializeModelBundle(bundle);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto back = parseModelBundle(bytes->data(), bytes->size(), "tiny.einprog");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->programs.size(), 1u);
  const GemmPost &read = back->programs[0].program.steps.back().as<GemmDesc>().post;
  EXPECT_EQ(read.kernel, 0);
  EXPECT_EQ(read.operands, post.operands);
  EXPECT_EQ(read.outputs, post.outputs);
  EXPECT_TRUE(read.library);
  EXPECT_EQ(read.alpha, 0.125);
  EXPECT_EQ(read.bias, post.bias);
  EXPECT_EQ(read.activation, GemmActivation::Gelu);
  EXPECT_EQ(read.aux, post.aux);
  EXPECT_EQ(back->programs[0].program, p);
}

} // namespace
