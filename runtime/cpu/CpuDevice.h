//===- CpuDevice.h - The CPU backend's device: BLAS and compiled kernels -*- C++ -*-===//
//
// A host device (runtime/core/HostDevice.h, float32; bf16 and f16 stored as
// their 16 bits) that also runs the CPU backend's two step kinds, each as
// the chunks of runtime/cpu/ParallelChunks.h over its thread pool:
//   gemm    one single-threaded cblas_sgemm per chunk (whole matrices or a
//           block of rows of one matrix), reading the strided operands in
//           place (the constructor sets BLAS to one thread: a BLAS that
//           threads a call itself would cut it again, by its thread count);
//           bf16/f16 operands are first widened (exactly) into an f32
//           workspace, a bf16/f16 result computed there and rounded once
//           (ir/EinOps.td's contraction: f32 sums). bf16 A and B with an
//           f32 or bf16 C take another path where the CPU has one
//           (Bf16GemmPath): oneDNN's matmul primitive, one single-threaded
//           call per chunk on the operands in place (its primitives
//           created by prepare()), or runtime/cpu/Bf16Gemm.h's VDPBF16PS
//           kernel, each matrix packed once and its row blocks as the
//           chunks. The workspaces are sized by prepare() from the
//           program's GEMMs, never per call;
//   launch  calls of a compiled kernel (its table: JIT-compiled by
//           codegen/CpuKernels.h, or linked into an executable) over ranges
//           of its parallel loop.
// The cut is a function of the step's shape alone, so every thread count
// makes the same calls and gives the same bits (docs/determinism.md).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_CPUDEVICE_H
#define EINC_RUNTIME_CPUDEVICE_H

#include "runtime/core/HostDevice.h"
#include "runtime/cpu/Bf16Gemm.h"
#include "runtime/cpu/GemmTable.h"
#include "runtime/cpu/OneDnnMatmul.h"
#include "runtime/cpu/ParallelChunks.h"
#include "runtime/cpu/ThreadPool.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>

namespace einrt {

class CpuDevice : public HostDevice {
public:
  /// `kernels`: what Kernel steps launch, by index. `threads` <= 1: one.
  explicit CpuDevice(std::vector<KernelEntry> kernels = {}, int threads = 1);

  std::string name() const override { return "cpu"; }
  /// bf16/f16 as their 16 bits (2 bytes); the rest as the reference device.
  StorageType storageOf(DType t) const override;
  /// Grows the GEMM workspaces to what `program`'s narrow Matmul steps need
  /// (and picks the bf16 GEMM path first, if it has bf16 GEMMs).
  Status prepare(const Program &program) override;
  /// The workspaces' bytes (the largest any prepared program needs): the
  /// widened f32 operands and the packed bf16 ones.
  int64_t gemmWorkspaceBytes() const {
    return int64_t(workspace.size() * sizeof(float) + packed.size() * sizeof(uint32_t));
  }
  /// The bytes `program`'s narrow GEMMs need as workspace on `path` (0: none).
  static int64_t gemmWorkspaceBytes(const Program &program,
                                    Bf16GemmPath path = Bf16GemmPath::Emulate);

  /// How bf16 x bf16 GEMMs run: fixed here (tests), else picked by
  /// selectBf16GemmPath (EINC_CPU_BF16, the CPU) on first use.
  void setBf16GemmPath(Bf16GemmPath path) { bf16Path = path; }
  /// The path picked (nullopt before any bf16 GEMM was prepared or run).
  std::optional<Bf16GemmPath> bf16GemmPath() const { return bf16Path; }
  /// Which library runs each f32 GEMM shape (runtime/cpu/GemmTable.h): fixed
  /// here (tests), else by prepare() (GemmChooser::forShapes: EINC_GEMM,
  /// this machine's table, extended by timing the program's shapes it
  /// lacks), else GemmChooser::fromEnvironment on first use.
  void setGemmChooser(std::shared_ptr<const GemmChooser> chooser) {
    gemmChoice = std::move(chooser);
    gemmChoiceFixed = gemmChoice != nullptr;
  }
  /// The chooser in use (null before the first f32 GEMM was prepared or run).
  const GemmChooser *gemmChooser() const { return gemmChoice.get(); }
  /// What the last prepare() that timed anything timed to extend this
  /// machine's GEMM table: "" when none did (GemmChooser::forShapes).
  const std::string &gemmMeasurement() const { return gemmMeasured; }
  /// `program`'s Matmul steps that bf16GemmPath() decides (bf16 A and B,
  /// f32 or bf16 C).
  static int64_t bf16GemmSteps(const Program &program);
  /// `program`'s Matmul steps with an f16 operand: widened to f32 (exactly)
  /// for the f32 GEMM, as there is no f16 GEMM path on the CPU.
  static int64_t f16GemmSteps(const Program &program);
  bool runs(StepRunner) const override { return true; }
  /// Every Kernel step's kernel is in the table.
  Status check(const Program &program) const override;
  Status gemm(const GemmDesc &g, const void *a, const void *b, void *c) override;
  /// The epilogue's kernel on each tile of C right after the tile's
  /// product (in the same chunk, while it is in cache), where C is dense
  /// and every row is whole iterations of the kernel's parallel loop (and
  /// the step is cut into whole rows or tiles whose edges are); else over the whole
  /// of C after the product (narrow operands widened for sgemm, too: their
  /// C is rounded whole first).
  Status gemmPost(const GemmDesc &g, const void *a, const void *b, void *c,
                  const std::vector<DeviceSpan> &post) override;
  Status launch(const KernelLaunch &k, const std::vector<DeviceSpan> &buffers) override;

  void setKernels(std::vector<KernelEntry> table) { kernels = std::move(table); }
  const std::vector<KernelEntry> &kernelTable() const { return kernels; }

  /// Threads for gemm and launch (1: none besides the caller's).
  void setThreads(int threads);
  /// Runs on `pool`, shared with other devices (one set of threads for all
  /// the functions a trainer runs, one at a time); null: one thread.
  void setThreadPool(std::shared_ptr<ThreadPool> pool);
  int threads() const;

private:
  /// fn(0) ... fn(chunks - 1): on the pool's threads, or in order without.
  void forEachChunk(int chunks, const std::function<void(int)> &fn);
  /// bf16Path, picked now if it is not yet.
  Status pickBf16Path();
  /// gemmChoice, made now if it is not yet.
  Status pickGemmChooser();
  /// Called by a GEMM's chunk after computing its tile of matrix i.
  using TileDone = std::function<void(int64_t i, const MatmulChunks::Chunk &tile)>;
  /// gemm(), with `done` (if set) after each chunk's tile of each matrix.
  Status gemmTilesDone(const GemmDesc &g, const void *a, const void *b, void *c,
                       const TileDone *done);
  /// How `g` is cut into chunks: planMatmulChunks, with tiles of whole rows
  /// on the packed bf16 path (its kernel runs row blocks). A function of
  /// the shape and the path only, so a GEMM is cut the same with an
  /// epilogue or without (the same bits fused and unfused).
  MatmulChunks chunksOf(const GemmDesc &g) const;
  /// A bf16 x bf16 GEMM through runtime/cpu/Bf16Gemm.h (path Avx512Bf16 or Model).
  Status packedBf16Gemm(const GemmDesc &g, const void *a, const void *b, void *c,
                        const TileDone *done);
  /// A bf16 x bf16 GEMM through oneDNN (path OneDnn): one matmul call per
  /// chunk and matrix, on the chunk's tile.
  Status oneDnnBf16Gemm(const GemmDesc &g, const void *a, const void *b, void *c,
                        const TileDone *done);
  /// The oneDNN primitive of each tile shape (rows, columns) of `g`'s
  /// chunks, created (or found in oneDNN's cache) now.
  using OneDnnChunkMatmuls = std::map<std::pair<int64_t, int64_t>, const OneDnnMatmul *>;
  static Expected<OneDnnChunkMatmuls> oneDnnChunkMatmuls(const GemmDesc &g);

  std::vector<KernelEntry> kernels;
  std::shared_ptr<ThreadPool> pool; // null: one thread
  std::vector<float> workspace;     // widened GEMM operands (prepare)
  std::vector<uint32_t> packed;     // packed bf16 GEMM operands (prepare)
  std::optional<Bf16GemmPath> bf16Path;
  std::shared_ptr<const GemmChooser> gemmChoice;
  bool gemmChoiceFixed = false; // setGemmChooser: prepare() keeps it
  std::string gemmMeasured;
};

} // namespace einrt

#endif // EINC_RUNTIME_CPUDEVICE_H
