//===- CpuKernelsTest.cpp - JIT-compiled CPU kernels vs the reference -----===//
//
// Each test parses a small function of `ein` ops, compiles a kernel for
// every op (KernelCompiler), lowers the same function to a reference Program
// and runs it on einrt::Executor with random arguments, then runs every
// kernel on the very inputs the reference step saw and compares its output
// with the reference step's: within 1e-5 relative for floats (in practice
// bit-identical but for reassociated float sums), exact for integers,
// booleans and data movement.
//
//===----------------------------------------------------------------------===//
#include "codegen/CpuKernels.h"
#include "codegen/ReferenceLowering.h"
#include "ir/EinOps.h"
#include "runtime/core/Executor.h"
#include "runtime/cpu/CpuTarget.h"
#include "test/unit/StatusTesting.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <regex>
#include <set>

using namespace mlir;
using KernelCompiler = ::ein::codegen::KernelCompiler;

namespace {

struct Options {
  int32_t intLo = 0, intHi = 4; // i32 arguments drawn from [intLo, intHi)
  float floatLo = -2, floatHi = 2;
  bool specials = false; // sprinkle NaN, ±inf, ±0 and large values
  unsigned seed = 1;
};

std::unique_ptr<MLIRContext> newContext() {
  auto ctx = std::make_unique<MLIRContext>();
  ctx->loadDialect<mlir::ein::EinDialect, func::FuncDialect>();
  return ctx;
}

bool close(float got, float want) {
  if (std::isnan(want))
    return std::isnan(got);
  if (std::isinf(want))
    return got == want;
  return std::fabs(got - want) <= 1e-5f * std::fabs(want) + 1e-30f;
}

/// Parses `text`, compiles every op's kernel, checks each against the
/// reference. Returns the number of ops checked.
int checkFunction(const std::string &text, const Options &opt = {}) {
  auto ctx = newContext();
  std::string diags;
  ScopedDiagnosticHandler handler(ctx.get(), [&](Diagnostic &d) {
    diags += d.str() + "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, ctx.get());
  EXPECT_TRUE(module) << diags << text;
  if (!module)
    return 0;
  func::FuncOp fn;
  module->walk([&](func::FuncOp f) {
    if (!fn)
      fn = f;
  });
  auto kc = KernelCompiler::create();
  std::vector<Operation *> ops;
  std::vector<int64_t> index;
  for (Operation &op : fn.getBody().front().without_terminator()) {
    if (isa<mlir::ein::ConstantOp>(op))
      continue;
    auto k = kc->add(&op);
    EXPECT_TRUE(succeeded(k)) << diags;
    if (failed(k))
      return 0;
    ops.push_back(&op);
    index.push_back(*k);
  }
  EXPECT_TRUE(succeeded(kc->compile())) << diags;

  auto program = ::ein::codegen::lowerToProgram(fn);
  EXPECT_TRUE(succeeded(program)) << diags;
  if (failed(program))
    return 0;
  // No arena: every step's output is read back after the run.
  einrt::Expected<einrt::Executor> exec =
      einrt::Executor::create(*program, einrt::Precision::F32, /*useArena=*/false);
  EINC_EXPECT_OK(exec);
  if (!exec.ok())
    return 0;
  std::mt19937 rng(opt.seed);
  for (size_t a = 0; a < exec->argumentCount(); ++a) {
    const einrt::Buffer &buf = program->buffers[program->arguments[a]];
    std::vector<double> v(buf.elementCount());
    for (size_t i = 0; i < v.size(); ++i) {
      if (buf.dtype == einrt::DType::I32) {
        v[i] = std::uniform_int_distribution<int32_t>(opt.intLo, opt.intHi - 1)(rng);
      } else if (buf.dtype == einrt::DType::I1) {
        v[i] = rng() & 1;
      } else {
        v[i] = std::uniform_real_distribution<float>(opt.floatLo, opt.floatHi)(rng);
        if (opt.specials) {
          static const double sp[] = {NAN, INFINITY, -INFINITY, 0.0,   -0.0,
                                      3e9, -3e9,     1.0,       2.5e9, -0.75};
          if (rng() % 3 == 0)
            v[i] = sp[rng() % 10];
        }
      }
    }
    EINC_EXPECT_OK(exec->setArgument(a, v.data(), v.size()));
  }
  EINC_EXPECT_OK(exec->run());
  EXPECT_EQ(program->steps.size(), ops.size());
  if (program->steps.size() != ops.size())
    return 0;

  for (size_t s = 0; s < ops.size(); ++s) {
    const einrt::Step &step = program->steps[s];
    std::vector<void *> ptrs;
    // The reference device's buffers are host memory: f32, i32, u8.
    for (int32_t in : step.inputs)
      ptrs.push_back(exec->deviceData(size_t(in)));
    einrt::Expected<std::vector<double>> read = exec->read(size_t(step.output));
    EINC_EXPECT_OK(read);
    std::vector<double> want = read.ok() ? read.take() : std::vector<double>{};
    const einrt::DType wantType = program->buffers[size_t(step.output)].dtype;
    int64_t n = int64_t(want.size());
    // Filled with garbage: the kernel must write every element.
    std::vector<uint8_t> out(std::max<int64_t>(n, 1) * 4 + 64, 0xA5);
    ptrs.push_back(out.data());
    std::vector<void *> args;
    for (void *&p : ptrs)
      args.push_back(&p);
    // In three calls over consecutive ranges of the parallel loop, as the
    // executor's threads split it: together they must write everything.
    const einrt::KernelEntry &kernel = kc->table()[index[s]];
    int64_t range[2];
    args.push_back(&range[0]);
    args.push_back(&range[1]);
    const int64_t calls = kernel.extent > 1 ? 3 : 1; // extent 1: one call does all
    for (int64_t c = 0; c < calls; ++c) {
      range[0] = kernel.extent * c / calls;
      range[1] = kernel.extent * (c + 1) / calls;
      if (range[0] < range[1])
        kernel.fn(args.data());
    }

    std::string name = ops[s]->getName().getStringRef().str();
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; ++i) {
      bool ok;
      std::string got, exp;
      if (wantType == einrt::DType::I32) {
        int32_t g;
        std::memcpy(&g, out.data() + 4 * i, 4);
        ok = g == int32_t(want[i]);
        got = std::to_string(g);
        exp = std::to_string(int32_t(want[i]));
      } else if (wantType == einrt::DType::I1) {
        ok = out[i] == uint8_t(want[i]);
        got = std::to_string(out[i]);
        exp = std::to_string(uint8_t(want[i]));
      } else {
        float g;
        std::memcpy(&g, out.data() + 4 * i, 4);
        ok = close(g, float(want[i]));
        got = std::to_string(g);
        exp = std::to_string(float(want[i]));
      }
      if (!ok) {
        ++bad;
        ADD_FAILURE() << name << " (step " << s << ") element " << i << ": got " << got
                      << ", reference " << exp;
      }
    }
  }
  return int(ops.size());
}

std::string fn(const std::string &args, const std::string &body, const std::string &results) {
  return "func.func @f(" + args + ") -> (" + results + ") {\n" + body + "}\n";
}

TEST(CpuKernels, UnaryF32) {
  std::string body;
  for (const char *op : {"neg", "abs", "exp", "log", "tanh", "sqrt", "rsqrt", "softplus"})
    body += std::string("  %") + op + " = ein." + op + " %x : tensor<5x37xf32>\n";
  body += "  return %neg : tensor<5x37xf32>\n";
  EXPECT_EQ(checkFunction(fn("%x: tensor<5x37xf32>", body, "tensor<5x37xf32>")), 8);
  Options pos;
  pos.floatLo = 0.01f;
  pos.floatHi = 30;
  pos.seed = 7;
  EXPECT_EQ(checkFunction(fn("%x: tensor<5x37xf32>", body, "tensor<5x37xf32>"), pos), 8);
  Options sp;
  sp.specials = true;
  EXPECT_EQ(checkFunction(fn("%x: tensor<5x37xf32>", body, "tensor<5x37xf32>"), sp), 8);
  Options wide; // softplus's two branches, far from 0 (log and sqrt: NaN on both)
  wide.floatLo = -60;
  wide.floatHi = 60;
  wide.seed = 11;
  EXPECT_EQ(checkFunction(fn("%x: tensor<5x37xf32>", body, "tensor<5x37xf32>"), wide), 8);
}

TEST(CpuKernels, BinaryF32) {
  std::string body;
  for (const char *op : {"add", "sub", "mul", "div", "max", "min", "pow"})
    body += std::string("  %") + op + " = ein." + op + " %x, %y : tensor<3x41xf32>\n";
  body += "  return %add : tensor<3x41xf32>\n";
  std::string text = fn("%x: tensor<3x41xf32>, %y: tensor<3x41xf32>", body, "tensor<3x41xf32>");
  EXPECT_EQ(checkFunction(text), 7);
  Options sp;
  sp.specials = true;
  sp.seed = 3;
  EXPECT_EQ(checkFunction(text, sp), 7);
  Options pos;
  pos.floatLo = 0.1f;
  pos.floatHi = 4;
  EXPECT_EQ(checkFunction(text, pos), 7);
}

TEST(CpuKernels, IntegerArithmetic) {
  std::string body;
  for (const char *op : {"add", "sub", "mul", "div", "max", "min"})
    body += std::string("  %") + op + " = ein." + op + " %x, %y : tensor<67xi32>\n";
  body += "  %neg = ein.neg %x : tensor<67xi32>\n  %abs = ein.abs %x : tensor<67xi32>\n";
  body += "  return %add : tensor<67xi32>\n";
  Options o;
  o.intLo = 1; // no division by zero (the reference reports it as an error)
  o.intHi = 1000;
  EXPECT_EQ(checkFunction(fn("%x: tensor<67xi32>, %y: tensor<67xi32>", body, "tensor<67xi32>"), o),
            8);
  o.intLo = -2147483647;
  o.intHi = 2147483647;
  o.seed = 5;
  EXPECT_EQ(checkFunction(fn("%x: tensor<67xi32>, %y: tensor<67xi32>", body, "tensor<67xi32>"), o),
            8);
}

TEST(CpuKernels, CompareAndSelect) {
  std::string body;
  for (const char *p : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    body += std::string("  %f") + p + " = ein.cmp " + p +
            ", %x, %y : tensor<4x9xf32> -> tensor<4x9xi1>\n";
    body += std::string("  %i") + p + " = ein.cmp " + p +
            ", %a, %b : tensor<4x9xi32> -> tensor<4x9xi1>\n";
    body += std::string("  %b") + p + " = ein.cmp " + p +
            ", %m, %n : tensor<4x9xi1> -> tensor<4x9xi1>\n";
  }
  body += "  %s = ein.select %flt, %x, %y : tensor<4x9xi1>, tensor<4x9xf32>\n";
  body += "  %t = ein.select %m, %a, %b : tensor<4x9xi1>, tensor<4x9xi32>\n";
  body += "  %u = ein.select %m, %n, %feq : tensor<4x9xi1>, tensor<4x9xi1>\n";
  body += "  return %s : tensor<4x9xf32>\n";
  std::string text = fn("%x: tensor<4x9xf32>, %y: tensor<4x9xf32>, %a: tensor<4x9xi32>, "
                        "%b: tensor<4x9xi32>, %m: tensor<4x9xi1>, %n: tensor<4x9xi1>",
                        body, "tensor<4x9xf32>");
  Options o;
  o.specials = true;
  EXPECT_EQ(checkFunction(text, o), 21);
  // Equal values are frequent with few distinct inputs.
  o.specials = false;
  o.floatLo = 0;
  o.floatHi = 0; // all equal
  EXPECT_EQ(checkFunction(text, o), 21);
}

TEST(CpuKernels, Casts) {
  std::string body;
  const char *types[] = {"f32", "i32", "i1"};
  const char *args[] = {"%x", "%a", "%m"};
  int n = 0;
  for (int from = 0; from < 3; ++from)
    for (int to = 0; to < 3; ++to) {
      body += "  %c" + std::to_string(n++) + " = ein.cast " + args[from] + " : tensor<6x11x" +
              types[from] + "> -> tensor<6x11x" + types[to] + ">\n";
    }
  body += "  return %c0 : tensor<6x11xf32>\n";
  std::string text = fn("%x: tensor<6x11xf32>, %a: tensor<6x11xi32>, %m: tensor<6x11xi1>", body,
                        "tensor<6x11xf32>");
  Options o;
  o.specials = true; // NaN → 0, ±3e9 saturate, -0.75 → 0
  o.intLo = -20000000;
  o.intHi = 20000000; // beyond 2^24: i32 → f32 rounds
  o.floatLo = -1e6;
  o.floatHi = 1e6;
  EXPECT_EQ(checkFunction(text, o), 9);
  o.specials = false;
  o.intLo = -1;
  o.intHi = 2;
  o.floatLo = -2;
  o.floatHi = 2;
  EXPECT_EQ(checkFunction(text, o), 9);
}

TEST(CpuKernels, DataMovement) {
  std::string body = "  %t = ein.transpose %x [2, 0, 1] : tensor<3x5x7xf32> -> tensor<7x3x5xf32>\n"
                     "  %t2 = ein.transpose %x [1, 0, 2] : tensor<3x5x7xf32> -> tensor<5x3x7xf32>\n"
                     "  %ti = ein.transpose %a [1, 0] : tensor<4x6xi32> -> tensor<6x4xi32>\n"
                     "  %tb = ein.transpose %m [1, 0] : tensor<4x6xi1> -> tensor<6x4xi1>\n"
                     "  %r = ein.reshape %x : tensor<3x5x7xf32> -> tensor<15x7xf32>\n"
                     "  %rb = ein.reshape %m : tensor<4x6xi1> -> tensor<24xi1>\n"
                     "  %b0 = ein.broadcast %v dims [1] : tensor<5xf32> -> tensor<3x5x7xf32>\n"
                     "  %b1 = ein.broadcast %w dims [0, 2] : tensor<3x1xf32> -> tensor<3x5x8xf32>\n"
                     "  %b2 = ein.broadcast %s dims [] : tensor<f32> -> tensor<4x6xf32>\n"
                     "  %b3 = ein.broadcast %a dims [0, 1] : tensor<4x6xi32> -> tensor<4x6x2xi32>\n"
                     "  %b4 = ein.broadcast %m dims [1, 2] : tensor<4x6xi1> -> tensor<2x4x6xi1>\n"
                     "  %b5 = ein.broadcast %w dims [0, 1] : tensor<3x1xf32> -> tensor<3x4xf32>\n"
                     "  return %t : tensor<7x3x5xf32>\n";
  std::string text = fn("%x: tensor<3x5x7xf32>, %a: tensor<4x6xi32>, %m: tensor<4x6xi1>, "
                        "%v: tensor<5xf32>, %w: tensor<3x1xf32>, %s: tensor<f32>",
                        body, "tensor<7x3x5xf32>");
  Options o;
  o.intLo = -100;
  o.intHi = 100;
  EXPECT_EQ(checkFunction(text, o), 12);
}

TEST(CpuKernels, Reductions) {
  std::string body;
  int n = 0;
  for (const char *k : {"sum", "max", "min"}) {
    auto r = [&](const std::string &dims, const std::string &in, const std::string &out,
                 const char *arg) {
      body += "  %r" + std::to_string(n++) + " = ein.reduce " + k + " " + arg + " dims [" + dims +
              "] : " + in + " -> " + out + "\n";
    };
    r("2", "tensor<3x4x50xf32>", "tensor<3x4xf32>", "%x");
    r("0", "tensor<3x4x50xf32>", "tensor<4x50xf32>", "%x");
    r("0, 1", "tensor<3x4x50xf32>", "tensor<50xf32>", "%x");
    r("1", "tensor<3x4x50xf32>", "tensor<3x50xf32>", "%x");
    r("0, 2", "tensor<3x4x50xf32>", "tensor<4xf32>", "%x");
    r("0, 1, 2", "tensor<3x4x50xf32>", "tensor<f32>", "%x");
    r("1", "tensor<5x1x3xf32>", "tensor<5x3xf32>", "%y");
    r("1", "tensor<7x9xi32>", "tensor<7xi32>", "%a");
    r("0", "tensor<7x9xi32>", "tensor<9xi32>", "%a");
    r("0", "tensor<0x9xi32>", "tensor<9xi32>", "%e");
  }
  body += "  return %r0 : tensor<3x4xf32>\n";
  std::string text = fn("%x: tensor<3x4x50xf32>, %y: tensor<5x1x3xf32>, %a: tensor<7x9xi32>, "
                        "%e: tensor<0x9xi32>",
                        body, "tensor<3x4xf32>");
  Options o;
  o.intLo = -2147483647;
  o.intHi = 2147483647; // sums wrap
  EXPECT_EQ(checkFunction(text, o), 30);
  o.specials = true; // NaN propagates through max/min
  o.seed = 11;
  EXPECT_EQ(checkFunction(text, o), 30);
}

TEST(CpuKernels, IotaGatherScatter) {
  std::string body =
      "  %i0 = ein.iota dim 0 : tensor<5x7xi32>\n"
      "  %i1 = ein.iota dim 1 : tensor<5x7xf32>\n"
      "  %i2 = ein.iota dim 0 : tensor<9xf32>\n"
      "  %g = ein.gather %table, %ids : tensor<6x3x4xf32>, tensor<2x5xi32> -> tensor<2x5x3x4xf32>\n"
      "  %gi = ein.gather %itab, %ids : tensor<6xi32>, tensor<2x5xi32> -> tensor<2x5xi32>\n"
      "  %s = ein.scatter_add %upd, %ids : tensor<2x5x3x4xf32>, tensor<2x5xi32> -> "
      "tensor<6x3x4xf32>\n"
      "  %si = ein.scatter_add %iupd, %ids : tensor<2x5x2xi32>, tensor<2x5xi32> -> "
      "tensor<6x2xi32>\n"
      "  return %g : tensor<2x5x3x4xf32>\n";
  std::string text = fn("%table: tensor<6x3x4xf32>, %itab: tensor<6xi32>, %ids: tensor<2x5xi32>, "
                        "%upd: tensor<2x5x3x4xf32>, %iupd: tensor<2x5x2xi32>",
                        body, "tensor<2x5x3x4xf32>");
  Options o;
  o.intLo = 0;
  o.intHi = 6; // valid rows; repeated ids accumulate
  EXPECT_EQ(checkFunction(text, o), 7);
}

/// Runs one kernel by hand on given buffers.
void call(const einrt::KernelEntry &k, std::vector<void *> ptrs) {
  std::vector<void *> args;
  for (void *&p : ptrs)
    args.push_back(&p);
  int64_t range[2] = {0, k.extent};
  args.push_back(&range[0]);
  args.push_back(&range[1]);
  k.fn(args.data());
}

TEST(CpuKernels, OutOfRangeIndicesAreDefined) {
  auto ctx = newContext();
  auto module = parseSourceString<ModuleOp>(
      fn("%t: tensor<3x2xf32>, %ids: tensor<4xi32>, %u: tensor<4x2xf32>",
         "  %g = ein.gather %t, %ids : tensor<3x2xf32>, tensor<4xi32> -> tensor<4x2xf32>\n"
         "  %s = ein.scatter_add %u, %ids : tensor<4x2xf32>, tensor<4xi32> -> tensor<3x2xf32>\n"
         "  return %g : tensor<4x2xf32>\n",
         "tensor<4x2xf32>"),
      ctx.get());
  ASSERT_TRUE(module);
  auto f = *module->getOps<func::FuncOp>().begin();
  auto kc = KernelCompiler::create();
  std::vector<int64_t> idx;
  for (Operation &op : f.getBody().front().without_terminator())
    idx.push_back(*kc->add(&op));
  ASSERT_TRUE(succeeded(kc->compile()));
  float table[6] = {1, 2, 3, 4, 5, 6};
  int32_t ids[4] = {2, -1, 3, 0};
  float g[8];
  call(kc->table()[idx[0]], {table, ids, g});
  float wantG[8] = {5, 6, 0, 0, 0, 0, 1, 2};
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(g[i], wantG[i]) << i;
  float u[8] = {1, 1, 2, 2, 3, 3, 4, 4};
  float s[6];
  call(kc->table()[idx[1]], {u, ids, s});
  float wantS[6] = {4, 4, 0, 0, 1, 1};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(s[i], wantS[i]) << i;
}

TEST(CpuKernels, DeduplicationAndProcessCache) {
  auto ctx = newContext();
  std::string body =
      "  %a = ein.add %x, %y {axes = [\"i\", \"j\"]} : tensor<13x17xf32>\n"
      "  %b = ein.add %a, %y {axes = [\"p\", \"q\"], ein.layer = \"layer.1\"} : tensor<13x17xf32>\n"
      "  %c = ein.sub %a, %b : tensor<13x17xf32>\n"
      "  %d = ein.reduce sum %c dims [1] : tensor<13x17xf32> -> tensor<13xf32>\n"
      "  %e = ein.reduce max %c dims [1] : tensor<13x17xf32> -> tensor<13xf32>\n"
      "  %f = ein.reduce sum %c dims [0] : tensor<13x17xf32> -> tensor<17xf32>\n"
      "  %r = ein.reshape %x : tensor<13x17xf32> -> tensor<221xf32>\n"
      "  %h = ein.add %r, %r : tensor<221xf32>\n"
      "  return %a : tensor<13x17xf32>\n";
  auto module = parseSourceString<ModuleOp>(
      fn("%x: tensor<13x17xf32>, %y: tensor<13x17xf32>", body, "tensor<13x17xf32>"), ctx.get());
  ASSERT_TRUE(module);
  auto f = *module->getOps<func::FuncOp>().begin();
  std::vector<Operation *> ops;
  for (Operation &op : f.getBody().front().without_terminator())
    ops.push_back(&op);

  auto first = KernelCompiler::create();
  std::vector<int64_t> idx;
  for (Operation *op : ops)
    idx.push_back(*first->add(op));
  EXPECT_EQ(idx[0], idx[1]); // same op, different axes / ein.layer
  EXPECT_NE(idx[0], idx[2]);
  EXPECT_NE(idx[3], idx[4]); // reduce kind is part of the signature
  EXPECT_NE(idx[3], idx[5]); // so are the dimensions
  EXPECT_EQ(idx[7], idx[0]); // elementwise: only the element count matters
  EXPECT_EQ(first->kernelCount(), 6);
  EXPECT_EQ(*first->add(ops[0]), idx[0]); // adding again: the same index
  ASSERT_TRUE(succeeded(first->compile()));
  ASSERT_EQ(first->table().size(), 6u);
  EXPECT_EQ(first->compiledCount() + first->cachedCount(), 6);
  EXPECT_GT(first->compileSeconds(), 0.0);
  // compile() again: nothing new.
  int64_t compiled = first->compiledCount();
  ASSERT_TRUE(succeeded(first->compile()));
  EXPECT_EQ(first->compiledCount(), compiled);

  auto second = KernelCompiler::create();
  for (Operation *op : ops)
    (void)second->add(op);
  ASSERT_TRUE(succeeded(second->compile()));
  EXPECT_EQ(second->compiledCount(), 0);
  EXPECT_EQ(second->cachedCount(), 6);
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_EQ(second->table()[i].fn, first->table()[i].fn);
}

TEST(CpuKernels, RejectsWhatIsNotAKernel) {
  auto ctx = newContext();
  std::string diags;
  ScopedDiagnosticHandler handler(ctx.get(), [&](Diagnostic &d) {
    diags += d.str() + "\n";
    return success();
  });
  auto module = parseSourceString<ModuleOp>(
      fn("%x: tensor<2x3xf32>, %y: tensor<3x4xf32>",
         "  %c = ein.contract %x, %y batch [], [] contract [1], [0] : tensor<2x3xf32>, "
         "tensor<3x4xf32> -> tensor<2x4xf32>\n"
         "  %k = ein.constant dense<1.0> : tensor<4xf32>\n"
         "  return %c : tensor<2x4xf32>\n",
         "tensor<2x4xf32>"),
      ctx.get());
  ASSERT_TRUE(module) << diags;
  auto f = *module->getOps<func::FuncOp>().begin();
  auto kc = KernelCompiler::create();
  for (Operation &op : f.getBody().front().without_terminator())
    EXPECT_TRUE(failed(kc->add(&op)));
  EXPECT_NE(diags.find("BLAS"), std::string::npos) << diags;
  EXPECT_NE(diags.find("Constant buffers"), std::string::npos) << diags;
  EXPECT_EQ(kc->kernelCount(), 0);
  EXPECT_TRUE(succeeded(kc->compile()));
}

/// Compiles a kernel for every op of the function `text` (shapes used
/// nowhere else in this process, so they compile here) and returns the
/// optimised LLVM IR; `compiled` gets how many kernels were compiled.
std::string optimizedIRFor(const std::string &text, int64_t &compiled) {
  auto ctx = newContext();
  auto module = parseSourceString<ModuleOp>(text, ctx.get());
  if (!module)
    return "";
  auto f = *module->getOps<func::FuncOp>().begin();
  auto kc = KernelCompiler::create();
  kc->setKeepOptimizedIR(true);
  for (Operation &op : f.getBody().front().without_terminator())
    if (failed(kc->add(&op)))
      return "";
  if (failed(kc->compile()))
    return "";
  compiled = kc->compiledCount();
  return kc->optimizedIR();
}

// The loops are vectorised for the JIT's target: the optimised LLVM IR of an
// elementwise kernel holds vector arithmetic on floats.
TEST(CpuKernels, ElementwiseLoopsAreVectorised) {
  int64_t compiled = 0;
  std::string ir = optimizedIRFor(fn("%x: tensor<61x67xf32>, %y: tensor<61x67xf32>",
                                     "  %a = ein.mul %x, %y : tensor<61x67xf32>\n"
                                     "  %b = ein.max %a, %y : tensor<61x67xf32>\n"
                                     "  return %b : tensor<61x67xf32>\n",
                                     "tensor<61x67xf32>"),
                                  compiled);
  ASSERT_FALSE(ir.empty());
  ASSERT_EQ(compiled, 2);
  std::smatch m;
  std::regex vmul("fmul <(4|8|16) x float>");
  ASSERT_TRUE(std::regex_search(ir, m, vmul)) << ir;
  std::cout << "[ vectorised ] optimised IR contains '" << m.str() << "'\n";
  EXPECT_TRUE(std::regex_search(ir, std::regex("fcmp (ogt|uno) <(4|8|16) x float>"))) << ir;
  if (const char *dump = std::getenv("EINC_CPU_KERNEL_IR"))
    std::ofstream(dump) << ir;
}

// Reductions along the innermost axis vectorise too: a float sum over rows
// keeps codegen/RowOrder.h's 32 partials, with plain additions the
// vectoriser makes vector ones (no reassociation: the order is fixed), max is
// a NaN-propagating maximum. Both stay within the reference's values
// (checked elsewhere).
TEST(CpuKernels, InnermostReductionsAreVectorised) {
  int64_t compiled = 0;
  std::string ir =
      optimizedIRFor(fn("%x: tensor<37x203xf32>",
                        "  %s = ein.reduce sum %x dims [1] : tensor<37x203xf32> -> tensor<37xf32>\n"
                        "  %m = ein.reduce max %x dims [1] : tensor<37x203xf32> -> tensor<37xf32>\n"
                        "  %r = ein.add %s, %m : tensor<37xf32>\n"
                        "  return %r : tensor<37xf32>\n",
                        "tensor<37xf32>"),
                     compiled);
  ASSERT_FALSE(ir.empty());
  EXPECT_TRUE(std::regex_search(ir, std::regex("fadd <(4|8|16) x float>"))) << ir;
  EXPECT_FALSE(std::regex_search(ir, std::regex("fadd reassoc"))) << ir;
  EXPECT_TRUE(std::regex_search(ir, std::regex("llvm\\.maximum\\.v(4|8|16)f32"))) << ir;
}

// EINC_JIT_CPU=x86-64-v3 compiles AVX2 kernels (8 floats a vector) on an
// AVX-512 host: the determinism matrix (scripts/test-matrix) runs the suite
// so to emulate an AVX2-only machine; they agree with the reference as the
// host's do. A name that is no CPU target is an error naming the variable.
TEST(CpuKernels, JitCpuFromTheEnvironment) {
  if (!einrt::cpuRuns("x86-64-v3"))
    GTEST_SKIP() << "the machine cannot run x86-64-v3 code";
  const char *outer = std::getenv("EINC_JIT_CPU");
  std::string saved = outer ? outer : "";
  setenv("EINC_JIT_CPU", "x86-64-v3", 1);
  int64_t compiled = 0;
  const std::string body =
      "  %s = ein.reduce sum %x dims [1] : tensor<29x211xf32> -> tensor<29xf32>\n"
      "  %b = ein.broadcast %s dims [0] : tensor<29xf32> -> tensor<29x211xf32>\n"
      "  %t = ein.mul %x, %b : tensor<29x211xf32>\n"
      "  return %t : tensor<29x211xf32>\n";
  std::string ir =
      optimizedIRFor(fn("%x: tensor<29x211xf32>", body, "tensor<29x211xf32>"), compiled);
  EXPECT_TRUE(std::regex_search(ir, std::regex("<8 x float>"))) << ir;
  EXPECT_FALSE(std::regex_search(ir, std::regex("<16 x float>"))) << ir;
  EXPECT_EQ(
      checkFunction(fn("%x: tensor<31x213xf32>",
                       "  %s = ein.reduce sum %x dims [1] : tensor<31x213xf32> -> tensor<31xf32>\n"
                       "  %e = ein.exp %x : tensor<31x213xf32>\n"
                       "  return %e : tensor<31x213xf32>\n",
                       "tensor<31x213xf32>")),
      2);

  setenv("EINC_JIT_CPU", "no-such-cpu", 1);
  auto ctx = newContext();
  auto module = parseSourceString<ModuleOp>(
      fn("%x: tensor<7x5x3xf32>",
         "  %n = ein.neg %x : tensor<7x5x3xf32>\n  return %n : tensor<7x5x3xf32>\n",
         "tensor<7x5x3xf32>"),
      ctx.get());
  ASSERT_TRUE(module);
  auto kc = KernelCompiler::create();
  for (Operation &op :
       (*module->getOps<func::FuncOp>().begin()).getBody().front().without_terminator())
    ASSERT_TRUE(succeeded(kc->add(&op)));
  testing::internal::CaptureStderr();
  bool failedAsItShould = failed(kc->compile());
  std::string err = testing::internal::GetCapturedStderr();
  // A target this machine cannot run is refused, not run into SIGILL.
  if (!einrt::cpuRuns("x86-64-v4")) {
    setenv("EINC_JIT_CPU", "x86-64-v4", 1);
    testing::internal::CaptureStderr();
    EXPECT_TRUE(failed(kc->compile()));
    EXPECT_NE(testing::internal::GetCapturedStderr().find(
                  "EINC_JIT_CPU: this CPU cannot run x86-64-v4 code (its best target is "),
              std::string::npos);
  }
  EXPECT_TRUE(failedAsItShould);
  EXPECT_NE(err.find("EINC_JIT_CPU: 'no-such-cpu' is not a CPU target einc knows (x86-64-v4, "
                     "x86-64-v3, x86-64-v2)"),
            std::string::npos)
      << err;
  if (outer)
    setenv("EINC_JIT_CPU", saved.c_str(), 1);
  else
    unsetenv("EINC_JIT_CPU");
}

} // namespace
