//===- ArenaTest.cpp - The memory planner and the executor's arenas -------===//
#include "runtime/core/Arena.h"
#include "runtime/core/Executor.h"
#include "runtime/core/HostDevice.h"
#include "test/unit/StatusTesting.h"

#include "ProgramBuilder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

using namespace einrt;
using einrt::test::ProgramBuilder;

namespace {

struct Range {
  int64_t first = -1, last = -1;
};

std::vector<Range> liveRanges(const Program &p) {
  std::vector<Range> r(p.buffers.size());
  for (size_t i = 0; i < p.steps.size(); ++i) {
    for (int32_t b : p.steps[i].inputs)
      r[b].last = int64_t(i);
    Range &o = r[p.steps[i].output];
    if (o.first < 0)
      o.first = int64_t(i);
    o.last = int64_t(i);
  }
  return r;
}

/// Element sizes of the host devices: floats as float or double.
StorageSizes sizes(bool wide) {
  return StorageSizes::of(HostDevice(wide ? Precision::F64 : Precision::F32));
}

MemoryPlan plan(const Program &p, bool wide, bool arena = true) {
  return planMemory(p, sizes(wide), arena);
}

int64_t bytesOf(const Program &p, int32_t b, bool wide) {
  return p.buffers[b].elementCount() * sizes(wide).of(p.buffers[b].dtype);
}

/// Every pair of arena buffers whose live ranges overlap is disjoint in
/// memory, and inside the arena; resident buffers are disjoint and inside
/// their block.
void expectValid(const Program &p, const MemoryPlan &plan, bool wide) {
  ASSERT_EQ(plan.arenaOffset.size(), p.buffers.size());
  ASSERT_EQ(plan.residentOffset.size(), p.buffers.size());
  std::vector<Range> r = liveRanges(p);
  for (size_t a = 0; a < p.buffers.size(); ++a) {
    EXPECT_FALSE(plan.arenaOffset[a] >= 0 && plan.residentOffset[a] >= 0) << "buffer " << a;
    if (plan.residentOffset[a] >= 0) {
      EXPECT_EQ(plan.residentOffset[a] % MemoryPlan::kAlign, 0);
      EXPECT_LE(plan.residentOffset[a] + bytesOf(p, int32_t(a), wide), plan.residentBytes);
      for (size_t b = a + 1; b < p.buffers.size(); ++b)
        if (plan.residentOffset[b] >= 0 && bytesOf(p, int32_t(a), wide) > 0 &&
            bytesOf(p, int32_t(b), wide) > 0)
          EXPECT_NE(plan.residentOffset[a], plan.residentOffset[b]) << a << " and " << b;
    }
    if (plan.arenaOffset[a] < 0)
      continue;
    EXPECT_EQ(plan.arenaOffset[a] % MemoryPlan::kAlign, 0);
    EXPECT_LE(plan.arenaOffset[a] + bytesOf(p, int32_t(a), wide), plan.arenaBytes);
    for (size_t b = a + 1; b < p.buffers.size(); ++b) {
      if (plan.arenaOffset[b] < 0)
        continue;
      if (r[a].last < r[b].first || r[b].last < r[a].first)
        continue;
      int64_t a0 = plan.arenaOffset[a], a1 = a0 + bytesOf(p, int32_t(a), wide);
      int64_t b0 = plan.arenaOffset[b], b1 = b0 + bytesOf(p, int32_t(b), wide);
      bool empty = a1 == a0 || b1 == b0;
      EXPECT_TRUE(empty || a1 <= b0 || b1 <= a0) << "buffers " << a << " and " << b << " overlap";
    }
  }
}

/// The largest sum of arena-buffer bytes live at one step.
/// Per step, the bytes of the arena's buffers live at it, by brute force.
std::vector<int64_t> liveAtEachStep(const Program &p, const MemoryPlan &plan, bool wide) {
  std::vector<Range> r = liveRanges(p);
  std::vector<int64_t> live(p.steps.size(), 0);
  for (size_t s = 0; s < p.steps.size(); ++s)
    for (size_t b = 0; b < p.buffers.size(); ++b)
      if (plan.arenaOffset[b] >= 0 && r[b].first <= int64_t(s) && int64_t(s) <= r[b].last)
        live[s] += bytesOf(p, int32_t(b), wide);
  return live;
}

int64_t liveMaximum(const Program &p, const MemoryPlan &plan, bool wide) {
  std::vector<int64_t> live = liveAtEachStep(p, plan, wide);
  return live.empty() ? 0 : *std::max_element(live.begin(), live.end());
}

std::vector<double> values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-2, 2);
  std::vector<double> v(n);
  for (double &x : v)
    x = d(rng);
  return v;
}

/// Runs `p` on the given arguments; every result's values, in order.
std::vector<std::vector<double>> runAll(const Program &p, Precision prec, bool arena,
                                        const std::vector<std::vector<double>> &args) {
  auto ex = Executor::create(p, prec, arena);
  EINC_EXPECT_OK(ex);
  if (!ex.ok())
    return {};
  for (size_t a = 0; a < args.size(); ++a)
    EINC_EXPECT_OK(ex->setArgument(a, args[a].data(), args[a].size()));
  EINC_EXPECT_OK(ex->run());
  std::vector<std::vector<double>> out;
  for (size_t r = 0; r < ex->resultCount(); ++r)
    out.push_back(ex->getResult(r).values);
  return out;
}

bool sameBits(const std::vector<std::vector<double>> &a,
              const std::vector<std::vector<double>> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].size() != b[i].size() ||
        (!a[i].empty() && std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(double))))
      return false;
  return true;
}

} // namespace

TEST(Arena, DisjointRangesShareAnOffset) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {16});
  int32_t t1 = b.step(StepKind::Neg, {x}, DType::F32, {16});  // [0, 1]
  int32_t t2 = b.step(StepKind::Exp, {t1}, DType::F32, {16}); // [1, 2]
  int32_t t3 = b.step(StepKind::Neg, {t2}, DType::F32, {16}); // [2, 3]
  int32_t y = b.step(StepKind::Tanh, {t3}, DType::F32, {16});
  b.result(y);
  MemoryPlan m = plan(b.p, false);
  expectValid(b.p, m, false);
  EXPECT_EQ(m.arenaOffset[t1], m.arenaOffset[t3]);
  EXPECT_NE(m.arenaOffset[t1], m.arenaOffset[t2]);
  EXPECT_EQ(m.arenaBytes, 2 * 64);
  EXPECT_EQ(m.residentBytes, 2 * 64); // x, y
}

TEST(Arena, OverlappingRangesNeverOverlapInMemory) {
  ProgramBuilder b;
  const int n = 6;
  std::vector<int32_t> x, t;
  for (int i = 0; i < n; ++i)
    x.push_back(b.arg(DType::F32, {10 + 7 * i}));
  for (int i = 0; i < n; ++i) // t[i]: live from step i ...
    t.push_back(b.step(StepKind::Neg, {x[i]}, DType::F32, {10 + 7 * i}));
  for (int i = n - 1; i >= 0; --i) // ... to step 2n-1-i: all live at n-1
    b.result(b.step(StepKind::Abs, {t[i]}, DType::F32, {10 + 7 * i}));
  ASSERT_EQ(b.p.validate().message(), "");
  MemoryPlan m = plan(b.p, false);
  expectValid(b.p, m, false);
  int64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    sum += (4 * (10 + 7 * i) + 63) / 64 * 64;
    for (int j = i + 1; j < n; ++j)
      EXPECT_NE(m.arenaOffset[t[i]], m.arenaOffset[t[j]]);
  }
  EXPECT_EQ(m.arenaBytes, sum);
  EXPECT_EQ(m.peakStep, n - 1);
}

TEST(Arena, ArgumentsResultsAndConstantsAreResident) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {8});
  int32_t w = b.buffer(DType::F32, {8}, BufferRole::Param, "w");
  b.p.arguments.push_back(w);
  int32_t c = b.constant(DType::F32, {8}, {1.5});
  int32_t t = b.step(StepKind::Mul, {x, w}, DType::F32, {8});
  int32_t u = b.step(StepKind::Add, {t, c}, DType::F32, {8});
  int32_t i = b.step(StepKind::Cast, {u}, DType::I32, {8});
  int32_t m = b.step(StepKind::CmpGt, {u, c}, DType::I1, {8});
  b.result(u, "u");
  b.result(m, "m");
  MemoryPlan mp = plan(b.p, false);
  expectValid(b.p, mp, false);
  for (int32_t r : {x, w, c, u, m}) {
    EXPECT_EQ(mp.arenaOffset[r], -1) << r;
    EXPECT_GE(mp.residentOffset[r], 0) << r;
  }
  // t [2, 3] and i (never read: live at its step 4) share the arena's start.
  EXPECT_EQ(mp.arenaOffset[t], 0);
  EXPECT_EQ(mp.arenaOffset[i], 0);
  EXPECT_EQ(mp.arenaBytes, 64);
  EXPECT_EQ(mp.residentBytes, 5 * 64); // x, w, c, u, m: 32, 32, 32, 32, 8 bytes

  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(b.p, Precision::F32));
  EXPECT_EQ(ex.arenaBytes(), 64);
  EXPECT_EQ(ex.residentBytes(), 5 * 64);
  EINC_ASSERT_OK_AND_ASSIGN(auto plain, Executor::create(b.p, Precision::F32, false));
  EXPECT_EQ(plain.arenaBytes(), 0);
  EXPECT_EQ(plain.residentBytes(), 7 * 64); // + t, i
}

TEST(Arena, ChainOfEqualBuffersNeedsTwoSlots) {
  for (bool wide : {false, true}) {
    ProgramBuilder b;
    int32_t x = b.arg(DType::F32, {100});
    int32_t a = b.step(StepKind::Neg, {x}, DType::F32, {100});
    int32_t bb = b.step(StepKind::Neg, {a}, DType::F32, {100});
    int32_t c = b.step(StepKind::Neg, {bb}, DType::F32, {100});
    int32_t d = b.step(StepKind::Neg, {c}, DType::F32, {100});
    int32_t e = b.step(StepKind::Neg, {d}, DType::F32, {100});
    b.result(e);
    MemoryPlan m = plan(b.p, wide);
    expectValid(b.p, m, wide);
    int64_t slot = (100 * (wide ? 8 : 4) + 63) / 64 * 64;
    EXPECT_EQ(m.arenaBytes, 2 * slot) << wide;
    EXPECT_EQ(m.arenaOffset[a], m.arenaOffset[c]);
    EXPECT_EQ(m.arenaOffset[bb], m.arenaOffset[d]);
    EXPECT_NE(m.arenaOffset[a], m.arenaOffset[bb]);
    std::vector<double> xs = values(100, 1);
    auto r = runAll(b.p, wide ? Precision::F64 : Precision::F32, true, {xs});
    ASSERT_EQ(r.size(), 1u);
    for (size_t i = 0; i < xs.size(); ++i)
      EXPECT_EQ(r[0][i], wide ? -xs[i] : -double(float(xs[i])));
  }
}

namespace {
/// One training step of a two-layer MLP, forward and backward (simplified).
Program mlpStep(int32_t &h, int32_t &a, int32_t &y, int32_t &da, int32_t &dh) {
  const int64_t B = 16, I = 16, H = 32, O = 16;
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {B, I}, "x");
  int32_t w1 = b.buffer(DType::F32, {I, H}, BufferRole::Param, "w1");
  int32_t w2 = b.buffer(DType::F32, {H, O}, BufferRole::Param, "w2");
  b.p.arguments.push_back(w1);
  b.p.arguments.push_back(w2);
  h = b.step(StepKind::Contract, {x, w1}, DType::F32, {B, H}, {{}, {}, {1}, {0}});           // 0
  a = b.step(StepKind::Tanh, {h}, DType::F32, {B, H});                                       // 1
  y = b.step(StepKind::Contract, {a, w2}, DType::F32, {B, O}, {{}, {}, {1}, {0}});           // 2
  int32_t dw2 = b.step(StepKind::Contract, {a, y}, DType::F32, {H, O}, {{}, {}, {0}, {0}});  // 3
  da = b.step(StepKind::Contract, {y, w2}, DType::F32, {B, H}, {{}, {}, {1}, {1}});          // 4
  dh = b.step(StepKind::Mul, {da, a}, DType::F32, {B, H});                                   // 5
  int32_t dw1 = b.step(StepKind::Contract, {x, dh}, DType::F32, {I, H}, {{}, {}, {0}, {0}}); // 6
  b.result(dw1, "dw1");
  b.result(dw2, "dw2");
  return b.p;
}
} // namespace

TEST(Arena, MlpStepNeedsTheLiveMaximum) {
  int32_t h, a, y, da, dh;
  Program p = mlpStep(h, a, y, da, dh);
  ASSERT_EQ(p.validate().message(), "");
  MemoryPlan m = plan(p, false);
  expectValid(p, m, false);
  // Live: h [0,1], a [1,5], y [2,4], da [4,5], dh [5,6]; at step 4
  // a + y + da = at step 5 a + da + dh = 3 * 16*32*4 bytes (y is 16x16).
  EXPECT_EQ(liveMaximum(p, m, false), 3 * 2048);
  EXPECT_EQ(m.liveBytes, 3 * 2048);
  EXPECT_EQ(m.peakStep, 5);
  EXPECT_EQ(m.arenaBytes, 3 * 2048);
  EXPECT_EQ(plan(p, true).arenaBytes, 3 * 4096);

  std::vector<std::vector<double>> args = {values(16 * 16, 2), values(16 * 32, 3),
                                           values(32 * 16, 4)};
  for (Precision prec : {Precision::F32, Precision::F64})
    EXPECT_TRUE(sameBits(runAll(p, prec, true, args), runAll(p, prec, false, args)));
}

TEST(Arena, CopiedAndMovedExecutorsKeepTheirOwnArena) {
  int32_t h, a, y, da, dh;
  Program p = mlpStep(h, a, y, da, dh);
  std::vector<std::vector<double>> args = {values(16 * 16, 5), values(16 * 32, 6),
                                           values(32 * 16, 7)};
  auto want = runAll(p, Precision::F32, false, args);
  EINC_ASSERT_OK_AND_ASSIGN(std::optional<Executor> ex, Executor::create(p, Precision::F32));
  for (size_t i = 0; i < args.size(); ++i)
    EINC_ASSERT_OK(ex->setArgument(i, args[i].data(), args[i].size()));
  Executor copy = *ex;
  Executor moved = std::move(*ex);
  ex.reset(); // the original's storage is gone
  EXPECT_NE(copy.deviceData(size_t(a)), moved.deviceData(size_t(a)));
  EXPECT_NE(copy.deviceData(size_t(a)), nullptr);
  for (Executor *e : {&copy, &moved}) {
    EINC_ASSERT_OK(e->run());
    std::vector<std::vector<double>> got;
    for (size_t r = 0; r < e->resultCount(); ++r)
      got.push_back(e->getResult(r).values);
    EXPECT_TRUE(sameBits(got, want));
    EXPECT_EQ(e->arenaBytes(), 3 * 2048);
  }
}

TEST(Arena, RandomProgramsMatchWithoutTheArena) {
  std::mt19937 rng(12345);
  auto pick = [&](size_t n) {
    return size_t(std::uniform_int_distribution<size_t>(0, n - 1)(rng));
  };
  const std::vector<std::vector<int64_t>> shapes = {{7}, {16}, {3, 5}, {33}};
  const StepKind unary[] = {StepKind::Neg, StepKind::Tanh, StepKind::Abs};
  const StepKind binary[] = {StepKind::Add, StepKind::Sub, StepKind::Mul, StepKind::Max,
                             StepKind::Min};
  for (int trial = 0; trial < 60; ++trial) {
    ProgramBuilder b;
    std::vector<std::vector<int32_t>> floats(shapes.size()), ints(shapes.size());
    std::vector<std::vector<double>> args;
    for (size_t s = 0; s < shapes.size(); ++s) {
      floats[s].push_back(b.arg(DType::F32, shapes[s]));
      int64_t n = b.p.buffers[floats[s].back()].elementCount();
      args.push_back(values(size_t(n), uint32_t(trial * 10 + s)));
    }
    int steps = 5 + int(pick(60));
    std::vector<int32_t> temps;
    for (int i = 0; i < steps; ++i) {
      size_t s = pick(shapes.size());
      std::vector<int32_t> &fs = floats[s];
      // Mostly recent buffers (short ranges), sometimes old ones (long).
      auto operand = [&]() {
        return pick(4) == 0 ? fs[pick(fs.size())]
                            : fs[fs.size() - 1 - pick(std::min<size_t>(3, fs.size()))];
      };
      int32_t out;
      switch (pick(5)) {
      case 0:
        out = b.step(unary[pick(3)], {operand()}, DType::F32, shapes[s]);
        break;
      case 1:
      case 2:
        out = b.step(binary[pick(5)], {operand(), operand()}, DType::F32, shapes[s]);
        break;
      case 3: { // through the byte arena
        int32_t m = b.step(StepKind::CmpLt, {operand(), operand()}, DType::I1, shapes[s]);
        out = b.step(StepKind::Select, {m, operand(), operand()}, DType::F32, shapes[s]);
        break;
      }
      default: { // through the int32 arena
        int32_t scaled = b.step(StepKind::Add, {operand(), operand()}, DType::F32, shapes[s]);
        int32_t k = b.step(StepKind::Cast, {scaled}, DType::I32, shapes[s]);
        ints[s].push_back(k);
        if (ints[s].size() > 1 && pick(2))
          k = b.step(StepKind::Max, {k, ints[s][pick(ints[s].size())]}, DType::I32, shapes[s]);
        out = b.step(StepKind::Cast, {k}, DType::F32, shapes[s]);
        break;
      }
      }
      fs.push_back(out);
      temps.push_back(out);
    }
    b.result(temps.back());
    for (int r = 0; r < 3; ++r)
      b.result(temps[pick(temps.size())]);
    ASSERT_EQ(b.p.validate().message(), "") << trial;
    for (bool wide : {false, true}) {
      MemoryPlan m = plan(b.p, wide);
      expectValid(b.p, m, wide);
      EXPECT_EQ(m.liveBytes, liveMaximum(b.p, m, wide));
      EXPECT_EQ(m.liveAtStep, liveAtEachStep(b.p, m, wide)) << "trial " << trial;
      EXPECT_GE(m.arenaBytes, m.liveBytes);
      Precision prec = wide ? Precision::F64 : Precision::F32;
      auto with = runAll(b.p, prec, true, args);
      auto without = runAll(b.p, prec, false, args);
      EXPECT_TRUE(sameBits(with, without)) << "trial " << trial;
      EXPECT_TRUE(sameBits(with, runAll(b.p, prec, true, args)));
    }
  }
}

/// A view has no storage: it is placed inside its root at its offset, and
/// its reads and writes keep the root live (and only the root counts).
TEST(Arena, ViewsLiveInTheirRoot) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {4, 16});
  int32_t root = b.buffer(DType::F32, {4, 16}, BufferRole::Temp, "root");
  int32_t low = b.buffer(DType::F32, {2, 16}, BufferRole::Temp, "low");
  int32_t high = b.buffer(DType::F32, {2, 16}, BufferRole::Temp, "high");
  b.p.buffers[low].viewOf = root;
  b.p.buffers[high].viewOf = root;
  b.p.buffers[high].viewOffset = 32;
  b.p.steps.emplace_back(StepKind::Slice, std::vector<int32_t>{x}, low, SliceOffset{0});  // 0
  int32_t other = b.step(StepKind::Exp, {x}, DType::F32, {4, 16});                        // 1
  b.p.steps.emplace_back(StepKind::Slice, std::vector<int32_t>{x}, high, SliceOffset{2}); // 2
  int32_t y = b.step(StepKind::Neg, {other}, DType::F32, {4, 16});                        // 3
  int32_t z = b.step(StepKind::Tanh, {low}, DType::F32, {2, 16});                         // 4
  b.result(y);
  b.result(z);
  ASSERT_EQ(b.p.validate().message(), "");
  for (bool wide : {false, true}) {
    MemoryPlan m = plan(b.p, wide);
    int64_t f = sizes(wide).of(DType::F32);
    ASSERT_GE(m.arenaOffset[root], 0);
    EXPECT_EQ(m.arenaOffset[low], m.arenaOffset[root]);
    EXPECT_EQ(m.arenaOffset[high], m.arenaOffset[root] + 32 * f);
    // root is live from step 0 (its first view written) to step 4 (read):
    // it never shares memory with `other` (steps 1..3).
    int64_t r0 = m.arenaOffset[root], o0 = m.arenaOffset[other];
    EXPECT_TRUE(r0 + 64 * f <= o0 || o0 + 64 * f <= r0);
    EXPECT_EQ(m.liveAtStep[0], 64 * f) << "root, not its views";
    EXPECT_EQ(m.liveAtStep[2], 2 * 64 * f);
  }
  // And it runs: z = tanh(x's first two rows).
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(b.p, Precision::F64));
  std::vector<double> in(64);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = 0.01 * double(i);
  EINC_ASSERT_OK(ex.write(size_t(x), in.data(), in.size()));
  EINC_ASSERT_OK(ex.run());
  std::vector<double> out = einrt::test::valuesOf(ex, size_t(z));
  ASSERT_EQ(out.size(), 32u);
  for (size_t i = 0; i < out.size(); ++i)
    EXPECT_EQ(out[i], std::tanh(in[i]));
}
