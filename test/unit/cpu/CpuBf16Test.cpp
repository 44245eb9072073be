//===- CpuBf16Test.cpp - bf16 rounding and row kernels on the CPU ---------===//
//
// The kernels' bf16 rounding (KernelBuilder::bf16Bits on store,
// bf16Rounded for every bf16 value a fused kernel makes) against
// runtime/core/FloatFormats' bf16Bits, bit for bit, on every f32 high half with
// the low halves that decide a rounding (ties, one either side, 0, all
// ones): NaN payloads, denormals, overflow to infinity. On every target this
// CPU runs, so the AVX2 code (x86-64-v3) is held to the same bits as the
// AVX-512 code. And the loads of a bf16 row kernel's reductions: whole
// vectors, not one element per lane.
//
//===----------------------------------------------------------------------===//
#include "codegen/CpuKernelGen.h"
#include "codegen/CpuKernels.h"
#include "codegen/CpuTargets.h"
#include "ir/EinOps.h"
#include "runtime/core/FloatFormats.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <regex>

using namespace mlir;
namespace cg = ::ein::codegen;
using cg::KernelCompiler;

namespace {

std::unique_ptr<MLIRContext> newContext() {
  auto ctx = std::make_unique<MLIRContext>();
  ctx->loadDialect<mlir::ein::EinDialect, func::FuncDialect>();
  return ctx;
}

/// Runs kernel `k` over its whole parallel range on `ptrs` (inputs, then
/// results).
void call(const einrt::KernelEntry &k, std::vector<void *> ptrs) {
  std::vector<void *> args;
  for (void *&p : ptrs)
    args.push_back(&p);
  int64_t range[2] = {0, k.extent};
  args.push_back(&range[0]);
  args.push_back(&range[1]);
  k.fn(args.data());
}

/// Every f32 high half with these low halves: ties (0x8000) below odd and
/// even high halves, one either side of them, exact values, all ones.
std::vector<uint32_t> roundingCases() {
  const uint32_t lows[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x4321, 0xC0DE};
  std::vector<uint32_t> bits;
  for (uint32_t hi = 0; hi < 0x10000; ++hi)
    for (uint32_t lo : lows)
      bits.push_back(hi << 16 | lo);
  return bits;
}

TEST(CpuBf16, RoundingIsFloatFormatsBitsOnEveryTarget) {
  const std::vector<uint32_t> bits = roundingCases();
  const int64_t n = int64_t(bits.size());
  const std::string N = std::to_string(n);
  // A lone cast rounds on store; in the fused pair the bf16 value is an
  // intermediate (rounded in f32, then read back as f32).
  const std::string text = "func.func @f(%x: tensor<" + N + "xf32>) -> (tensor<" + N +
                           "xbf16>, tensor<" + N + "xf32>) {\n  %b = ein.cast %x : tensor<" + N +
                           "xf32> -> tensor<" + N + "xbf16>\n  %w = ein.cast %b : tensor<" + N +
                           "xbf16> -> tensor<" + N + "xf32>\n  return %b, %w : tensor<" + N +
                           "xbf16>, tensor<" + N + "xf32>\n}\n";
  auto ctx = newContext();
  auto module = parseSourceString<ModuleOp>(text, ctx.get());
  ASSERT_TRUE(module);
  auto f = *module->getOps<func::FuncOp>().begin();
  SmallVector<Operation *> casts;
  for (Operation &op : f.getBody().front().without_terminator())
    casts.push_back(&op);
  auto pair = cg::describeFusedKernel(casts);
  ASSERT_TRUE(succeeded(pair));
  ASSERT_EQ(pair->outputs.size(), 2u);

  std::vector<uint16_t> want(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) {
    float x;
    std::memcpy(&x, &bits[i], 4);
    want[i] = einrt::bf16Bits(double(x));
  }
  int targets = 0;
  for (const cg::CpuTarget &target : cg::cpuTargets()) {
    if (!cg::hostRuns(target))
      continue;
    SCOPED_TRACE(target.name);
    ++targets;
    auto kc = KernelCompiler::create();
    kc->setTarget(target.name);
    auto lone = kc->add(casts[0]);
    ASSERT_TRUE(succeeded(lone));
    int64_t fused = kc->add(pair->spec);
    ASSERT_TRUE(succeeded(kc->compile()));
    std::vector<uint16_t> stored(bits.size()), storedFused(bits.size());
    std::vector<uint32_t> widened(bits.size());
    call(kc->table()[size_t(*lone)], {(void *)bits.data(), stored.data()});
    call(kc->table()[size_t(fused)], {(void *)bits.data(), storedFused.data(), widened.data()});
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; ++i) {
      bool ok = stored[i] == want[i] && storedFused[i] == want[i] &&
                widened[i] == uint32_t(want[i]) << 16;
      EXPECT_TRUE(ok) << std::hex << "f32 0x" << bits[i] << ": want 0x" << want[i] << ", stored 0x"
                      << stored[i] << ", fused 0x" << storedFused[i] << ", as f32 0x" << widened[i];
      bad += !ok;
    }
  }
  EXPECT_GT(targets, 0);
}

// A fused kernel stores a value it rounded as its high half (no second
// rounding), but a select's pick as the unfused select kernel does: rounded
// on store, so a loaded NaN with a payload is stored as the quiet NaN.
TEST(CpuBf16, FusedOutputsStoreWhatUnfusedKernelsStore) {
  const std::string text = R"(
func.func @f(%x: tensor<65536xbf16>) -> (tensor<65536xbf16>, tensor<65536xbf16>) {
  %n = ein.neg %x : tensor<65536xbf16>
  %c = ein.cmp ne, %x, %x : tensor<65536xbf16> -> tensor<65536xi1>
  %s = ein.select %c, %x, %n : tensor<65536xi1>, tensor<65536xbf16>
  return %n, %s : tensor<65536xbf16>, tensor<65536xbf16>
}
)";
  auto ctx = newContext();
  auto module = parseSourceString<ModuleOp>(text, ctx.get());
  ASSERT_TRUE(module);
  auto f = *module->getOps<func::FuncOp>().begin();
  SmallVector<Operation *> members;
  for (Operation &op : f.getBody().front().without_terminator())
    members.push_back(&op);
  auto group = cg::describeFusedKernel(members);
  ASSERT_TRUE(succeeded(group));
  ASSERT_EQ(group->outputs.size(), 2u);
  std::vector<uint16_t> x(65536);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = uint16_t(i);
  for (const cg::CpuTarget &target : cg::cpuTargets()) {
    if (!cg::hostRuns(target))
      continue;
    SCOPED_TRACE(target.name);
    auto kc = KernelCompiler::create();
    kc->setTarget(target.name);
    int64_t k = kc->add(group->spec);
    ASSERT_TRUE(succeeded(kc->compile()));
    std::vector<uint16_t> neg(x.size()), picked(x.size());
    call(kc->table()[size_t(k)], {x.data(), neg.data(), picked.data()});
    int bad = 0;
    for (size_t i = 0; i < x.size() && bad < 5; ++i) {
      double v = einrt::bf16FromBits(x[i]);
      uint16_t wantNeg = einrt::bf16Bits(-v), wantPicked = einrt::bf16Bits(std::isnan(v) ? v : -v);
      bool ok = neg[i] == wantNeg && picked[i] == wantPicked;
      EXPECT_TRUE(ok) << std::hex << "bf16 0x" << x[i] << ": neg 0x" << neg[i] << " (want 0x"
                      << wantNeg << "), select 0x" << picked[i] << " (want 0x" << wantPicked << ")";
      bad += !ok;
    }
  }
}

// A row kernel reducing a bf16 expression (a LayerNorm's mean and
// variance) computes each round of its partials' elements in a loop over
// consecutive elements: whole-vector i16 loads. Combined straight from the
// partials' loop, which reads every 4th element, the vectoriser loaded them
// one lane at a time (a chain of insertelements per vector).
TEST(CpuBf16, RowReductionsLoadWholeVectors) {
  const std::string text = R"(
func.func @f(%x: tensor<64x256xbf16>) -> tensor<64x256xbf16> {
  %w = ein.cast %x : tensor<64x256xbf16> -> tensor<64x256xf32>
  %s = ein.reduce sum %w dims [1] : tensor<64x256xf32> -> tensor<64xf32>
  %m = ein.cast %s : tensor<64xf32> -> tensor<64xbf16>
  %mb = ein.broadcast %m dims [0] : tensor<64xbf16> -> tensor<64x256xbf16>
  %c = ein.sub %x, %mb : tensor<64x256xbf16>
  %q = ein.mul %c, %c : tensor<64x256xbf16>
  %qw = ein.cast %q : tensor<64x256xbf16> -> tensor<64x256xf32>
  %v = ein.reduce sum %qw dims [1] : tensor<64x256xf32> -> tensor<64xf32>
  %vn = ein.cast %v : tensor<64xf32> -> tensor<64xbf16>
  %vb = ein.broadcast %vn dims [0] : tensor<64xbf16> -> tensor<64x256xbf16>
  %y = ein.mul %c, %vb : tensor<64x256xbf16>
  return %y : tensor<64x256xbf16>
}
)";
  auto ctx = newContext();
  auto module = parseSourceString<ModuleOp>(text, ctx.get());
  ASSERT_TRUE(module);
  auto f = *module->getOps<func::FuncOp>().begin();
  SmallVector<Operation *> members;
  for (Operation &op : f.getBody().front().without_terminator())
    members.push_back(&op);
  auto rows = cg::describeRowsKernel(members);
  ASSERT_TRUE(succeeded(rows));
  auto kc = KernelCompiler::create();
  kc->setKeepOptimizedIR(true);
  kc->add(rows->spec);
  ASSERT_TRUE(succeeded(kc->compile()));
  const std::string &ir = kc->optimizedIR();
  EXPECT_TRUE(std::regex_search(ir, std::regex("load <(4|8|16|32|64) x i16>"))) << ir;
  EXPECT_FALSE(std::regex_search(ir, std::regex("insertelement <(4|8|16|32) x i16>"))) << ir;
}

} // namespace
