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
#include "RandomGraphs.h"
#include "test/unit/StatusTesting.h"

#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>

using namespace mlir;
using namespace einc::cputest;

namespace {

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
    EINC_ASSERT_OK_AND_ASSIGN(double e,
                              compareRuns(l, [&](einrt::Executor &ex) { fillRandom(ex, seed); }));
    EXPECT_LT(e, 1e-5);
  }
  // The generator does exercise fusion.
  EXPECT_GT(fusedKernels, 60);
}

// The determinism contract (docs/determinism.md): fusion evaluates the same
// elementwise ops on the same values in the same order, each rounded to
// f32, and leaves reductions and matmuls alone, so fused and unfused CPU
// programs give the same bits (results compared as raw f32, NaNs included).
TEST(FusionRandom, FusedAndUnfusedAreBitIdentical) {
  // Iota steps: unfused every iota is one; fused, those every reader
  // computes from its index are none (an iota read through a broadcast
  // splitting its dims, by a reduction alone or by a contraction is still
  // written).
  int iotaStepsFused = 0, iotaStepsUnfused = 0;
  auto iotaSteps = [](const einrt::Program &p) {
    return int(llvm::count_if(
        p.steps, [](const einrt::Step &s) { return s.note.rfind("ein.iota", 0) == 0; }));
  };
  for (unsigned seed = 1; seed <= 60; ++seed) {
    std::string text = randomFunction(seed, 8 + int(seed % 25));
    SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + text);
    auto fused = einc::testing::parseMLIR(text), unfused = einc::testing::parseMLIR(text);
    ASSERT_TRUE(fused.module && unfused.module) << fused.errors;
    ASSERT_TRUE(fuse(*fused.module));
    Lowered lf = lowerBoth(fused.module->lookupSymbol<func::FuncOp>("f"));
    Lowered lu = lowerBoth(unfused.module->lookupSymbol<func::FuncOp>("f"));
    ASSERT_TRUE(lf.cpu && lu.cpu) << lf.errors << lu.errors;
    iotaStepsFused += iotaSteps(*lf.cpu);
    iotaStepsUnfused += iotaSteps(*lu.cpu);
    auto run = [&](Lowered &l) -> einrt::Expected<einrt::Executor> {
      einrt::Expected<einrt::Executor> ex = einrt::Executor::create(*l.cpu, cpuDevice(l));
      if (!ex.ok())
        return ex;
      fillRandom(*ex, seed);
      EINRT_TRY(ex->run());
      return ex;
    };
    EINC_ASSERT_OK_AND_ASSIGN(einrt::Executor a, run(lf));
    EINC_ASSERT_OK_AND_ASSIGN(einrt::Executor b, run(lu));
    ASSERT_EQ(a.resultCount(), b.resultCount());
    for (size_t r = 0; r < a.resultCount(); ++r) {
      // Raw bits in the devices' (host) memory: NaN payloads included.
      size_t x = size_t(a.program().results[r]), y = size_t(b.program().results[r]);
      ASSERT_EQ(a.elementCount(x), b.elementCount(y));
      ASSERT_EQ(a.storageOf(x), einrt::StorageType::F32);
      EXPECT_EQ(std::memcmp(a.deviceData(x), b.deviceData(y), 4 * size_t(a.elementCount(x))), 0)
          << "result " << r;
    }
  }
  EXPECT_GT(iotaStepsFused, 0);
  EXPECT_LT(iotaStepsFused, iotaStepsUnfused);
  std::printf("[fusion-random] iota steps: %d unfused, %d fused\n", iotaStepsUnfused,
              iotaStepsFused);
}

} // namespace
