//===- FusionRandomTest.cpp - Random elementwise graphs, fused vs reference ===//
//
// Seeded random functions of elementwise ops over one shape, with every kind
// of broadcast operand (scalar, leading rows, trailing bias, a middle dim),
// reductions whose results come back through broadcasts (the shape of
// layernorm and softmax, where a careless group would form a cycle), cmp /
// select, casts, reshapes and a contraction, ops tagged with random phases,
// values returned from the middle of chains. Each function goes through
// ein-fuse-elementwise (the result must verify: a cycle would leave a value
// used before its definition), the CPU lowering and the reference lowering,
// and the two runs must agree within 1e-5.
//
//===----------------------------------------------------------------------===//
#include "../pipeline/Compile.h"
#include "CpuTestSupport.h"

#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <sstream>

using namespace mlir;
using namespace einc::cputest;

namespace {

constexpr const char *kFull = "tensor<4x6x8xf32>";

/// A random function: values of shape 4x6x8 built from the arguments.
std::string randomFunction(unsigned seed, int ops) {
  std::mt19937 gen(seed);
  auto pick = [&](int n) { return int(gen() % unsigned(n)); };
  std::ostringstream body;
  std::vector<std::string> full = {"%x", "%y"};
  int next = 0;
  auto fresh = [&] { return "%v" + std::to_string(next++); };
  auto phase = [&] {
    static const char *phases[] = {"forward", "backward", "optimizer"};
    return std::string(" {ein.phase = \"") + phases[pick(3)] + "\"}";
  };
  // An operand: a full value, or a broadcast of a smaller one.
  auto operand = [&]() -> std::string {
    int k = pick(8);
    if (k >= 4)
      return full[size_t(pick(int(full.size())))];
    std::string b = fresh();
    static const char *sources[] = {"%row dims [0, 1] : tensor<4x6xf32>",
                                    "%bias dims [2] : tensor<8xf32>", "%s dims [] : tensor<f32>",
                                    "%mid dims [1] : tensor<6xf32>"};
    body << "  " << b << " = ein.broadcast " << sources[k] << " -> " << kFull << "\n";
    return b;
  };
  for (int i = 0; i < ops; ++i) {
    std::string v = fresh();
    int k = pick(12);
    if (k < 5) {
      static const char *bin[] = {"add", "sub", "mul", "max", "min"};
      std::string a = operand(), b = operand();
      body << "  " << v << " = ein." << bin[k] << " " << a << ", " << b << phase() << " : " << kFull
           << "\n";
    } else if (k < 7) {
      static const char *un[] = {"tanh", "neg"};
      std::string a = operand();
      body << "  " << v << " = ein." << un[k - 5] << " " << a << phase() << " : " << kFull << "\n";
    } else if (k == 7) { // cmp + select
      std::string c = fresh(), a = operand(), b = operand(), d = operand();
      body << "  " << c << " = ein.cmp lt, " << a << ", " << b << " : " << kFull
           << " -> tensor<4x6x8xi1>\n";
      body << "  " << v << " = ein.select " << c << ", " << a << ", " << d
           << " : tensor<4x6x8xi1>, " << kFull << "\n";
    } else if (k == 8) { // a row statistic read back by a later op
      std::string r = fresh(), rb = fresh(), a = operand();
      body << "  " << r << " = ein.reduce " << (pick(2) ? "sum" : "max") << " " << a
           << " dims [2] : " << kFull << " -> tensor<4x6xf32>\n";
      body << "  " << rb << " = ein.broadcast " << r << " dims [0, 1] : tensor<4x6xf32> -> "
           << kFull << "\n";
      body << "  " << v << " = ein.sub " << full.back() << ", " << rb << " : " << kFull << "\n";
    } else if (k == 9) { // through a reshape and back
      std::string r = fresh(), e = fresh(), a = operand();
      body << "  " << r << " = ein.reshape " << a << " : " << kFull << " -> tensor<24x8xf32>\n";
      body << "  " << e << " = ein.tanh " << r << " : tensor<24x8xf32>\n";
      body << "  " << v << " = ein.reshape " << e << " : tensor<24x8xf32> -> " << kFull << "\n";
    } else if (k == 10) { // a contraction in between
      std::string a = operand();
      body << "  " << v << " = ein.contract " << a
           << ", %w batch [], [] contract [2], [0] : " << kFull << ", tensor<8x8xf32> -> " << kFull
           << "\n";
    } else { // f32 -> i32 -> f32
      std::string c = fresh(), a = operand();
      body << "  " << c << " = ein.cast " << a << " : " << kFull << " -> tensor<4x6x8xi32>\n";
      body << "  " << v << " = ein.cast " << c << " : tensor<4x6x8xi32> -> " << kFull << "\n";
    }
    full.push_back(v);
  }
  // The last value and two from the middle are results.
  std::string r0 = full.back(), r1 = full[full.size() / 2], r2 = full[full.size() / 3];
  std::ostringstream fn;
  fn << "func.func @f(%x: " << kFull << ", %y: " << kFull
     << ", %row: tensor<4x6xf32>, %bias: tensor<8xf32>, %s: tensor<f32>, %mid: tensor<6xf32>, "
        "%w: tensor<8x8xf32>) -> ("
     << kFull << ", " << kFull << ", " << kFull << ") {\n"
     << body.str() << "  return " << r0 << ", " << r1 << ", " << r2 << " : " << kFull << ", "
     << kFull << ", " << kFull << "\n}\n";
  return fn.str();
}

TEST(FusionRandom, FusedProgramsMatchTheReference) {
  int fusedKernels = 0;
  for (unsigned seed = 1; seed <= 60; ++seed) {
    std::string text = randomFunction(seed, 8 + int(seed % 25));
    SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + text);
    auto compiled = einc::testing::parseMLIR(text);
    ASSERT_TRUE(compiled.module) << compiled.errors;
    ASSERT_TRUE(fuse(*compiled.module));
    ASSERT_TRUE(succeeded(verify(*compiled.module)));
    Lowered l = lowerBoth(compiled.module->lookupSymbol<func::FuncOp>("f"));
    ASSERT_TRUE(l.cpu && l.reference) << l.errors;
    for (const einrt::Step &s : l.cpu->steps)
      fusedKernels += s.note.rfind("fused", 0) == 0;
    std::string error;
    double e = compareRuns(l, [&](einrt::Executor &ex) { fillRandom(ex, seed); }, error);
    EXPECT_LT(e, 1e-5) << error;
  }
  // The generator does exercise fusion.
  EXPECT_GT(fusedKernels, 60);
}

// The determinism contract (docs/determinism.md): fusion evaluates the same
// elementwise ops on the same values in the same order, each rounded to
// f32, and leaves reductions and matmuls alone, so fused and unfused CPU
// programs give the same bits (results compared as raw f32, NaNs included).
TEST(FusionRandom, FusedAndUnfusedAreBitIdentical) {
  for (unsigned seed = 1; seed <= 60; ++seed) {
    std::string text = randomFunction(seed, 8 + int(seed % 25));
    SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + text);
    auto fused = einc::testing::parseMLIR(text), unfused = einc::testing::parseMLIR(text);
    ASSERT_TRUE(fused.module && unfused.module) << fused.errors;
    ASSERT_TRUE(fuse(*fused.module));
    Lowered lf = lowerBoth(fused.module->lookupSymbol<func::FuncOp>("f"));
    Lowered lu = lowerBoth(unfused.module->lookupSymbol<func::FuncOp>("f"));
    ASSERT_TRUE(lf.cpu && lu.cpu) << lf.errors << lu.errors;
    std::string error;
    auto run = [&](Lowered &l) {
      auto ex = einrt::Executor::create(*l.cpu, cpuDevice(l), error);
      EXPECT_TRUE(ex) << error;
      fillRandom(*ex, seed);
      EXPECT_TRUE(ex->run(error)) << error;
      return ex;
    };
    auto a = run(lf), b = run(lu);
    ASSERT_TRUE(a && b);
    ASSERT_EQ(a->resultCount(), b->resultCount());
    for (size_t r = 0; r < a->resultCount(); ++r) {
      // Raw bits in the devices' (host) memory: NaN payloads included.
      size_t x = size_t(a->program().results[r]), y = size_t(b->program().results[r]);
      ASSERT_EQ(a->elementCount(x), b->elementCount(y));
      ASSERT_EQ(a->storageOf(x), einrt::StorageType::F32);
      EXPECT_EQ(std::memcmp(a->deviceData(x), b->deviceData(y), 4 * size_t(a->elementCount(x))), 0)
          << "result " << r;
    }
  }
}

} // namespace
