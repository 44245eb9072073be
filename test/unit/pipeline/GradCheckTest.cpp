//===- GradCheckTest.cpp - Every gradient rule against finite differences -===//
//
// For each primitive op and each composite: compile a small model (random
// dim sizes per seed), build @grad, run it and @forward on the reference
// backend in float64 with random params and inputs, and compare every
// gradient entry with the five-point central difference of the loss.
// Relative error under 1e-6 (runtime/core/GradCheck.h defines it).
//
//===----------------------------------------------------------------------===//
#include "Compile.h"
#include "test/unit/StatusTesting.h"

#include "ir/EinOps.h"
#include "passes/Dropout.h"
#include "runtime/core/GradCheck.h"
#include "runtime/core/Init.h"

#include <gtest/gtest.h>

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace einc::testing;

namespace {

struct Case {
  const char *name;
  const char *body; // statements after the common preamble; must `minimize`
};

// x, y: [a, b] inputs; r: [a, b] random weights that make the loss depend on
// every entry differently; params w: [b, c], v: [a, b], u: [b], t: [c, b].
const char *kPreamble = R"(
dim a = 3
dim b = 4
dim c = 5
dim vocab = 6
input x: f32[a, b]
input r: f32[a, b]
input ids: i32[a, b]
input classes: i32[a]
param w: [b, c] ~ normal(std=1)
param v: [a, b] ~ normal(std=1)
param u: [b] ~ normal(std=1)
param t: [c, b] ~ normal(std=1)
param table: [vocab, c] ~ normal(std=1)
fn weigh(z: [a, b]) -> [] {
    return reduce(z * r, "a b ->", sum)
}
)";

const Case kCases[] = {
    // Primitive ops, each reached from the language.
    {"contract", "minimize reduce(einsum(v, w, \"a b, b c -> a c\") * einsum(v, w, \"a b, b c -> a "
                 "c\"), \"a c ->\", sum)"},
    {"contract_batch",
     "p = einsum(v, v, \"a b, a b -> a\")\nminimize reduce(p * p, \"a ->\", sum)"},
    {"contract_three",
     "e3 = einsum(v, w, t, \"a b, b c, c e -> a e\")\nminimize reduce(e3 * e3, \"a e ->\", sum)"},
    {"transpose", "minimize reduce(rearrange(v, \"a b -> b a\") * rearrange(r, \"a b -> b a\"), "
                  "\"b a ->\", sum)"},
    {"reshape", "minimize reduce(rearrange(v * v, \"a b -> (a b)\") * rearrange(r, \"a b -> (a "
                "b)\"), \"n ->\", sum)"},
    {"broadcast", "minimize weigh(v + u)"},
    {"reduce_sum", "s = reduce(v * v, \"a b -> a\", sum)\nminimize reduce(s * s, \"a ->\", sum)"},
    {"reduce_max", "m = reduce(v, \"a b -> b\", max)\nminimize reduce(m * u, \"b ->\", sum)"},
    {"reduce_min", "m = reduce(v, \"a b -> a\", min)\nminimize reduce(m * m, \"a ->\", sum)"},
    {"reduce_mean", "minimize reduce(reduce(v * r, \"a b -> b\", mean) * u, \"b ->\", sum)"},
    {"neg", "minimize weigh(-v * v)"},
    {"exp", "minimize weigh(exp(v))"},
    {"log", "minimize weigh(log(v * v + 1))"},
    {"tanh", "minimize weigh(tanh(v))"},
    {"sqrt", "minimize weigh(sqrt(v * v + 1))"},
    {"rsqrt", "minimize weigh(rsqrt(v * v + 1))"},
    {"abs", "minimize weigh(abs(v) * v)"},
    {"softplus", "minimize weigh(softplus(3 * v) * v)"},
    {"add_sub", "minimize weigh((v + x) * (v - u))"},
    {"mul_div", "minimize weigh(v * x / (v * v + 1))"},
    {"max_min", "minimize weigh(max(v, x) + min(v, u))"},
    {"pow", "minimize weigh((v * v + 1) ** 1.5 + 2 ** v)"},
    {"gather_repeated_ids", "g = table[ids]\nminimize reduce(g * g * einsum(x, w, \"a b, b c -> a "
                            "b c\"), \"a b c ->\", sum)"},
    {"tuple_unpack", "p, q = rearrange(einsum(v, w, \"a b, b c -> a c\"), \"a (two h) -> two a "
                     "h\", two=2)\nminimize reduce(p * q * p, \"a h ->\", sum)"},
    {"repeat", "minimize reduce(repeat(u, \"b -> a b\") * v * r, \"a b ->\", sum)"},
    // Composites.
    {"relu", "minimize weigh(relu(v))"},
    {"gelu", "minimize weigh(gelu(v))"},
    {"sigmoid", "minimize weigh(sigmoid(v))"},
    {"silu", "minimize weigh(silu(v))"},
    {"softmax", "minimize weigh(softmax(v * 2, \"b\"))"},
    {"logsumexp",
     "minimize reduce(logsumexp(v, \"b\") * reduce(r, \"a b -> a\", sum), \"a ->\", sum)"},
    {"cross_entropy", "minimize cross_entropy(einsum(v, w, \"a b, b c -> a c\"), classes)"},
    {"layernorm", "fn layernorm(z: [..., b], g: [b], h: [b]) -> [..., b] {\n"
                  "    mu = reduce(z, \"... b -> ...\", mean)\n"
                  "    zc = z - mu\n"
                  "    var = reduce(zc * zc, \"... b -> ...\", mean)\n"
                  "    return zc * rsqrt(var + 1e-5) * g + h\n"
                  "}\n"
                  "minimize weigh(layernorm(v, u, u * u))"},
    {"causal_attention",
     "q = einsum(v, w, \"s b, b c -> s c\")\n"
     "k = einsum(x, w, \"s b, b c -> s c\")\n"
     "att = softmax(causal(einsum(q, k, \"t c, s c -> t s\"), \"t s\"), \"s\")\n"
     "y = einsum(att, v, \"t s, s b -> t b\")\n"
     "minimize einsum(y, r, \"t b, t b ->\")"},
    {"tied_weights", "h = table[classes]\n"
                     "logits = einsum(h, table, \"a c, vocab c -> a vocab\")\n"
                     "minimize cross_entropy(logits, classes)"},
};

class GradCheck : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(GradCheck, MatchesFiniteDifferences) {
  const Case &c = kCases[std::get<0>(GetParam())];
  int seed = std::get<1>(GetParam());
  // Random shapes: each seed gives other dim sizes.
  einrt::Rng rng(1000 + seed);
  auto size = [&](int lo, int hi) { return std::to_string(lo + rng.below(hi - lo + 1)); };
  std::vector<std::pair<std::string, std::string>> dims = {
      {"a", size(2, 5)}, {"b", size(2, 5)}, {"c", size(2, 4)}, {"vocab", size(3, 7)}};
  std::string source = std::string(kPreamble) + c.body + "\n";
  if (std::string(c.name) == "tuple_unpack")
    dims[2].second = "4"; // split in two halves
  Compiled m = compileModel(source, dims);
  ASSERT_TRUE(m.module) << c.name << ":\n" << m.errors;
  ASSERT_TRUE(addGrad(m)) << m.errors;

  std::string error;
  auto forward = executorFor(m, "forward", einrt::Precision::F64, error);
  ASSERT_TRUE(forward) << error;
  auto grad = executorFor(m, "grad", einrt::Precision::F64, error);
  ASSERT_TRUE(grad) << error;
  EINC_ASSERT_OK(einrt::initParams(*grad, seed));
  int32_t vocab = std::stoi(dims.back().second);
  EINC_ASSERT_OK(einrt::fillRandomInputs(*grad, seed + 7, vocab));
  // classes index the `a`-sized logits' vocab axis in cross_entropy cases.
  for (size_t i = 0; i < grad->argumentCount(); ++i) {
    std::vector<double> values;
    EINC_ASSERT_OK_AND_ASSIGN(values, grad->read(size_t(grad->program().arguments[i])));
    EINC_ASSERT_OK(forward->setArgument(i, values.data(), values.size()));
  }
  einrt::GradCheckOptions options;
  options.samplesPerParam = 12;
  options.seed = seed;
  einrt::GradCheckReport report;
  EINC_ASSERT_OK_AND_ASSIGN(report, einrt::gradCheck(*forward, *grad, options));
  EXPECT_GT(report.checked, 0);
  EXPECT_LT(report.worst.relativeError, 1e-6)
      << c.name << " seed " << seed << ": " << report.worst.param << "[" << report.worst.index
      << "] analytic " << report.worst.analytic << " numeric " << report.worst.numeric;
}

std::string caseName(const ::testing::TestParamInfo<std::tuple<int, int>> &info) {
  return std::string(kCases[std::get<0>(info.param)].name) + "_seed" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(EveryRule, GradCheck,
                         ::testing::Combine(::testing::Range(0, int(std::size(kCases))),
                                            ::testing::Range(0, 3)),
                         caseName);

// Ops the language cannot spell (cast, scatter_add, iota) through MLIR text.
TEST(GradCheckMLIR, CastScatterAddIota) {
  Compiled m = parseMLIR(R"(
module {
  func.func @forward(%p: tensor<4x3xf32> {ein.kind = "param", ein.name = "p", ein.init = {kind = "normal", std = 1.0 : f64}},
                     %q: tensor<5x3xf32> {ein.kind = "param", ein.name = "q", ein.init = {kind = "normal", std = 1.0 : f64}}) -> tensor<f32> {
    %ids = ein.constant dense<[[0, 2, 2, 1, 0]]> : tensor<1x5xi32>
    %flat = ein.reshape %ids : tensor<1x5xi32> -> tensor<5xi32>
    %s = ein.scatter_add %q, %flat : tensor<5x3xf32>, tensor<5xi32> -> tensor<4x3xf32>
    %c = ein.cast %p : tensor<4x3xf32> -> tensor<4x3xf32>
    %i = ein.iota dim 1 : tensor<4x3xf32>
    %m = ein.mul %s, %c : tensor<4x3xf32>
    %n = ein.mul %m, %i : tensor<4x3xf32>
    %k = ein.mul %n, %c : tensor<4x3xf32>
    %l = ein.reduce sum %k dims [0, 1] : tensor<4x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
)");
  ASSERT_TRUE(m.module) << m.errors;
  ASSERT_TRUE(addGrad(m)) << m.errors;
  std::string error;
  auto forward = executorFor(m, "forward", einrt::Precision::F64, error);
  auto grad = executorFor(m, "grad", einrt::Precision::F64, error);
  ASSERT_TRUE(forward && grad) << error;
  EINC_ASSERT_OK(einrt::initParams(*grad, 3));
  for (size_t i = 0; i < grad->argumentCount(); ++i) {
    std::vector<double> values;
    EINC_ASSERT_OK_AND_ASSIGN(values, grad->read(size_t(grad->program().arguments[i])));
    EINC_ASSERT_OK(forward->setArgument(i, values.data(), values.size()));
  }
  einrt::GradCheckReport report;
  EINC_ASSERT_OK_AND_ASSIGN(report, einrt::gradCheck(*forward, *grad, {}));
  EXPECT_LT(report.worst.relativeError, 1e-6) << report.worst.param;
}

} // namespace

// stop_gradient(e) is e's value held constant: the gradients of a model
// mixing both paths (w reaches the loss through the stopped product and
// directly; v only directly) are those of the same model with an input `s`
// in place of the stopped expression, set to its value — a model whose
// gradients match finite differences.
TEST(GradCheckStopGradient, MixedPathsAreTheGradientsWithTheStoppedValueAnInput) {
  const char *loss = "k = einsum(v, w, \"a b, b c -> a c\")\n"
                     "minimize reduce(einsum(%s, w, \"a b, b c -> a c\") * k, \"a c ->\", sum)\n";
  auto body = [&](const char *stopped) {
    char text[256];
    std::snprintf(text, sizeof text, loss, stopped);
    return std::string(text);
  };
  std::vector<std::pair<std::string, std::string>> dims = {{"a", "3"}, {"b", "4"}, {"c", "2"}};
  Compiled stopped = compileModel(std::string(kPreamble) + body("stop_gradient(v * v)"), dims);
  Compiled constant =
      compileModel(std::string(kPreamble) + "input s: f32[a, b]\n" + body("s"), dims);
  ASSERT_TRUE(stopped.module) << stopped.errors;
  ASSERT_TRUE(constant.module) << constant.errors;
  ASSERT_TRUE(addGrad(stopped)) << stopped.errors;
  ASSERT_TRUE(addGrad(constant)) << constant.errors;

  std::string error;
  auto gradStopped = executorFor(stopped, "grad", einrt::Precision::F64, error);
  ASSERT_TRUE(gradStopped) << error;
  auto forwardConstant = executorFor(constant, "forward", einrt::Precision::F64, error);
  ASSERT_TRUE(forwardConstant) << error;
  auto gradConstant = executorFor(constant, "grad", einrt::Precision::F64, error);
  ASSERT_TRUE(gradConstant) << error;
  EINC_ASSERT_OK(einrt::initParams(*gradStopped, 3));
  EINC_ASSERT_OK(einrt::fillRandomInputs(*gradStopped, 4, 6));

  // The same arguments for all three, by name; `s` = v * v.
  const einrt::Program &from = gradStopped->program();
  auto argumentValues = [&](const std::string &name) -> std::vector<double> {
    for (int32_t buffer : from.arguments)
      if (from.buffers[size_t(buffer)].name == name)
        return gradStopped->read(size_t(buffer)).take();
    ADD_FAILURE() << "no argument " << name;
    return {};
  };
  for (einrt::Executor *to : {&*forwardConstant, &*gradConstant})
    for (size_t i = 0; i < to->argumentCount(); ++i) {
      const std::string &name = to->program().buffers[size_t(to->program().arguments[i])].name;
      std::vector<double> values;
      if (name == "s")
        for (double e : argumentValues("v"))
          values.push_back(e * e);
      else
        values = argumentValues(name);
      EINC_ASSERT_OK(to->setArgument(i, values.data(), values.size()));
    }

  einrt::GradCheckOptions options;
  options.samplesPerParam = 12;
  einrt::GradCheckReport report;
  EINC_ASSERT_OK_AND_ASSIGN(report, einrt::gradCheck(*forwardConstant, *gradConstant, options));
  EXPECT_LT(report.worst.relativeError, 1e-6);

  EINC_ASSERT_OK(gradStopped->run());
  EINC_ASSERT_OK(gradConstant->run());
  ASSERT_EQ(gradStopped->resultCount(), gradConstant->resultCount());
  for (size_t r = 0; r < gradStopped->resultCount(); ++r) {
    std::vector<double> got, want;
    EINC_ASSERT_OK_AND_ASSIGN(got, gradStopped->read(size_t(from.results[r])));
    EINC_ASSERT_OK_AND_ASSIGN(want, gradConstant->read(size_t(gradConstant->program().results[r])));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-12 * (1 + std::abs(want[i])))
          << from.buffers[size_t(from.results[r])].name << "[" << i << "]";
  }
}

// dropout's gradient with its mask: @forward and @grad with every dropout
// expanded under one fixed (step, seed), as ein-train-step expands them in
// @train_step, match finite differences (the mask is a constant of the
// params); v's gradient is zero where both of its masks dropped.
TEST(GradCheckDropout, MaskedGradientsMatchFiniteDifferences) {
  std::vector<std::pair<std::string, std::string>> dims = {{"a", "6"}, {"b", "8"}, {"c", "2"}};
  Compiled c = compileModel(std::string(kPreamble) +
                                "xw = einsum(x, w, \"a b, b c -> a c\")\n"
                                "h = dropout(v * v, 0.5) + dropout(einsum(xw, t, \"a c, c b -> a "
                                "b\"), 0.3)\nminimize weigh(dropout(h, 0.2) * v)\n",
                            dims);
  ASSERT_TRUE(c.module) << c.errors;
  ASSERT_TRUE(addGrad(c)) << c.errors;
  for (const char *name : {"forward", "grad"}) {
    auto fn = c.module->lookupSymbol<mlir::func::FuncOp>(name);
    ASSERT_TRUE(fn);
    mlir::Block &body = fn.getBody().front();
    mlir::OpBuilder b = mlir::OpBuilder::atBlockBegin(&body);
    auto scalar = [&](mlir::Type t, mlir::Attribute v) {
      auto type = mlir::RankedTensorType::get({}, t);
      return b.create<mlir::ein::ConstantOp>(
          fn.getLoc(), type, mlir::DenseElementsAttr::get(type, v), b.getStrArrayAttr({}));
    };
    mlir::Value step = scalar(b.getF32Type(), b.getF32FloatAttr(7));
    mlir::Value seed = scalar(b.getI32Type(), b.getI32IntegerAttr(11));
    llvm::SmallVector<mlir::Value> none;
    mlir::ein::expandDropouts(body, step, seed, none);
    ASSERT_FALSE(mlir::ein::hasDropout(fn));
  }

  std::string error;
  auto forward = executorFor(c, "forward", einrt::Precision::F64, error);
  ASSERT_TRUE(forward) << error;
  auto grad = executorFor(c, "grad", einrt::Precision::F64, error);
  ASSERT_TRUE(grad) << error;
  EINC_ASSERT_OK(einrt::initParams(*grad, 5));
  EINC_ASSERT_OK(einrt::fillRandomInputs(*grad, 6, 6));
  const einrt::Program &from = grad->program();
  for (size_t i = 0; i < forward->argumentCount(); ++i) {
    std::vector<double> values;
    EINC_ASSERT_OK_AND_ASSIGN(values, grad->read(size_t(from.arguments[i])));
    EINC_ASSERT_OK(forward->setArgument(i, values.data(), values.size()));
  }
  // Central differences of @forward's loss against @grad's gradients, every
  // entry of v and w. Not einrt::gradCheck: it runs f16 buffers unrounded
  // (as f64), where the stochastic rounding that draws the mask passes its
  // input through and every element is kept.
  EINC_ASSERT_OK(grad->run());
  auto loss = [&]() -> double {
    EXPECT_TRUE(forward->run().ok());
    return forward->readScalar(0).take();
  };
  int64_t checked = 0, zeros = 0;
  double worst = 0;
  for (size_t r = 1; r < from.results.size(); ++r) {
    const std::string &name = from.resultNames[r];
    if (name != "v" && name != "w")
      continue;
    std::vector<double> analytic;
    EINC_ASSERT_OK_AND_ASSIGN(analytic, grad->read(size_t(from.results[r])));
    size_t arg = 0;
    while (from.buffers[size_t(from.arguments[arg])].name != name)
      ++arg;
    std::vector<double> values;
    EINC_ASSERT_OK_AND_ASSIGN(values, grad->read(size_t(from.arguments[arg])));
    const double h = 1e-5;
    for (size_t i = 0; i < values.size(); ++i) {
      std::vector<double> moved = values;
      moved[i] = values[i] + h;
      EINC_ASSERT_OK(forward->setArgument(arg, moved.data(), moved.size()));
      double up = loss();
      moved[i] = values[i] - h;
      EINC_ASSERT_OK(forward->setArgument(arg, moved.data(), moved.size()));
      double down = loss();
      double numeric = (up - down) / (2 * h);
      worst = std::max(worst, std::abs(analytic[i] - numeric) /
                                  std::max({std::abs(analytic[i]), std::abs(numeric), 1e-3}));
      zeros += name == "v" && analytic[i] == 0;
      ++checked;
    }
    EINC_ASSERT_OK(forward->setArgument(arg, values.data(), values.size()));
  }
  EXPECT_EQ(checked, 6 * 8 + 8 * 2);
  EXPECT_LT(worst, 1e-6);
  // The masks are there: v's gradient is zero where both of its paths dropped.
  EXPECT_GT(zeros, 0);
  EXPECT_LT(zeros, 6 * 8);
}
