//===- Calibrate.cpp - `einc calibrate`: measure this machine -------------===//
//
// Three measurements, each the median of several timed repetitions after one
// untimed warm-up, sized from the --seconds budget, all on every hardware
// thread (as OpenBLAS does by default), so that the profile describes the
// whole machine:
//   - matmul: one Matmul step of square matrices (2048, or 1024 when one
//     call is slow; 2·n³ FLOPs) run by the cpu backend's device, f32 and
//     bf16 × bf16 → f32: the engines, tiles and threads a training step's
//     GEMMs get (the GEMM table's library, the bf16 path of
//     EINC_CPU_BF16 / the CPU), so that the report predicts what runs;
//   - vector: a chain of dependent multiply-adds over a float array that
//     stays in L1, compiled for the best of AVX-512 / AVX2+FMA / the baseline
//     that the CPU supports (chosen at run time, so the binary runs on any
//     x86-64);
//   - bandwidth: STREAM copy (b = a) and triad (a = b + s·c) over 64 MiB
//     arrays (well past the L3 here), split across the threads; bytes counted
//     as STREAM counts them (read + written, no write-allocate).
//
//===----------------------------------------------------------------------===//
#include "Calibrate.h"

#include "passes/DeviceProfile.h"

#include "runtime/base/TerminalText.h"
#include "runtime/core/Executor.h"
#include "runtime/core/Safetensors.h"
#include "runtime/cpu/CpuDevice.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <thread>
#include <unistd.h>
#include <vector>

namespace einc {

namespace {

double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Times `body` once untimed, then repeatedly: as many times as fit in
/// `budget` seconds, but at least `minReps` and at most `maxReps`. Returns the
/// median seconds per call; `reps` gets the count.
template <typename Fn>
double timeMedian(double budget, int minReps, int maxReps, int &reps, Fn body) {
  double t0 = now();
  body();
  double first = std::max(now() - t0, 1e-9);
  reps = static_cast<int>(std::clamp(budget / first, double(minReps), double(maxReps)));
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    double s = now();
    body();
    times.push_back(now() - s);
  }
  return median(times);
}

/// The threads every measurement uses: all the hardware threads, as
/// OpenBLAS does by default.
int threadCount() { return std::max(1u, std::thread::hardware_concurrency()); }

/// Runs body(t) for t in [0, threads) on that many threads (t = 0 on this one).
template <typename Fn> void parallel(int threads, Fn body) {
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t)
    workers.emplace_back([&body, t] { body(t); });
  body(0);
  for (std::thread &w : workers)
    w.join();
}

std::string threadsText(int n) { return std::to_string(n) + (n == 1 ? " thread" : " threads"); }

struct Measurement {
  double value = 0;   // FLOP/s or bytes/s
  std::string detail; // how, for the printed line and the profile's source
};

//===----------------------------------------------------------------------===//
// Matmul: one Matmul step through the CPU backend's device
//===----------------------------------------------------------------------===//

/// C = A · B of n × n matrices as one Matmul step of a Program run by the
/// cpu backend's device on `threads` threads: the engine, the cut into
/// tiles and the thread pool of a training step's GEMMs, for f32 × f32 →
/// f32 (fp32) or bf16 × bf16 → f32 (the contractions of bf16-mixed).
einrt::Status measureMatmulStep(einrt::DType operands, int threads, double budget, Measurement &m) {
  using namespace einrt;
  auto run = [&](int64_t n, int minReps, int &reps, double &seconds,
                 std::string &engine) -> Status {
    Program p;
    auto buffer = [&](DType t, BufferRole role, const char *name) {
      Buffer b;
      b.name = name;
      b.dtype = t;
      b.shape = {n, n};
      b.role = role;
      p.buffers.push_back(b);
      return int32_t(p.buffers.size() - 1);
    };
    int32_t a = buffer(operands, BufferRole::Input, "a"),
            b = buffer(operands, BufferRole::Input, "b");
    int32_t c = buffer(DType::F32, BufferRole::Temp, "c");
    p.arguments = {a, b};
    GemmDesc g;
    g.a = g.b = operands;
    g.m = g.n = g.k = n;
    g.lda = g.ldb = g.ldc = n;
    p.steps.emplace_back(StepKind::Matmul, std::vector<int32_t>{a, b}, c, g, "calibrate matmul");
    p.results = {c};
    p.resultNames = {"c"};
    auto device = std::make_shared<CpuDevice>(std::vector<KernelEntry>{}, threads);
    Expected<Executor> ex = Executor::create(p, device);
    if (!ex.ok())
      return ex.takeStatus();
    std::vector<float> av(size_t(n * n)), bv(size_t(n * n));
    for (size_t i = 0; i < av.size(); ++i) {
      av[i] = float(i % 17) * 0.01f;
      bv[i] = float(i % 13) * 0.01f;
    }
    Status ran = ex->setArgument(0, av.data(), av.size());
    if (ran.ok())
      ran = ex->setArgument(1, bv.data(), bv.size());
    if (ran.ok())
      seconds = timeMedian(budget, minReps, 25, reps, [&] {
        if (ran.ok())
          ran = ex->run();
      });
    EINRT_TRY(ran);
    if (operands == DType::BF16 && device->bf16GemmPath())
      engine = bf16GemmPathLabel(*device->bf16GemmPath());
    else if (const GemmChooser *chooser = device->gemmChooser())
      engine = chooser->forShape(GemmShape{false, false, n, n, n, n, n, n}).name;
    return Status();
  };
  int64_t n = 2048;
  int reps = 0;
  double seconds = 0;
  std::string engine;
  // One probe call: on a slow machine (or engine), a smaller problem.
  EINRT_TRY(run(n, 1, reps, seconds, engine));
  if (seconds > 0.5)
    n = 1024;
  EINRT_TRY(run(n, 3, reps, seconds, engine));
  m.value = 2.0 * double(n) * double(n) * double(n) / seconds;
  m.detail = std::string("a Matmul step ") + (operands == DType::BF16 ? "bf16" : "f32") + " " +
             std::to_string(n) + "^3 on " + engine + ", " + threadsText(threads) + ", median of " +
             std::to_string(reps);
  return Status();
}

//===----------------------------------------------------------------------===//
// Vector: FMA loop in L1
//===----------------------------------------------------------------------===//

constexpr int kFmaChain = 8; // dependent multiply-adds per element and pass

/// kFmaChain multiply-adds per element; each contracts to one FMA (the file
/// is compiled with -ffp-contract=fast). Without -ffast-math the compiler may
/// neither merge nor drop them. 0.999·v + 0.001 keeps v near 1.
__attribute__((always_inline)) inline void fmaPasses(float *x, size_t n, int passes) {
  for (int p = 0; p < passes; ++p) {
    for (size_t i = 0; i < n; ++i) {
      float v = x[i];
      v = v * 0.999f + 0.001f;
      v = v * 0.999f + 0.001f;
      v = v * 0.999f + 0.001f;
      v = v * 0.999f + 0.001f;
      v = v * 0.999f + 0.001f;
      v = v * 0.999f + 0.001f;
      v = v * 0.999f + 0.001f;
      v = v * 0.999f + 0.001f;
      x[i] = v;
    }
  }
}

void fmaBaseline(float *x, size_t n, int passes) { fmaPasses(x, n, passes); }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EINC_FMA_DISPATCH 1
__attribute__((target("avx2,fma"))) void fmaAvx2(float *x, size_t n, int passes) {
  fmaPasses(x, n, passes);
}
__attribute__((target("avx512f,fma"))) void fmaAvx512(float *x, size_t n, int passes) {
  fmaPasses(x, n, passes);
}
#endif

bool measureVector(double budget, Measurement &m) {
  void (*kernel)(float *, size_t, int) = fmaBaseline;
  std::string isa = "baseline ISA";
#ifdef EINC_FMA_DISPATCH
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")) {
    kernel = fmaAvx512;
    isa = "AVX-512";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    kernel = fmaAvx2;
    isa = "AVX2+FMA";
  } else {
    isa = "SSE2 (no FMA)";
  }
#endif
  const size_t n = 2048; // 8 KiB per thread: stays in L1
  const int passes = 4000;
  int threads = threadCount();
  std::vector<std::vector<float>> x(threads, std::vector<float>(n, 1.0f));
  int reps = 0;
  double t = timeMedian(budget, 5, 100, reps,
                        [&] { parallel(threads, [&](int i) { kernel(x[i].data(), n, passes); }); });
  volatile float sink = x[0][n / 2]; // keep the result alive
  (void)sink;
  m.value = 2.0 * kFmaChain * double(n) * passes * threads / t;
  m.detail = "f32 multiply-add loop in L1, " + isa + ", " + threadsText(threads) + ", median of " +
             std::to_string(reps);
  return true;
}

//===----------------------------------------------------------------------===//
// Memory bandwidth: STREAM copy and triad
//===----------------------------------------------------------------------===//

void measureBandwidth(double budget, Measurement &copy, Measurement &triad) {
  const size_t n = size_t(16) << 20; // 16 Mi floats = 64 MiB per array
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]), c(new float[n]);
  for (size_t i = 0; i < n; ++i) { // touch every page before timing
    a[i] = 1.0f;
    b[i] = 2.0f;
    c[i] = 0.5f;
  }
  float *pa = a.get(), *pb = b.get(), *pc = c.get();
  int threads = threadCount();
  size_t slice = n / threads; // the last thread takes the rest
  auto range = [&](int t, size_t &begin, size_t &end) {
    begin = t * slice;
    end = t == threads - 1 ? n : begin + slice;
  };
  int copyReps = 0, triadReps = 0;
  double tc = timeMedian(budget * 0.4, 5, 100, copyReps, [&] {
    parallel(threads, [&](int t) {
      size_t begin, end;
      range(t, begin, end);
      for (size_t i = begin; i < end; ++i)
        pb[i] = pa[i];
    });
  });
  double tt = timeMedian(budget * 0.6, 5, 100, triadReps, [&] {
    parallel(threads, [&](int t) {
      size_t begin, end;
      range(t, begin, end);
      for (size_t i = begin; i < end; ++i)
        pa[i] = pb[i] + 3.0f * pc[i];
    });
  });
  volatile float sink = pa[n / 3] + pb[n / 5]; // keep the stores alive
  (void)sink;
  copy.value = 2.0 * sizeof(float) * n / tc;
  copy.detail = "STREAM copy, 2 x 64 MiB arrays, " + threadsText(threads) + ", median of " +
                std::to_string(copyReps);
  triad.value = 3.0 * sizeof(float) * n / tt;
  triad.detail = "STREAM triad, 3 x 64 MiB arrays, " + threadsText(threads) + ", median of " +
                 std::to_string(triadReps);
}

//===----------------------------------------------------------------------===//
// The machine
//===----------------------------------------------------------------------===//

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string model = llvm::StringRef(line).drop_front(colon + 1).trim().str();
        if (!model.empty())
          return model;
      }
    }
  }
  return "unknown CPU";
}

double memoryBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  double value;
  while (in >> key >> value >> unit) {
    if (key == "MemTotal:")
      return value * (unit == "kB" ? 1024.0 : 1.0);
    std::getline(in, key); // the rest of the line
  }
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? double(pages) * double(page) : 0;
}

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

std::string gflops(double v) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.1f GFLOP/s", v / 1e9);
  return s;
}
std::string gbytes(double v) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.1f GB/s", v / 1e9);
  return s;
}

} // namespace

int calibrate(const Options &o) {
  std::string path = o.output;
  if (path.empty()) {
    path = defaultDeviceFilePath();
    if (path.empty()) {
      llvm::errs() << "einc: neither XDG_CONFIG_HOME nor HOME is set; name the output "
                      "with -o FILE\n";
      return 1;
    }
  }

  // Fail before measuring when -o names a folder that is not there.
  if (!o.output.empty()) {
    llvm::SmallString<256> dir(path);
    llvm::sys::path::remove_filename(dir);
    if (!dir.empty() && !llvm::sys::fs::is_directory(dir)) {
      llvm::errs() << "einc: cannot write " << einrt::quoted(path) << ": no folder "
                   << einrt::quoted(dir.str()) << "\n";
      return 1;
    }
  }

  // Other profiles already in the file survive; a file that is not a
  // profiles file is left alone.
  std::vector<mlir::ein::DeviceProfile> profiles;
  if (llvm::sys::fs::exists(path)) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer) {
      llvm::errs() << "einc: cannot read " << einrt::quoted(path) << ": "
                   << buffer.getError().message() << "\n";
      return 1;
    }
    auto existing = mlir::ein::parseDeviceProfiles((*buffer)->getBuffer().str());
    if (!existing.ok()) {
      llvm::errs() << "einc: " << einrt::quoted(path)
                   << " exists but is not a device profiles file (" << existing.status().message()
                   << "); not overwriting it (remove it or pass -o FILE)\n";
      return 1;
    }
    for (auto &p : *existing)
      if (p.name != "cpu")
        profiles.push_back(std::move(p));
  }

  llvm::outs() << llvm::format("einc calibrate: measuring this machine (about %.0f s)\n",
                               std::max(o.seconds, 1.0));
  llvm::outs().flush();
  std::string model = cpuModel();
  llvm::outs() << "cpu:         " << model << "\n";
  llvm::outs().flush();

  Measurement sgemm, bf16, vector, copy, triad;
  if (einrt::Status s = measureMatmulStep(einrt::DType::F32, threadCount(), o.seconds * 0.3, sgemm);
      !s.ok()) {
    llvm::errs() << "einc: cannot measure the f32 matmul: " << s.message() << "\n";
    return 1;
  }
  llvm::outs() << "matmul f32:  " << gflops(sgemm.value) << "  (" << sgemm.detail << ")\n";
  llvm::outs().flush();
  if (einrt::Status s = measureMatmulStep(einrt::DType::BF16, threadCount(), o.seconds * 0.2, bf16);
      !s.ok()) {
    llvm::errs() << "einc: cannot measure the bf16 matmul: " << s.message() << "\n";
    return 1;
  }
  llvm::outs() << "matmul bf16: " << gflops(bf16.value) << "  (" << bf16.detail << ")\n";
  llvm::outs().flush();
  measureVector(o.seconds * 0.15, vector);
  llvm::outs() << "vector f32:  " << gflops(vector.value) << "  (" << vector.detail << ")\n";
  llvm::outs().flush();
  measureBandwidth(o.seconds * 0.35, copy, triad);
  llvm::outs() << "copy:        " << gbytes(copy.value) << "  (" << copy.detail << ")\n";
  llvm::outs() << "triad:       " << gbytes(triad.value) << "  (" << triad.detail << ")\n";
  double bandwidth = std::max(copy.value, triad.value);
  llvm::outs() << "bandwidth:   " << gbytes(bandwidth) << "  (the larger of copy and triad)\n";
  double memory = memoryBytes();
  if (memory <= 0) {
    llvm::errs() << "einc: cannot read the memory size (/proc/meminfo, sysconf)\n";
    return 1;
  }
  llvm::outs() << llvm::format("memory:      %.0f bytes (%.1f GiB, MemTotal)\n", memory,
                               memory / double(1ull << 30));

  mlir::ein::DeviceProfile cpu;
  cpu.name = "cpu";
  cpu.description = model;
  cpu.matmulFlops = {{"f32", sgemm.value}, {"bf16", bf16.value}};
  cpu.vectorFlops = {{"f32", vector.value}, {"bf16", vector.value}};
  cpu.bandwidth = bandwidth;
  cpu.memoryBytes = memory;
  cpu.source = "measured by einc calibrate on " + today() + "; matmul: " + sgemm.detail + "; " +
               bf16.detail + "; vector: " + vector.detail + " (bf16 = f32); bandwidth: max of " +
               copy.detail + " and " + triad.detail;
  profiles.push_back(cpu);

  if (o.output.empty()) {
    llvm::SmallString<256> dir(path);
    llvm::sys::path::remove_filename(dir);
    if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
      llvm::errs() << "einc: cannot create " << einrt::quoted(dir.str()) << ": " << ec.message()
                   << "\n";
      return 1;
    }
  }
  std::string text = mlir::ein::printDeviceProfiles(profiles);
  if (einrt::Status s =
          einrt::writeFileAtomically(path, std::vector<uint8_t>(text.begin(), text.end()));
      !s.ok()) {
    llvm::errs() << "einc: cannot write " << einrt::quoted(path) << ": " << s.message() << "\n";
    return 1;
  }
  llvm::outs() << "wrote profile 'cpu' to " << einrt::terminalSafe(path);
  if (profiles.size() > 1)
    llvm::outs() << " (kept " << profiles.size() - 1 << " other profile"
                 << (profiles.size() > 2 ? "s" : "") << ")";
  llvm::outs() << "\n";
  return 0;
}

} // namespace einc
