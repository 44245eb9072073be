//===- Executor.cpp - Runs a Program on a Device --------------------------===//
#include "runtime/core/Executor.h"

#include "runtime/core/FloatFormats.h"

#include <atomic>
#include <chrono>
#include <cstring>

namespace einrt {

namespace {

/// `values` as a device stores them (already rounded to the dtype).
std::vector<uint8_t> encode(StorageType st, const double *values, size_t n) {
  std::vector<uint8_t> bytes(n * size_t(storageBytes(st)));
  auto put = [&](auto tag) {
    using T = decltype(tag);
    T *out = reinterpret_cast<T *>(bytes.data());
    for (size_t i = 0; i < n; ++i)
      out[i] = T(values[i]);
  };
  switch (st) {
  case StorageType::F32:
    put(float());
    break;
  case StorageType::F64:
    put(double());
    break;
  case StorageType::I32:
    put(int32_t());
    break;
  case StorageType::U8:
    put(uint8_t());
    break;
  case StorageType::BF16:
  case StorageType::F16: {
    uint16_t *out = reinterpret_cast<uint16_t *>(bytes.data());
    for (size_t i = 0; i < n; ++i)
      out[i] = st == StorageType::BF16 ? bf16Bits(values[i]) : f16Bits(values[i]);
    break;
  }
  }
  return bytes;
}

std::vector<double> decode(StorageType st, const uint8_t *bytes, size_t n) {
  std::vector<double> values(n);
  auto get = [&](auto tag) {
    using T = decltype(tag);
    const T *in = reinterpret_cast<const T *>(bytes);
    for (size_t i = 0; i < n; ++i)
      values[i] = double(in[i]);
  };
  switch (st) {
  case StorageType::F32:
    get(float());
    break;
  case StorageType::F64:
    get(double());
    break;
  case StorageType::I32:
    get(int32_t());
    break;
  case StorageType::U8:
    get(uint8_t());
    break;
  case StorageType::BF16:
  case StorageType::F16: {
    const uint16_t *in = reinterpret_cast<const uint16_t *>(bytes);
    for (size_t i = 0; i < n; ++i)
      values[i] = st == StorageType::BF16 ? bf16FromBits(in[i]) : f16FromBits(in[i]);
    break;
  }
  }
  return values;
}

bool lowPrecision(DType t) { return t == DType::BF16 || t == DType::F16; }

/// A key no other executor of this process has (Device::beginRun).
uint64_t newRunKey() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

/// What a buffer of dtype `t` holds when `v` is written into it.
double toDType(double v, DType t) {
  switch (t) {
  case DType::I32:
    return truncToI32(v);
  case DType::I1:
    return v != 0 ? 1 : 0;
  case DType::BF16:
  case DType::F16:
    return roundToDType(v, t);
  default: // f32 / f64 values are stored as the device stores floats
    return v;
  }
}

} // namespace

std::optional<Executor> Executor::create(const Program &program, std::shared_ptr<Device> device,
                                         std::string &error, bool useArena) {
  std::string problem = program.validate();
  if (!problem.empty()) {
    error = "invalid program '" + program.name + "': " + problem;
    return std::nullopt;
  }
  for (size_t i = 0; i < program.steps.size(); ++i) {
    StepKind k = program.steps[i].kind;
    if (!device->runs(stepKindInfo(k)->runner)) {
      error = "program '" + program.name + "' step " + std::to_string(i) + " (" + stepKindName(k) +
              ") does not run on the " + device->name() + " device";
      if (k == StepKind::Matmul || k == StepKind::Kernel)
        error += " (it belongs to the cpu backend, which runs f32, bf16 and f16; run float64 on "
                 "the reference backend)";
      return std::nullopt;
    }
  }
  if (std::string why = device->check(program); !why.empty()) {
    error = "program '" + program.name + "': " + why;
    return std::nullopt;
  }
  if (!device->prepare(program, error)) {
    error = "program '" + program.name + "': " + error;
    return std::nullopt;
  }
  Executor ex;
  ex.prog = program;
  ex.dev = std::move(device);
  ex.runKey = newRunKey();
  ex.plan = planMemory(program, StorageSizes::of(*ex.dev), useArena);
  if (!ex.allocate(error))
    return std::nullopt;
  std::vector<const void *> addresses;
  for (size_t b = 0; b < program.buffers.size(); ++b)
    addresses.push_back(ex.deviceData(b));
  if (!ex.dev->bind(program, addresses, error)) {
    error = "program '" + program.name + "': " + error;
    return std::nullopt;
  }
  for (size_t b = 0; b < program.buffers.size(); ++b) {
    const Buffer &src = program.buffers[b];
    if (src.role != BufferRole::Constant || src.constant.empty() || !ex.deviceData(b))
      continue;
    std::vector<double> values(size_t(src.elementCount()), src.constant[0]);
    if (src.constant.size() > 1)
      values = src.constant;
    if (!ex.write(b, values.data(), values.size(), error))
      return std::nullopt;
  }
  return ex;
}

std::optional<Executor> Executor::create(const Program &program, Precision precision,
                                         std::string &error, bool useArena) {
  return create(program, std::make_shared<HostDevice>(precision), error, useArena);
}

int64_t Executor::plannedBytes(const Program &program, const Device &device) {
  return planMemory(program, StorageSizes::of(device)).totalBytes();
}

bool Executor::allocate(std::string &error) {
  // Both blocks checked together before either is allocated.
  std::string what = "program '" + prog.name + "' (arena and buffers)";
  if (!dev->allocate(plan.totalBytes(), arena, what, error))
    return false;
  // The arena first, the resident buffers after it: one allocation.
  resident = {static_cast<uint8_t *>(arena.data) + plan.arenaBytes, plan.residentBytes};
  arena.bytes = plan.arenaBytes;
  return true;
}

void Executor::releaseMemory() {
  if (dev && runKey)
    dev->forgetRun(runKey); // a recorded run reads this memory
  runKey = 0;
  if (dev && arena.data) {
    DeviceMemory whole{arena.data, plan.totalBytes()};
    dev->release(whole);
  }
  arena = resident = {};
}

Executor::~Executor() { releaseMemory(); }

Executor::Executor(const Executor &other)
    : prog(other.prog), dev(other.dev), plan(other.plan), roundLow(other.roundLow),
      profiling(other.profiling), profileSeconds(other.profileSeconds),
      profileRuns(other.profileRuns), runKey(newRunKey()) {
  std::string error;
  if (!dev || !other.arena.data)
    return;
  // A copy that cannot get memory has none (every later access fails with
  // a message); copies are made of small programs by tests and tools.
  if (!allocate(error) || !dev->copy(arena.data, other.arena.data, plan.totalBytes(), error))
    releaseMemory();
}

Executor &Executor::operator=(const Executor &other) {
  if (this != &other) {
    Executor copy(other);
    *this = std::move(copy);
  }
  return *this;
}

Executor::Executor(Executor &&other) noexcept { *this = std::move(other); }

Executor &Executor::operator=(Executor &&other) noexcept {
  if (this != &other) {
    releaseMemory();
    prog = std::move(other.prog);
    dev = std::move(other.dev);
    plan = std::move(other.plan);
    arena = other.arena;
    resident = other.resident;
    roundLow = other.roundLow;
    profiling = other.profiling;
    profileSeconds = std::move(other.profileSeconds);
    profileRuns = other.profileRuns;
    runKey = other.runKey;
    other.arena = other.resident = {};
    other.runKey = 0;
  }
  return *this;
}

void *Executor::deviceData(size_t b) const {
  if (b >= prog.buffers.size())
    return nullptr;
  if (plan.arenaOffset[b] >= 0 && arena.data)
    return static_cast<uint8_t *>(arena.data) + plan.arenaOffset[b];
  if (plan.residentOffset[b] >= 0 && resident.data)
    return static_cast<uint8_t *>(resident.data) + plan.residentOffset[b];
  // A zero-byte plan (every buffer empty) has no allocation: any non-null
  // address serves, nothing is read or written through it.
  if ((plan.arenaOffset[b] >= 0 || plan.residentOffset[b] >= 0) && plan.totalBytes() == 0)
    return const_cast<MemoryPlan *>(&plan);
  return nullptr;
}

DeviceSpan Executor::span(int32_t b) const {
  DeviceSpan s;
  const Buffer &buf = prog.buffers[size_t(b)];
  // An unrounded bf16/f16 buffer is a plain float one to the kernels (no
  // rounding where a cast stores into it).
  s.dtype = !roundLow && lowPrecision(buf.dtype) ? DType::F64 : buf.dtype;
  s.storage = dev->storageOf(buf.dtype);
  s.shape = &buf.shape;
  s.data = deviceData(size_t(b));
  s.count = buf.elementCount();
  return s;
}

bool Executor::checkBuffer(size_t b, std::string &error) const {
  if (b >= prog.buffers.size()) {
    error = "buffer index " + std::to_string(b) + " out of range (" +
            std::to_string(prog.buffers.size()) + " buffers)";
    return false;
  }
  if (!deviceData(b)) {
    error = "buffer " + std::to_string(b) + " ('" + prog.buffers[b].name + "') has no storage" +
            (arena.data || plan.totalBytes() == 0 ? " (no step touches it)"
                                                  : " (the executor has no memory)");
    return false;
  }
  return true;
}

bool Executor::run(std::string &error) { return run(error, {}); }

bool Executor::run(std::string &error, const std::function<void(size_t)> &afterStep) {
  // A host device's steps are done when they return; elsewhere only the
  // run's synchronize says so.
  const bool stepwise = afterStep && dynamic_cast<const HostDevice *>(dev.get());
  auto observeAll = [&] {
    if (afterStep && !stepwise)
      for (size_t i = 0; i < prog.steps.size(); ++i)
        afterStep(i);
  };
  auto runStepObserved = [&](size_t i, std::string &e) {
    if (!runStep(i, e))
      return false;
    if (stepwise)
      afterStep(i);
    return true;
  };
  if (!arena.data && plan.totalBytes() > 0) {
    error = "program '" + prog.name + "' has no memory to run in";
    return false;
  }
  if (!profiling) {
    Device::RunStart start = dev->beginRun(runKey, error);
    if (start == Device::RunStart::Failed)
      return false;
    if (start == Device::RunStart::Steps) {
      bool stepsOk = true;
      std::string stepError;
      for (size_t i = 0; i < prog.steps.size() && stepsOk; ++i)
        stepsOk = runStepObserved(i, stepError);
      std::string endError;
      switch (dev->endRun(runKey, stepsOk, endError)) {
      case Device::RunEnd::Done:
        break;
      case Device::RunEnd::Failed:
        error = stepsOk ? endError : stepError; // a failed step's error first
        return false;
      case Device::RunEnd::IssueAgain: // nothing ran: the steps, unrecorded
        for (size_t i = 0; i < prog.steps.size(); ++i)
          if (!runStepObserved(i, error))
            return false;
        stepsOk = true;
        break;
      }
      if (!stepsOk) {
        error = stepError;
        return false;
      }
    }
    if (!dev->synchronize(error))
      return false;
    observeAll();
    return true;
  }
  using Clock = std::chrono::steady_clock;
  profileSeconds.resize(prog.steps.size(), 0.0);
  if (!dev->synchronize(error))
    return false;
  Clock::time_point last = Clock::now();
  for (size_t i = 0; i < prog.steps.size(); ++i) {
    if (!runStep(i, error) || !dev->synchronize(error))
      return false;
    Clock::time_point now = Clock::now();
    profileSeconds[i] += std::chrono::duration<double>(now - last).count();
    if (afterStep) { // not the step's time
      afterStep(i);
      now = Clock::now();
    }
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
  bool ok = false;
  switch (stepKindInfo(s.kind)->runner) {
  case StepRunner::Reference: {
    std::vector<DeviceSpan> inputs;
    inputs.reserve(s.inputs.size());
    for (int32_t b : s.inputs)
      inputs.push_back(span(b));
    ok = dev->reference(s, inputs, span(s.output), e);
    break;
  }
  case StepRunner::Gemm: {
    const GemmDesc &g = s.as<GemmDesc>();
    if (!g.post.present()) {
      ok = dev->gemm(g, deviceData(size_t(s.inputs[0])), deviceData(size_t(s.inputs[1])),
                     deviceData(size_t(s.output)), e);
      break;
    }
    std::vector<DeviceSpan> post;
    for (int32_t b : g.post.operands)
      post.push_back(span(b));
    for (int32_t b : g.post.outputs)
      post.push_back(span(b));
    ok = dev->gemmPost(g, deviceData(size_t(s.inputs[0])), deviceData(size_t(s.inputs[1])),
                       deviceData(size_t(s.output)), post, e);
    break;
  }
  case StepRunner::Launch: {
    std::vector<DeviceSpan> buffers;
    for (int32_t b : s.inputs)
      buffers.push_back(span(b));
    for (int32_t b : s.outputs())
      buffers.push_back(span(b));
    ok = dev->launch(s.as<KernelLaunch>(), buffers, e);
    break;
  }
  }
  if (!ok) {
    error = "step " + std::to_string(index) + " (" + stepKindName(s.kind);
    if (!s.note.empty())
      error += ", " + s.note;
    error += "): " + e;
  }
  return ok;
}

bool Executor::read(size_t b, std::vector<double> &values, std::string &error) const {
  if (!checkBuffer(b, error))
    return false;
  const size_t n = size_t(prog.buffers[b].elementCount());
  StorageType st = dev->storageOf(prog.buffers[b].dtype);
  std::vector<uint8_t> bytes(n * size_t(storageBytes(st)));
  if (!dev->download(bytes.data(), deviceData(b), int64_t(bytes.size()), error))
    return false;
  values = decode(st, bytes.data(), n);
  return true;
}

bool Executor::write(size_t b, const double *values, size_t count, std::string &error) {
  if (!checkBuffer(b, error))
    return false;
  const Buffer &buf = prog.buffers[b];
  if (int64_t(count) != buf.elementCount()) {
    error = "buffer " + std::to_string(b) + " ('" + buf.name + "') has " +
            std::to_string(buf.elementCount()) + " elements, got " + std::to_string(count) +
            " values";
    return false;
  }
  std::vector<double> rounded(values, values + count);
  const bool keep = !roundLow && lowPrecision(buf.dtype);
  for (double &v : rounded)
    v = keep ? v : toDType(v, buf.dtype);
  std::vector<uint8_t> bytes = encode(dev->storageOf(buf.dtype), rounded.data(), count);
  return dev->upload(deviceData(b), bytes.data(), int64_t(bytes.size()), error);
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
  return ex.write(size_t(ex.program().arguments[argIndex]), v.data(), count, error);
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

bool Executor::readScalar(size_t resultIndex, double &value, std::string &error) const {
  if (resultIndex >= prog.results.size()) {
    error = "result index " + std::to_string(resultIndex) + " out of range (" +
            std::to_string(prog.results.size()) + " results)";
    return false;
  }
  std::vector<double> v;
  if (!read(size_t(prog.results[resultIndex]), v, error))
    return false;
  if (v.empty()) {
    error = "result " + std::to_string(resultIndex) + " has no elements";
    return false;
  }
  value = v[0];
  return true;
}

bool Executor::copyFrom(size_t b, const Executor &source, size_t sourceBuffer, std::string &error) {
  if (!checkBuffer(b, error) || !source.checkBuffer(sourceBuffer, error))
    return false;
  const Buffer &to = prog.buffers[b], &from = source.prog.buffers[sourceBuffer];
  if (to.elementCount() != from.elementCount() || to.dtype != from.dtype) {
    error = "cannot copy '" + from.name + "' (" + std::to_string(from.elementCount()) + " '" +
            dtypeName(from.dtype) + "') into '" + to.name + "' (" +
            std::to_string(to.elementCount()) + " '" + dtypeName(to.dtype) + "')";
    return false;
  }
  if (dev == source.dev)
    return dev->copy(deviceData(b), source.deviceData(sourceBuffer),
                     to.elementCount() * storageBytes(dev->storageOf(to.dtype)), error);
  std::vector<double> v;
  return source.read(sourceBuffer, v, error) && write(b, v.data(), v.size(), error);
}

bool Executor::zeroBuffer(size_t b, std::string &error) {
  if (!checkBuffer(b, error))
    return false;
  const Buffer &buf = prog.buffers[b];
  return dev->zero(deviceData(b), buf.elementCount() * storageBytes(dev->storageOf(buf.dtype)),
                   error);
}

HostTensor Executor::getResult(size_t resultIndex) const {
  HostTensor t;
  if (resultIndex >= prog.results.size())
    return t;
  size_t b = size_t(prog.results[resultIndex]);
  t.name =
      resultIndex < prog.resultNames.size() ? prog.resultNames[resultIndex] : prog.buffers[b].name;
  t.dtype = prog.buffers[b].dtype;
  t.shape = prog.buffers[b].shape;
  std::string error;
  if (!read(b, t.values, error))
    t.values.clear();
  return t;
}

int64_t Executor::findBuffer(const std::string &name) const {
  for (size_t b = 0; b < prog.buffers.size(); ++b)
    if (prog.buffers[b].name == name)
      return int64_t(b);
  return -1;
}

bool Executor::exportBuffer(size_t b, TensorData &out, std::string &error) const {
  std::vector<double> v;
  if (!read(b, v, error))
    return false;
  const Buffer &buf = prog.buffers[b];
  out = TensorData::fromDoubles(buf.name, buf.dtype, buf.shape, v.data());
  return true;
}

bool Executor::importBuffer(size_t b, const TensorData &t, std::string &error) {
  if (b >= prog.buffers.size()) {
    error = "buffer index " + std::to_string(b) + " out of range";
    return false;
  }
  const Buffer &buf = prog.buffers[b];
  std::string where = "tensor '" + t.name + "' into buffer '" + buf.name + "': ";
  if (t.shape != buf.shape) {
    error = where + "shapes differ";
    return false;
  }
  if (t.dtype != buf.dtype && !(isFloat(t.dtype) && isFloat(buf.dtype))) {
    error = where + "dtype '" + dtypeName(t.dtype) + "' cannot load into '" + dtypeName(buf.dtype) +
            "'";
    return false;
  }
  if (int64_t(t.bytes.size()) != t.elementCount() * dtypeSize(t.dtype)) {
    error = where + "byte length does not match shape and dtype";
    return false;
  }
  std::vector<double> v = t.toDoubles();
  return write(b, v.data(), v.size(), error);
}

} // namespace einrt
