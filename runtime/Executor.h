//===- Executor.h - The reference executor: runs a Program step by step ---===//
//
// Holds storage for every buffer of a validated Program and runs its steps in
// order with the reference kernels (runtime/ReferenceKernels.h). The float
// precision is chosen at construction: every float buffer (f32, bf16, f16,
// f64 in the Program) is stored and computed as `float` (Precision::F32) or
// `double` (Precision::F64). Values entering a bf16/f16 buffer from outside
// (arguments, constants, parameter init, loaded tensors) and every `cast` to
// bf16/f16 are rounded to that format (nearest even); with
// setRoundEveryStep(true), every step writing a bf16/f16 buffer rounds its
// result too. i32 buffers are int32_t, i1 buffers uint8_t (0/1).
//
// The CPU backend's steps run here too, in Precision::F32 only (create()
// refuses a Program with them at F64): Matmul through OpenBLAS's
// cblas_sgemm, one call per batch matrix (or row block of one) reading the
// strided operands in place; Kernel through the table given by
// setKernels() (runtime/ExecutorCpuSteps.cpp).
//
// Errors are return values (false / std::nullopt plus a message); a bad
// gather/scatter index is an error naming the step, never undefined
// behaviour.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_EXECUTOR_H
#define EINC_RUNTIME_EXECUTOR_H

#include "runtime/Arena.h"
#include "runtime/ParallelChunks.h"
#include "runtime/Program.h"
#include "runtime/Safetensors.h"
#include "runtime/ThreadPool.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace einrt {

enum class Precision { F32, F64 };

/// The elements of one buffer: either owned (a std::vector) or a view of a
/// slice of the executor's arena (runtime/Arena.h). Reads like a vector
/// (data, size, [], begin/end, empty); copying gives an owning copy of the
/// elements, so a copied BufferData never aliases the arena.
template <class T> class Storage {
public:
  Storage() = default;
  Storage(const Storage &o) : own(o.begin(), o.end()) { bindOwn(); }
  Storage(Storage &&o) noexcept { *this = std::move(o); }
  Storage &operator=(const Storage &o) {
    if (this != &o) {
      own.assign(o.begin(), o.end());
      bindOwn();
    }
    return *this;
  }
  Storage &operator=(Storage &&o) noexcept {
    if (this != &o) {
      bool owned = o.ownsData();
      own = std::move(o.own);
      ptr = o.ptr;
      count = o.count;
      if (owned)
        bindOwn();
      o.own.clear();
      o.ptr = nullptr;
      o.count = 0;
    }
    return *this;
  }

  /// Owns `n` copies of `v`.
  void assign(size_t n, const T &v) {
    own.assign(n, v);
    bindOwn();
  }
  /// Views `n` elements at `p` (owned elsewhere, e.g. an arena).
  void view(T *p, size_t n) {
    own.clear();
    own.shrink_to_fit();
    ptr = p;
    count = n;
  }
  bool ownsData() const { return ptr == own.data() && count == own.size(); }

  T *data() { return ptr; }
  const T *data() const { return ptr; }
  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  T &operator[](size_t i) { return ptr[i]; }
  const T &operator[](size_t i) const { return ptr[i]; }
  T *begin() { return ptr; }
  T *end() { return ptr + count; }
  const T *begin() const { return ptr; }
  const T *end() const { return ptr + count; }

  operator std::vector<T>() const { return std::vector<T>(begin(), end()); }
  friend bool operator==(const Storage &a, const Storage &b) {
    return a.count == b.count && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const Storage &a, const Storage &b) { return !(a == b); }
  friend bool operator==(const Storage &a, const std::vector<T> &b) {
    return a.count == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const std::vector<T> &a, const Storage &b) { return b == a; }

private:
  void bindOwn() {
    ptr = own.data();
    count = own.size();
  }
  std::vector<T> own;
  T *ptr = nullptr;
  size_t count = 0;
};

/// Storage of one buffer: exactly one of the members is in use, chosen by
/// the dtype and the executor's precision.
struct BufferData {
  DType dtype = DType::F32; // the Program's dtype
  std::vector<int64_t> shape;
  Storage<float> f32;   // float dtypes, Precision::F32
  Storage<double> f64;  // float dtypes, Precision::F64
  Storage<int32_t> i32; // DType::I32
  Storage<uint8_t> i1;  // DType::I1 (0 or 1)
  bool wide = false;    // float storage is f64 (Precision::F64)

  int64_t size() const; // element count
  /// Element i as a double / set element i (rounded to the dtype for
  /// bf16/f16; float→i32 truncates toward zero, saturating; i1 is != 0).
  double get(int64_t i) const;
  void set(int64_t i, double v);
  std::vector<double> toDoubles() const;
};

/// A result (or any buffer) copied out as doubles.
struct HostTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<double> values; // row-major
};

class Executor {
public:
  /// Validates `program` and allocates (zeroed) storage for every buffer;
  /// Constant buffers are filled. Param buffers start at zero: call
  /// initParams (runtime/Init.h) or set them. With `useArena`, the
  /// temporaries share the arenas planned by planArena (runtime/Arena.h):
  /// their contents are only meaningful from the step that writes them to
  /// the last step that reads them. Without it every buffer owns its
  /// storage.
  /// Storage is checked against availableMemory() (runtime/Memory.h)
  /// before it is allocated: a program too large is an error giving the
  /// bytes needed and available.
  static std::optional<Executor> create(const Program &program, Precision precision,
                                        std::string &error, bool useArena = true);
  /// The bytes create() allocates for `program` (arenas and owned buffers),
  /// without allocating them.
  static int64_t plannedBytes(const Program &program, Precision precision);

  /// Copies rebind the copy's temporaries to its own arenas; moves keep
  /// every view valid (the arenas' heap storage moves with them).
  Executor(const Executor &other);
  Executor &operator=(const Executor &other);
  Executor(Executor &&) = default;
  Executor &operator=(Executor &&) = default;

  /// Bytes of the arenas (all storage classes) and of the storage that
  /// buffers own (parameters, inputs, optimizer state, scalars, constants,
  /// results).
  int64_t arenaBytes() const;
  int64_t ownedBytes() const;
  const ArenaPlan &arenaPlan() const { return plan; }

  const Program &program() const { return prog; }
  Precision precision() const { return prec; }
  size_t argumentCount() const { return prog.arguments.size(); }
  size_t resultCount() const { return prog.results.size(); }

  /// The compiled kernels that Kernel steps index (the CPU backend's
  /// KernelCompiler::table()). A Kernel step whose index is outside the
  /// table, or whose entry is null, is an error at run time.
  void setKernels(std::vector<KernelEntry> table) { kernels = std::move(table); }
  const std::vector<KernelEntry> &kernelTable() const { return kernels; }

  /// Threads for Kernel and Matmul steps (default 1). Each such step runs
  /// as chunks fixed by its shape alone (runtime/ParallelChunks.h): ranges
  /// of a kernel's parallel loop; whole matrices or row blocks of C, each a
  /// single-threaded cblas_sgemm (create() sets BLAS to one thread). Every
  /// thread count makes the same calls, so results are bit-identical at
  /// every thread count (docs/determinism.md). Copies of an executor share
  /// its threads (run one at a time).
  void setThreads(int threads);
  /// Runs on `pool` (shared with other executors: one set of threads for
  /// all the functions a trainer runs, one executor at a time); null: one
  /// thread.
  void setThreadPool(std::shared_ptr<ThreadPool> pool);
  int threads() const;
  static constexpr int64_t kParallelElements = einrt::kParallelElements;
  static constexpr double kParallelMatmulFlops = einrt::kParallelMatmulFlops;

  /// Step profiling: while on, run() adds each step's wall time to
  /// stepSeconds()[step index] and counts the runs (default off; off costs
  /// nothing). resetProfile() zeroes both.
  void setProfiling(bool on);
  const std::vector<double> &stepSeconds() const { return profileSeconds; }
  int64_t profiledRuns() const { return profileRuns; }
  void resetProfile();

  /// Round every step's bf16/f16 output to its format (default off).
  void setRoundEveryStep(bool on) { roundEveryStep = on; }

  /// Copies `count` values into argument `argIndex`; count must equal its
  /// element count. Conversions as in BufferData::set.
  bool setArgument(size_t argIndex, const double *data, size_t count, std::string &error);
  bool setArgument(size_t argIndex, const float *data, size_t count, std::string &error);
  bool setArgument(size_t argIndex, const int32_t *data, size_t count, std::string &error);
  /// The same, by buffer index (any buffer).
  bool setBuffer(size_t bufferIndex, const double *data, size_t count, std::string &error);

  /// Runs every step in order. On failure the message names the step index,
  /// kind and note.
  bool run(std::string &error);

  /// Result `resultIndex` copied out; its name is the result name.
  HostTensor getResult(size_t resultIndex) const;
  const BufferData &resultBuffer(size_t resultIndex) const;

  /// Direct access by buffer index.
  size_t bufferCount() const { return bufs.size(); }
  BufferData &buffer(size_t bufferIndex) { return bufs[bufferIndex]; }
  const BufferData &buffer(size_t bufferIndex) const { return bufs[bufferIndex]; }
  /// The index of the buffer named `name`, or -1.
  int64_t findBuffer(const std::string &name) const;

  /// A buffer encoded in its Program dtype (for checkpoints), named after
  /// the buffer.
  TensorData exportBuffer(size_t bufferIndex) const;
  /// Loads `t` into a buffer: shapes must match; float dtypes convert to
  /// one another (rounding), i32 and bool must match exactly.
  bool importBuffer(size_t bufferIndex, const TensorData &t, std::string &error);

private:
  Executor() = default;
  bool runStep(size_t index, std::string &error);
  template <class T> bool runStepT(const Step &s, std::string &error);
  /// A Matmul step: every matrix (outer loops × batch), as the chunks of
  /// planMatmulChunks (whole matrices or row blocks).
  void runMatmulStep(const GemmDesc &g, const float *a, const float *b, float *c);
  /// Rows [r0, r1) of C = op(A)·op(B) (or C += ..., as the epilogue says)
  /// for one matrix of `g`.
  static void runMatmul(const GemmDesc &g, const float *a, const float *b, float *c, int64_t r0,
                        int64_t r1);
  bool runKernel(const Step &s, std::string &error);
  /// fn(0) ... fn(chunks - 1): on the pool's threads, or in order without.
  void forEachChunk(int chunks, const std::function<void(int)> &fn);
  /// Points every arena-planned buffer at its slice of the arenas.
  void bindArena();

  Program prog;
  ArenaPlan plan;                // offsets -1 everywhere without the arena
  std::vector<float> arenaF32;   // the float arena, Precision::F32
  std::vector<double> arenaF64;  // the float arena, Precision::F64
  std::vector<int32_t> arenaI32; // the int32 arena
  std::vector<uint8_t> arenaI1;  // the byte arena
  Precision prec = Precision::F32;
  bool roundEveryStep = false;
  std::vector<BufferData> bufs;
  std::vector<KernelEntry> kernels; // Kernel steps call kernels[launch.kernel]
  std::shared_ptr<ThreadPool> pool; // null: one thread
  bool profiling = false;
  std::vector<double> profileSeconds; // per step, summed over runs
  int64_t profileRuns = 0;
};

} // namespace einrt

#endif // EINC_RUNTIME_EXECUTOR_H
