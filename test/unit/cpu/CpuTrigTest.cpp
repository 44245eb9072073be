//===- CpuTrigTest.cpp - The CPU kernels' sin and cos against libm -------===//
//
// ein.sin and ein.cos compiled as CPU kernels, held against the reference's
// value (runtime/base/ElementwiseOps.def: std::sin / std::cos of the f32
// element) in ulps, over the angles rotary position embeddings feed them:
// positions times frequencies, up to 2^14 radians, as well as small angles,
// both signs and the special values.
//
//===----------------------------------------------------------------------===//
#include "codegen/CpuKernels.h"
#include "ir/EinOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace mlir;

namespace {

constexpr int64_t kCount = 4096;

/// The distance in ulps between two finite floats of one sign convention
/// (the order of their bit patterns as signed magnitudes).
int64_t ulpsApart(float a, float b) {
  auto ordered = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, 4);
    return i < 0 ? int64_t(std::numeric_limits<int32_t>::min()) - i : int64_t(i);
  };
  return std::llabs(ordered(a) - ordered(b));
}

/// Runs the kernel of `ein.<op>` on `x` and returns its output.
std::vector<float> runKernel(const std::string &op, const std::vector<float> &x) {
  MLIRContext ctx;
  ctx.loadDialect<mlir::ein::EinDialect, func::FuncDialect>();
  std::string type = "tensor<" + std::to_string(x.size()) + "xf32>";
  std::string text = "func.func @f(%x: " + type + ") -> " + type + " {\n  %y = ein." + op +
                     " %x : " + type + "\n  return %y : " + type + "\n}\n";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
  EXPECT_TRUE(module) << text;
  if (!module)
    return {};
  Operation *target = nullptr;
  module->walk([&](Operation *o) {
    if (o->getName().getStringRef() == "ein." + op)
      target = o;
  });
  auto kc = ::ein::codegen::KernelCompiler::create();
  FailureOr<int64_t> index = kc->add(target);
  EXPECT_TRUE(succeeded(index));
  EXPECT_TRUE(succeeded(kc->compile()));
  if (failed(index))
    return {};
  std::vector<float> in = x, out(x.size(), std::numeric_limits<float>::quiet_NaN());
  void *inPtr = in.data(), *outPtr = out.data();
  const einrt::KernelEntry &kernel = kc->table()[*index];
  int64_t range[2] = {0, kernel.extent};
  void *args[] = {&inPtr, &outPtr, &range[0], &range[1]};
  kernel.fn(args);
  return out;
}

/// The angles: uniform in [-2π, 2π], positions × frequencies up to 2^14
/// (both signs), tiny ones, and the special values.
std::vector<float> angles() {
  std::mt19937 rng(29);
  std::vector<float> x;
  std::uniform_real_distribution<float> small(-6.2831853f, 6.2831853f);
  std::uniform_real_distribution<float> large(-16384.0f, 16384.0f);
  for (int64_t i = 0; i < kCount / 2 - 8; ++i)
    x.push_back(small(rng));
  for (int64_t i = 0; i < kCount / 2 - 8; ++i)
    x.push_back(i % 2 ? large(rng) : float(i) * 0.015625f); // positions × 2^-6
  for (float s : {0.0f, -0.0f, 1e-30f, -1e-20f, 3.1415927f, 1.5707964f, 4096.0f, 8191.0f,
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(), 1e30f, -1e30f, 1e-8f, 100.0f, -100.0f})
    x.push_back(s);
  return x;
}

/// At most `bound` ulps from std::sin / std::cos of the f32 element; NaN
/// where the reference is NaN (±inf and NaN in).
void expectWithin(const std::string &op, float (*ref)(float), int64_t bound) {
  std::vector<float> x = angles();
  std::vector<float> got = runKernel(op, x);
  ASSERT_EQ(got.size(), x.size());
  int64_t worst = 0, bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    float want = ref(x[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got[i])) << op << "(" << x[i] << ") = " << got[i];
      continue;
    }
    int64_t apart = ulpsApart(got[i], want);
    worst = std::max(worst, apart);
    if (apart > bound && ++bad <= 5) {
      ADD_FAILURE() << op << "(" << x[i] << ") = " << got[i] << ", reference " << want << " ("
                    << apart << " ulps apart)";
    }
  }
  std::cout << op << ": worst " << worst << " ulps apart over " << x.size() << " angles, " << bad
            << " over " << bound << "\n";
  EXPECT_EQ(bad, 0);
}

TEST(CpuTrig, SinWithinOneUlpOfTheReference) {
  expectWithin("sin", [](float v) { return std::sin(v); }, 1);
}

TEST(CpuTrig, CosWithinOneUlpOfTheReference) {
  expectWithin("cos", [](float v) { return std::cos(v); }, 1);
}

} // namespace
