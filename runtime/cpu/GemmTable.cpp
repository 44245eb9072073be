//===- GemmTable.cpp - GEMM shapes to libraries, measured and kept --------===//
#include "runtime/cpu/GemmTable.h"
#include "runtime/base/TerminalText.h"

#include "runtime/core/Safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace einrt {

namespace {

std::string env(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : "";
}

std::string cpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      return colon == std::string::npos ? ""
                                        : line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "unknown CPU";
}

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

double seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

/// This thread's CPU time: a call's time without what other processes on
/// the machine took from it (they still share caches and memory).
double threadSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

/// The CPU's ISA flags a GEMM library's kernels depend on, as
/// /proc/cpuinfo names them ("avx2 avx512f avx512_bf16 amx_bf16").
std::string cpuIsaFlags() {
  static const char *const kFlags[] = {"avx2",        "fma",         "avx512f",
                                       "avx512bw",    "avx512_vnni", "avx512_bf16",
                                       "avx512_fp16", "amx_bf16",    "amx_tile"};
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      std::set<std::string> have;
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string w; words >> w;)
        have.insert(w);
      std::string out;
      for (const char *f : kFlags)
        if (have.count(f))
          out += (out.empty() ? "" : " ") + std::string(f);
      return out;
    }
  return "";
}

/// An exclusive lock on `path` + ".lock" for this object's life (none
/// where the file cannot be made: then measuring is unsynchronised, and a
/// shape another process wrote first still wins on the re-read).
class TableLock {
public:
  explicit TableLock(const std::string &path) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    fd = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0)
      while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~TableLock() {
    if (fd >= 0)
      ::close(fd); // releases the lock
  }
  TableLock(const TableLock &) = delete;
  TableLock &operator=(const TableLock &) = delete;

private:
  int fd = -1;
};

/// Median seconds of one call of `lib` on `s`, over operands filled with
/// small values (no denormals, no overflow).
double timeCall(const GemmLibrary &lib, const GemmShape &s, double budget) {
  const int64_t rowsA = s.transA ? s.k : s.m, rowsB = s.transB ? s.n : s.k;
  std::vector<float> a(size_t(rowsA * s.lda)), b(size_t(rowsB * s.ldb)), c(size_t(s.m * s.ldc));
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float(int(i % 7) - 3) * 0.125f;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = float(int(i % 5) - 2) * 0.25f;
  auto call = [&] {
    lib.sgemm(s.transA, s.transB, s.m, s.n, s.k, 1.0f, a.data(), s.lda, b.data(), s.ldb, 0.0f,
              c.data(), s.ldc);
  };
  call(); // warm-up: packing buffers, first-touch pages, code
  double t0 = threadSeconds();
  call();
  double once = std::max(threadSeconds() - t0, 1e-7);
  int reps = int(std::clamp(budget / once, 3.0, 50.0));
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    double s0 = threadSeconds();
    call();
    times.push_back(std::max(threadSeconds() - s0, 1e-9));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

std::string GemmShape::key() const {
  char text[160];
  std::snprintf(text, sizeof text, "%c%c %lldx%lldx%lld lda=%lld ldb=%lld ldc=%lld",
                transA ? 'T' : 'N', transB ? 'T' : 'N', (long long)m, (long long)n, (long long)k,
                (long long)lda, (long long)ldb, (long long)ldc);
  return text;
}

std::string gemmMachineKey() {
  std::string key = cpuModelName() + " (" + cpuIsaFlags() + ")";
  for (const GemmLibrary *lib : availableGemmLibraries())
    key += " | " + (lib->name == "openblas" ? lib->version : lib->name + " " + lib->version);
  return key;
}

std::string gemmTablePath() {
  std::string dir;
  if (std::string d = env("EINC_CACHE_DIR"); !d.empty())
    dir = d + "/gemm";
  else if (std::string d = env("XDG_CACHE_HOME"); !d.empty())
    dir = d + "/einc/gemm";
  else if (std::string d = env("HOME"); !d.empty())
    dir = d + "/.cache/einc/gemm";
  else
    return "";
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.json", (unsigned long long)fnv1a(gemmMachineKey()));
  return dir + "/" + name;
}

Expected<GemmTable> readGemmTable(const std::string &path) {
  GemmTable out;
  std::ifstream in(path);
  if (!in)
    return out; // no table yet
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const std::string &what) {
    return Status(StatusCode::Corrupt,
                  "the GEMM table " + einrt::quoted(path) + " is damaged (" + what +
                      "): remove it, or measure again with einc calibrate --gemm");
  };
  if (!j.is_object() || !j.contains("machine") || !j["machine"].is_string() ||
      !j.contains("shapes") || !j["shapes"].is_array())
    return bad("not a GEMM table");
  out.machine = j["machine"].get<std::string>();
  for (const nlohmann::json &e : j["shapes"]) {
    GemmMeasurement m;
    auto integer = [&](const char *key, int64_t &v) {
      if (!e.contains(key) || !e[key].is_number_integer() || e[key].get<int64_t>() < 0)
        return false;
      v = e[key].get<int64_t>();
      return true;
    };
    if (!e.is_object() || !integer("m", m.shape.m) || !integer("n", m.shape.n) ||
        !integer("k", m.shape.k) || !integer("lda", m.shape.lda) || !integer("ldb", m.shape.ldb) ||
        !integer("ldc", m.shape.ldc) || !e.contains("trans_a") || !e["trans_a"].is_boolean() ||
        !e.contains("trans_b") || !e["trans_b"].is_boolean() || !e.contains("chosen") ||
        !e["chosen"].is_string())
      return bad("a shape without m, n, k, lda, ldb, ldc, trans_a, trans_b, chosen");
    m.shape.transA = e["trans_a"].get<bool>();
    m.shape.transB = e["trans_b"].get<bool>();
    m.chosen = e["chosen"].get<std::string>();
    if (e.contains("gflops") && e["gflops"].is_object())
      for (auto &[lib, v] : e["gflops"].items())
        if (v.is_number())
          m.gflops[lib] = v.get<double>();
    out.shapes[m.shape.key()] = m;
  }
  return out;
}

Status writeGemmTable(const std::string &path, const GemmTable &table) {
  nlohmann::json j;
  j["machine"] = table.machine;
  j["shapes"] = nlohmann::json::array();
  for (const auto &[key, m] : table.shapes)
    j["shapes"].push_back({{"trans_a", m.shape.transA},
                           {"trans_b", m.shape.transB},
                           {"m", m.shape.m},
                           {"n", m.shape.n},
                           {"k", m.shape.k},
                           {"lda", m.shape.lda},
                           {"ldb", m.shape.ldb},
                           {"ldc", m.shape.ldc},
                           {"gflops", m.gflops},
                           {"chosen", m.chosen}});
  std::string text = j.dump(1) + "\n";
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec)
    return Status(StatusCode::Io,
                  "cannot create the folder of " + einrt::quoted(path) + ": " + ec.message());
  return writeFileAtomically(path, std::vector<uint8_t>(text.begin(), text.end()));
}

std::vector<GemmMeasurement> measureGemmShapes(const std::vector<GemmShape> &shapes,
                                               double secondsPerCall, double tie) {
  std::vector<const GemmLibrary *> libs = availableGemmLibraries();
  std::vector<GemmMeasurement> out;
  for (const GemmShape &s : shapes) {
    GemmMeasurement m;
    m.shape = s;
    m.chosen = "openblas";
    if (s.m == 0 || s.n == 0 || s.k == 0) {
      out.push_back(m);
      continue;
    }
    const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
    for (const GemmLibrary *lib : libs)
      m.gflops[lib->name] = flops / timeCall(*lib, s, secondsPerCall) / 1e9;
    double best = m.gflops["openblas"];
    for (const GemmLibrary *lib : libs) // preference order: a tie keeps the earlier
      if (m.gflops[lib->name] > best * (1.0 + tie)) {
        best = m.gflops[lib->name];
        m.chosen = lib->name;
      }
    out.push_back(m);
  }
  return out;
}

GemmChooser::GemmChooser(const GemmTable &table) {
  fallback_ = *gemmLibrary("openblas"); // linked: it always loads
  std::map<std::string, int> counts;
  for (const auto &[key, m] : table.shapes) {
    Expected<const GemmLibrary *> lib = gemmLibrary(m.chosen);
    byShape_[key] = lib.ok() ? *lib : fallback_;
    ++counts[byShape_[key]->name];
  }
  description_ = "the measured table (" + std::to_string(table.shapes.size()) + " shapes";
  for (const auto &[name, n] : counts)
    description_ += (name == counts.begin()->first ? ": " : ", ") + std::to_string(n) + " " + name;
  description_ += "; others openblas)";
}

Expected<std::shared_ptr<const GemmChooser>> GemmChooser::fromEnvironment() {
  return forShapes({});
}

Expected<std::shared_ptr<const GemmChooser>>
GemmChooser::forShapes(const std::vector<GemmShape> &shapes, std::string *measured) {
  if (measured)
    measured->clear();
  std::string forced = env("EINC_GEMM");
  if (!forced.empty() && forced != "table") {
    Expected<const GemmLibrary *> lib = gemmLibrary(forced);
    if (!lib.ok())
      return lib.takeStatus().withContext("EINC_GEMM=" + forced + ": ");
    auto c = std::make_shared<GemmChooser>(*lib);
    c->description_ = forced + " (EINC_GEMM)";
    return std::shared_ptr<const GemmChooser>(c);
  }
  GemmTable table;
  std::string path = gemmTablePath();
  if (!path.empty()) {
    Expected<GemmTable> read = readGemmTable(path);
    if (!read.ok())
      return read.takeStatus();
    table = read.take();
  }
  const std::string machine = gemmMachineKey();
  auto missing = [&] {
    std::vector<GemmShape> todo;
    std::set<std::string> seen;
    for (const GemmShape &s : shapes)
      if (2.0 * double(s.m) * double(s.n) * double(s.k) >= kMeasuredGemmFlops &&
          (table.machine != machine || !table.shapes.count(s.key())) && seen.insert(s.key()).second)
        todo.push_back(s);
    return todo;
  };
  if (!path.empty() && !missing().empty()) {
    // Measure under the lock, on the table as it is now: another process
    // may have added these shapes since the read above.
    TableLock lock(path);
    Expected<GemmTable> read = readGemmTable(path);
    if (!read.ok())
      return read.takeStatus();
    table = read.take();
    if (table.machine != machine)
      table = GemmTable{machine, {}};
    std::vector<GemmShape> todo = missing();
    if (!todo.empty()) {
      double t0 = seconds();
      for (GemmMeasurement &m : measureGemmShapes(todo, 0.02))
        table.shapes[m.shape.key()] = m;
      EINRT_TRY(writeGemmTable(path, table));
      if (measured) {
        char text[64];
        std::snprintf(text, sizeof text, " in %.1f s", seconds() - t0);
        *measured = "timed " + std::to_string(todo.size()) + " GEMM shape" +
                    (todo.size() == 1 ? "" : "s") + " on each library" + text +
                    " (once per machine: " + path + ")";
      }
    }
  }
  if (table.shapes.empty() || table.machine != machine) {
    auto c = std::make_shared<GemmChooser>(*gemmLibrary("openblas"));
    c->description_ = "openblas (no measured table)";
    c->default_ = true;
    return std::shared_ptr<const GemmChooser>(c);
  }
  return std::shared_ptr<const GemmChooser>(std::make_shared<GemmChooser>(table));
}

const GemmLibrary &GemmChooser::forShape(const GemmShape &shape) const {
  if (only_)
    return *only_;
  auto it = byShape_.find(shape.key());
  return it == byShape_.end() ? *fallback_ : *it->second;
}

} // namespace einrt
