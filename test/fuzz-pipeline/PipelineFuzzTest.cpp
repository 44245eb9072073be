//===- PipelineFuzzTest.cpp - The pipeline fuzzer's own tests -------------===//
//
// The verifier instrumentation names a pass that leaves invalid IR even when
// the pass claims to preserve everything (MLIR's own verifier then skips);
// fusion keeps the report's ledgers; the generator is deterministic and its
// programs pass the front end; the bound of Compare.h; issue 9's reproducers
// pass every check, and so do the programs of the corpus
// (test/fuzz-pipeline/corpus).
//
//===----------------------------------------------------------------------===//
#include "Compare.h"
#include "Ledgers.h"
#include "PassVerifier.h"
#include "PipelineCheck.h"
#include "ProgramGenerator.h"

#include "dsl/Elaborator.h"
#include "dsl/Parser.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fstream>
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
    // Six, @train_step under a remat policy, and under a precision policy
    // fused and not.
    EXPECT_EQ(r.stats.combinations, 9) << name;
    EXPECT_EQ(r.stats.rematRuns, 1) << name;
    EXPECT_EQ(r.stats.precisionRuns, 1) << name;
    EXPECT_GT(r.stats.gradEntries, 0) << name;
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
