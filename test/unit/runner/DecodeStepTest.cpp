//===- DecodeStepTest.cpp - @decode's logits are @forward's, position by position ===//
//
// Issue 29 item 9: sampling with a KV cache. gpt and llama (small dims,
// batch 1) are compiled as `einc sample` compiles them (compileModel with
// "forward" and "decode"), on the CPU and reference backends; with the same
// random params, @forward's logits of a random window and @decode's, run
// token by token with its caches carried (runner::DecodeSession), agree at
// every position: max |difference| ≤ 1e-5 · max |logit| (f32; the two
// compute the same sums in another order and blocking).
//
//===----------------------------------------------------------------------===//
#include "tools/driver/Compile.h"
#include "tools/driver/Frontend.h"
#include "tools/runner/Runner.h"
#include "tools/runner/SampleDecode.h"

#include "dsl/Elaborator.h"
#include "runtime/core/Backend.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>

namespace {

struct Model {
  std::string name;
  int64_t ctx = 16, vocab = 64;
};

bool compile(const Model &m, const std::string &backend, mlir::MLIRContext &context,
             einc::CompiledModel &out) {
  einc::CompileRequest request;
  request.modelPath = std::string(EINC_SOURCE_DIR) + "/examples/" + m.name + ".ein";
  request.overrides = {{"batch", "1"},  {"d", "32"},   {"heads", "4"},
                       {"layers", "2"}, {"ctx", "16"}, {"vocab", std::to_string(m.vocab)}};
  if (m.name == "llama")
    request.overrides.push_back({"kv_heads", "2"});
  einc::Frontend fe;
  if (!fe.load(request.modelPath) || !fe.parse())
    return false;
  mlir::OwningOpRef<mlir::ModuleOp> module = fe.lower(context, request.overrides, request.use);
  fe.printDiagnostics();
  if (!module)
    return false;
  request.functions = {"forward", "decode"};
  request.backend = backend;
  request.settings = fe.settings;
  request.frontend = &fe;
  return einc::compileModel(*module, request, out);
}

/// Every param of `ex` from one seeded stream by name (the same values in
/// @forward and @decode): normal, std 0.3, so attention is far from uniform.
void setParams(einrt::Executor &ex) {
  const einrt::Program &p = ex.program();
  for (size_t i = 0; i < p.arguments.size(); ++i) {
    const einrt::Buffer &b = p.buffers[p.arguments[i]];
    if (b.role != einrt::BufferRole::Param)
      continue;
    std::mt19937 rng(std::hash<std::string>()(b.name) & 0xffffffff);
    std::normal_distribution<double> normal(0, 0.3);
    std::vector<double> values(b.elementCount());
    for (double &v : values)
      v = normal(rng);
    ASSERT_TRUE(ex.setArgument(i, values.data(), values.size()).ok()) << b.name;
  }
}

TEST(DecodeStep, LogitsEqualTheFullForwardAtEveryPosition) {
  for (std::string model : {"gpt", "llama"})
    for (std::string backendName : {"cpu", "reference"}) {
      SCOPED_TRACE(model + " on " + backendName);
      Model m{model};
      mlir::MLIRContext context;
      ein::dsl::registerElaboratorDialects(context);
      einc::CompiledModel compiled;
      ASSERT_TRUE(compile(m, backendName, context, compiled));
      ASSERT_EQ(compiled.decodeNote, "");
      ASSERT_NE(compiled.bundle.find("decode"), nullptr);

      einc::runner::Backend backend;
      backend.kind = einrt::findBackend(backendName);
      backend.threads = 1;
      if (compiled.kernels && backend.kind->hostKernels())
        backend.kernels = compiled.kernels->table();
      einc::runner::Loaded loaded;
      ASSERT_TRUE(einc::runner::load(compiled.bundle, {"forward", "decode"}, backend, loaded).ok());
      einrt::Executor &forward = *loaded.executors[0], &decode = *loaded.executors[1];
      setParams(forward);
      setParams(decode);

      std::mt19937 rng(7);
      std::vector<int32_t> tokens(m.ctx);
      for (int32_t &t : tokens)
        t = int32_t(rng() % m.vocab);
      const einrt::Program &fp = forward.program();
      size_t idx = 0, logitsResult = 0;
      for (size_t i = 0; i < fp.arguments.size(); ++i)
        if (fp.buffers[fp.arguments[i]].name == "idx")
          idx = i;
      ASSERT_TRUE(forward.setArgument(idx, tokens.data(), tokens.size()).ok());
      for (size_t r = 0; r < fp.results.size(); ++r)
        if (fp.resultNames[r] == "logits")
          logitsResult = r;
      ASSERT_TRUE(forward.run().ok());
      auto full = forward.read(size_t(fp.results[logitsResult]));
      ASSERT_TRUE(full.ok());

      auto session = einc::runner::DecodeSession::open(decode, "idx");
      ASSERT_TRUE(session.ok()) << session.status().message();
      double worst = 0, largest = 0;
      for (int64_t n = 1; n <= m.ctx; ++n) {
        std::vector<double> logits;
        std::vector<int32_t> window(tokens.begin(), tokens.begin() + n);
        ASSERT_TRUE(session->logitsAfter(window, logits).ok());
        ASSERT_EQ(int64_t(logits.size()), m.vocab);
        for (int64_t v = 0; v < m.vocab; ++v) {
          double want = (*full)[size_t((n - 1) * m.vocab + v)];
          worst = std::max(worst, std::abs(logits[v] - want));
          largest = std::max(largest, std::abs(want));
        }
      }
      EXPECT_GT(largest, 0.1); // logits of real size, not zeros
      EXPECT_LE(worst, 1e-5 * largest) << "max |diff| " << worst << ", max |logit| " << largest;
    }
}

// A model whose attention is not causal has no @decode, and says why.
TEST(DecodeStep, NonCausalAttentionIsNoDecodeStep) {
  const char *source = R"(dim batch = 1
dim vocab = 16
dim ctx = 8
dim d = 8
input idx: i32[batch, ctx]
input targets: i32[batch, ctx]
param wte: [vocab, d] ~ normal(std=0.02)
x = wte[idx]
att = softmax(einsum(x, x, "batch t d, batch s d -> batch t s"), "s")
y = einsum(att, x, "batch t s, batch s d -> batch t d")
logits = einsum(y, wte, "batch ctx d, vocab d -> batch ctx vocab")
output logits
minimize cross_entropy(logits, targets)
)";
  mlir::MLIRContext context;
  ein::dsl::registerElaboratorDialects(context);
  einc::CompileRequest request;
  request.modelPath = ::testing::TempDir() + "/noncausal.ein";
  std::ofstream(request.modelPath) << source;
  einc::Frontend fe;
  ASSERT_TRUE(fe.load(request.modelPath) && fe.parse());
  mlir::OwningOpRef<mlir::ModuleOp> module = fe.lower(context, {}, request.use);
  ASSERT_TRUE(module);
  request.functions = {"forward", "decode"};
  request.backend = "reference";
  request.settings = fe.settings;
  request.frontend = &fe;
  einc::CompiledModel compiled;
  ASSERT_TRUE(einc::compileModel(*module, request, compiled));
  EXPECT_EQ(compiled.bundle.find("decode"), nullptr);
  EXPECT_NE(compiled.decodeNote.find("no causal mask"), std::string::npos) << compiled.decodeNote;
}

} // namespace
