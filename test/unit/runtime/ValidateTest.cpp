//===- ValidateTest.cpp - Program::validate rejects malformed Programs ----===//
#include "runtime/core/Program.h"

#include "ProgramBuilder.h"

#include <gtest/gtest.h>

#include <functional>

using namespace einrt;
using einrt::test::ProgramBuilder;

namespace {

/// Expects `p.validate()` to fail with a message containing every needle.
void expectInvalid(const Program &p, std::vector<std::string> needles) {
  std::string e = p.validate().message();
  ASSERT_FALSE(e.empty()) << "expected a validation error";
  for (const std::string &n : needles)
    EXPECT_NE(e.find(n), std::string::npos) << "message '" << e << "' lacks '" << n << "'";
}

/// A single-step program: inputs of the given types, one step.
struct OneStep {
  ProgramBuilder b;
  std::vector<int32_t> ins;
  OneStep(std::vector<std::pair<DType, std::vector<int64_t>>> inputs) {
    for (auto &[t, s] : inputs)
      ins.push_back(b.arg(t, s));
  }
  Program make(StepKind k, DType t, std::vector<int64_t> shape,
               std::vector<std::vector<int64_t>> lists = {}, int64_t scalar = 0) {
    ProgramBuilder c = b;
    c.result(c.step(k, ins, t, std::move(shape), std::move(lists), scalar, "ein.op at m.ein:1:2"));
    return c.p;
  }
};

} // namespace

TEST(Validate, AcceptsAWellFormedProgram) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {2, 3});
  int32_t w = b.buffer(DType::F32, {3, 4}, BufferRole::Param, "w");
  b.p.arguments.push_back(w);
  int32_t k = b.constant(DType::F32, {}, {1});
  int32_t y = b.step(StepKind::Contract, {x, w}, DType::F32, {2, 4}, {{}, {}, {1}, {0}});
  int32_t kb = b.step(StepKind::Broadcast, {k}, DType::F32, {2, 4}, {{}});
  int32_t z = b.step(StepKind::Add, {y, kb}, DType::F32, {2, 4});
  int32_t s = b.step(StepKind::ReduceSum, {z}, DType::F32, {4}, {{0}});
  b.result(s);
  b.result(w); // a result may be an argument
  EXPECT_EQ(b.p.validate().message(), "");
}

TEST(Validate, MessageNamesStepKindAndNote) {
  OneStep o({{DType::F32, {2}}});
  std::string e = o.make(StepKind::Exp, DType::F32, {3}).validate().message();
  EXPECT_EQ(e.rfind("step 0 (exp, ein.op at m.ein:1:2): ", 0), 0u) << e;
  EXPECT_NE(e.find("[2] 'f32' vs [3] 'f32'"), std::string::npos) << e;
}

TEST(Validate, BufferIndices) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {2});
  int32_t y = b.step(StepKind::Neg, {x}, DType::F32, {2});
  b.result(y);
  Program p = b.p;
  p.steps[0].inputs[0] = 7;
  expectInvalid(p, {"step 0 (neg", "input 0: buffer index 7 out of range"});
  p = b.p;
  p.steps[0].inputs[0] = -1;
  expectInvalid(p, {"buffer index -1 out of range"});
  p = b.p;
  p.steps[0].output = 9;
  expectInvalid(p, {"output buffer index 9 out of range"});
  p = b.p;
  p.arguments.push_back(5);
  expectInvalid(p, {"argument 1: buffer index 5 out of range"});
  p = b.p;
  p.arguments.push_back(x);
  expectInvalid(p, {"argument 1", "listed twice"});
  p = b.p;
  p.arguments.push_back(y);
  expectInvalid(p, {"argument 1", "temporary"});
  p = b.p;
  p.results.push_back(3);
  p.resultNames.push_back("r");
  expectInvalid(p, {"result 1: buffer index 3 out of range"});
  p = b.p;
  p.resultNames.push_back("extra");
  expectInvalid(p, {"2 result names for 1 results"});
  p = b.p;
  p.steps[0].inputs[0] = y;
  expectInvalid(p, {"also the output"});
}

TEST(Validate, TemporaryReadBeforeWrite) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {2});
  int32_t t = b.buffer(DType::F32, {2}, BufferRole::Temp);
  int32_t y = b.step(StepKind::Add, {x, t}, DType::F32, {2});
  b.result(y);
  expectInvalid(b.p, {"step 0 (add", "input 1 reads temporary 1", "before any step writes it"});
  // A result temporary never written.
  ProgramBuilder c;
  c.arg(DType::F32, {2});
  int32_t u = c.buffer(DType::F32, {2}, BufferRole::Temp);
  c.result(u);
  expectInvalid(c.p, {"result 0: temporary 1", "never written"});
}

TEST(Validate, BuffersThemselves) {
  ProgramBuilder b;
  b.arg(DType::F32, {2, -1});
  expectInvalid(b.p, {"buffer 0", "negative dimension"});
  ProgramBuilder c;
  c.constant(DType::F32, {3}, {1, 2});
  expectInvalid(c.p, {"constant has 2 values", "3 elements"});
  ProgramBuilder d;
  int32_t w = d.buffer(DType::F32, {2}, BufferRole::Param, "w");
  d.p.buffers[w].init.kind = "gaussian";
  expectInvalid(d.p, {"unknown init kind 'gaussian'"});
  ProgramBuilder e;
  int32_t k = e.constant(DType::F32, {2}, {1});
  int32_t x = e.arg(DType::F32, {2});
  e.step(StepKind::Neg, {x}, DType::F32, {2});
  e.p.steps[0].output = k;
  expectInvalid(e.p, {"writes constant buffer"});
  ProgramBuilder f;
  f.arg(DType::F32, {int64_t(1) << 40, int64_t(1) << 40});
  expectInvalid(f.p, {"too large"});
}

TEST(Validate, Contract) {
  OneStep o({{DType::F32, {2, 3, 4}}, {DType::F32, {2, 4, 5}}});
  EXPECT_EQ(
      o.make(StepKind::Contract, DType::F32, {2, 3, 5}, {{0}, {0}, {2}, {1}}).validate().message(),
      "");
  expectInvalid(o.make(StepKind::Contract, DType::F32, {2, 5, 3}, {{0}, {0}, {2}, {1}}),
                {"result shape [2, 5, 3] differs from the computed [2, 3, 5]"});
  expectInvalid(o.make(StepKind::Contract, DType::F32, {2, 3, 5}, {{0}, {0}, {1}, {1}}),
                {"contract pair 0", "size 3", "size 4"});
  expectInvalid(o.make(StepKind::Contract, DType::F32, {2, 3, 5}, {{0}, {0}, {0}, {1}}),
                {"lhs_contract dim 0 is used twice"});
  expectInvalid(o.make(StepKind::Contract, DType::F32, {2, 3, 5}, {{0}, {}, {2}, {1}}),
                {"differ in length"});
  expectInvalid(o.make(StepKind::Contract, DType::F32, {2, 3, 5}, {{0}, {0}, {3}, {1}}),
                {"lhs_contract dim 3 out of range for rank 3"});
  expectInvalid(o.make(StepKind::Contract, DType::F32, {2, 3, 5}, {{0}, {0}, {2}}),
                {"lhs_contract [2] and rhs_contract [] differ in length"});
  expectInvalid(o.make(StepKind::Contract, DType::I32, {2, 3, 5}, {{0}, {0}, {2}, {1}}),
                {"result must be float"});
  OneStep m({{DType::F32, {2, 4}}, {DType::BF16, {4, 5}}});
  expectInvalid(m.make(StepKind::Contract, DType::F32, {2, 5}, {{}, {}, {1}, {0}}),
                {"share one float type"});
  OneStep bb({{DType::F32, {2, 4}}, {DType::F32, {3, 4}}});
  expectInvalid(bb.make(StepKind::Contract, DType::F32, {2}, {{0}, {0}, {1}, {1}}),
                {"batch pair 0"});
}

TEST(Validate, TransposeReshapeBroadcast) {
  OneStep o({{DType::F32, {2, 3}}});
  EXPECT_EQ(o.make(StepKind::Transpose, DType::F32, {3, 2}, {{1, 0}}).validate().message(), "");
  expectInvalid(o.make(StepKind::Transpose, DType::F32, {2, 3}, {{0, 0}}),
                {"not a permutation of [0, 2)"});
  expectInvalid(o.make(StepKind::Transpose, DType::F32, {2, 3}, {{0, 1, 2}}),
                {"not a permutation"});
  expectInvalid(o.make(StepKind::Transpose, DType::F32, {2, 3}, {{1, 0}}),
                {"result shape [2, 3] differs from the computed [3, 2]"});
  expectInvalid(o.make(StepKind::Transpose, DType::BF16, {3, 2}, {{1, 0}}),
                {"element types 'f32' and 'bf16' differ"});
  EXPECT_EQ(o.make(StepKind::Reshape, DType::F32, {6}).validate().message(), "");
  expectInvalid(o.make(StepKind::Reshape, DType::F32, {7}), {"different element counts"});
  EXPECT_EQ(o.make(StepKind::Broadcast, DType::F32, {4, 2, 3}, {{1, 2}}).validate().message(), "");
  expectInvalid(o.make(StepKind::Broadcast, DType::F32, {3, 2, 4}, {{1, 0}}),
                {"strictly increasing"});
  expectInvalid(o.make(StepKind::Broadcast, DType::F32, {2, 4}, {{0, 1}}),
                {"input dim 1 has size 3 but result dim 1 has size 4"});
  expectInvalid(o.make(StepKind::Broadcast, DType::F32, {2, 3}, {{0, 2}}),
                {"out of range for result rank 2"});
  expectInvalid(o.make(StepKind::Broadcast, DType::F32, {2, 3}, {{0}}),
                {"has 1 entries but the input has rank 2"});
  OneStep one({{DType::F32, {1, 3}}});
  EXPECT_EQ(one.make(StepKind::Broadcast, DType::F32, {5, 3}, {{0, 1}}).validate().message(), "");
}

TEST(Validate, Reduce) {
  OneStep o({{DType::F32, {2, 3, 4}}});
  EXPECT_EQ(o.make(StepKind::ReduceMax, DType::F32, {3}, {{0, 2}}).validate().message(), "");
  expectInvalid(o.make(StepKind::ReduceSum, DType::F32, {3}, {{2, 0}}), {"strictly increasing"});
  expectInvalid(o.make(StepKind::ReduceSum, DType::F32, {2, 3}, {{3}}),
                {"out of range for rank 3"});
  expectInvalid(o.make(StepKind::ReduceSum, DType::F32, {2, 4}, {{2}}),
                {"result shape [2, 4] differs from the computed [2, 3]"});
  OneStep b({{DType::I1, {2}}});
  expectInvalid(b.make(StepKind::ReduceSum, DType::I1, {}, {{0}}), {"float or i32"});
}

TEST(Validate, Elementwise) {
  OneStep u({{DType::I32, {2}}});
  EXPECT_EQ(u.make(StepKind::Neg, DType::I32, {2}).validate().message(), "");
  expectInvalid(u.make(StepKind::Exp, DType::I32, {2}),
                {"step 0 (exp", "must be float, got 'i32'"});
  OneStep bin({{DType::F32, {2}}, {DType::F32, {3}}});
  expectInvalid(bin.make(StepKind::Add, DType::F32, {2}), {"lhs and rhs types differ"});
  OneStep bin2({{DType::F32, {2}}, {DType::F32, {2}}});
  expectInvalid(bin2.make(StepKind::Mul, DType::F16, {2}), {"operand and result types differ"});
  expectInvalid(bin2.make(StepKind::CmpLt, DType::F32, {2}), {"result must be 'i1'"});
  expectInvalid(bin2.make(StepKind::CmpLt, DType::I1, {3}), {"result shape [3] differs"});
  OneStep ints({{DType::I32, {2}}, {DType::I32, {2}}});
  expectInvalid(ints.make(StepKind::Pow, DType::I32, {2}), {"must be float"});
  OneStep one({{DType::F32, {2}}});
  expectInvalid(one.make(StepKind::Add, DType::F32, {2}), {"expects 2 input(s), got 1"});
}

TEST(Validate, SelectCastIota) {
  OneStep s({{DType::I1, {2}}, {DType::F32, {2}}, {DType::F32, {2}}});
  EXPECT_EQ(s.make(StepKind::Select, DType::F32, {2}).validate().message(), "");
  OneStep s2({{DType::F32, {2}}, {DType::F32, {2}}, {DType::F32, {2}}});
  expectInvalid(s2.make(StepKind::Select, DType::F32, {2}), {"cond must be 'i1'"});
  OneStep s3({{DType::I1, {2}}, {DType::F32, {2}}, {DType::I32, {2}}});
  expectInvalid(s3.make(StepKind::Select, DType::F32, {2}), {"on_false and result"});
  OneStep c({{DType::F32, {2, 3}}});
  EXPECT_EQ(c.make(StepKind::Cast, DType::BF16, {2, 3}).validate().message(), "");
  expectInvalid(c.make(StepKind::Cast, DType::BF16, {3, 2}),
                {"input shape [2, 3] differs from the result shape [3, 2]"});
  OneStep none({});
  EXPECT_EQ(none.make(StepKind::Iota, DType::I32, {3, 4}, {}, 1).validate().message(), "");
  expectInvalid(none.make(StepKind::Iota, DType::I32, {3, 4}, {}, 2),
                {"dimension 2 out of range for result rank 2"});
  expectInvalid(none.make(StepKind::Iota, DType::I32, {3, 4}, {}, -1),
                {"dimension -1 out of range"});
  expectInvalid(none.make(StepKind::Iota, DType::I1, {3}, {}, 0), {"float or i32"});
}

TEST(Validate, GatherScatterAdd) {
  OneStep g({{DType::F32, {10, 4}}, {DType::I32, {2, 3}}});
  EXPECT_EQ(g.make(StepKind::Gather, DType::F32, {2, 3, 4}).validate().message(), "");
  expectInvalid(g.make(StepKind::Gather, DType::F32, {2, 3}),
                {"result shape [2, 3] differs from the computed [2, 3, 4]"});
  expectInvalid(g.make(StepKind::Gather, DType::F16, {2, 3, 4}), {"table and result"});
  OneStep gf({{DType::F32, {10, 4}}, {DType::F32, {2, 3}}});
  expectInvalid(gf.make(StepKind::Gather, DType::F32, {2, 3, 4}), {"indices must be 'i32'"});
  OneStep g0({{DType::F32, {}}, {DType::I32, {2}}});
  expectInvalid(g0.make(StepKind::Gather, DType::F32, {2}), {"rank >= 1"});

  OneStep s({{DType::F32, {2, 3, 4}}, {DType::I32, {2, 3}}});
  EXPECT_EQ(s.make(StepKind::ScatterAdd, DType::F32, {10, 4}).validate().message(), "");
  expectInvalid(s.make(StepKind::ScatterAdd, DType::F32, {10, 5}),
                {"updates shape [2, 3, 4] differs", "[2, 3, 5]"});
  expectInvalid(s.make(StepKind::ScatterAdd, DType::F32, {}), {"result must have rank >= 1"});
}

TEST(Validate, PayloadOfTheKind) {
  // A step carries the payload its kind's row names (StepKinds.def).
  OneStep o({{DType::F32, {2, 3}}});
  Program p = o.make(StepKind::Transpose, DType::F32, {3, 2}, {{1, 0}});
  ASSERT_EQ(p.validate().message(), "");
  p.steps[0].payload = ContractDims{};
  expectInvalid(p, {"step 0 (transpose", "carries contraction dims where 'transpose' steps carry "
                                         "an axis list"});
  p.steps[0].kind = StepKind::Exp;
  p.steps[0].payload = AxisList{{1, 0}};
  expectInvalid(p, {"carries an axis list where 'exp' steps carry no payload"});
}

TEST(Validate, ArbitraryCorruptionNeverCrashes) {
  // Scramble indices and lists of a valid program many ways; validate must
  // answer (valid or not) without crashing.
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {2, 3});
  int32_t ids = b.arg(DType::I32, {4});
  int32_t t = b.step(StepKind::Transpose, {x}, DType::F32, {3, 2}, {{1, 0}});
  int32_t g = b.step(StepKind::Gather, {t, ids}, DType::F32, {4, 2});
  int32_t r = b.step(StepKind::ReduceSum, {g}, DType::F32, {2}, {{0}});
  int32_t c = b.step(StepKind::Contract, {g, g}, DType::F32, {2, 2}, {{}, {}, {0}, {0}});
  b.result(r);
  b.result(c);
  uint64_t state = 12345;
  auto rnd = [&](int64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return int64_t((state >> 33) % uint64_t(n)) - 2;
  };
  int invalid = 0;
  for (int iter = 0; iter < 5000; ++iter) {
    Program p = b.p;
    Step &s = p.steps[size_t(rnd(6) + 2) % p.steps.size()];
    switch (rnd(7) + 2) {
    case 0:
      if (!s.inputs.empty())
        s.inputs[size_t(rnd(8) + 2) % s.inputs.size()] = int32_t(rnd(12));
      break;
    case 1:
      s.output = int32_t(rnd(12));
      break;
    case 2:
      if (auto *a = std::get_if<AxisList>(&s.payload); a && !a->axes.empty())
        a->axes[0] = rnd(8);
      if (auto *c = std::get_if<ContractDims>(&s.payload); c && !c->lhsContract.empty())
        c->lhsContract[0] = rnd(8);
      break;
    case 3:
      if (auto *a = std::get_if<AxisList>(&s.payload))
        a->axes.resize(size_t(rnd(6) + 2), rnd(5));
      if (auto *c = std::get_if<ContractDims>(&s.payload))
        c->rhsBatch.resize(size_t(rnd(4) + 2), rnd(4));
      break;
    case 4: // another kind's payload
      s.payload = defaultPayload(StepKind(uint8_t(rnd(kStepKindCount) + 2) % kStepKindCount));
      break;
    default:
      s.kind = StepKind(uint8_t(rnd(40) + 2));
      break;
    }
    invalid += !p.validate().message().empty();
  }
  EXPECT_GT(invalid, 1000);
}

TEST(Validate, SlicesAndConcats) {
  OneStep o({{DType::F32, {3, 4}}});
  EXPECT_EQ(o.make(StepKind::Slice, DType::F32, {2, 4}, {}, 1).validate().message(), "");
  expectInvalid(o.make(StepKind::Slice, DType::F32, {2, 4}, {}, 2),
                {"rows [2, 4) are outside the input's 3"});
  expectInvalid(o.make(StepKind::Slice, DType::F32, {1, 5}, {}, 0),
                {"input shape [3, 4] and result shape [1, 5]", "equal dims after the first"});
  expectInvalid(o.make(StepKind::Slice, DType::I32, {1, 4}), {"input has dtype 'f32'"});
  OneStep two({{DType::F32, {1, 4}}, {DType::F32, {2, 4}}});
  EXPECT_EQ(two.make(StepKind::Concat, DType::F32, {3, 4}).validate().message(), "");
  expectInvalid(two.make(StepKind::Concat, DType::F32, {4, 4}),
                {"the inputs have 3 rows but the result 4"});
  OneStep none({});
  expectInvalid(none.make(StepKind::Concat, DType::F32, {3, 4}), {"at least one input"});
}

/// Views: rows of a buffer that is no view, of its dtype and in its bounds;
/// a temporary, never a result; written with their root, or together
/// writing it; never sharing storage with what a step reads.
TEST(Validate, Views) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {3, 4});
  int32_t root = b.buffer(DType::F32, {3, 4}, BufferRole::Temp, "root");
  int32_t top = b.buffer(DType::F32, {1, 4}, BufferRole::Temp, "top");
  int32_t rest = b.buffer(DType::F32, {2, 4}, BufferRole::Temp, "rest");
  b.p.buffers[top].viewOf = root;
  b.p.buffers[rest].viewOf = root;
  b.p.buffers[rest].viewOffset = 4;
  b.p.steps.emplace_back(StepKind::Slice, std::vector<int32_t>{x}, top, SliceOffset{0});
  b.p.steps.emplace_back(StepKind::Slice, std::vector<int32_t>{x}, rest, SliceOffset{1});
  b.result(b.step(StepKind::Exp, {root}, DType::F32, {3, 4}));
  EXPECT_EQ(b.p.validate().message(), "") << "the two views write all of root";

  Program p = b.p;
  p.steps.erase(p.steps.begin() + 1);
  expectInvalid(p, {"reads temporary 1 ('root') before any step writes it"});
  p = b.p;
  p.buffers[rest].viewOffset = 3;
  expectInvalid(p, {"writes view 3 of buffer 1 over view 2"});
  p = b.p;
  p.buffers[rest].viewOffset = 5;
  expectInvalid(p, {"buffer 3 ('rest')", "elements [5, 13) of buffer 1, which has 12"});
  p = b.p;
  p.buffers[rest].viewOf = top;
  expectInvalid(p, {"views buffer 2, itself a view"});
  p = b.p;
  p.buffers[rest].viewOf = rest;
  expectInvalid(p, {"views buffer 3 (itself)"});
  p = b.p;
  p.buffers[rest].dtype = DType::BF16;
  expectInvalid(p, {"a view of dtype 'bf16' of buffer 1 of dtype 'f32'"});
  p = b.p;
  p.buffers[top].viewOf = -1;
  p.buffers[top].viewOffset = 2;
  expectInvalid(p, {"view_of -1 with offset 2"});
  p = b.p;
  p.results.push_back(top);
  p.resultNames.push_back("top");
  expectInvalid(p, {"result 1: buffer 2 ('top') is a view"});
  p = b.p;
  p.buffers[x].viewOf = root;
  expectInvalid(p, {"buffer 0 ('arg0'): a view must be a temporary"});
  // A step reading rows of root and writing rows that overlap them.
  p = b.p;
  p.steps[1].inputs = {top};
  p.steps[1].kind = StepKind::Copy;
  p.steps[1].payload = NoPayload{};
  p.buffers[rest].shape = {1, 4};
  p.buffers[rest].viewOffset = 0;
  expectInvalid(p, {"input 0 (buffer 2) shares storage with output buffer 3"});
}
