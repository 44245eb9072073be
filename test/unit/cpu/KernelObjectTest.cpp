//===- KernelObjectTest.cpp - Kernels as object code vs the JIT's ---------===//
//
// The kernels of both example models' training steps (reduced sizes, fused
// and unfused) and of the 60 random fused graphs FusionRandomTest runs, in
// one KernelCompiler: JIT-compiled, and emitted as an ELF object per target
// (KernelCompiler::emitObject), linked into a shared library by the system
// compiler driver and dlopen'd. Every program runs once with the JIT's table
// and once with the library's (runtime/core/KernelTable.h), from the same
// arguments, and the results must be the same bits. Also: the symbols an
// object defines and needs (libc and libm only), the JIT's optimised IR is
// the object's, x86-64-v4 kernels are 16 floats wide and x86-64-v3 ones 8,
// an unknown target is an error, and the runtime picks the CPU target the
// compiler picks.
//
//===----------------------------------------------------------------------===//
#include "../pipeline/Compile.h"
#include "../pipeline/SmallExamples.h"
#include "CpuTestSupport.h"
#include "RandomGraphs.h"
#include "test/unit/StatusTesting.h"

#include "codegen/CpuTargets.h"
#include "runtime/core/Init.h"
#include "runtime/core/KernelTable.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/CpuTarget.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/X86TargetParser.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

using namespace mlir;
using namespace einc::cputest;
using ::ein::codegen::CpuTarget;
using ::ein::codegen::cpuTargets;
using einc::testing::readExample;

namespace {

/// A lowered program whose Kernel steps index the suite's compiler.
struct Case {
  std::string name;
  einrt::Program program;
  std::function<void(einrt::Executor &)> fill;
};

/// Params from their initialisers, token ids below 64, step 1, lr 1e-3.
void fillTrainStep(einrt::Executor &ex) {
  EINC_EXPECT_OK(einrt::initParams(ex, 7));
  EINC_ASSERT_OK(einrt::fillRandomInputs(ex, 8, 64));
  for (size_t a = 0; a < ex.argumentCount(); ++a) {
    const einrt::Buffer &b = ex.program().buffers[ex.program().arguments[a]];
    double v = b.name == "lr" ? 1e-3 : 1.0;
    if (b.role == einrt::BufferRole::Scalar) {
      EINC_EXPECT_OK(ex.write(size_t(ex.program().arguments[a]), &v, 1));
    }
  }
}

/// Programs lowered with one compiler, and their kernels' object files.
struct Suite {
  std::unique_ptr<KernelCompiler> kernels = KernelCompiler::create();
  std::vector<Case> cases;
  std::string errors;
  std::string dir;                            // temporary files
  std::map<std::string, std::string> objects; // target -> object path

  Suite() {
    char pattern[] = "/tmp/einc-kernel-object-XXXXXX";
    if (mkdtemp(pattern))
      dir = pattern;
  }
  ~Suite() {
    for (auto &[target, path] : objects) {
      std::remove(path.c_str());
      std::remove((path + ".so").c_str());
    }
    if (!dir.empty())
      rmdir(dir.c_str());
  }

  /// Lowers @`fn` of `compiled` (after fusion when `fused`).
  void add(const std::string &name, einc::testing::Compiled compiled, const char *fn, bool fused,
           std::function<void(einrt::Executor &)> fill) {
    if (!compiled.module || (fused && !fuse(*compiled.module))) {
      errors += name + ": " + compiled.errors + "\n";
      return;
    }
    auto f = compiled.module->lookupSymbol<func::FuncOp>(fn);
    ScopedDiagnosticHandler handler(f.getContext(), [&](Diagnostic &d) {
      errors += name + ": " + d.str() + "\n";
      return success();
    });
    auto program = ::ein::codegen::lowerToCpuProgram(f, *kernels);
    if (succeeded(program))
      cases.push_back({name, std::move(*program), std::move(fill)});
  }

  /// The object file for `target` (emitted once); "" with `error`.
  std::string object(const std::string &target, std::string &error) {
    auto it = objects.find(target);
    if (it != objects.end())
      return it->second;
    std::string path = dir + "/kernels-" + target + ".o";
    if (dir.empty())
      return "";
    if (einrt::Status s = kernels->emitObjectFile(target, "einc", path); !s.ok()) {
      error = s.message();
      return "";
    }
    objects[target] = path;
    return path;
  }
};

/// The three models' training steps (fused, as einc runs them; reduced sizes)
/// and FusionRandomTest's 60 random fused graphs.
Suite &programs() {
  static Suite s; // destroyed at exit: removes its files
  if (!s.cases.empty() || !s.errors.empty())
    return s;
  // The sizes CpuLoweringTest runs: in one test process, the JIT finds these
  // kernels (and the random graphs') in its cache.
  for (const einc::testing::SmallExample &m : einc::testing::smallExamples()) {
    auto compiled = einc::testing::compileModel(readExample(m.file), m.overrides);
    if (compiled.module && !einc::testing::addTrainStep(compiled, ""))
      compiled.module = nullptr;
    s.add(m.file, std::move(compiled), "train_step", true, fillTrainStep);
  }
  for (unsigned seed = 1; seed <= 60; ++seed)
    s.add("random graph " + std::to_string(seed),
          einc::testing::parseMLIR(randomFunction(seed, 8 + int(seed % 25))), "f", true,
          [seed](einrt::Executor &ex) { fillRandom(ex, seed); });
  return s;
}

/// One function with an op of every kind the CPU backend compiles, at every
/// element type it takes, each result returned.
std::string everyOpKind() {
  const std::string F = "tensor<5x37xf32>", I = "tensor<5x37xi32>", B = "tensor<5x37xi1>";
  std::string body, types, names;
  auto def = [&](const std::string &name, const std::string &type, const std::string &op) {
    body += "  %" + name + " = " + op + "\n";
    names += (names.empty() ? "%" : ", %") + name;
    types += (types.empty() ? "" : ", ") + type;
  };
  for (const char *op : {"neg", "abs", "exp", "log", "tanh", "sqrt", "rsqrt", "softplus"})
    def(std::string("u") + op, F, std::string("ein.") + op + " %x : " + F);
  for (const char *op : {"add", "sub", "mul", "div", "max", "min", "pow"})
    def(std::string("f") + op, F, std::string("ein.") + op + " %x, %y : " + F);
  for (const char *op : {"add", "sub", "mul", "div", "max", "min"})
    def(std::string("i") + op, I, std::string("ein.") + op + " %a, %b : " + I);
  def("ineg", I, "ein.neg %a : " + I);
  def("iabs", I, "ein.abs %a : " + I);
  for (const char *p : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    def(std::string("cf") + p, B, std::string("ein.cmp ") + p + ", %x, %y : " + F + " -> " + B);
    def(std::string("ci") + p, B, std::string("ein.cmp ") + p + ", %a, %b : " + I + " -> " + B);
    def(std::string("cb") + p, B, std::string("ein.cmp ") + p + ", %m, %n : " + B + " -> " + B);
  }
  def("sf", F, "ein.select %m, %x, %y : " + B + ", " + F);
  def("si", I, "ein.select %m, %a, %b : " + B + ", " + I);
  def("sb", B, "ein.select %m, %n, %m : " + B + ", " + B);
  const std::pair<const char *, std::string> kinds[] = {{"%x", F}, {"%a", I}, {"%m", B}};
  for (int from = 0; from < 3; ++from)
    for (int to = 0; to < 3; ++to)
      def("cast" + std::to_string(from) + std::to_string(to), kinds[to].second,
          std::string("ein.cast ") + kinds[from].first + " : " + kinds[from].second + " -> " +
              kinds[to].second);
  for (const char *k : {"sum", "max", "min"}) {
    def(std::string("rf1") + k, "tensor<5xf32>",
        std::string("ein.reduce ") + k + " %x dims [1] : " + F + " -> tensor<5xf32>");
    def(std::string("rf0") + k, "tensor<37xf32>",
        std::string("ein.reduce ") + k + " %x dims [0] : " + F + " -> tensor<37xf32>");
    def(std::string("ri1") + k, "tensor<5xi32>",
        std::string("ein.reduce ") + k + " %a dims [1] : " + I + " -> tensor<5xi32>");
  }
  // Rows long enough for vectorised partial sums: their rounding depends on
  // the vector width, so a kernel for another target gives other bits.
  def("rlong", "tensor<3xf32>", "ein.reduce sum %l dims [1] : tensor<3x999xf32> -> tensor<3xf32>");
  def("tr", "tensor<37x5xf32>", "ein.transpose %x [1, 0] : " + F + " -> tensor<37x5xf32>");
  def("bc", "tensor<5x37x3xf32>", "ein.broadcast %x dims [0, 1] : " + F + " -> tensor<5x37x3xf32>");
  def("rs", "tensor<185xf32>", "ein.reshape %x : " + F + " -> tensor<185xf32>");
  def("io", I, "ein.iota dim 1 : " + I);
  def("iof", F, "ein.iota dim 0 : " + F);
  def("g", "tensor<4x37xf32>",
      "ein.gather %x, %ids : " + F + ", tensor<4xi32> -> tensor<4x37xf32>");
  def("gi", "tensor<4x37xi32>",
      "ein.gather %a, %ids : " + I + ", tensor<4xi32> -> tensor<4x37xi32>");
  def("sa", F, "ein.scatter_add %u, %ids : tensor<4x37xf32>, tensor<4xi32> -> " + F);
  return "func.func @f(%x: " + F + ", %y: " + F + ", %a: " + I + ", %b: " + I + ", %m: " + B +
         ", %n: " + B + ", %ids: tensor<4xi32>, %u: tensor<4x37xf32>, %l: tensor<3x999xf32>) -> (" +
         types + ") {\n" + body + "  return " + names + " : " + types + "\n}\n";
}

/// Floats in [0.1, 2), integers in [1, 4) (no division by zero; rows of
/// the gather tables), booleans at random.
void fillOpKinds(einrt::Executor &ex) {
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> u(0.1, 2);
  for (size_t a = 0; a < ex.argumentCount(); ++a) {
    size_t b = size_t(ex.program().arguments[a]);
    einrt::DType dtype = ex.program().buffers[b].dtype;
    std::vector<double> v(size_t(ex.elementCount(b)));
    for (double &x : v)
      x = dtype == einrt::DType::I32  ? double(1 + gen() % 3)
          : dtype == einrt::DType::I1 ? double(gen() % 2)
                                      : u(gen);
    EINC_EXPECT_OK(ex.write(b, v.data(), v.size()));
  }
}

Suite &opKinds() {
  static Suite s;
  if (s.cases.empty() && s.errors.empty())
    s.add("every op kind", einc::testing::parseMLIR(everyOpKind()), "f", false, fillOpKinds);
  return s;
}

/// Runs `c` with `table`, its arguments from c.fill.
einrt::Expected<einrt::Executor> run(const Case &c, std::vector<einrt::KernelEntry> table) {
  auto device = std::make_shared<einrt::CpuDevice>(std::move(table), einrt::defaultThreadCount());
  einrt::Expected<einrt::Executor> ex = einrt::Executor::create(c.program, device);
  if (!ex.ok())
    return ex;
  c.fill(*ex);
  EINRT_TRY(ex->run());
  return ex;
}

/// Result r of both runs, as raw bits in the devices' (host) memory.
bool sameBits(const einrt::Executor &a, const einrt::Executor &b, size_t r) {
  size_t x = size_t(a.program().results[r]), y = size_t(b.program().results[r]);
  if (a.elementCount(x) != b.elementCount(y) || a.storageOf(x) != b.storageOf(y))
    return false;
  size_t bytes = size_t(a.elementCount(x) * einrt::storageBytes(a.storageOf(x)));
  return std::memcmp(a.deviceData(x), b.deviceData(y), bytes) == 0;
}

/// Runs a command, returning its exit status and output (stdout and stderr).
int shell(const std::string &command, std::string &output) {
  FILE *p = popen((command + " 2>&1").c_str(), "r");
  if (!p)
    return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    output.append(buf, n);
  return pclose(p);
}

struct ObjectSymbols {
  std::set<std::string> defined, undefined; // global ones
  std::set<std::string> sections;
  bool relocatableElf64X86 = false;
};

/// What `nm` would list: the object's global defined and undefined symbols.
ObjectSymbols readSymbols(const std::string &path) {
  ObjectSymbols s;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return s;
  auto object = llvm::object::ObjectFile::createObjectFile((*buffer)->getMemBufferRef());
  if (!object) {
    llvm::consumeError(object.takeError());
    return s;
  }
  llvm::object::ObjectFile &obj = **object;
  s.relocatableElf64X86 = obj.isELF() && obj.getArch() == llvm::Triple::x86_64 &&
                          obj.isRelocatableObject() && obj.getBytesInAddress() == 8;
  for (const llvm::object::SymbolRef &sym : obj.symbols()) {
    auto flags = sym.getFlags();
    auto name = sym.getName();
    if (!flags || !name) {
      llvm::consumeError(flags ? name.takeError() : flags.takeError());
      continue;
    }
    if (*flags & llvm::object::SymbolRef::SF_Undefined)
      s.undefined.insert(name->str());
    else if (*flags & llvm::object::SymbolRef::SF_Global)
      s.defined.insert(name->str());
  }
  for (const llvm::object::SectionRef &sec : obj.sections())
    if (auto name = sec.getName())
      s.sections.insert(name->str());
    else
      llvm::consumeError(name.takeError());
  return s;
}

std::string join(const std::set<std::string> &names) {
  std::string s;
  for (const std::string &n : names)
    s += (s.empty() ? "" : " ") + n;
  return s;
}

TEST(CpuTargets, TableIsTheRuntimes) {
  std::vector<std::string> compiler,
      runtime(std::begin(einrt::kCpuTargets), std::end(einrt::kCpuTargets));
  for (const CpuTarget &t : cpuTargets())
    compiler.push_back(t.name);
  EXPECT_EQ(compiler, runtime);
  EXPECT_EQ(::ein::codegen::cpuTargetNames(), "x86-64-v4, x86-64-v3, x86-64-v2");
}

// The compiler's pick (LLVM's host features) and the runtime's (the compiler
// runtime's CPU model) agree, for the best target and for each.
TEST(CpuTargets, RuntimeAndCompilerPickTheSame) {
  const CpuTarget *host = ::ein::codegen::hostCpuTarget();
  std::string runtime = einrt::bestCpuTarget();
  EXPECT_EQ(host ? std::string(host->name) : "", runtime);
  for (const CpuTarget &t : cpuTargets())
    EXPECT_EQ(::ein::codegen::hostRuns(t), einrt::cpuRuns(t.name)) << t.name;
  EXPECT_FALSE(einrt::cpuRuns("x86-64-v9"));
  std::cout << "[ cpu target ] this machine runs " << (runtime.empty() ? "none" : runtime) << "\n";
}

// What a target's check admits covers what its code may use: every feature
// LLVM enables for the target's CPU is x86-64's own or implied by the
// level's features (and those of the levels below).
TEST(CpuTargets, LevelsCoverTheirCpusFeatures) {
  llvm::SmallVector<llvm::StringRef> base;
  llvm::X86::getFeaturesForCPU("x86-64", base);
  for (const CpuTarget &t : cpuTargets()) {
    llvm::StringMap<bool> admitted;
    auto admit = [&](llvm::StringRef f) {
      admitted[f] = true;
      llvm::X86::updateImpliedFeatures(f, true, admitted);
    };
    for (llvm::StringRef f : base)
      admit(f);
    for (const char *f : ::ein::codegen::levelFeatures(t))
      admit(f);
    // LLVM features with no CPUID bit of their own: CRC32 is an SSE4.2
    // instruction; evex512 (512-bit EVEX encodings) comes with AVX512F.
    for (auto [feature, carrier] : {std::pair{"crc32", "sse4.2"}, {"evex512", "avx512f"}})
      if (admitted.lookup(carrier))
        admit(feature);
    llvm::SmallVector<llvm::StringRef> used;
    llvm::X86::getFeaturesForCPU(t.cpu, used);
    ASSERT_FALSE(used.empty()) << t.cpu;
    for (llvm::StringRef f : used)
      EXPECT_TRUE(admitted.lookup(f)) << t.name << " uses " << f.str() << " unchecked";
  }
}

TEST(KernelObject, UnknownTargetOrPrefixIsAnError) {
  auto kc = KernelCompiler::create();
  std::string out;
  llvm::raw_string_ostream os(out);
  einrt::Status target = kc->emitObject("x86-64-v9", "einc", os);
  EXPECT_EQ(target.code(), einrt::StatusCode::Invalid);
  EXPECT_EQ(target.message(),
            "unknown CPU target 'x86-64-v9' (einc knows x86-64-v4, x86-64-v3, x86-64-v2)");
  einrt::Status prefix = kc->emitObject("x86-64-v3", "9lives", os);
  EXPECT_EQ(prefix.code(), einrt::StatusCode::Invalid);
  EXPECT_EQ(prefix.message(), "the kernel symbol prefix '9lives' is not a C identifier");
  EXPECT_TRUE(out.empty());
  std::string path = "/nonexistent-dir/kernels.o";
  einrt::Status written = kc->emitObjectFile("x86-64-v3", "einc", path);
  EXPECT_EQ(written.code(), einrt::StatusCode::Io);
  EXPECT_EQ(written.message().rfind("cannot write " + path + ": ", 0), 0u) << written.message();

  kc->setTarget("x86-64-v9");
  testing::internal::CaptureStderr();
  EXPECT_TRUE(failed(kc->compile()));
  EXPECT_NE(testing::internal::GetCapturedStderr().find("unknown CPU target 'x86-64-v9'"),
            std::string::npos);
}

/// Checks the object for `target`: exactly its kernels, table and count
/// defined; nothing needed beyond libc and libm; a non-executable stack.
void checkSymbols(Suite &s, const std::string &target) {
  SCOPED_TRACE(target);
  // libm: fmaf where the target has no FMA instruction (x86-64-v2), for
  // the polynomial approximations' math.fma; sinf and cosf (the reference's,
  // codegen/CpuKernelModule.cpp), which LLVM joins into glibc's sincosf where
  // a kernel takes both of one angle (llama.ein's RoPE).
  const std::set<std::string> allowed = {"memcpy", "memmove", "memset", "fmaf",
                                         "powf",   "sinf",    "cosf",   "sincosf"};
  auto start = std::chrono::steady_clock::now();
  std::string error, path = s.object(target, error);
  ASSERT_FALSE(path.empty()) << error;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ObjectSymbols syms = readSymbols(path);
  EXPECT_TRUE(syms.relocatableElf64X86);
  std::set<std::string> expected = {einrt::kernelTableSymbol("einc", target),
                                    einrt::kernelCountSymbol("einc", target)};
  for (int64_t i = 0; i < s.kernels->kernelCount(); ++i)
    expected.insert(einrt::kernelSymbol("einc", target, i));
  EXPECT_EQ(join(syms.defined), join(expected));
  for (const std::string &u : syms.undefined)
    EXPECT_TRUE(allowed.count(u)) << "the object needs " << u;
  EXPECT_TRUE(syms.sections.count(".note.GNU-stack"));
  std::cout << "[ object ] " << target << ": " << s.kernels->kernelCount() << " kernels ("
            << seconds << " s), needs {" << join(syms.undefined) << "}\n";
}

/// Links the object for `target` into a shared library with the system
/// compiler driver (--no-undefined: what it needs is in libc or libm),
/// dlopens it and runs every program of `s` with its table and with the
/// JIT's for `target`: the results must be the same bits.
void checkLinkedMatchesJit(Suite &s, const std::string &target) {
  SCOPED_TRACE(target);
  std::string error, object = s.object(target, error);
  ASSERT_FALSE(object.empty()) << error;
  std::string library = object + ".so", output;
  std::string link = std::string(EINC_TEST_CXX) + " -shared -Wl,--no-undefined -o " + library +
                     " " + object + " -lm";
  ASSERT_EQ(shell(link, output), 0) << link << "\n" << output;
  EXPECT_EQ(output, "") << link; // no warning (e.g. an executable stack)
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(handle) << dlerror();
  auto *entries = static_cast<const einrt_kernel_entry *>(
      dlsym(handle, einrt::kernelTableSymbol("einc", target).c_str()));
  auto *count =
      static_cast<const int64_t *>(dlsym(handle, einrt::kernelCountSymbol("einc", target).c_str()));
  ASSERT_TRUE(entries && count);
  ASSERT_EQ(*count, s.kernels->kernelCount());
  std::vector<einrt::KernelEntry> linked = einrt::kernelTable(entries, *count);

  s.kernels->setTarget(target);
  bool compiled = succeeded(s.kernels->compile());
  s.kernels->setTarget("");
  ASSERT_TRUE(compiled);
  const std::vector<einrt::KernelEntry> &jit = s.kernels->table();
  for (size_t i = 0; i < jit.size(); ++i) {
    EXPECT_EQ(linked[i].extent, jit[i].extent) << "kernel " << i;
    EXPECT_NE(linked[i].fn, jit[i].fn); // really two copies
  }
  int compared = 0, different = 0;
  for (const Case &c : s.cases) {
    SCOPED_TRACE(c.name);
    EINC_ASSERT_OK_AND_ASSIGN(einrt::Executor a, run(c, jit));
    EINC_ASSERT_OK_AND_ASSIGN(einrt::Executor b, run(c, linked));
    ASSERT_EQ(a.resultCount(), b.resultCount());
    for (size_t r = 0; r < a.resultCount(); ++r, ++compared) {
      bool same = sameBits(a, b, r);
      different += !same;
      EXPECT_TRUE(same) << "result " << r;
    }
  }
  std::cout << (different ? "[ DIFFERENT ] " : "[ bit-identical ] ") << target << ": "
            << compared - different << " of " << compared << " results of " << s.cases.size()
            << " programs, " << *count << " kernels\n";
  dlclose(handle);
}

bool haveLinker(std::string &why) {
  std::string output;
  if (shell(std::string(EINC_TEST_CXX) + " --version", output) == 0)
    return true;
  why = std::string("no compiler driver to link with (") + EINC_TEST_CXX + "): " + output;
  return false;
}

// Every target's object of one kernel per op kind.
TEST(KernelObject, EveryOpKindsObjectNeedsOnlyLibcAndLibm) {
  Suite &s = opKinds();
  ASSERT_TRUE(s.errors.empty()) << s.errors;
  for (const CpuTarget &t : cpuTargets())
    checkSymbols(s, t.name);
}

// Every op kind, for every target this machine runs.
TEST(KernelObject, EveryOpKindLinkedIsBitIdenticalToTheJit) {
  Suite &s = opKinds();
  ASSERT_TRUE(s.errors.empty()) << s.errors;
  std::string why;
  if (!haveLinker(why))
    GTEST_SKIP() << why;
  int targets = 0;
  for (const CpuTarget &t : cpuTargets()) {
    if (!einrt::cpuRuns(t.name)) {
      std::cout << "[ skipped ] " << t.name << ": this machine cannot run it\n";
      continue;
    }
    ++targets;
    checkLinkedMatchesJit(s, t.name);
  }
  EXPECT_GT(targets, 0) << "this machine runs none of " << ::ein::codegen::cpuTargetNames();
}

// The heart of it: the models' steps and the random graphs, for the JIT's
// target (EINC_JIT_CPU's or the machine's best: what `einc train` runs).
TEST(KernelObject, ProgramsLinkedAreBitIdenticalToTheJit) {
  Suite &s = programs();
  ASSERT_TRUE(s.errors.empty()) << s.errors;
  ASSERT_EQ(s.cases.size(), 63u); // 3 examples + 60 random graphs
  std::string why;
  if (!haveLinker(why))
    GTEST_SKIP() << why;
  einrt::Expected<const CpuTarget *> jit = ::ein::codegen::jitCpuTarget();
  ASSERT_TRUE(jit.ok()) << jit.status().message();
  const CpuTarget *target = *jit;
  checkSymbols(s, target->name);
  checkLinkedMatchesJit(s, target->name);
}

// The JIT and emitObject take one code path: the same optimised IR, names
// aside (the JIT's objects have prefixes of their own).
TEST(KernelObject, JitRunsTheObjectsIR) {
  auto compiled = einc::testing::parseMLIR(R"(
func.func @f(%x: tensor<13x57xf32>, %b: tensor<57xf32>) -> (tensor<13xf32>, tensor<13x57xf32>) {
  %bb = ein.broadcast %b dims [1] : tensor<57xf32> -> tensor<13x57xf32>
  %y = ein.mul %x, %bb : tensor<13x57xf32>
  %t = ein.tanh %y : tensor<13x57xf32>
  %s = ein.reduce sum %t dims [1] : tensor<13x57xf32> -> tensor<13xf32>
  return %s, %t : tensor<13xf32>, tensor<13x57xf32>
}
)");
  ASSERT_TRUE(compiled.module) << compiled.errors;
  auto kc = KernelCompiler::create();
  ASSERT_TRUE(succeeded(
      ::ein::codegen::lowerToCpuProgram(compiled.module->lookupSymbol<func::FuncOp>("f"), *kc)));
  kc->setKeepOptimizedIR(true);
  ASSERT_TRUE(succeeded(kc->compile()));
  ASSERT_EQ(kc->compiledCount(), kc->kernelCount()) << "kernels already in the process cache";
  std::string jit = kc->optimizedIR();
  std::string out;
  llvm::raw_string_ostream os(out);
  einrt::Status emitted = kc->emitObject(kc->jitTarget(), "einc", os);
  ASSERT_TRUE(emitted.ok()) << emitted.message();
  std::string aot = kc->optimizedIR();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(jit, m, std::regex("@(einc_jit[0-9]+)_")));
  jit = std::regex_replace(jit, std::regex(m[1].str() + "_"), "einc_");
  EXPECT_EQ(jit, aot);
  EXPECT_GT(kc->kernelCount(), 1);
}

// x86-64-v4 kernels are 16 floats wide (not LLVM's 256-bit preference for
// that level), x86-64-v3 ones 8 and x86-64-v2 ones 4; compiling needs no
// machine that runs them.
TEST(KernelObject, VectorWidthPerTarget) {
  auto compiled = einc::testing::parseMLIR(R"(
func.func @f(%x: tensor<61x67xf32>, %y: tensor<61x67xf32>) -> tensor<61x67xf32> {
  %a = ein.mul %x, %y : tensor<61x67xf32>
  return %a : tensor<61x67xf32>
}
)");
  ASSERT_TRUE(compiled.module) << compiled.errors;
  auto kc = KernelCompiler::create();
  ASSERT_TRUE(succeeded(
      ::ein::codegen::lowerToCpuProgram(compiled.module->lookupSymbol<func::FuncOp>("f"), *kc)));
  kc->setKeepOptimizedIR(true);
  for (auto [target, lanes] : {std::pair{"x86-64-v4", 16}, {"x86-64-v3", 8}, {"x86-64-v2", 4}}) {
    std::string out;
    llvm::raw_string_ostream os(out);
    einrt::Status emitted = kc->emitObject(target, "einc", os);
    ASSERT_TRUE(emitted.ok()) << emitted.message();
    const std::string &ir = kc->optimizedIR();
    EXPECT_NE(ir.find("fmul <" + std::to_string(lanes) + " x float>"), std::string::npos)
        << target << "\n"
        << ir;
    for (int wider = lanes * 2; wider <= 16; wider *= 2)
      EXPECT_EQ(ir.find("<" + std::to_string(wider) + " x float>"), std::string::npos) << target;
  }
}

// The JIT's default target is the runtime's pick (or EINC_JIT_CPU's).
TEST(KernelObject, JitTargetIsTheRuntimesPick) {
  auto kc = KernelCompiler::create();
  ASSERT_TRUE(succeeded(kc->compile()));
  const char *env = std::getenv("EINC_JIT_CPU");
  EXPECT_EQ(kc->jitTarget(), env && *env ? std::string(env) : einrt::bestCpuTarget());
}

} // namespace
