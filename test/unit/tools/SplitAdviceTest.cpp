//===- SplitAdviceTest.cpp - The micro-batch advice builds only splits that can fit -===//
//
// Issue 27: `einc report` of a model that fits neither as is nor with remat
// advises a split of the batch into micro-batches, building the model once
// per split it tries. splitResidentFloor (tools/driver/RematSweep.h) is what
// every split holds whatever its micro-batch; the advice builds no split
// when it exceeds the device. Here: the floor is under every split's
// resident bytes as the split is actually built (several models, precisions,
// optimizers, splits), and the advice builds no split below it and every
// split it has to try above it.
//
//===----------------------------------------------------------------------===//
#include "tools/driver/Frontend.h"
#include "tools/driver/RematSweep.h"
#include "tools/driver/Stages.h"

#include "dsl/Elaborator.h"
#include "passes/RematGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

namespace {

using Overrides = std::vector<std::pair<std::string, std::string>>;

einc::CompileRequest requestFor(const std::string &model, const Overrides &overrides) {
  einc::CompileRequest request;
  request.use = einrt::SettingsUse::Report;
  request.modelPath = std::string(EINC_SOURCE_DIR) + "/examples/" + model + ".ein";
  request.overrides = overrides;
  request.reportDevice = "h100"; // the advice prices each plan's step on it
  return request;
}

/// The sweep einc report makes of `step` on `device` (no ladder).
std::optional<einc::ReportRematSweep>
sweepOf(mlir::ModuleOp step, const einc::CompileRequest &request, const einc::RematDevice &device) {
  std::optional<einc::ReportRematSweep> sweep;
  EXPECT_TRUE(succeeded(
      einc::sweepRemat(step, request, request.settings, &device, /*ladder=*/false, sweep)));
  return sweep;
}

/// The example's step, built and fused as `einc report` builds it before
/// its sweep; `fe` (which must outlive `request`) is its parsed model.
mlir::OwningOpRef<mlir::ModuleOp> buildStep(einc::CompileRequest &request, einc::Frontend &fe,
                                            mlir::MLIRContext &context) {
  if (!fe.load(request.modelPath) || !fe.parse())
    return nullptr;
  mlir::OwningOpRef<mlir::ModuleOp> module = fe.lower(context, request.overrides, request.use);
  fe.printDiagnostics();
  request.settings = fe.settings;
  request.frontend = &fe;
  if (!module || failed(einc::buildTrainStep(*module, fe.settings)) ||
      failed(einc::applyFusion(*module, fe.settings)))
    return nullptr;
  return module;
}

int64_t residentOf(mlir::ModuleOp module, llvm::StringRef name) {
  auto fn = module.lookupSymbol<mlir::func::FuncOp>(name);
  EXPECT_TRUE(fn) << "no @" << name.str();
  return fn ? mlir::ein::RematGraph(fn, {}).residentBytes() : 0;
}

int64_t batchOf(mlir::ModuleOp module) {
  auto dims = module->getAttrOfType<mlir::DictionaryAttr>("ein.dims");
  return dims.getAs<mlir::IntegerAttr>("batch").getInt();
}

TEST(SplitAdvice, FloorIsUnderEverySplitAsBuilt) {
  struct Case {
    std::string model;
    Overrides overrides;
  };
  std::vector<Case> cases = {
      {"gpt", {}},
      {"gpt", {{"precision", "bf16-mixed"}}},
      {"gpt", {{"optimizer", "adagrad"}}},
      {"mlp_lm", {{"precision", "bf16"}}},
      {"mlp_lm", {{"optimizer", "sgd"}}},
      {"mlp_lm", {{"precision", "fp16-mixed"}, {"optimizer", "adam"}}},
  };
  for (const Case &c : cases) {
    mlir::MLIRContext context;
    ein::dsl::registerElaboratorDialects(context);
    einc::CompileRequest o = requestFor(c.model, c.overrides);
    einc::Frontend fe;
    mlir::OwningOpRef<mlir::ModuleOp> step = buildStep(o, fe, context);
    ASSERT_TRUE(step) << c.model;
    auto trainStep = step->lookupSymbol<mlir::func::FuncOp>("train_step");
    int64_t floor = einc::splitResidentFloor(trainStep);
    // At least the params, twice (both functions take them).
    EXPECT_GT(floor, 0) << c.model;
    int64_t batch = batchOf(*step);
    for (int64_t k : {2, 4}) {
      SCOPED_TRACE(c.model + " split " + std::to_string(k));
      einc::CompileRequest split = o;
      split.overrides.push_back({"batch", std::to_string(batch / k)});
      split.overrides.push_back({"accumulate", std::to_string(k)});
      einc::Frontend splitFe;
      mlir::OwningOpRef<mlir::ModuleOp> m = buildStep(split, splitFe, context);
      ASSERT_TRUE(m);
      int64_t held = residentOf(*m, "accumulate_grad") + residentOf(*m, "apply_update");
      EXPECT_LE(floor, held);
      // And a useful floor: at least a quarter (the rest is the gradients
      // and their sums, the results and the micro-batch's inputs).
      EXPECT_GE(4 * floor, held);
    }
  }
}

TEST(SplitAdvice, BuildsNoSplitBelowTheFloor) {
  mlir::MLIRContext context;
  ein::dsl::registerElaboratorDialects(context);
  einc::CompileRequest o = requestFor("gpt", {});
  einc::Frontend fe;
  mlir::OwningOpRef<mlir::ModuleOp> step = buildStep(o, fe, context);
  ASSERT_TRUE(step);
  ASSERT_EQ(batchOf(*step), 16); // splits 2, 4, 8, 16
  int64_t floor = einc::splitResidentFloor(step->lookupSymbol<mlir::func::FuncOp>("train_step"));
  auto adviceOn = [&](int64_t memory) {
    einc::RematDevice device{double(memory), 66.9e12, 66.9e12, 3.35e12};
    std::optional<einc::ReportRematSweep> sweep = sweepOf(*step, o, device);
    EXPECT_TRUE(sweep && sweep->fit);
    return sweep && sweep->fit ? *sweep->fit : einc::ReportFitAdvice{};
  };
  const std::string none = "no plan fits, and no split of the batch (16 rows, halved until it is "
                           "odd) into micro-batches does either";

  einc::ReportFitAdvice below = adviceOn(floor - 1);
  EXPECT_FALSE(below.found);
  EXPECT_EQ(below.splitsBuilt, 0);
  EXPECT_EQ(below.why, none);

  // At the floor every split is built, and none fits (each holds
  // activations besides).
  einc::ReportFitAdvice at = adviceOn(floor);
  EXPECT_FALSE(at.found);
  EXPECT_EQ(at.splitsBuilt, 4);
  EXPECT_EQ(at.why, none);
}

TEST(SplitAdvice, BuildsSplitsUntilOneFits) {
  // remat-sweep.test's split: gpt at 32,768 sequences on an H100's memory.
  mlir::MLIRContext context;
  ein::dsl::registerElaboratorDialects(context);
  einc::CompileRequest o = requestFor("gpt", {{"batch", "32768"}});
  einc::Frontend fe;
  mlir::OwningOpRef<mlir::ModuleOp> step = buildStep(o, fe, context);
  ASSERT_TRUE(step);
  einc::RematDevice h100{80e9, 66.9e12, 66.9e12, 3.35e12};
  std::optional<einc::ReportRematSweep> sweep = sweepOf(*step, o, h100);
  ASSERT_TRUE(sweep && sweep->fit);
  EXPECT_TRUE(sweep->fit->found);
  EXPECT_EQ(sweep->fit->accumulate, 4);
  EXPECT_EQ(sweep->fit->splitsBuilt, 2); // 2 does not fit, 4 does
  EXPECT_LE(sweep->fit->peak, int64_t(80e9));
}

TEST(SplitAdvice, BuildsSplitsFromTheParsedModelNotTheFile) {
  // The splits elaborate the request's parsed model again: the file is not
  // read again (here it is gone by then), nor parsed again.
  llvm::SmallString<128> copy;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("split-advice", "ein", copy));
  ASSERT_FALSE(llvm::sys::fs::copy_file(std::string(EINC_SOURCE_DIR) + "/examples/gpt.ein", copy));
  mlir::MLIRContext context;
  ein::dsl::registerElaboratorDialects(context);
  einc::CompileRequest request = requestFor("gpt", {{"batch", "32768"}});
  request.modelPath = std::string(copy);
  einc::Frontend fe;
  mlir::OwningOpRef<mlir::ModuleOp> step = buildStep(request, fe, context);
  ASSERT_FALSE(llvm::sys::fs::remove(copy));
  ASSERT_TRUE(step);
  einc::RematDevice h100{80e9, 66.9e12, 66.9e12, 3.35e12};
  std::optional<einc::ReportRematSweep> sweep = sweepOf(*step, request, h100);
  ASSERT_TRUE(sweep && sweep->fit);
  EXPECT_TRUE(sweep->fit->found) << sweep->fit->why;
  EXPECT_EQ(sweep->fit->accumulate, 4);
  EXPECT_EQ(sweep->fit->command,
            "einc train " + std::string(copy) + " --set batch=8192 --set accumulate=4" +
                (sweep->fit->remat.empty() ? "" : " --set remat=" + sweep->fit->remat));

  // Without a parsed model there is nothing to split, and the advice says so.
  request.frontend = nullptr;
  sweep = sweepOf(*step, request, h100);
  ASSERT_TRUE(sweep && sweep->fit);
  EXPECT_FALSE(sweep->fit->found);
  EXPECT_EQ(sweep->fit->splitsBuilt, 0);
  EXPECT_EQ(sweep->fit->why,
            "no plan fits, and the model is not at hand to build a split into micro-batches");
}

} // namespace
