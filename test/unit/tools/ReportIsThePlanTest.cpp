//===- ReportIsThePlanTest.cpp - The report's peak is the runtime's arena -===//
//
// Issue 10: "Memory planning is one analysis: the report's peak equals the
// planned arena (a test for both examples and every optimizer)". Each
// example is compiled by compileModel as `einc report` and `einc train`
// compile it; the @train_step Program it lowered is then planned by the
// runtime exactly as an Executor on a CPU device allocates it, and the
// report's peak, arena and resident block must be those bytes.
//
//===----------------------------------------------------------------------===//
#include "tools/driver/Compile.h"
#include "tools/driver/Frontend.h"

#include "dsl/Elaborator.h"
#include "runtime/core/Arena.h"
#include "runtime/core/Executor.h"
#include "runtime/cpu/CpuDevice.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <map>

namespace {

struct Case {
  std::string model, optimizer;
  std::vector<std::pair<std::string, std::string>> overrides;
};

std::string name(const Case &c) {
  std::string n = c.model + "/" + c.optimizer;
  for (auto &[k, v] : c.overrides)
    n += " " + k + "=" + v;
  return n;
}

/// compileModel of the example under `c`, as `einc report --device cpu`.
bool compile(const Case &c, mlir::MLIRContext &context, einc::CompiledModel &out,
             mlir::OwningOpRef<mlir::ModuleOp> &module) {
  einc::CompileRequest request;
  request.use = einrt::SettingsUse::Report;
  request.modelPath = std::string(EINC_SOURCE_DIR) + "/examples/" + c.model + ".ein";
  request.optimizer = c.optimizer;
  request.overrides = c.overrides;
  einc::Frontend fe;
  if (!fe.load(request.modelPath) || !fe.parse())
    return false;
  module = fe.lower(context, request.overrides, request.use);
  fe.printDiagnostics();
  if (!module)
    return false;
  request.functions = {"train_step"};
  request.jit = false;
  request.report = true;
  request.reportDevice = "h100";
  request.settings = fe.settings;
  request.frontend = &fe;
  return einc::compileModel(*module, request, out);
}

TEST(ReportIsThePlan, BothExamplesEveryOptimizer) {
  std::vector<Case> cases;
  for (std::string model : {"mlp_lm", "gpt"})
    for (std::string opt : {"adamw", "adam", "sgd", "adagrad"})
      cases.push_back({model, opt, {}});
  cases.push_back({"mlp_lm", "sgd", {{"momentum", "0.9"}}});
  cases.push_back({"mlp_lm", "adamw", {{"fusion", "off"}}});
  cases.push_back({"gpt", "adamw", {{"clip", "1.0"}}});

  for (const Case &c : cases) {
    SCOPED_TRACE(name(c));
    mlir::MLIRContext context;
    ein::dsl::registerElaboratorDialects(context);
    einc::CompiledModel compiled;
    mlir::OwningOpRef<mlir::ModuleOp> module;
    ASSERT_TRUE(compile(c, context, compiled, module));
    ASSERT_TRUE(compiled.report.has_value());
    const einrt::Program *step = compiled.program("train_step");
    ASSERT_NE(step, nullptr);
    const einc::Report &r = *compiled.report;
    EXPECT_EQ(r.optimizer, c.optimizer);
    EXPECT_EQ(r.plannedBackend, "cpu");

    // What an Executor of this Program allocates on the CPU device.
    einrt::CpuDevice cpu;
    int64_t allocated = einrt::Executor::plannedBytes(*step, cpu);
    einrt::MemoryPlan plan = einrt::planMemory(*step, einrt::StorageSizes::of(cpu));
    EXPECT_EQ(allocated, plan.totalBytes());
    EXPECT_EQ(r.peakBytes, allocated);
    EXPECT_EQ(r.arenaBytes, plan.arenaBytes);
    EXPECT_EQ(r.residentBytes, plan.residentBytes);
    // The timeline is the plan's, step by step, and peaks where it does.
    ASSERT_EQ(r.liveAfter.size(), step->steps.size());
    ASSERT_GE(r.peakOpIndex, 0);
    EXPECT_EQ(r.liveAfter[size_t(r.peakOpIndex)], plan.residentBytes + plan.liveBytes);
    EXPECT_EQ(r.peakOp, step->steps[size_t(r.peakOpIndex)].note);
    // The arena holds the saved activations at least (they are live from
    // the forward to the backward) and is not the whole step's values.
    EXPECT_GE(r.arenaBytes, r.activationBytes) << "arena below the saved activations";
    EXPECT_GT(r.residentBytes, r.paramBytes + r.optimizerBytes - 1);
    // The bundle carries the same report.
    EXPECT_NE(compiled.bundle.reportJson.find("\"peak\": " + std::to_string(r.peakBytes)),
              std::string::npos);
  }
}

/// The predicted peak ein-remat recorded on @train_step (0: the pass did
/// not run, as for `none`).
int64_t predictedPeak(mlir::ModuleOp module) {
  auto fn = module.lookupSymbol<mlir::func::FuncOp>("train_step");
  auto record = fn ? fn->getAttrOfType<mlir::DictionaryAttr>("ein.remat") : nullptr;
  auto peak = record ? record.getAs<mlir::IntegerAttr>("predicted_peak") : nullptr;
  return peak ? peak.getInt() : 0;
}

// Issue 11: "the planned arena of @train_step equals the report's peak for
// that policy, and shrinks as predicted". Per remat policy, both examples:
// the report's peak is what the executor allocates, and it is exactly the
// peak the remat pass predicted for its plan (RematGraph models the memory
// plan of the fused, lowered step); on gpt every checkpointing policy
// shrinks the arena.
TEST(ReportIsThePlan, EveryRematPolicy) {
  struct Expect {
    std::string model, policy;
    bool shrinks; // the arena is below `none`'s
  };
  std::vector<Expect> cases = {
      {"gpt", "none", false},
      {"gpt", "full", true},
      {"gpt", "every:3", true},
      {"gpt", "sqrt", true},
      {"gpt", "selective", true},
      {"gpt", "names:x,logits", true},
      // Keeping only the layer norms' outputs and the attention weights
      // recomputes the rest at the start of the backward all at once: more
      // memory than `none`, and the report says so.
      {"gpt", "names:h,att", false},
      {"mlp_lm", "none", false},
      {"mlp_lm", "full", false},
      {"mlp_lm", "selective", false},
      {"mlp_lm", "names:x,logits", false},
  };
  std::map<std::string, int64_t> noneArena;
  for (const Expect &e : cases) {
    for (std::string fusion : {"on", "off"}) {
      SCOPED_TRACE(e.model + " remat=" + e.policy + " fusion=" + fusion);
      mlir::MLIRContext context;
      ein::dsl::registerElaboratorDialects(context);
      einc::CompiledModel compiled;
      mlir::OwningOpRef<mlir::ModuleOp> module;
      ASSERT_TRUE(compile({e.model, "adamw", {{"remat", e.policy}, {"fusion", fusion}}}, context,
                          compiled, module));
      const einrt::Program *step = compiled.program("train_step");
      ASSERT_NE(step, nullptr);
      const einc::Report &r = *compiled.report;
      einrt::CpuDevice cpu;
      EXPECT_EQ(r.peakBytes, einrt::Executor::plannedBytes(*step, cpu));
      EXPECT_EQ(r.remat.policy, e.policy);
      if (e.policy == "none") {
        EXPECT_EQ(predictedPeak(*module), 0);
        EXPECT_EQ(r.flops.recompute, 0);
        noneArena[e.model + fusion] = r.arenaBytes;
        continue;
      }
      EXPECT_EQ(predictedPeak(*module), r.peakBytes) << "the remat model is not the plan";
      if (e.shrinks) {
        EXPECT_LT(r.arenaBytes, noneArena[e.model + fusion]);
        EXPECT_GT(r.flops.recompute, 0);
      }
    }
  }
}

// Issue 12: "the report's peak still equals the planned arena" under every
// precision policy. The report prices the IR the policy built, each buffer
// at its dtype's width, and the executor of the CPU device (bf16/f16 stored
// as 2 bytes) allocates exactly that; under the narrow policies the float
// activations the backward saves are narrow, but for the sums' statistics.
TEST(ReportIsThePlan, EveryPrecisionPolicy) {
  for (std::string model : {"mlp_lm", "gpt"}) {
    int64_t fp32Activations = 0;
    for (std::string policy : {"fp32", "bf16-mixed", "fp16-mixed", "bf16"}) {
      SCOPED_TRACE(model + " precision=" + policy);
      mlir::MLIRContext context;
      ein::dsl::registerElaboratorDialects(context);
      einc::CompiledModel compiled;
      mlir::OwningOpRef<mlir::ModuleOp> module;
      ASSERT_TRUE(compile({model, "adamw", {{"precision", policy}}}, context, compiled, module));
      const einrt::Program *step = compiled.program("train_step");
      ASSERT_NE(step, nullptr);
      const einc::Report &r = *compiled.report;
      EXPECT_EQ(r.precision, policy);
      EXPECT_EQ(r.plannedBackend, "cpu");
      einrt::CpuDevice cpu;
      int64_t allocated = einrt::Executor::plannedBytes(*step, cpu);
      einrt::MemoryPlan plan = einrt::planMemory(*step, einrt::StorageSizes::of(cpu));
      EXPECT_EQ(r.peakBytes, allocated);
      EXPECT_EQ(r.arenaBytes, plan.arenaBytes);
      EXPECT_EQ(r.residentBytes, plan.residentBytes);
      EXPECT_GE(r.arenaBytes, r.activationBytes);
      // Narrow activations but for the f32 statistics of sums (one value
      // per row: a norm's variance, a softmax's log-sum), element for
      // element those of fp32 within 1% (a few statistics are saved both in f32
      // and rounded): 2 bytes each where fp32 has 4.
      const char *narrow = policy == "fp32" ? "f32" : policy == "fp16-mixed" ? "f16" : "bf16";
      int64_t narrowBytes = 0, f32Bytes = 0;
      for (const auto &[dtype, bytes] : r.activationBytesByDtype) {
        if (dtype == narrow)
          narrowBytes += bytes;
        else if (dtype == "f32")
          f32Bytes += bytes;
        else
          EXPECT_TRUE(dtype == "i1" || dtype == "i32") << dtype;
      }
      if (policy == "fp32") {
        fp32Activations = narrowBytes;
      } else {
        EXPECT_NEAR(double(2 * narrowBytes + f32Bytes), double(fp32Activations),
                    double(fp32Activations) / 100)
            << "not the fp32 activations halved";
        EXPECT_LT(100 * f32Bytes, fp32Activations) << "more than statistics kept in f32";
      }
      // Bytes per param: AdamW's two f32 moments, f32 grads and the f32
      // master under the mixed policies, bf16 params and grads under bf16
      // (fp16-mixed adds the loss scaler's three scalars to the state).
      EXPECT_NEAR(r.bytesPerParam, policy == "bf16" ? 12.0 : 16.0, 13.0 / double(r.params));
      EXPECT_EQ(r.masterBytes, policy == "bf16-mixed" || policy == "fp16-mixed" ? r.paramBytes : 0);
    }
  }
}

} // namespace
