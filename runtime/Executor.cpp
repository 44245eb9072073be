//===- Executor.cpp - The reference executor ------------------------------===//
#include "runtime/Executor.h"
#include "runtime/Memory.h"

#include "runtime/FloatFormats.h"
#include "runtime/ReferenceSteps.h"

#include <algorithm>
#include <chrono>
#include <type_traits>

namespace einrt {

//===----------------------------------------------------------------------===//
// BufferData
//===----------------------------------------------------------------------===//

int64_t BufferData::size() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double BufferData::get(int64_t i) const {
  switch (dtype) {
  case DType::I32:
    return i32[i];
  case DType::I1:
    return i1[i];
  default:
    return wide ? f64[i] : double(f32[i]);
  }
}

void BufferData::set(int64_t i, double v) {
  switch (dtype) {
  case DType::I32:
    i32[i] = truncToI32(v);
    return;
  case DType::I1:
    i1[i] = v != 0 ? 1 : 0;
    return;
  case DType::BF16:
  case DType::F16:
    v = roundToDType(v, dtype);
    break;
  default:
    break;
  }
  if (wide)
    f64[i] = v;
  else
    f32[i] = float(v);
}

std::vector<double> BufferData::toDoubles() const {
  int64_t n = size();
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = get(i);
  return v;
}

//===----------------------------------------------------------------------===//
// Typed access
//===----------------------------------------------------------------------===//

namespace {

template <class T> T *ptr(BufferData &b) {
  if constexpr (std::is_same<T, float>::value)
    return b.f32.data();
  else if constexpr (std::is_same<T, double>::value)
    return b.f64.data();
  else if constexpr (std::is_same<T, int32_t>::value)
    return b.i32.data();
  else
    return b.i1.data();
}

} // namespace

//===----------------------------------------------------------------------===//
// Executor
//===----------------------------------------------------------------------===//

namespace {

/// Which buffers anything touches: steps, arguments, results, constants.
std::vector<char> usedBuffers(const Program &program) {
  std::vector<char> used(program.buffers.size(), 0);
  for (const Step &st : program.steps) {
    for (int32_t i : st.inputs)
      used[i] = 1;
    for (int32_t o : st.outputs())
      used[o] = 1;
  }
  for (int32_t a : program.arguments)
    used[a] = 1;
  for (int32_t r : program.results)
    used[r] = 1;
  for (size_t b = 0; b < program.buffers.size(); ++b)
    if (program.buffers[b].role != BufferRole::Temp)
      used[b] = 1;
  return used;
}

/// Bytes of the buffers that own their storage (used, outside the arenas).
int64_t ownedStorageBytes(const Program &program, const std::vector<char> &used,
                          const ArenaPlan &plan, bool wide) {
  int64_t total = 0;
  for (size_t b = 0; b < program.buffers.size(); ++b)
    if (used[b] && plan.offset[b] < 0)
      total += program.buffers[b].elementCount() * storageSize(program.buffers[b].dtype, wide);
  return total;
}

} // namespace

int64_t Executor::plannedBytes(const Program &program, Precision precision) {
  const bool wide = precision == Precision::F64;
  ArenaPlan plan = planArena(program, wide);
  return plan.totalBytes() + ownedStorageBytes(program, usedBuffers(program), plan, wide);
}

std::optional<Executor> Executor::create(const Program &program, Precision precision,
                                         std::string &error, bool useArena) {
  std::string problem = program.validate();
  if (!problem.empty()) {
    error = "invalid program '" + program.name + "': " + problem;
    return std::nullopt;
  }
  if (precision == Precision::F64)
    for (size_t i = 0; i < program.steps.size(); ++i) {
      StepKind k = program.steps[i].kind;
      if (stepKindInfo(k)->runner != StepRunner::Reference) {
        error = "program '" + program.name + "' step " + std::to_string(i) + " (" +
                stepKindName(k) +
                ") belongs to the CPU backend, which runs in float32 only; "
                "run float64 on the reference backend";
        return std::nullopt;
      }
    }
  // Matmul steps are cut into single-threaded BLAS calls
  // (runtime/ParallelChunks.h): a BLAS that threads a call itself would cut
  // it again, by its thread count.
  for (const Step &s : program.steps)
    if (s.kind == StepKind::Matmul) {
      setBlasThreads(1);
      break;
    }
  Executor ex;
  ex.prog = program;
  ex.prec = precision;
  const bool wide = precision == Precision::F64;
  if (useArena) {
    ex.plan = planArena(program, wide);
  } else {
    ex.plan.offset.assign(program.buffers.size(), -1);
  }
  const std::vector<char> used = usedBuffers(program);
  // Before allocating: a program too large for the machine is an error, not
  // an abort in std::vector (runtime/Memory.h).
  std::string shortfall =
      memoryShortfall(ex.plan.totalBytes() + ownedStorageBytes(program, used, ex.plan, wide),
                      "program '" + program.name + "' (arena and buffers)");
  if (!shortfall.empty()) {
    error = shortfall;
    return std::nullopt;
  }
  const int64_t floatSize = wide ? 8 : 4;
  if (wide)
    ex.arenaF64.assign(size_t(ex.plan.bytes[0] / floatSize), 0.0);
  else
    ex.arenaF32.assign(size_t(ex.plan.bytes[0] / floatSize), 0.0f);
  ex.arenaI32.assign(size_t(ex.plan.bytes[1] / 4), 0);
  ex.arenaI1.assign(size_t(ex.plan.bytes[2]), 0);
  ex.bufs.resize(program.buffers.size());
  for (size_t b = 0; b < program.buffers.size(); ++b) {
    const Buffer &src = program.buffers[b];
    BufferData &d = ex.bufs[b];
    d.dtype = src.dtype;
    d.shape = src.shape;
    d.wide = wide;
    if (ex.plan.offset[b] >= 0)
      continue; // a view of the arena: bindArena
    if (!used[b])
      continue; // a value the program never touches (e.g. a broadcast the
                // CPU backend folded into its users): no storage
    int64_t n = d.size();
    if (src.dtype == DType::I32)
      d.i32.assign(n, 0);
    else if (src.dtype == DType::I1)
      d.i1.assign(n, 0);
    else if (d.wide)
      d.f64.assign(n, 0.0);
    else
      d.f32.assign(n, 0.0f);
    if (src.role == BufferRole::Constant && !src.constant.empty())
      for (int64_t i = 0; i < n; ++i)
        d.set(i, src.constant.size() == 1 ? src.constant[0] : src.constant[i]);
  }
  ex.bindArena();
  return ex;
}

void Executor::bindArena() {
  for (size_t b = 0; b < bufs.size() && b < plan.offset.size(); ++b) {
    int64_t off = plan.offset[b];
    if (off < 0)
      continue;
    BufferData &d = bufs[b];
    size_t n = size_t(d.size());
    if (d.dtype == DType::I32)
      d.i32.view(arenaI32.data() + off / 4, n);
    else if (d.dtype == DType::I1)
      d.i1.view(arenaI1.data() + off, n);
    else if (d.wide)
      d.f64.view(arenaF64.data() + off / 8, n);
    else
      d.f32.view(arenaF32.data() + off / 4, n);
  }
}

Executor::Executor(const Executor &other)
    : prog(other.prog), plan(other.plan), arenaF32(other.arenaF32), arenaF64(other.arenaF64),
      arenaI32(other.arenaI32), arenaI1(other.arenaI1), prec(other.prec),
      roundEveryStep(other.roundEveryStep), bufs(other.bufs), kernels(other.kernels),
      pool(other.pool), profiling(other.profiling), profileSeconds(other.profileSeconds),
      profileRuns(other.profileRuns) {
  bindArena();
}

Executor &Executor::operator=(const Executor &other) {
  if (this != &other) {
    Executor copy(other);
    *this = std::move(copy);
  }
  return *this;
}

int64_t Executor::arenaBytes() const { return plan.totalBytes(); }

int64_t Executor::ownedBytes() const {
  int64_t total = 0;
  for (const BufferData &d : bufs)
    total += int64_t(d.f32.ownsData() ? d.f32.size() * sizeof(float) : 0) +
             int64_t(d.f64.ownsData() ? d.f64.size() * sizeof(double) : 0) +
             int64_t(d.i32.ownsData() ? d.i32.size() * sizeof(int32_t) : 0) +
             int64_t(d.i1.ownsData() ? d.i1.size() : 0);
  return total;
}

bool Executor::setBuffer(size_t bufferIndex, const double *data, size_t count, std::string &error) {
  if (bufferIndex >= bufs.size()) {
    error = "buffer index " + std::to_string(bufferIndex) + " out of range (" +
            std::to_string(bufs.size()) + " buffers)";
    return false;
  }
  BufferData &b = bufs[bufferIndex];
  if (int64_t(count) != b.size()) {
    error = "buffer " + std::to_string(bufferIndex) + " ('" + prog.buffers[bufferIndex].name +
            "') has " + std::to_string(b.size()) + " elements, got " + std::to_string(count) +
            " values";
    return false;
  }
  for (size_t i = 0; i < count; ++i)
    b.set(int64_t(i), data[i]);
  return true;
}

namespace {
template <class T>
bool setArgumentImpl(Executor &ex, size_t argIndex, const T *data, size_t count,
                     std::string &error) {
  if (argIndex >= ex.argumentCount()) {
    error = "argument index " + std::to_string(argIndex) + " out of range (" +
            std::to_string(ex.argumentCount()) + " arguments)";
    return false;
  }
  std::vector<double> v(data, data + count);
  return ex.setBuffer(size_t(ex.program().arguments[argIndex]), v.data(), count, error);
}
} // namespace

bool Executor::setArgument(size_t argIndex, const double *data, size_t count, std::string &error) {
  return setArgumentImpl(*this, argIndex, data, count, error);
}
bool Executor::setArgument(size_t argIndex, const float *data, size_t count, std::string &error) {
  return setArgumentImpl(*this, argIndex, data, count, error);
}
bool Executor::setArgument(size_t argIndex, const int32_t *data, size_t count, std::string &error) {
  return setArgumentImpl(*this, argIndex, data, count, error);
}

bool Executor::run(std::string &error) {
  if (!profiling) {
    for (size_t i = 0; i < prog.steps.size(); ++i)
      if (!runStep(i, error))
        return false;
    return true;
  }
  using Clock = std::chrono::steady_clock;
  profileSeconds.resize(prog.steps.size(), 0.0);
  Clock::time_point last = Clock::now();
  for (size_t i = 0; i < prog.steps.size(); ++i) {
    if (!runStep(i, error))
      return false;
    Clock::time_point now = Clock::now();
    profileSeconds[i] += std::chrono::duration<double>(now - last).count();
    last = now;
  }
  ++profileRuns;
  return true;
}

void Executor::setProfiling(bool on) {
  profiling = on;
  if (on)
    profileSeconds.resize(prog.steps.size(), 0.0);
}

void Executor::resetProfile() {
  profileSeconds.assign(prog.steps.size(), 0.0);
  profileRuns = 0;
}

bool Executor::runStep(size_t index, std::string &error) {
  const Step &s = prog.steps[index];
  std::string e;
  bool ok = prec == Precision::F64 ? runStepT<double>(s, e) : runStepT<float>(s, e);
  if (!ok) {
    error = "step " + std::to_string(index) + " (" + stepKindName(s.kind);
    if (!s.note.empty())
      error += ", " + s.note;
    error += "): " + e;
    return false;
  }
  BufferData &out = bufs[s.output];
  if (roundEveryStep && (out.dtype == DType::BF16 || out.dtype == DType::F16)) {
    int64_t n = out.size();
    for (int64_t i = 0; i < n; ++i)
      out.set(i, out.get(i));
  }
  return true;
}

namespace {
template <class F> HostSpan spanOf(BufferData &b) {
  HostSpan span;
  span.dtype = b.dtype;
  span.shape = &b.shape;
  span.count = b.size();
  span.data = b.dtype == DType::I32  ? static_cast<void *>(b.i32.data())
              : b.dtype == DType::I1 ? static_cast<void *>(b.i1.data())
                                     : static_cast<void *>(ptr<F>(b));
  return span;
}
} // namespace

template <class F> bool Executor::runStepT(const Step &s, std::string &error) {
  switch (stepKindInfo(s.kind)->runner) {
  case StepRunner::Reference: {
    std::vector<HostSpan> inputs;
    inputs.reserve(s.inputs.size());
    for (int32_t b : s.inputs)
      inputs.push_back(spanOf<F>(bufs[b]));
    return runReferenceStep<F>(s, inputs, spanOf<F>(bufs[s.output]), error);
  }
  case StepRunner::Gemm:
  case StepRunner::Launch:
    if constexpr (!std::is_same<F, float>::value) {
      error = "CPU-backend steps run in float32 only";
      return false;
    } else if (s.kind == StepKind::Matmul) {
      runMatmulStep(s.as<GemmDesc>(), ptr<float>(bufs[s.inputs[0]]), ptr<float>(bufs[s.inputs[1]]),
                    ptr<float>(bufs[s.output]));
      return true;
    } else {
      return runKernel(s, error);
    }
  }
  error = "unknown step kind";
  return false;
}

HostTensor Executor::getResult(size_t resultIndex) const {
  HostTensor t;
  if (resultIndex >= prog.results.size())
    return t;
  size_t b = size_t(prog.results[resultIndex]);
  t.name =
      resultIndex < prog.resultNames.size() ? prog.resultNames[resultIndex] : prog.buffers[b].name;
  t.dtype = bufs[b].dtype;
  t.shape = bufs[b].shape;
  t.values = bufs[b].toDoubles();
  return t;
}

const BufferData &Executor::resultBuffer(size_t resultIndex) const {
  return bufs[size_t(prog.results[resultIndex])];
}

int64_t Executor::findBuffer(const std::string &name) const {
  for (size_t b = 0; b < prog.buffers.size(); ++b)
    if (prog.buffers[b].name == name)
      return int64_t(b);
  return -1;
}

TensorData Executor::exportBuffer(size_t bufferIndex) const {
  const BufferData &b = bufs[bufferIndex];
  std::vector<double> v = b.toDoubles();
  return TensorData::fromDoubles(prog.buffers[bufferIndex].name, b.dtype, b.shape, v.data());
}

bool Executor::importBuffer(size_t bufferIndex, const TensorData &t, std::string &error) {
  if (bufferIndex >= bufs.size()) {
    error = "buffer index " + std::to_string(bufferIndex) + " out of range";
    return false;
  }
  BufferData &b = bufs[bufferIndex];
  std::string where =
      "tensor '" + t.name + "' into buffer '" + prog.buffers[bufferIndex].name + "': ";
  if (t.shape != b.shape) {
    error = where + "shapes differ";
    return false;
  }
  if (t.dtype != b.dtype && !(isFloat(t.dtype) && isFloat(b.dtype))) {
    error =
        where + "dtype '" + dtypeName(t.dtype) + "' cannot load into '" + dtypeName(b.dtype) + "'";
    return false;
  }
  if (int64_t(t.bytes.size()) != t.elementCount() * dtypeSize(t.dtype)) {
    error = where + "byte length does not match shape and dtype";
    return false;
  }
  std::vector<double> v = t.toDoubles();
  for (int64_t i = 0; i < b.size(); ++i)
    b.set(i, v[i]);
  return true;
}

} // namespace einrt
