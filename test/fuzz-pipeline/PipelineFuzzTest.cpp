//===- PipelineFuzzTest.cpp - The pipeline fuzzer's own tests -------------===//
//
// The verifier instrumentation names a pass that leaves invalid IR even when
// the pass claims to preserve everything (MLIR's own verifier then skips),
// and einc's stages verify their result once, after their last pass;
// fusion keeps the report's ledgers; the generator is deterministic and its
// programs pass the front end; the bound of Compare.h; the combinations of
// settings cover every pair; issue 9's and issue 25's reproducers pass every
// check, and so do the programs of the corpus (test/fuzz-pipeline/corpus).
//
//===----------------------------------------------------------------------===//
#include "Combinations.h"
#include "Compare.h"
#include "Ledgers.h"
#include "PassVerifier.h"
#include "PipelineCheck.h"
#include "ProgramGenerator.h"

#include "dsl/Elaborator.h"
#include "dsl/Parser.h"
#include "passes/Passes.h"
#include "tools/driver/Stages.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace mlir;
using namespace einc::pipelinefuzz;

namespace {

/// Moves a function's last op before the first: its operands no longer
/// dominate it. Claims to preserve every analysis, as a careless pass might.
struct BreakDominance : public PassWrapper<BreakDominance, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(BreakDominance)
  StringRef getArgument() const override { return "test-break-dominance"; }
  void runOnOperation() override {
    Block &block = getOperation().getBody().front();
    Operation *last = block.getTerminator()->getPrevNode();
    last->moveBefore(&block.front());
    markAllAnalysesPreserved();
  }
};

constexpr const char *kFunction = R"(
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ein.neg %x : tensor<4xf32>
  %1 = ein.tanh %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
)";

OwningOpRef<ModuleOp> parse(MLIRContext &context) {
  ::ein::dsl::registerElaboratorDialects(context);
  return parseSourceString<ModuleOp>(kFunction, &context);
}

TEST(PassVerifier, NamesThePassThatLeavesInvalidIR) {
  MLIRContext context;
  auto module = parse(context);
  ASSERT_TRUE(module);
  PassLog log;
  DiagnosticCapture capture(context, log.diagnostics);
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(std::make_unique<BreakDominance>());
  instrument(pm, log);
  (void)pm.run(*module);
  EXPECT_EQ(log.failedPass, "test-break-dominance (left invalid IR)");
  EXPECT_NE(log.diagnostics.find("does not dominate this use"), std::string::npos)
      << log.diagnostics;
}

// Without the instrumentation the same pass goes unnoticed: MLIR skips its
// verifier after a pass that preserves all analyses.
TEST(PassVerifier, MLIRAloneMissesIt) {
  MLIRContext context;
  auto module = parse(context);
  ASSERT_TRUE(module);
  std::string diagnostics;
  DiagnosticCapture capture(context, diagnostics);
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(std::make_unique<BreakDominance>());
  EXPECT_TRUE(succeeded(pm.run(*module)));
  EXPECT_TRUE(failed(verify(*module)));
}

/// BreakDominance, without claiming to preserve anything: MLIR's per-pass
/// verifier would stop the pipeline after it.
struct BreakDominanceHonestly
    : public PassWrapper<BreakDominanceHonestly, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(BreakDominanceHonestly)
  StringRef getArgument() const override { return "test-break-dominance-honestly"; }
  void runOnOperation() override {
    Block &block = getOperation().getBody().front();
    block.getTerminator()->getPrevNode()->moveBefore(&block.front());
  }
};

/// Counts the functions it runs on.
struct CountRuns : public PassWrapper<CountRuns, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CountRuns)
  explicit CountRuns(int &runs) : runs(runs) {}
  void runOnOperation() override { ++runs; }
  int &runs;
};

// einc's stages (tools/driver/Stages.h) verify their result once, at the end,
// not after each pass (on a large model that cost as much as the passes):
// a pass after one that left invalid IR still runs, and the stage fails all
// the same — also where the bad pass claims to preserve everything, which
// MLIR's per-pass verifier lets through (MLIRAloneMissesIt). The pipeline
// fuzzer's hook turns the per-pass verifier back on and names the pass.
TEST(Stages, VerifyTheirResultOnce) {
  einrt::TrainSettings settings; // fusion all
  for (bool claimsPreserved : {false, true}) {
    SCOPED_TRACE(claimsPreserved ? "claims to preserve all" : "preserves nothing");
    MLIRContext context;
    auto module = parse(context);
    ASSERT_TRUE(module);
    std::string diagnostics;
    DiagnosticCapture capture(context, diagnostics);
    int runs = 0;
    auto breakIt = [&](PassManager &pm) {
      if (claimsPreserved)
        pm.addNestedPass<func::FuncOp>(std::make_unique<BreakDominance>());
      else
        pm.addNestedPass<func::FuncOp>(std::make_unique<BreakDominanceHonestly>());
      pm.addNestedPass<func::FuncOp>(std::make_unique<CountRuns>(runs));
    };
    EXPECT_TRUE(failed(einc::applyFusion(*module, settings, breakIt)));
    EXPECT_EQ(runs, 1);
    EXPECT_NE(diagnostics.find("does not dominate this use"), std::string::npos) << diagnostics;
  }

  MLIRContext context;
  auto module = parse(context);
  ASSERT_TRUE(module);
  PassLog log;
  DiagnosticCapture capture(context, log.diagnostics);
  int runs = 0;
  EXPECT_TRUE(failed(einc::applyFusion(*module, settings, [&](PassManager &pm) {
    pm.addNestedPass<func::FuncOp>(std::make_unique<BreakDominanceHonestly>());
    pm.addNestedPass<func::FuncOp>(std::make_unique<CountRuns>(runs));
    instrument(pm, log);
  })));
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(log.failedPass, "test-break-dominance-honestly (left invalid IR)");
}

// Fusion keeps the ledgers; a function with one more op does not.
TEST(Ledgers, FusedMatchesUnfusedAndOtherFunctionsDoNot) {
  MLIRContext context;
  auto unfused = parse(context), fused = parse(context);
  ASSERT_TRUE(unfused && fused);
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(mlir::ein::createEinFuseElementwise());
  ASSERT_TRUE(succeeded(pm.run(*fused)));
  auto f = fused->lookupSymbol<func::FuncOp>("f"), u = unfused->lookupSymbol<func::FuncOp>("f");
  EXPECT_EQ(compareLedgers(f, u), "");
  auto other = parseSourceString<ModuleOp>(R"(
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ein.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
)",
                                           &context);
  ASSERT_TRUE(other);
  EXPECT_NE(compareLedgers(f, other->lookupSymbol<func::FuncOp>("f")), "");
}

TEST(Generator, IsDeterministic) {
  EXPECT_EQ(generateProgram(5).text, generateProgram(5).text);
  EXPECT_NE(generateProgram(5).text, generateProgram(6).text);
}

// The front end alone on many more seeds than the slice runs in full.
TEST(Generator, ProgramsPassTheFrontEnd) {
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    std::string text = generateProgram(seed).text;
    MLIRContext context;
    ::ein::dsl::registerElaboratorDialects(context);
    ::ein::dsl::SourceFile file("gen.ein", text);
    ::ein::dsl::DiagnosticEngine diags(file);
    auto program = ::ein::dsl::parseProgram(file, diags);
    einrt::TrainSettings settings;
    ::ein::dsl::ElaborateOptions options;
    options.use = einrt::SettingsUse::Execute;
    options.settings = &settings;
    if (!diags.hasErrors())
      (void)::ein::dsl::elaborate(*program, file, diags, context, options);
    std::string errors;
    llvm::raw_string_ostream os(errors);
    diags.print(os);
    EXPECT_FALSE(diags.hasErrors()) << "seed " << seed << "\n" << errors << text;
  }
}

TEST(Compare, BoundFollowsFloat32Noise) {
  RunResults r64{{"g"}, {{1.0, 0.0}}, {}}, r32{{"g"}, {{1.0, 1e-7}}, {}},
      lucky{{"g"}, {{1.0, 0.0}}, {}};
  // The noise is the worst sample's: a lucky one does not shrink it.
  std::vector<double> noise = noiseOf({{r32, r64}, {lucky, r64}});
  ASSERT_EQ(noise.size(), 1u);
  EXPECT_DOUBLE_EQ(noise[0], 1e-7);
  bool nonFinite = false;
  // Within 32x the reference's own float32 error: fine; 1000x: not.
  RunResults close{{"g"}, {{1.0, 1e-6}}, {}}, far{{"g"}, {{1.0, 1e-4}}, {}};
  EXPECT_EQ(compareWithReference(close, r64, noise, nonFinite), "");
  EXPECT_NE(compareWithReference(far, r64, noise, nonFinite), "");
  Skips skips = {{"g", {false, true}}};
  EXPECT_EQ(compareWithReference(far, r64, noise, nonFinite, &skips), "");
  EXPECT_FALSE(nonFinite);
  RunResults bad{{"g"}, {{1.0, NAN}}, {}};
  EXPECT_NE(compareWithReference(close, bad, noise, nonFinite), "");
  EXPECT_TRUE(nonFinite);
}

// Issue 9's reproducers (test/passes/fuse-elementwise-*.ein) pass every check.
TEST(PipelineCheck, IssueReproducersPass) {
  for (const char *name : {"logsumexp-twice", "repeated-subexpression", "scalar-losses"}) {
    std::ifstream in(std::string(EINC_SOURCE_DIR) + "/test/passes/fuse-elementwise-" + name +
                     ".ein");
    std::stringstream text;
    text << in.rdbuf();
    ASSERT_FALSE(text.str().empty()) << name;
    CheckResult r = checkProgram(text.str(), {});
    EXPECT_TRUE(r.ok) << name << ": " << r.combination << "\n" << r.what;
    // @grad and @train_step fused and not, the extra optimizer's step fused
    // and not, and the step under the whole combination and without fusion
    // and remat.
    EXPECT_EQ(r.stats.combinations, 8) << name;
    EXPECT_EQ(r.stats.combinationRuns, 1) << name;
    EXPECT_FALSE(r.drawn.precision.empty()) << name;
    EXPECT_GT(r.stats.gradEntries, 0) << name;
  }
}

// The draws of 2,000 seeds: every value of each setting, and every pair of
// values of two settings, meets; never the program's own optimizer; the
// same seed, the same draw.
TEST(Combinations, EveryPairOfSettingsMeets) {
  einrt::TrainSettings program; // adamw
  std::map<std::string, std::set<std::string>> values;
  std::set<std::pair<std::string, std::string>> pairs;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    Combination c = drawCombination(seed, program);
    EXPECT_EQ(c.label(), drawCombination(seed, program).label());
    EXPECT_NE(c.optimizer, "adamw");
    EXPECT_NE(c.fusion, "off");
    std::string opt = c.optimizer + (c.momentum > 0 ? "+m" : "");
    std::pair<std::string, std::string> settings[] = {{"precision", c.precision},
                                                      {"fp8", c.fp8},
                                                      {"remat", c.remat},
                                                      {"fusion", c.fusion},
                                                      {"optimizer", opt}};
    for (auto &[key, value] : settings) {
      values[key].insert(value);
      for (auto &[key2, value2] : settings)
        if (key < key2)
          pairs.insert({key + "=" + value, key2 + "=" + value2});
    }
  }
  EXPECT_EQ(values["precision"].size(), 4u); // fp32 bf16-mixed fp16-mixed bf16
  EXPECT_EQ(values["fp8"].size(), 3u);
  EXPECT_EQ(values["remat"].size(), 6u);
  EXPECT_EQ(values["fusion"].size(), 3u);    // all on elementwise
  EXPECT_EQ(values["optimizer"].size(), 4u); // adam, sgd with and without momentum, adagrad
  size_t expected = 0;
  for (auto &[key, set] : values)
    for (auto &[key2, set2] : values)
      if (key < key2)
        expected += set.size() * set2.size();
  EXPECT_EQ(pairs.size(), expected);
}

// Issue 25, item 4: one layer of a LayerNorm fn and a matmul with tied
// embeddings, under bf16-mixed, selective remat and row kernels (the
// clones of a row kernel's two shapes once shared a fusion group, and the
// CPU lowering stopped with an internal error), through every check.
TEST(PipelineCheck, NarrowRematOfRowKernelsPasses) {
  std::ifstream in(std::string(EINC_SOURCE_DIR) + "/test/e2e/Inputs/remat-rows-narrow.ein");
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_FALSE(text.str().empty());
  for (const char *precision : {"bf16-mixed", "fp16-mixed", "bf16"}) {
    CheckOptions o;
    o.combination = Combination{precision, "none", "selective", "all", "sgd", 0.9};
    CheckResult r = checkProgram(text.str(), o);
    EXPECT_TRUE(r.ok) << precision << ": " << r.combination << "\n" << r.what;
    EXPECT_EQ(r.stats.combinationRuns, 1) << precision;
  }
}

// The corpus: programs the fuzzer found failing, each named after its seed
// (the extra optimizer depends on it). The passes, the verifier, the gradient
// check and the reference checks (the CPU backend: scripts/fuzz-pipeline).
TEST(PipelineCheck, CorpusReplays) {
  std::error_code ec;
  int replayed = 0;
  for (llvm::sys::fs::directory_iterator
           it(std::string(EINC_SOURCE_DIR) + "/test/fuzz-pipeline/corpus", ec),
       end;
       !ec && it != end; it.increment(ec)) {
    llvm::StringRef path = it->path();
    if (!path.ends_with(".ein"))
      continue;
    llvm::StringRef stem = llvm::sys::path::stem(path);
    uint64_t seed = 0;
    ASSERT_FALSE(stem.substr(stem.rfind('-') + 1).getAsInteger(10, seed)) << path.str();
    std::ifstream in(path.str());
    std::stringstream text;
    text << in.rdbuf();
    CheckOptions o;
    o.seed = seed;
    o.cpu = false;
    CheckResult r = checkProgram(text.str(), o);
    EXPECT_TRUE(r.ok) << path.str() << ": " << r.combination << "\n" << r.what;
    ++replayed;
  }
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_GE(replayed, 6);
}

} // namespace
