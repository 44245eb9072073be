//===- CpuViewConsumersTest.cpp - Every view kind read by every consumer --===//
//
// Issue 25, item 2: a piece of a split composite (a slice of a reshape's
// result) was read one element in instead of one row in by every kernel on
// the CPU backend. Here every view kind the language makes — a piece of an
// unpacking (of a computed value, of an argument, of a split composite, of
// a transposed split, of a piece), a transpose, a broadcast — is read by
// every consumer the CPU backend has — an elementwise kernel, a row kernel,
// a reduction, a GEMM (either operand), a GEMM's epilogue, and a Copy (the
// value unpacked again, its middle piece read: the gradient's concat copies
// the zeros it reads twice and, of a piece, the buffer its pieces view) — and
// @grad (the loss and every gradient) runs against the reference backend
// under fusion `off` and `all` (einc's own stages, tools/driver/Stages.h).
// Under `all` the test also checks that the consumer is what the row says
// (a rows kernel, an epilogue, ...), reading the view where it is one.
//
//===----------------------------------------------------------------------===//
#include "../pipeline/Compile.h"
#include "CpuTestSupport.h"
#include "test/unit/StatusTesting.h"

#include "tools/driver/Stages.h"

#include <gtest/gtest.h>

using namespace mlir;
using einrt::StepKind;
using namespace einc::cputest;

namespace {

/// A value `v` with axes [m, n] made by a view of something the row declares.
struct ViewKind {
  const char *name;
  const char *decls;
  const char *lines;
  bool isView; // `v`'s buffer on the CPU backend is a view (Buffer::viewOf)
};

const ViewKind kViews[] = {
    {"piece of a computed value", "param p: f32[three, m, n]\n", "v0, v, v2 = tanh(p)\n", true},
    {"piece of an argument", "param p: f32[two, m, n]\n", "v0, v = p\n", true},
    {"piece of a split composite", "param p: f32[r, n]\n",
     "v0, v = rearrange(p, \"(half m) n -> half m n\", half=2)\n", true},
    {"piece of a split flat composite", "param p: f32[flat]\n",
     "v0, v = rearrange(p, \"(half m n) -> half m n\", half=2)\n", true},
    {"piece of a split computed flat composite", "param p: f32[flat]\n",
     "v0, v = rearrange(exp(p), \"(half m n) -> half m n\", half=2)\n", true},
    {"piece of a split computed composite", "param p: f32[r, n]\n",
     "v0, v = rearrange(p * p, \"(half m) n -> half m n\", half=2)\n", true},
    {"piece of a transposed split", "param p: f32[m, n2]\n",
     "v0, v = rearrange(p, \"m (half n) -> half m n\", half=2)\n", true},
    {"piece of a piece", "param p: f32[two, three, m, n]\n", "v0, v1 = p\nv2, v3, v = v1\n", true},
    {"transpose", "param p: f32[n, m]\n", "v = rearrange(p, \"n m -> m n\")\n", false},
    {"broadcast", "param p: f32[n]\n", "v = repeat(p, \"n -> m n\")\n", false},
};

/// What the CPU program of @grad under fusion `all` must hold for a row.
enum class Reader { Kernel, Rows, Reduce, Gemm, Epilogue, Copy };

/// A scalar loss term reading `v`.
struct Consumer {
  const char *name;
  const char *decls;
  const char *loss;
  Reader reader;
};

const Consumer kConsumers[] = {
    {"kernel", "input x: f32[m, n]\n", "reduce(exp(v) * x, \"m n ->\", sum)", Reader::Kernel},
    {"row kernel", "input x: f32[m, n]\n", "reduce(softmax(v, \"n\") * x, \"m n ->\", sum)",
     Reader::Rows},
    {"reduction", "input y: f32[m]\n",
     "reduce(v, \"m n ->\", sum) + reduce(reduce(v, \"m n -> m\", max) * y, \"m ->\", sum)",
     Reader::Reduce},
    {"GEMM lhs", "param w: f32[n, k]\ninput z: f32[m, k]\n",
     "reduce(einsum(v, w, \"m n, n k -> m k\") * z, \"m k ->\", sum)", Reader::Gemm},
    {"GEMM rhs", "input t: f32[k, m]\ninput z: f32[k, n]\n",
     "reduce(einsum(t, v, \"k m, m n -> k n\") * z, \"k n ->\", sum)", Reader::Gemm},
    {"epilogue", "input h: f32[m, k]\nparam w: f32[k, n]\ninput x: f32[m, n]\n",
     "reduce(relu(einsum(h, w, \"m k, k n -> m n\") + v) * x, \"m n ->\", sum)", Reader::Epilogue},
    {"copy", "input x: f32[n]\n", "reduce(tanh(v1b) * x, \"n ->\", sum)", Reader::Copy},
};

std::string model(const ViewKind &view, const Consumer &consumer) {
  // Distinct sizes, so that a row read as a column (or one element as a
  // row) reads other values.
  std::string text = "dim m = 3\ndim n = 4\ndim k = 5\ndim two = 2\ndim three = 3\n"
                     "dim r = 6\ndim n2 = 8\ndim flat = 24\n";
  text += view.decls;
  text += consumer.decls;
  text += view.lines;
  if (consumer.reader == Reader::Copy) // m = 3 pieces
    text += "v1a, v1b, v1c = v\n";
  return text + "minimize " + consumer.loss + "\n";
}

bool isView(const einrt::Program &p, int32_t b) { return p.buffers[size_t(b)].viewOf >= 0; }

bool isViewed(const einrt::Program &p, int32_t b) {
  return llvm::any_of(p.buffers, [&](const einrt::Buffer &x) { return x.viewOf == b; });
}

bool readsView(const einrt::Program &p, const einrt::Step &s) {
  return llvm::any_of(s.inputs, [&](int32_t b) { return isView(p, b); });
}

/// Whether @grad's CPU program (fusion `all`) has the row's consumer, and
/// whether it reads a view buffer (for a view kind that makes one).
::testing::AssertionResult hasReader(const einrt::Program &p, Reader reader, bool view) {
  for (const einrt::Step &s : p.steps) {
    bool found = false;
    switch (reader) {
    case Reader::Kernel:
      found = s.kind == StepKind::Kernel && s.note.find("ein.exp") != std::string::npos &&
              s.note.rfind("rows", 0) != 0;
      break;
    case Reader::Rows:
      found = s.kind == StepKind::Kernel && s.note.rfind("rows", 0) == 0;
      break;
    case Reader::Reduce:
      found = s.kind == StepKind::Kernel && s.note.find("ein.reduce") != std::string::npos;
      break;
    case Reader::Gemm:
      found = s.kind == StepKind::Matmul;
      break;
    case Reader::Epilogue:
      if (s.kind == StepKind::Matmul && s.as<einrt::GemmDesc>().post.kernel >= 0) {
        const auto &ops = s.as<einrt::GemmDesc>().post.operands;
        if (!view || llvm::any_of(ops, [&](int32_t b) { return b >= 0 && isView(p, b); }))
          return ::testing::AssertionSuccess();
      }
      continue;
    case Reader::Copy: // of a view, or of a buffer its pieces view
      if (s.kind == StepKind::Copy && (!view || isView(p, s.inputs[0]) || isViewed(p, s.inputs[0])))
        return ::testing::AssertionSuccess();
      continue;
    }
    if (found && (!view || readsView(p, s)))
      return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no such step" << (view ? " reading a view" : "");
}

/// One row of the table under one fusion setting (its own function, so that
/// a failed assertion ends the row, not the table).
void checkRow(const ViewKind &view, const Consumer &consumer, const std::string &fusion) {
  std::string text = model(view, consumer);
  SCOPED_TRACE(std::string(view.name) + " read by " + consumer.name + ", fusion " + fusion + ":\n" +
               text);
  auto compiled = einc::testing::compileModel(text, {});
  ASSERT_TRUE(compiled.module) << compiled.errors;
  einrt::TrainSettings settings;
  settings.fusion = fusion;
  ASSERT_TRUE(succeeded(einc::buildGrad(*compiled.module)));
  ASSERT_TRUE(succeeded(einc::applyFusion(*compiled.module, settings)));
  Lowered l = lowerBoth(compiled.module->lookupSymbol<func::FuncOp>("grad"));
  ASSERT_TRUE(l.cpu && l.reference) << l.errors;
  if (fusion == "all")
    EXPECT_TRUE(hasReader(*l.cpu, consumer.reader, view.isView));
  for (unsigned seed : {1u, 2u}) {
    EINC_ASSERT_OK_AND_ASSIGN(double e,
                              compareRuns(l, [&](einrt::Executor &ex) { fillRandom(ex, seed); }));
    EXPECT_LT(e, 1e-5);
  }
}

TEST(CpuViewConsumers, EveryViewKindByEveryConsumerMatchesTheReference) {
  for (const ViewKind &view : kViews)
    for (const Consumer &consumer : kConsumers)
      for (const char *fusion : {"off", "all"})
        checkRow(view, consumer, fusion);
}

/// The program: x = [1, 2, 10, 20] split into rows [1, 2] and
/// [10, 20]; the second row's sum is 30 (the CPU backend read [2, 10]).
TEST(CpuViewConsumers, SecondPieceOfASplitIsItsSecondRow) {
  const char *text = "dim a = 4\ninput x: f32[a]\n"
                     "v1 = rearrange(x, \"(k1 k2) -> k1 k2\", k1=2)\n"
                     "v3, v4 = v1\n"
                     "minimize reduce(v4, \"... ->\", sum) + 1000 * reduce(v4, \"... ->\", max)\n";
  auto compiled = einc::testing::compileModel(text, {});
  ASSERT_TRUE(compiled.module) << compiled.errors;
  Lowered l = lowerBoth(compiled.module->lookupSymbol<func::FuncOp>("forward"));
  ASSERT_TRUE(l.cpu) << l.errors;
  EINC_ASSERT_OK_AND_ASSIGN(auto cpu, einrt::Executor::create(*l.cpu, cpuDevice(l)));
  std::vector<double> x = {1, 2, 10, 20};
  EINC_ASSERT_OK(cpu.setArgument(0, x.data(), x.size()));
  EINC_ASSERT_OK(cpu.run());
  EXPECT_EQ(cpu.getResult(0).values, std::vector<double>{30 + 1000 * 20});
}

} // namespace
