//===- CalibrateGemm.cpp - `einc calibrate --gemm`: GEMM by measurement ---===//
//
// The shapes are those the CPU device issues for the model: every Matmul
// step of its training functions and @forward as compileModel lowers them
// (one sgemm call per matrix; chunks of a matrix run on its library), each
// timed alone on one thread by every library that loads. The table keeps
// the fastest per shape (OpenBLAS unless another is more than 3% faster);
// shapes measured before for other models stay.
//
//===----------------------------------------------------------------------===//
#include "Calibrate.h"
#include "CompileOptions.h"

#include "runtime/base/TerminalText.h"
#include "runtime/cpu/GemmTable.h"
#include "runtime/cpu/ThreadPool.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

namespace einc {

int calibrateGemm(mlir::ModuleOp module, const Options &o, const einrt::TrainSettings &settings) {
  auto fail = [](const std::string &message) {
    llvm::errs() << "einc calibrate: " << message << "\n";
    return 1;
  };
  std::string path = einrt::gemmTablePath();
  if (path.empty())
    return fail("no cache folder for the GEMM table (set EINC_CACHE_DIR, XDG_CACHE_HOME or HOME)");
  CompileRequest request;
  // What a training run loads (runner::trainFunctionNames) and @forward.
  request.functions = settings.accumulate > 1
                          ? std::vector<std::string>{"accumulate_grad", "apply_update", "forward"}
                          : std::vector<std::string>{"train_step", "forward"};
  request.jit = false;
  CompiledModel compiled;
  if (!compileModel(module, o, settings, /*source=*/"", request, compiled))
    return 1;

  // Distinct call shapes, with how many sgemm calls of each one step of
  // every function makes (for the time-weighted totals).
  std::map<std::string, std::pair<einrt::GemmShape, int64_t>> calls;
  for (const einrt::BundledProgram &bp : compiled.bundle.programs)
    for (const einrt::Step &s : bp.program.steps)
      if (const auto *g = std::get_if<einrt::GemmDesc>(&s.payload)) {
        einrt::GemmShape shape{g->transA, g->transB, g->m, g->n, g->k, g->lda, g->ldb, g->ldc};
        auto &entry = calls[shape.key()];
        entry.first = shape;
        entry.second += g->matrices();
      }
  if (calls.empty())
    return fail(einrt::terminalSafe(o.input) + " has no GEMMs to time");
  std::vector<einrt::GemmShape> shapes;
  for (const auto &[key, entry] : calls)
    shapes.push_back(entry.first);

  einrt::setBlasThreads(1);
  std::vector<const einrt::GemmLibrary *> libs = einrt::availableGemmLibraries();
  const double perCall = std::clamp(o.seconds / double(shapes.size() * libs.size()), 0.02, 0.5);
  std::vector<einrt::GemmMeasurement> measured = einrt::measureGemmShapes(shapes, perCall);

  llvm::raw_ostream &out = llvm::outs();
  out << "einc calibrate --gemm: " << einrt::terminalSafe(o.input) << ": " << shapes.size()
      << " GEMM shapes, one thread, GFLOP/s (median)\n";
  out << "  machine " << einrt::gemmMachineKey() << "\n";
  out << llvm::format("  %-52s", static_cast<const char *>("shape (calls per step)"));
  for (const einrt::GemmLibrary *lib : libs)
    out << llvm::format(" %9s", lib->name.c_str());
  out << "  chosen\n";
  std::map<std::string, double> stepSeconds; // per library, and "chosen"
  for (const einrt::GemmMeasurement &m : measured) {
    int64_t n = calls[m.shape.key()].second;
    const double flops = 2.0 * double(m.shape.m) * double(m.shape.n) * double(m.shape.k);
    out << llvm::format("  %-52s", (m.shape.key() + " (" + std::to_string(n) + ")").c_str());
    for (const einrt::GemmLibrary *lib : libs) {
      double rate = m.gflops.count(lib->name) ? m.gflops.at(lib->name) : 0.0;
      out << llvm::format(" %9.1f", rate);
      if (rate > 0)
        stepSeconds[lib->name] += double(n) * flops / (rate * 1e9);
    }
    out << "  " << m.chosen << "\n";
    if (m.gflops.count(m.chosen))
      stepSeconds["chosen"] += double(n) * flops / (m.gflops.at(m.chosen) * 1e9);
  }
  out << llvm::format("  %-52s", static_cast<const char *>("every GEMM of a step, ms"));
  for (const einrt::GemmLibrary *lib : libs)
    out << llvm::format(" %9.2f", 1e3 * stepSeconds[lib->name]);
  out << llvm::format("  %.2f (the table: %.2fx openblas)\n", 1e3 * stepSeconds["chosen"],
                      stepSeconds["openblas"] / std::max(stepSeconds["chosen"], 1e-12));

  einrt::Expected<einrt::GemmTable> read = einrt::readGemmTable(path);
  if (!read.ok())
    return fail(read.status().message());
  einrt::GemmTable table = read.take();
  if (table.machine != einrt::gemmMachineKey())
    table = {}; // another machine's (or none): start over
  table.machine = einrt::gemmMachineKey();
  for (const einrt::GemmMeasurement &m : measured)
    table.shapes[m.shape.key()] = m;
  if (einrt::Status s = einrt::writeGemmTable(path, table); !s.ok())
    return fail(s.message());
  out << "wrote " << einrt::terminalSafe(path) << " (" << table.shapes.size()
      << " shapes): the cpu backend runs each on its chosen library from now on "
         "(EINC_GEMM=openblas ignores the table)\n";
  return 0;
}

} // namespace einc
