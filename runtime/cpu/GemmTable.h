//===- GemmTable.h - Which library computes each GEMM shape -----*- C++ -*-===//
//
// GEMM by measurement: for each call shape the CPU device issues (op(A),
// op(B), m, n, k, leading dimensions), the library (runtime/cpu/GemmLibrary.h)
// that ran it fastest here (measureGemmShapes), kept on disk, keyed by the
// machine: the CPU's model name and ISA flags, OpenBLAS's configuration
// (its core type) and every library's version. The table is built on first
// use: when an executor is created, each of its program's GEMM shapes of
// at least kMeasuredGemmFlops that the table lacks is timed then and added
// (GemmChooser::forShapes; `einc calibrate --gemm MODEL.ein` re-measures a
// model's shapes on demand). A shape once in the table keeps its library —
// a process that measured a shape another wrote first takes the other's
// choice — so the choice, and so every result bit, is a function of the
// table: the same on every run, in einc and in its executables, until the
// table is measured again. Smaller shapes, and every shape without a cache
// folder, run on OpenBLAS.
//
// The table lives in $EINC_CACHE_DIR/gemm, else $XDG_CACHE_HOME/einc/gemm,
// else ~/.cache/einc/gemm (none: no table), one JSON file per machine key.
// EINC_GEMM=openblas|onednn|onednn-sgemm|blis forces one library for every shape;
// EINC_GEMM=table (the default) uses the table.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_GEMMTABLE_H
#define EINC_RUNTIME_GEMMTABLE_H

#include "runtime/cpu/GemmLibrary.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace einrt {

/// One sgemm call's shape.
struct GemmShape {
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  /// "NT 2048x768x256 lda=256 ldb=256 ldc=768": the table's key.
  std::string key() const;
  bool operator<(const GemmShape &o) const { return key() < o.key(); }
};

/// One measured shape: GFLOP/s per library and the pick.
struct GemmMeasurement {
  GemmShape shape;
  std::map<std::string, double> gflops; // library -> median GFLOP/s
  std::string chosen;
};

struct GemmTable {
  std::string machine;                           // gemmMachineKey() when measured
  std::map<std::string, GemmMeasurement> shapes; // by GemmShape::key()
};

/// This machine's key: "AMD EPYC 7B13 | OpenBLAS 0.3.21 ... Zen ... |
/// onednn 2.6.3 | blis 0.9.0" (the libraries that load).
std::string gemmMachineKey();

/// Where this machine's table is ("" when no cache folder is known).
std::string gemmTablePath();

/// Reads `path`; Corrupt for a file that is not a table (a missing file is
/// an empty table).
Expected<GemmTable> readGemmTable(const std::string &path);
/// Writes atomically (creating the folder); Io when the file system refuses.
Status writeGemmTable(const std::string &path, const GemmTable &table);

/// Times every library on each of `shapes` (one thread, median of several
/// calls after a warm-up, at least `secondsPerCall` per library and shape)
/// and picks the fastest; a library within `tie` (relative) of OpenBLAS
/// does not replace it, so noise does not flip a choice.
std::vector<GemmMeasurement> measureGemmShapes(const std::vector<GemmShape> &shapes,
                                               double secondsPerCall = 0.05, double tie = 0.03);

/// Shapes below this many FLOPs are not measured (they run on OpenBLAS
/// unless `einc calibrate --gemm` put them in the table).
constexpr double kMeasuredGemmFlops = 1e6;

/// What the CPU device calls for each shape.
class GemmChooser {
public:
  /// EINC_GEMM and this machine's table; the failure for an EINC_GEMM
  /// naming no library that loads, or a damaged table.
  static Expected<std::shared_ptr<const GemmChooser>> fromEnvironment();
  /// fromEnvironment(), first adding to the table every shape of `shapes`
  /// of at least kMeasuredGemmFlops it lacks, timed now (with the table
  /// locked against other processes; unless EINC_GEMM forces a library or
  /// there is no cache folder). `measured` (if given) says what was timed:
  /// "" when nothing was.
  static Expected<std::shared_ptr<const GemmChooser>>
  forShapes(const std::vector<GemmShape> &shapes, std::string *measured = nullptr);
  /// Every shape on one library.
  explicit GemmChooser(const GemmLibrary *only) : only_(only), description_(only->name) {}
  /// The table's choices (a library that does not load: OpenBLAS).
  explicit GemmChooser(const GemmTable &table);

  const GemmLibrary &forShape(const GemmShape &shape) const;
  /// "openblas (EINC_GEMM)", "the table of this machine (12 shapes: 7
  /// onednn, 5 openblas)", "openblas (no table)": for banners.
  const std::string &describe() const { return description_; }
  /// OpenBLAS for every shape because nothing said otherwise (no
  /// EINC_GEMM, no table): banners say nothing then.
  bool isDefault() const { return default_; }

private:
  GemmChooser() = default;
  const GemmLibrary *only_ = nullptr;
  const GemmLibrary *fallback_ = nullptr;
  std::map<std::string, const GemmLibrary *> byShape_;
  std::string description_;
  bool default_ = false;
};

} // namespace einrt

#endif // EINC_RUNTIME_GEMMTABLE_H
