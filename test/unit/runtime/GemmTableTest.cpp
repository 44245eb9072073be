//===- GemmTableTest.cpp - GEMM libraries, the measured table, the choice -===//
//
// runtime/cpu/GemmLibrary.h and runtime/cpu/GemmTable.h: every library that loads
// here computes row-major sgemm (transposes, padded leading dimensions,
// beta 0 and 1) within f32 rounding of an f64 reference; the table reads
// back what was written and a damaged one is an error naming it; the
// chooser follows EINC_GEMM, then the table of this machine (another
// machine's table is ignored), per shape; the CPU device runs a GEMM on the
// chosen library, the same bits at one and two threads, within bounds of
// OpenBLAS's.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/GemmTable.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/GemmLibrary.h"
#include "test/unit/StatusTesting.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <thread>
#include <unistd.h>

using namespace einrt;

namespace {

/// Sets an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> saved;
  ScopedEnv(const char *n, const char *value) : name(n) {
    if (const char *v = std::getenv(n))
      saved = v;
    if (value)
      setenv(n, value, 1);
    else
      unsetenv(n);
  }
  ~ScopedEnv() {
    if (saved)
      setenv(name.c_str(), saved->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

/// A fresh cache folder for one test.
struct TempCache {
  std::string dir;
  ScopedEnv env;
  TempCache()
      : dir(std::filesystem::temp_directory_path() /
            ("einc-gemm-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++))),
        env("EINC_CACHE_DIR", dir.c_str()) {}
  ~TempCache() { std::filesystem::remove_all(dir); }
  static int &counter() {
    static int n = 0;
    return n;
  }
};

struct Problem {
  GemmShape s;
  std::vector<float> a, b, c0;
};

Problem randomProblem(std::mt19937 &rng) {
  std::uniform_int_distribution<int> dim(1, 70), pad(0, 5), coin(0, 1);
  std::uniform_real_distribution<float> value(-1, 1);
  Problem p;
  GemmShape &s = p.s;
  s.transA = coin(rng), s.transB = coin(rng);
  s.m = dim(rng), s.n = dim(rng), s.k = dim(rng);
  s.lda = (s.transA ? s.m : s.k) + pad(rng);
  s.ldb = (s.transB ? s.k : s.n) + pad(rng);
  s.ldc = s.n + pad(rng);
  p.a.resize(size_t((s.transA ? s.k : s.m) * s.lda));
  p.b.resize(size_t((s.transB ? s.n : s.k) * s.ldb));
  p.c0.resize(size_t(s.m * s.ldc));
  for (float &x : p.a)
    x = value(rng);
  for (float &x : p.b)
    x = value(rng);
  for (float &x : p.c0)
    x = value(rng);
  return p;
}

float at(const std::vector<float> &x, int64_t ld, bool trans, int64_t r, int64_t c) {
  return trans ? x[size_t(c * ld + r)] : x[size_t(r * ld + c)];
}

} // namespace

TEST(GemmLibrary, OpenBlasIsAlwaysThereAndUnknownNamesAreErrors) {
  EINC_ASSERT_OK_AND_ASSIGN(const GemmLibrary *openblas, gemmLibrary("openblas"));
  EXPECT_NE(openblas->version.find("OpenBLAS"), std::string::npos) << openblas->version;
  EXPECT_EQ(availableGemmLibraries().front(), openblas);
  EINC_EXPECT_STATUS_EQ(gemmLibrary("mkl"), StatusCode::Invalid,
                        "no GEMM library named 'mkl' (openblas, onednn, onednn-sgemm, blis)");
}

TEST(GemmLibrary, EveryLibraryComputesRowMajorSgemm) {
  std::vector<const GemmLibrary *> libs = availableGemmLibraries();
  std::printf("libraries here:");
  for (const GemmLibrary *l : libs)
    std::printf(" %s %s;", l->name.c_str(), l->version.substr(0, 40).c_str());
  std::printf("\n");
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    Problem p = randomProblem(rng);
    const GemmShape &s = p.s;
    const float beta = trial % 2 ? 1.0f : 0.0f;
    for (const GemmLibrary *lib : libs) {
      std::vector<float> c = p.c0;
      lib->sgemm(s.transA, s.transB, s.m, s.n, s.k, 1.0f, p.a.data(), s.lda, p.b.data(), s.ldb,
                 beta, c.data(), s.ldc);
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.ldc; ++j) {
          float got = c[size_t(i * s.ldc + j)];
          if (j >= s.n) { // padding is never written
            EXPECT_EQ(got, p.c0[size_t(i * s.ldc + j)]) << lib->name << " " << s.key();
            continue;
          }
          double exact = beta * double(p.c0[size_t(i * s.ldc + j)]), magnitude = std::fabs(exact);
          for (int64_t l = 0; l < s.k; ++l) {
            double t = double(at(p.a, s.lda, s.transA, i, l)) * at(p.b, s.ldb, s.transB, l, j);
            exact += t;
            magnitude += std::fabs(t);
          }
          // k + 1 roundings of at most 2^-24 of the running magnitude each.
          EXPECT_LE(std::fabs(got - exact), double(s.k + 2) * magnitude * std::ldexp(1.0, -24))
              << lib->name << " " << s.key() << " at " << i << "," << j;
        }
    }
  }
}

TEST(GemmTable, RoundTripsAndDamagedTablesAreErrors) {
  TempCache cache;
  std::string path = gemmTablePath();
  ASSERT_EQ(path.rfind(cache.dir + "/gemm/", 0), 0u) << path;
  GemmTable empty;
  EINC_ASSERT_OK_AND_ASSIGN(empty, readGemmTable(path)); // none yet: empty
  EXPECT_TRUE(empty.shapes.empty());

  GemmTable t;
  t.machine = gemmMachineKey();
  GemmMeasurement m;
  m.shape = {false, true, 128, 64, 32, 32, 32, 64};
  m.gflops = {{"openblas", 40.5}, {"blis", 52.25}};
  m.chosen = "blis";
  t.shapes[m.shape.key()] = m;
  EINC_ASSERT_OK(writeGemmTable(path, t));
  GemmTable back;
  EINC_ASSERT_OK_AND_ASSIGN(back, readGemmTable(path));
  EXPECT_EQ(back.machine, t.machine);
  ASSERT_EQ(back.shapes.size(), 1u);
  const GemmMeasurement &b = back.shapes.begin()->second;
  EXPECT_EQ(b.shape.key(), "NT 128x64x32 lda=32 ldb=32 ldc=64");
  EXPECT_EQ(b.chosen, "blis");
  EXPECT_EQ(b.gflops, m.gflops);

  std::ofstream(path) << "{\"machine\": \"x\", \"shapes\": [{\"m\": 1}]}";
  EINC_EXPECT_STATUS_EQ(
      readGemmTable(path), StatusCode::Corrupt,
      "the GEMM table '" + path +
          "' is damaged (a shape without m, n, k, lda, ldb, ldc, trans_a, trans_b, "
          "chosen): remove it, or measure again with einc calibrate --gemm");
  std::ofstream(path) << "not json";
  EINC_EXPECT_STATUS(readGemmTable(path), StatusCode::Corrupt, "");
  std::shared_ptr<const GemmChooser> chooser;
  EINC_EXPECT_STATUS(GemmChooser::fromEnvironment(), StatusCode::Corrupt,
                     "is damaged (not a GEMM table)"); // the device refuses it too
}

TEST(GemmTable, TheChooserFollowsEincGemmThenThisMachinesTable) {
  TempCache cache;
  std::shared_ptr<const GemmChooser> chooser;
  const GemmShape shape{false, false, 64, 48, 40, 40, 48, 48}, other{true, false, 8, 8, 8, 8, 8, 8};
  {
    ScopedEnv unset("EINC_GEMM", nullptr);
    EINC_ASSERT_OK_AND_ASSIGN(chooser, GemmChooser::fromEnvironment());
    EXPECT_TRUE(chooser->isDefault());
    EXPECT_EQ(chooser->forShape(shape).name, "openblas");
  }
  {
    ScopedEnv bad("EINC_GEMM", "mkl");
    EINC_EXPECT_STATUS_EQ(
        GemmChooser::fromEnvironment(), StatusCode::Invalid,
        "EINC_GEMM=mkl: no GEMM library named 'mkl' (openblas, onednn, onednn-sgemm, blis)");
  }
  // A table choosing the last library that loads for `shape`.
  std::string last = availableGemmLibraries().back()->name;
  GemmTable t;
  t.machine = gemmMachineKey();
  t.shapes[shape.key()] = GemmMeasurement{shape, {{last, 1.0}}, last};
  EINC_ASSERT_OK(writeGemmTable(gemmTablePath(), t));
  ScopedEnv unset("EINC_GEMM", nullptr);
  EINC_ASSERT_OK_AND_ASSIGN(chooser, GemmChooser::fromEnvironment());
  EXPECT_EQ(chooser->forShape(shape).name, last);
  EXPECT_EQ(chooser->forShape(other).name, "openblas");
  EXPECT_EQ(chooser->isDefault(), false);
  EXPECT_NE(chooser->describe().find("1 " + last), std::string::npos) << chooser->describe();
  {
    ScopedEnv forced("EINC_GEMM", "openblas");
    EINC_ASSERT_OK_AND_ASSIGN(chooser, GemmChooser::fromEnvironment());
    EXPECT_EQ(chooser->forShape(shape).name, "openblas");
    EXPECT_EQ(chooser->describe(), "openblas (EINC_GEMM)");
  }
  // Another machine's table (a CPU or library version since changed) is
  // not used.
  t.machine = "another CPU | OpenBLAS 0.0.1";
  EINC_ASSERT_OK(writeGemmTable(gemmTablePath(), t));
  EINC_ASSERT_OK_AND_ASSIGN(chooser, GemmChooser::fromEnvironment());
  EXPECT_TRUE(chooser->isDefault());
  EXPECT_EQ(chooser->forShape(shape).name, "openblas");
}

// Built on first use, never a manual step: the shapes a program runs that
// the table lacks are timed and added; a shape already there keeps its
// library (another process's choice wins), small shapes are not timed, and
// processes racing to measure the same shapes end with one choice.
TEST(GemmTable, TheTableIsBuiltOnFirstUse) {
  TempCache cache;
  ScopedEnv unset("EINC_GEMM", nullptr);
  std::string measured;
  std::shared_ptr<const GemmChooser> chooser;
  const GemmShape big{false, true, 96, 80, 256, 256, 256, 80}; // 3.9 MFLOP
  const GemmShape bigger{true, false, 128, 96, 200, 128, 96, 96};
  const GemmShape small{false, false, 8, 8, 8, 8, 8, 8}; // below kMeasuredGemmFlops
  EINC_ASSERT_OK_AND_ASSIGN(chooser, GemmChooser::forShapes({big, small, big}, &measured));
  EXPECT_EQ(measured.rfind("timed 1 GEMM shape on each library in ", 0), 0u) << measured;
  EXPECT_NE(measured.find(gemmTablePath()), std::string::npos) << measured;
  GemmTable t;
  EINC_ASSERT_OK_AND_ASSIGN(t, readGemmTable(gemmTablePath()));
  EXPECT_EQ(t.machine, gemmMachineKey());
  ASSERT_EQ(t.shapes.size(), 1u);
  ASSERT_TRUE(t.shapes.count(big.key()));
  EXPECT_EQ(t.shapes[big.key()].gflops.size(), availableGemmLibraries().size());
  EXPECT_EQ(chooser->forShape(big).name, t.shapes[big.key()].chosen);
  EXPECT_FALSE(chooser->isDefault());
  // Once there, a shape is not timed again and keeps the table's library,
  // whatever a new measurement would say.
  std::string last = availableGemmLibraries().back()->name;
  t.shapes[big.key()].chosen = last;
  EINC_ASSERT_OK(writeGemmTable(gemmTablePath(), t));
  EINC_ASSERT_OK_AND_ASSIGN(chooser, GemmChooser::forShapes({big, small}, &measured));
  EXPECT_EQ(measured, "");
  EXPECT_EQ(chooser->forShape(big).name, last);
  EXPECT_EQ(chooser->forShape(small).name, "openblas");
  // Racing processes (each its own lock file descriptor, as two processes
  // have): each measures what is missing when it holds the lock, so the
  // second finds the first's shape and takes its choice.
  std::vector<Expected<std::shared_ptr<const GemmChooser>>> racers(4, Status::internal("not run"));
  std::vector<std::string> timed(racers.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < racers.size(); ++i)
    threads.emplace_back([&, i] { racers[i] = GemmChooser::forShapes({bigger, big}, &timed[i]); });
  for (std::thread &th : threads)
    th.join();
  int timers = 0;
  for (size_t i = 0; i < racers.size(); ++i) {
    EINC_ASSERT_OK(racers[i]);
    EXPECT_EQ((*racers[i])->forShape(bigger).name, (*racers[0])->forShape(bigger).name);
    EXPECT_EQ((*racers[i])->forShape(big).name, last);
    timers += !timed[i].empty();
  }
  EXPECT_EQ(timers, 1) << "one of them timed the new shape, the others read it";
  // Forced, or without a cache folder: nothing is timed.
  {
    ScopedEnv forced("EINC_GEMM", "openblas");
    const GemmShape other{false, false, 200, 64, 64, 64, 64, 64};
    EINC_ASSERT_OK_AND_ASSIGN(chooser, GemmChooser::forShapes({other}, &measured));
    EXPECT_EQ(measured, "");
    ScopedEnv noDir("EINC_CACHE_DIR", nullptr), noXdg("XDG_CACHE_HOME", nullptr),
        noHome("HOME", nullptr);
    ScopedEnv table("EINC_GEMM", "table");
    EINC_ASSERT_OK_AND_ASSIGN(chooser, GemmChooser::forShapes({other}, &measured));
    EXPECT_EQ(measured, "");
    EXPECT_TRUE(chooser->isDefault());
  }
}

TEST(GemmTable, MeasuringPicksALibraryThatLoads) {
  std::vector<GemmShape> shapes = {{false, false, 96, 80, 64, 64, 80, 80},
                                   {true, true, 33, 17, 9, 33, 9, 17}};
  std::vector<GemmMeasurement> m = measureGemmShapes(shapes, 0.005);
  ASSERT_EQ(m.size(), 2u);
  for (const GemmMeasurement &r : m) {
    EXPECT_EQ(r.gflops.size(), availableGemmLibraries().size()) << r.shape.key();
    for (const auto &[lib, rate] : r.gflops)
      EXPECT_GT(rate, 0.0) << lib;
    EINC_EXPECT_OK(gemmLibrary(r.chosen)) << r.chosen;
    // The choice is OpenBLAS unless another was more than 3% faster.
    if (r.chosen != "openblas")
      EXPECT_GT(r.gflops.at(r.chosen), 1.03 * r.gflops.at("openblas"));
  }
}

TEST(GemmTable, TheCpuDeviceRunsEachShapeOnItsLibrary) {
  std::vector<const GemmLibrary *> libs = availableGemmLibraries();
  if (libs.size() < 2)
    GTEST_SKIP() << "only OpenBLAS loads here (install libdnnl-dev or libblis-dev)";
  std::mt19937 rng(11);
  GemmDesc g;
  g.m = 57, g.n = 45, g.k = 301, g.lda = g.k, g.ldb = g.n, g.ldc = g.n, g.batch = 3;
  g.strideA = g.m * g.k, g.strideB = g.k * g.n, g.strideC = g.m * g.n;
  std::vector<float> a(size_t(g.batch * g.strideA)), b(size_t(g.batch * g.strideB));
  std::uniform_real_distribution<float> value(-1, 1);
  for (float &x : a)
    x = value(rng);
  for (float &x : b)
    x = value(rng);
  auto run = [&](const GemmLibrary *lib, int threads) {
    CpuDevice cpu({}, threads);
    cpu.setGemmChooser(std::make_shared<GemmChooser>(lib));
    std::vector<float> c(size_t(g.batch * g.strideC));
    EINC_EXPECT_OK(cpu.gemm(g, a.data(), b.data(), c.data()));
    return c;
  };
  std::vector<float> reference = run(libs[0], 1);
  for (const GemmLibrary *lib : libs) {
    std::vector<float> one = run(lib, 1), two = run(lib, 2);
    EXPECT_EQ(one, two) << lib->name << ": the thread count changed a bit";
    double worst = 0;
    for (size_t i = 0; i < one.size(); ++i)
      worst = std::max(worst, double(std::fabs(one[i] - reference[i])));
    EXPECT_LE(worst, double(g.k) * std::ldexp(1.0, -22)) << lib->name;
    std::printf("%s vs openblas: max |difference| %.3g over %zu results\n", lib->name.c_str(),
                worst, one.size());
  }
}
