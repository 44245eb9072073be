//===- CpuNarrowTest.cpp - bf16/f16 programs on the CPU backend -----------===//
//
// The narrow-float contract (ir/EinOps.td) on the CPU backend against the
// reference backend: storage of 2 bytes, f32 arithmetic, one rounding per op,
// narrow sums folded in order, GEMMs on widened operands. Bit for bit where
// the contract makes it so (exact elementwise ops, casts, narrow folds,
// max/min, data movement, stochastic rounding); contractions within f32
// rounding before their one rounding. Fused against unfused, one thread
// against two: bit for bit.
//
//===----------------------------------------------------------------------===//
#include "../pipeline/Compile.h"
#include "CpuTestSupport.h"
#include "test/unit/StatusTesting.h"

#include "runtime/core/Executor.h"
#include "runtime/cpu/CpuDevice.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace mlir;
using namespace einc::cputest;

namespace {

/// Random arguments: floats in [-2, 2) (rounded to the buffer's type when
/// written), i32 ids in [0, 4).
std::vector<std::vector<double>> randomArgs(const einrt::Program &p, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  std::vector<std::vector<double>> args;
  for (int32_t b : p.arguments) {
    const einrt::Buffer &buf = p.buffers[size_t(b)];
    std::vector<double> v(size_t(buf.elementCount()));
    for (double &x : v)
      x = buf.dtype == einrt::DType::I32 ? double(gen() % 4) : u(gen);
    args.push_back(v);
  }
  return args;
}

std::vector<std::vector<double>> run(const einrt::Program &p, std::shared_ptr<einrt::Device> dev,
                                     const std::vector<std::vector<double>> &args) {
  auto ex = einrt::Executor::create(p, std::move(dev));
  EINC_EXPECT_OK(ex);
  if (!ex.ok())
    return {};
  for (size_t a = 0; a < args.size(); ++a)
    EINC_EXPECT_OK(ex->setArgument(a, args[a].data(), args[a].size()));
  EINC_EXPECT_OK(ex->run());
  std::vector<std::vector<double>> out;
  for (size_t r = 0; r < ex->resultCount(); ++r)
    out.push_back(ex->getResult(r).values);
  return out;
}

/// Bit for bit, NaN equal to NaN.
void expectIdentical(const std::vector<std::vector<double>> &got,
                     const std::vector<std::vector<double>> &want, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t r = 0; r < want.size(); ++r) {
    ASSERT_EQ(got[r].size(), want[r].size()) << what;
    for (size_t i = 0; i < want[r].size(); ++i)
      if (!(std::isnan(got[r][i]) && std::isnan(want[r][i])))
        ASSERT_EQ(got[r][i], want[r][i]) << what << ": result " << r << " element " << i;
  }
}

struct Case {
  const char *name;
  const char *text; // func.func @f
  double tolerance; // 0: bit for bit against the reference
};

// Elementwise chains (fused when the fusion pass runs), casts, selects,
// narrow folds over rows and columns, max, data movement, gather and
// scatter_add, in bf16 and f16.
const char *kExact = R"(
func.func @f(%x: tensor<8x16xT>, %y: tensor<8x16xT>, %ids: tensor<6xi32>, %w: tensor<32xf32>)
    -> (tensor<8x16xT>, tensor<8xT>, tensor<16xT>, tensor<8xT>, tensor<16x8xT>, tensor<6x16xT>,
        tensor<8x16xT>, tensor<8x16xf32>, tensor<32xT>) {
  %a = ein.add %x, %y : tensor<8x16xT>
  %m = ein.mul %a, %x : tensor<8x16xT>
  %d = ein.div %m, %y : tensor<8x16xT>
  %n = ein.neg %d : tensor<8x16xT>
  %s = ein.sqrt %a : tensor<8x16xT>
  %c = ein.cmp lt, %n, %x : tensor<8x16xT> -> tensor<8x16xi1>
  %z = ein.select %c, %n, %s : tensor<8x16xi1>, tensor<8x16xT>
  %big = ein.constant dense<300.0> : tensor<T>
  %bb = ein.broadcast %big dims [] : tensor<T> -> tensor<8x16xT>
  %e = ein.add %z, %bb : tensor<8x16xT>
  %rows = ein.reduce sum %e dims [1] : tensor<8x16xT> -> tensor<8xT>
  %cols = ein.reduce sum %e dims [0] : tensor<8x16xT> -> tensor<16xT>
  %mx = ein.reduce max %x dims [1] : tensor<8x16xT> -> tensor<8xT>
  %t = ein.transpose %e [1, 0] : tensor<8x16xT> -> tensor<16x8xT>
  %g = ein.gather %e, %ids : tensor<8x16xT>, tensor<6xi32> -> tensor<6x16xT>
  %sa = ein.scatter_add %g, %ids : tensor<6x16xT>, tensor<6xi32> -> tensor<8x16xT>
  %wide = ein.cast %e : tensor<8x16xT> -> tensor<8x16xf32>
  %h = ein.cast %w : tensor<32xf32> -> tensor<32xT>
  return %e, %rows, %cols, %mx, %t, %g, %sa, %wide, %h
      : tensor<8x16xT>, tensor<8xT>, tensor<16xT>, tensor<8xT>, tensor<16x8xT>, tensor<6x16xT>,
        tensor<8x16xT>, tensor<8x16xf32>, tensor<32xT>
}
)";

// Contractions: narrow -> f32 and narrow -> narrow, batched, and a layout
// BLAS cannot read (a transpose kernel into a narrow temporary first).
const char *kContract = R"(
func.func @f(%a: tensor<2x5x7xT>, %b: tensor<2x7x3xT>, %c: tensor<7x2x3xT>)
    -> (tensor<2x5x3xf32>, tensor<2x5x3xT>, tensor<2x5x3xT>) {
  %0 = ein.contract %a, %b batch [0], [0] contract [2], [1]
         : tensor<2x5x7xT>, tensor<2x7x3xT> -> tensor<2x5x3xf32>
  %1 = ein.contract %a, %b batch [0], [0] contract [2], [1]
         : tensor<2x5x7xT>, tensor<2x7x3xT> -> tensor<2x5x3xT>
  %2 = ein.contract %a, %c batch [0], [1] contract [2], [0]
         : tensor<2x5x7xT>, tensor<7x2x3xT> -> tensor<2x5x3xT>
  return %0, %1, %2 : tensor<2x5x3xf32>, tensor<2x5x3xT>, tensor<2x5x3xT>
}
)";

// Transcendentals: the kernels' polynomial f32 approximations and libm
// differ by an f32 ulp or so, which a narrow rounding hides but for ties.
const char *kTranscendental = R"(
func.func @f(%x: tensor<64xT>) -> (tensor<64xT>, tensor<64xT>) {
  %e = ein.exp %x : tensor<64xT>
  %t = ein.tanh %e : tensor<64xT>
  return %e, %t : tensor<64xT>, tensor<64xT>
}
)";

std::string instantiate(const char *text, const char *type) {
  std::string s = text;
  for (size_t at = s.find("xT>"); at != std::string::npos; at = s.find("xT>", at))
    s.replace(at + 1, 1, type);
  for (size_t at = s.find("<T>"); at != std::string::npos; at = s.find("<T>", at))
    s.replace(at + 1, 1, type);
  return s;
}

/// The results of `text` on the reference device, and on the CPU device
/// unfused and fused, at one and two threads.
void checkAgainstReference(const char *text, double tolerance, const char *type) {
  std::string src = instantiate(text, type);
  SCOPED_TRACE(std::string(type) + "\n" + src);
  auto unfused = einc::testing::parseMLIR(src);
  auto fusedModule = einc::testing::parseMLIR(src);
  ASSERT_TRUE(unfused.module && fusedModule.module) << unfused.errors;
  ASSERT_TRUE(fuse(*fusedModule.module));
  Lowered plain = lowerBoth(unfused.module->lookupSymbol<func::FuncOp>("f"));
  Lowered fused = lowerBoth(fusedModule.module->lookupSymbol<func::FuncOp>("f"));
  ASSERT_TRUE(plain.cpu && plain.reference) << plain.errors;
  ASSERT_TRUE(fused.cpu) << fused.errors;
  auto args = randomArgs(*plain.reference, 3);
  auto ref = run(*plain.reference, std::make_shared<einrt::HostDevice>(), args);
  auto cpu = run(*plain.cpu, std::make_shared<einrt::CpuDevice>(plain.kernels->table(), 1), args);
  auto cpuFused =
      run(*fused.cpu, std::make_shared<einrt::CpuDevice>(fused.kernels->table(), 2), args);
  expectIdentical(cpuFused, cpu, "fused (2 threads) vs unfused (1 thread)");
  if (tolerance == 0) {
    expectIdentical(cpu, ref, "cpu vs reference");
    return;
  }
  ASSERT_EQ(cpu.size(), ref.size());
  for (size_t r = 0; r < ref.size(); ++r)
    EXPECT_LE(relativeError(cpu[r], ref[r]), tolerance) << "result " << r;
}

TEST(CpuNarrow, ExactOpsAreBitIdenticalToTheReference) {
  for (const char *type : {"bf16", "f16"})
    checkAgainstReference(kExact, 0, type);
}

TEST(CpuNarrow, ContractionsSumInF32AndRoundOnce) {
  // f32 sums in another order than the reference's: equal to f32 rounding
  // before the result's one rounding, i.e. within one unit of the result
  // type in its last place relative to the largest result.
  checkAgainstReference(kContract, std::ldexp(1.0, -7), "bf16");
  checkAgainstReference(kContract, std::ldexp(1.0, -10), "f16");
}

TEST(CpuNarrow, TranscendentalsWithinOneNarrowUlp) {
  checkAgainstReference(kTranscendental, std::ldexp(1.0, -7), "bf16");
  checkAgainstReference(kTranscendental, std::ldexp(1.0, -10), "f16");
}

TEST(CpuNarrow, StorageIsTwoBytesAndGemmWorkspaceIsPlanned) {
  auto m = einc::testing::parseMLIR(instantiate(kContract, "bf16"));
  ASSERT_TRUE(m.module) << m.errors;
  Lowered l = lowerBoth(m.module->lookupSymbol<func::FuncOp>("f"));
  ASSERT_TRUE(l.cpu) << l.errors;
  auto dev = std::make_shared<einrt::CpuDevice>(l.kernels->table(), 1);
  dev->setBf16GemmPath(einrt::Bf16GemmPath::Emulate); // the widened operands, on every CPU
  EXPECT_EQ(dev->storageOf(einrt::DType::BF16), einrt::StorageType::BF16);
  EXPECT_EQ(dev->storageOf(einrt::DType::F16), einrt::StorageType::F16);
  // The largest GEMM's widened operands: A (2x5x7), B (2x7x3) and, for a
  // bf16 result, C (2x5x3) as f32.
  EXPECT_EQ(einrt::CpuDevice::gemmWorkspaceBytes(*l.cpu), (70 + 42 + 30) * 4);
  EXPECT_EQ(dev->gemmWorkspaceBytes(), 0);
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, einrt::Executor::create(*l.cpu, dev));
  EXPECT_EQ(dev->gemmWorkspaceBytes(), (70 + 42 + 30) * 4);
}

// ein.stochastic_round, fused into an update as the bf16 policy uses it.
const char *kStochastic = R"(
func.func @f(%w: tensor<4096xT>, %u: tensor<4096xf32>, %step: tensor<i32>) -> tensor<4096xT> {
  %wide = ein.cast %w : tensor<4096xT> -> tensor<4096xf32>
  %sum = ein.add %wide, %u : tensor<4096xf32>
  %s = ein.broadcast %step dims [] : tensor<i32> -> tensor<4096xi32>
  %r = ein.stochastic_round %sum, %s : tensor<4096xf32>, tensor<4096xi32> -> tensor<4096xT>
  return %r : tensor<4096xT>
}
)";

TEST(CpuNarrow, StochasticRoundIsTheReferencesBitsAtEveryThreadCount) {
  for (const char *type : {"bf16", "f16"}) {
    checkAgainstReference(kStochastic, 0, type);
    // Two seeds give different roundings; the unbiased mean is in the
    // reference tests (runtime-unit NarrowReference).
    auto m = einc::testing::parseMLIR(instantiate(kStochastic, type));
    ASSERT_TRUE(m.module && fuse(*m.module)) << m.errors;
    Lowered l = lowerBoth(m.module->lookupSymbol<func::FuncOp>("f"));
    ASSERT_TRUE(l.cpu) << l.errors;
    auto args = randomArgs(*l.cpu, 5);
    std::fill(args[1].begin(), args[1].end(), 1e-3);
    auto dev = std::make_shared<einrt::CpuDevice>(l.kernels->table(), 2);
    args[2] = {1};
    auto one = run(*l.cpu, dev, args);
    args[2] = {2};
    auto two = run(*l.cpu, dev, args);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_NE(one, two) << type;
  }
}

} // namespace
