//===- CpuDevice.cpp - The CPU backend's GEMM and kernel steps ------------===//
//
// Each Matmul and Kernel step runs as the chunks of runtime/cpu/ParallelChunks.h:
// the same calls at every thread count, so the thread count never changes a
// result bit.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CpuDevice.h"

#include "runtime/base/Memory.h"
#include "runtime/core/FloatFormats.h"
#include "runtime/cpu/OneDnnMatmul.h"
#include "runtime/cpu/ParallelChunks.h"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <mutex>

namespace einrt {

namespace {

/// Rows [r0, r1) and columns [c0, c1) of C = op(A)·op(B) (or C += ..., as
/// the epilogue says) for one matrix of `g`.
void gemmTile(const GemmLibrary &lib, const GemmDesc &g, const float *a, const float *b, float *c,
              const MatmulChunks::Chunk &t) {
  const int64_t m = t.r1 - t.r0, n = t.c1 - t.c0, k = g.k;
  const bool accumulate = g.epilogue == GemmEpilogue::Accumulate;
  if (m <= 0 || n <= 0)
    return;
  // Rows [r0, r1) of op(A) and columns [c0, c1) of op(B): op(A)'s rows are
  // A's columns when A is stored transposed, op(B)'s columns B's rows.
  const float *ar = a + (g.transA ? t.r0 : t.r0 * g.lda);
  const float *bc = b + (g.transB ? t.c0 * g.ldb : t.c0);
  float *ct = c + t.r0 * g.ldc + t.c0;
  if (k == 0) { // an empty sum: BLAS implementations differ, so zero here
    if (!accumulate)
      for (int64_t r = 0; r < m; ++r)
        std::fill(ct + r * g.ldc, ct + r * g.ldc + n, 0.0f);
    return;
  }
  lib.sgemm(g.transA, g.transB, m, n, k, 1.0f, ar, g.lda, bc, g.ldb, accumulate ? 1.0f : 0.0f, ct,
            g.ldc);
}

/// The shape a GEMM library is chosen by: one whole matrix of `g` (its
/// chunks all run on the library chosen for it).
GemmShape shapeOf(const GemmDesc &g) {
  return GemmShape{g.transA, g.transB, g.m, g.n, g.k, g.lda, g.ldb, g.ldc};
}

bool narrow(DType t) { return t == DType::BF16 || t == DType::F16; }

/// Elements [0, extent) of a GEMM operand stored as rows x cols matrices
/// `ld` apart within one, at the batch and outer-loop strides given: all
/// the matrices read or write (strides are >= 0).
int64_t operandExtent(const GemmDesc &g, int64_t rows, int64_t cols, int64_t ld,
                      int64_t batchStride, int64_t GemmLoop::*loopStride) {
  if (g.matrices() == 0 || rows == 0 || cols == 0)
    return 0;
  int64_t last = (rows - 1) * ld + cols + (g.batch - 1) * batchStride;
  for (const GemmLoop &l : g.outer)
    last += (l.count - 1) * (l.*loopStride);
  return last;
}

/// The extents of A, B and C (elements).
std::array<int64_t, 3> extents(const GemmDesc &g) {
  if (g.m == 0 || g.n == 0)
    return {0, 0, 0};
  int64_t k = g.k;
  return {k ? operandExtent(g, g.transA ? k : g.m, g.transA ? g.m : k, g.lda, g.strideA,
                            &GemmLoop::strideA)
            : 0,
          k ? operandExtent(g, g.transB ? g.n : k, g.transB ? k : g.n, g.ldb, g.strideB,
                            &GemmLoop::strideB)
            : 0,
          operandExtent(g, g.m, g.n, g.ldc, g.strideC, &GemmLoop::strideC)};
}

/// Whether runtime/cpu/Bf16Gemm.h can run `g`: bf16 A and B, f32 or bf16 C.
bool bf16Operands(const GemmDesc &g) {
  return g.a == DType::BF16 && g.b == DType::BF16 && (g.c == DType::F32 || g.c == DType::BF16);
}
/// Whether `g` runs on `path` without widening (packed, or on oneDNN).
bool bf16Direct(const GemmDesc &g, Bf16GemmPath path) {
  return bf16Operands(g) && path != Bf16GemmPath::Emulate;
}
bool takesPacked(const GemmDesc &g, Bf16GemmPath path) {
  return bf16Direct(g, path) && path != Bf16GemmPath::OneDnn;
}

/// `g`'s matrices as runtime/cpu/Bf16Gemm.h sees one.
Bf16GemmShape bf16Shape(const GemmDesc &g) {
  Bf16GemmShape s;
  s.m = g.m, s.n = g.n, s.k = g.k;
  s.transA = g.transA, s.transB = g.transB;
  s.lda = g.lda, s.ldb = g.ldb, s.ldc = g.ldc;
  s.accumulate = g.epilogue == GemmEpilogue::Accumulate;
  s.bf16Result = g.c == DType::BF16;
  return s;
}

/// f32 elements of workspace one GEMM needs on `path`: its narrow operands
/// widened (none when it takes the packed path or oneDNN).
int64_t workspaceOf(const GemmDesc &g, Bf16GemmPath path = Bf16GemmPath::Emulate) {
  if (bf16Direct(g, path))
    return 0;
  std::array<int64_t, 3> e = extents(g);
  return (narrow(g.a) ? e[0] : 0) + (narrow(g.b) ? e[1] : 0) + (narrow(g.c) ? e[2] : 0);
}

/// Packed words one GEMM needs on `path`: A and B of every matrix.
int64_t packedWordsOf(const GemmDesc &g, Bf16GemmPath path) {
  if (!takesPacked(g, path) || g.m == 0 || g.n == 0)
    return 0;
  return g.matrices() * bf16GemmWorkspaceWords(bf16Shape(g));
}

/// Matrix i's operand offsets (elements): the outer loops (outermost first)
/// around the batch, flattened.
void matrixOffsets(const GemmDesc &g, int64_t i, int64_t &oa, int64_t &ob, int64_t &oc) {
  int64_t inner = i % g.batch, rest = i / g.batch;
  oa = inner * g.strideA, ob = inner * g.strideB, oc = inner * g.strideC;
  for (size_t d = g.outer.size(); d-- > 0;) {
    const GemmLoop &loop = g.outer[d];
    int64_t at = rest % loop.count;
    rest /= loop.count;
    oa += at * loop.strideA;
    ob += at * loop.strideB;
    oc += at * loop.strideC;
  }
}

void widen(DType t, const void *in, float *out, int64_t n) {
  if (t == DType::BF16)
    widenBF16(static_cast<const uint16_t *>(in), out, n);
  else
    widenF16(static_cast<const uint16_t *>(in), out, n);
}

} // namespace

StorageType CpuDevice::storageOf(DType t) const {
  if (t == DType::BF16)
    return StorageType::BF16;
  if (t == DType::F16)
    return StorageType::F16;
  return HostDevice::storageOf(t);
}

namespace {
/// The most f32 elements and packed words any of `program`'s GEMMs needs.
std::array<int64_t, 2> workspaceNeeds(const Program &program, Bf16GemmPath path) {
  std::array<int64_t, 2> most = {0, 0};
  for (const Step &s : program.steps)
    if (const auto *g = std::get_if<GemmDesc>(&s.payload)) {
      most[0] = std::max(most[0], workspaceOf(*g, path));
      most[1] = std::max(most[1], packedWordsOf(*g, path));
    }
  return most;
}
} // namespace

int64_t CpuDevice::gemmWorkspaceBytes(const Program &program, Bf16GemmPath path) {
  std::array<int64_t, 2> need = workspaceNeeds(program, path);
  return need[0] * int64_t(sizeof(float)) + need[1] * int64_t(sizeof(uint32_t));
}

int64_t CpuDevice::bf16GemmSteps(const Program &program) {
  int64_t count = 0;
  for (const Step &s : program.steps)
    if (const auto *g = std::get_if<GemmDesc>(&s.payload))
      count += bf16Operands(*g);
  return count;
}

int64_t CpuDevice::f16GemmSteps(const Program &program) {
  int64_t count = 0;
  for (const Step &s : program.steps)
    if (const auto *g = std::get_if<GemmDesc>(&s.payload))
      count += g->a == DType::F16 || g->b == DType::F16;
  return count;
}

Status CpuDevice::pickBf16Path() {
  if (bf16Path)
    return Status::success();
  Expected<Bf16GemmPath> path = selectBf16GemmPath();
  if (!path.ok())
    return path.takeStatus();
  bf16Path = *path;
  return Status::success();
}

Status CpuDevice::prepare(const Program &program) {
  if (bf16GemmSteps(program) > 0)
    EINRT_TRY(pickBf16Path());
  if (bf16Path == Bf16GemmPath::OneDnn) // create the primitives now, not in the first step
    for (const Step &s : program.steps)
      if (const auto *g = std::get_if<GemmDesc>(&s.payload); g && bf16Operands(*g)) {
        if (Expected<OneDnnChunkMatmuls> made = oneDnnChunkMatmuls(*g); !made.ok())
          return made.takeStatus();
      }
  bool matmuls = std::any_of(program.steps.begin(), program.steps.end(), [](const Step &s) {
    return std::holds_alternative<GemmDesc>(s.payload);
  });
  if (matmuls && !gemmChoiceFixed) {
    // The library of each f32 GEMM shape: measured now where this
    // machine's table lacks it (runtime/cpu/GemmTable.h). Each program the
    // device prepares may add shapes; a shape's library never changes.
    std::vector<GemmShape> shapes;
    const Bf16GemmPath path = bf16Path.value_or(Bf16GemmPath::Emulate);
    for (const Step &s : program.steps)
      if (const auto *g = std::get_if<GemmDesc>(&s.payload); g && !takesPacked(*g, path))
        shapes.push_back(shapeOf(*g));
    std::string measured;
    Expected<std::shared_ptr<const GemmChooser>> chooser =
        GemmChooser::forShapes(shapes, &measured);
    if (!chooser.ok())
      return chooser.takeStatus();
    gemmChoice = chooser.take();
    if (!measured.empty())
      gemmMeasured = measured;
  }
  std::array<int64_t, 2> need = workspaceNeeds(program, bf16Path.value_or(Bf16GemmPath::Emulate));
  if (need[0] <= int64_t(workspace.size()) && need[1] <= int64_t(packed.size()))
    return Status::success();
  int64_t bytes = std::max<int64_t>(need[0], int64_t(workspace.size())) * 4 +
                  std::max<int64_t>(need[1], int64_t(packed.size())) * 4;
  std::string what = "the cpu device's workspace for bf16/f16 GEMMs";
  if (std::string shortfall = memoryShortfall(bytes, what); !shortfall.empty())
    return Status(StatusCode::OutOfMemory, shortfall);
  if (need[0] > int64_t(workspace.size()))
    workspace.assign(size_t(need[0]), 0.0f);
  if (need[1] > int64_t(packed.size()))
    packed.assign(size_t(need[1]), 0u);
  return Status::success();
}

CpuDevice::CpuDevice(std::vector<KernelEntry> table, int threads)
    : HostDevice(Precision::F32), kernels(std::move(table)) {
  setBlasThreads(1); // the chunks are single-threaded BLAS calls
  setThreads(threads);
}

Status CpuDevice::check(const Program &program) const {
  for (size_t i = 0; i < program.steps.size(); ++i) {
    int64_t kernel = -1;
    if (const auto *launch = std::get_if<KernelLaunch>(&program.steps[i].payload))
      kernel = launch->kernel;
    else if (const auto *g = std::get_if<GemmDesc>(&program.steps[i].payload))
      kernel = g->post.kernel; // -1: no epilogue
    if (kernel < 0 && !std::holds_alternative<KernelLaunch>(program.steps[i].payload))
      continue;
    if (size_t(kernel) >= kernels.size() || !kernels[size_t(kernel)].fn)
      return Status::invalid("step " + std::to_string(i) + " (" + program.steps[i].note +
                             ") launches kernel " + std::to_string(kernel) +
                             (kernels.empty()
                                  ? std::string(", but the cpu device was given no kernels")
                                  : ", which is not in the cpu device's table of " +
                                        std::to_string(kernels.size()) + " kernels"));
  }
  return Status::success();
}

void CpuDevice::forEachChunk(int chunks, const std::function<void(int)> &fn) {
  if (pool) {
    pool->run(chunks, fn);
    return;
  }
  for (int c = 0; c < chunks; ++c)
    fn(c);
}

Status CpuDevice::packedBf16Gemm(const GemmDesc &g, const void *av, const void *bv, void *cv,
                                 const TileDone *done) {
  const int64_t total = g.matrices();
  if (total == 0 || g.m == 0 || g.n == 0)
    return Status::success();
  const Bf16GemmShape s = bf16Shape(g);
  const int64_t wordsA = bf16PackedAWords(s), words = bf16GemmWorkspaceWords(s);
  if (total * words > int64_t(packed.size()))
    return Status::internal("the GEMM needs " + std::to_string(total * words * 4) +
                            " bytes of packed bf16 workspace and the cpu device was prepared "
                            "with " +
                            std::to_string(packed.size() * 4) + " (Executor::create prepares it)");
  const Bf16Kernel kernel =
      *bf16Path == Bf16GemmPath::Avx512Bf16 ? Bf16Kernel::Avx512Bf16 : Bf16Kernel::Model;
  const auto *a = static_cast<const uint16_t *>(av), *b = static_cast<const uint16_t *>(bv);
  // Row blocks only: the kernel runs rows of a packed matrix.
  const MatmulChunks chunks = chunksOf(g);
  // Pack every matrix's A and B once (moving bits: any split gives the same
  // words), then run the chunks on the packed operands.
  const int packChunks = chunks.count() == 1 ? 1 : int(std::min<int64_t>(total, kMaxChunks));
  forEachChunk(packChunks, [&](int chunk) {
    for (int64_t i = total * chunk / packChunks; i < total * (chunk + 1) / packChunks; ++i) {
      int64_t oa, ob, oc;
      matrixOffsets(g, i, oa, ob, oc);
      uint32_t *pa = packed.data() + i * words;
      packBf16A(s, a + oa, pa);
      packBf16B(s, b + ob, pa + wordsA);
    }
  });
  forEachChunk(chunks.count(), [&](int chunk) {
    MatmulChunks::Chunk part = chunks.chunk(chunk);
    for (int64_t i = part.first; i < part.last; ++i) {
      int64_t oa, ob, oc;
      matrixOffsets(g, i, oa, ob, oc);
      const uint32_t *pa = packed.data() + i * words;
      void *c = s.bf16Result ? static_cast<void *>(static_cast<uint16_t *>(cv) + oc)
                             : static_cast<void *>(static_cast<float *>(cv) + oc);
      bf16GemmRows(kernel, s, pa, pa + wordsA, c, part.r0, part.r1);
      if (done)
        (*done)(i, part);
    }
  });
  return Status::success();
}

namespace {
/// A tile of rows x cols of one matrix of `g` as one oneDNN call: its shape.
MatmulShape oneDnnShape(const GemmDesc &g, int64_t rows, int64_t cols) {
  MatmulShape s;
  s.m = rows, s.n = cols, s.k = g.k;
  s.transA = g.transA, s.transB = g.transB;
  s.lda = g.lda, s.ldb = g.ldb, s.ldc = g.ldc;
  s.ab = MatmulType::BF16;
  s.c = g.c == DType::BF16 ? MatmulType::BF16 : MatmulType::F32;
  s.accumulate = g.epilogue == GemmEpilogue::Accumulate;
  return s;
}
} // namespace

Expected<CpuDevice::OneDnnChunkMatmuls> CpuDevice::oneDnnChunkMatmuls(const GemmDesc &g) {
  OneDnnChunkMatmuls out;
  if (g.matrices() == 0 || g.m == 0 || g.n == 0)
    return out;
  const MatmulChunks chunks = planMatmulChunks(g.matrices(), g.m, g.n, g.k);
  for (int c = 0; c < chunks.count(); ++c) {
    const MatmulChunks::Chunk part = chunks.chunk(c);
    const std::pair<int64_t, int64_t> tile{part.r1 - part.r0, part.c1 - part.c0};
    if (tile.first <= 0 || tile.second <= 0 || out.count(tile))
      continue;
    Expected<const OneDnnMatmul *> mm = OneDnnMatmul::get(oneDnnShape(g, tile.first, tile.second));
    if (!mm.ok())
      return mm.takeStatus();
    out[tile] = *mm;
  }
  return out;
}

Status CpuDevice::oneDnnBf16Gemm(const GemmDesc &g, const void *av, const void *bv, void *cv,
                                 const TileDone *done) {
  // One primitive per tile shape (a function of the step's shape), looked
  // up once here; the chunks call them on their own threads.
  Expected<OneDnnChunkMatmuls> made = oneDnnChunkMatmuls(g);
  if (!made.ok())
    return made.takeStatus();
  const OneDnnChunkMatmuls &matmuls = *made;
  if (matmuls.empty())
    return Status::success();
  const auto *a = static_cast<const uint16_t *>(av), *b = static_cast<const uint16_t *>(bv);
  const int64_t cBytes = g.c == DType::BF16 ? 2 : 4;
  const MatmulChunks chunks = planMatmulChunks(g.matrices(), g.m, g.n, g.k);
  std::mutex failed;
  Status failure;
  forEachChunk(chunks.count(), [&](int chunk) {
    MatmulChunks::Chunk part = chunks.chunk(chunk);
    const OneDnnMatmul &mm = *matmuls.at({part.r1 - part.r0, part.c1 - part.c0});
    for (int64_t i = part.first; i < part.last; ++i) {
      int64_t oa, ob, oc;
      matrixOffsets(g, i, oa, ob, oc);
      // Rows [r0, r1) of op(A), columns [c0, c1) of op(B) and that tile of
      // C: op(A)'s rows are A's columns when A is stored transposed,
      // op(B)'s columns B's rows.
      const uint16_t *ar = a + oa + (g.transA ? part.r0 : part.r0 * g.lda);
      const uint16_t *bc = b + ob + (g.transB ? part.c0 * g.ldb : part.c0);
      void *ct = static_cast<char *>(cv) + (oc + part.r0 * g.ldc + part.c0) * cBytes;
      if (Status ran = mm.run(ar, bc, ct); !ran.ok()) {
        std::lock_guard<std::mutex> lock(failed);
        failure = std::move(ran);
        return;
      }
      if (done)
        (*done)(i, part);
    }
  });
  return failure;
}

MatmulChunks CpuDevice::chunksOf(const GemmDesc &g) const {
  const bool rowsOnly = bf16Operands(g) && bf16Path && *bf16Path != Bf16GemmPath::Emulate &&
                        *bf16Path != Bf16GemmPath::OneDnn;
  return planMatmulChunks(g.matrices(), g.m, g.n, g.k, /*columns=*/!rowsOnly);
}

Status CpuDevice::pickGemmChooser() {
  if (gemmChoice)
    return Status::success();
  Expected<std::shared_ptr<const GemmChooser>> chooser = GemmChooser::fromEnvironment();
  if (!chooser.ok())
    return chooser.takeStatus();
  gemmChoice = chooser.take();
  return Status::success();
}

Status CpuDevice::gemm(const GemmDesc &g, const void *av, const void *bv, void *cv) {
  return gemmTilesDone(g, av, bv, cv, nullptr);
}

Status CpuDevice::gemmTilesDone(const GemmDesc &g, const void *av, const void *bv, void *cv,
                                const TileDone *done) {
  if (bf16Operands(g)) {
    EINRT_TRY(pickBf16Path());
    if (*bf16Path == Bf16GemmPath::OneDnn)
      return oneDnnBf16Gemm(g, av, bv, cv, done);
    if (*bf16Path != Bf16GemmPath::Emulate)
      return packedBf16Gemm(g, av, bv, cv, done);
  }
  if (narrow(g.a) || narrow(g.b) || narrow(g.c)) {
    // Widen the narrow operands into the workspace, run the f32 GEMM there,
    // round a narrow result once into C.
    std::array<int64_t, 3> e = extents(g);
    if (workspaceOf(g) > int64_t(workspace.size()))
      return Status::internal("the GEMM needs " + std::to_string(workspaceOf(g) * 4) +
                              " bytes of f32 workspace and the cpu device was prepared with " +
                              std::to_string(workspace.size() * 4) +
                              " (Executor::create prepares it)");
    float *next = workspace.data();
    auto stage = [&](DType t, const void *p, int64_t n) -> float * {
      if (!narrow(t))
        return static_cast<float *>(const_cast<void *>(p));
      float *w = next;
      next += n;
      widen(t, p, w, n);
      return w;
    };
    float *a = stage(g.a, av, e[0]), *b = stage(g.b, bv, e[1]), *c = stage(g.c, cv, e[2]);
    GemmDesc wide = g;
    wide.a = wide.b = wide.c = DType::F32;
    EINRT_TRY(gemmTilesDone(wide, a, b, c, nullptr));
    if (g.c == DType::BF16)
      narrowToBF16(c, static_cast<uint16_t *>(cv), e[2]);
    else if (g.c == DType::F16)
      narrowToF16(c, static_cast<uint16_t *>(cv), e[2]);
    return Status::success();
  }
  const float *a = static_cast<const float *>(av), *b = static_cast<const float *>(bv);
  float *c = static_cast<float *>(cv);
  // Every matrix of the step (matrixOffsets: the outer loops around the
  // batch, flattened).
  const int64_t total = g.matrices();
  if (total == 0 || g.m == 0 || g.n == 0)
    return Status::success();
  EINRT_TRY(pickGemmChooser());
  const GemmLibrary &lib = gemmChoice->forShape(shapeOf(g));
  const MatmulChunks chunks = planMatmulChunks(total, g.m, g.n, g.k);
  forEachChunk(chunks.count(), [&](int chunk) {
    MatmulChunks::Chunk part = chunks.chunk(chunk);
    for (int64_t i = part.first; i < part.last; ++i) {
      int64_t oa, ob, oc;
      matrixOffsets(g, i, oa, ob, oc);
      gemmTile(lib, g, a + oa, b + ob, c + oc, part);
      if (done)
        (*done)(i, part);
    }
  });
  return Status::success();
}

namespace {
/// Whether every block of rows of every matrix of C is whole iterations of
/// a kernel whose parallel loop has `extent` iterations over C's elements:
/// C dense (each matrix m x n, one after another) and n a multiple of the
/// elements per iteration.
bool rowsAreIterations(const GemmDesc &g, int64_t extent) {
  const int64_t elements = g.matrices() * g.m * g.n;
  if (extent <= 1 || elements <= 0 || elements % extent != 0)
    return false;
  const int64_t per = elements / extent;
  const bool dense =
      g.ldc == g.n && (g.batch == 1 || g.strideC == g.m * g.n); // outer loops: dense (validate)
  return dense && g.n % per == 0;
}
} // namespace

Status CpuDevice::gemmPost(const GemmDesc &g, const void *a, const void *b, void *c,
                           const std::vector<DeviceSpan> &post) {
  const int64_t index = g.post.kernel;
  if (index < 0 || size_t(index) >= kernels.size() || !kernels[size_t(index)].fn)
    return Status::internal("epilogue kernel " + std::to_string(index) +
                            " is not in the cpu device's table (" + std::to_string(kernels.size()) +
                            " kernels)");
  const KernelEntry &kernel = kernels[size_t(index)];
  const bool wide = !narrow(g.a) && !narrow(g.b) && !narrow(g.c);
  const bool direct = bf16Path && bf16Direct(g, *bf16Path);
  // The cut is the step's own (chunksOf); where its column tiles would
  // split an iteration of the kernel, the kernel runs after the product.
  const MatmulChunks chunks = chunksOf(g);
  const bool tilesAreIterations =
      rowsAreIterations(g, kernel.extent) &&
      (chunks.colBlocks == 1 ||
       chunks.colsPerBlock % (g.matrices() * g.m * g.n / kernel.extent) == 0);
  if (!(wide || direct) || !tilesAreIterations) {
    KernelLaunch k;
    k.kernel = index;
    EINRT_TRY(gemm(g, a, b, c));
    return launch(k, post);
  }
  // Element (r, col) of matrix i is iteration ((i·m + r)·n + col) / per
  // of the kernel: a tile's rows are one range when the tile is whole
  // rows, else one range per row. Computed in the chunk that made them.
  std::vector<void *> data(post.size());
  for (size_t i = 0; i < post.size(); ++i)
    data[i] = post[i].data;
  const int64_t per = g.matrices() * g.m * g.n / kernel.extent;
  TileDone done = [&](int64_t i, const MatmulChunks::Chunk &t) {
    int64_t range[2];
    std::vector<void *> args(data.size() + 2);
    for (size_t j = 0; j < data.size(); ++j)
      args[j] = &data[j];
    args[data.size()] = &range[0];
    args[data.size() + 1] = &range[1];
    const bool wholeRows = t.c0 == 0 && t.c1 == g.n;
    for (int64_t r = t.r0; r < t.r1; r = wholeRows ? t.r1 : r + 1) {
      const int64_t last = wholeRows ? t.r1 - 1 : r;
      range[0] = ((i * g.m + r) * g.n + t.c0) / per;
      range[1] = ((i * g.m + last) * g.n + t.c1) / per;
      kernel.fn(args.data());
    }
  };
  return gemmTilesDone(g, a, b, c, &done);
}

Status CpuDevice::launch(const KernelLaunch &launch, const std::vector<DeviceSpan> &buffers) {
  if (launch.kernel < 0 || size_t(launch.kernel) >= kernels.size() ||
      !kernels[size_t(launch.kernel)].fn)
    return Status::internal("kernel " + std::to_string(launch.kernel) +
                            " is not in the cpu device's table (" + std::to_string(kernels.size()) +
                            " kernels)");
  const KernelEntry &kernel = kernels[size_t(launch.kernel)];
  const size_t count = buffers.size();
  std::vector<void *> data(count), args(count + 2);
  int64_t elements = 0;
  for (size_t i = 0; i < count; ++i) {
    data[i] = buffers[i].data;
    args[i] = &data[i];
    elements = std::max(elements, buffers[i].count);
  }
  const int64_t extent = std::max<int64_t>(1, kernel.extent);
  const int chunks = kernelChunkCount(extent, elements);
  if (chunks == 1) {
    int64_t range[2] = {0, extent};
    args[count] = &range[0];
    args[count + 1] = &range[1];
    kernel.fn(args.data());
    return Status::success();
  }
  forEachChunk(chunks, [&](int c) {
    Range r = kernelChunk(extent, chunks, c);
    int64_t range[2] = {r.begin, r.end};
    std::vector<void *> own(args);
    own[count] = &range[0];
    own[count + 1] = &range[1];
    kernel.fn(own.data());
  });
  return Status::success();
}

void CpuDevice::setThreads(int threads) {
  if (threads <= 1)
    pool.reset();
  else if (!pool || pool->threads() != threads)
    pool = std::make_shared<ThreadPool>(threads);
}

void CpuDevice::setThreadPool(std::shared_ptr<ThreadPool> shared) {
  pool = shared && shared->threads() > 1 ? std::move(shared) : nullptr;
}

int CpuDevice::threads() const { return pool ? pool->threads() : 1; }

} // namespace einrt
