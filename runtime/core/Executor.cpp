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

Expected<Executor> Executor::create(const Program &program, std::shared_ptr<Device> device,
                                    bool useArena) {
  EINRT_TRY(program.validate().withContext("invalid program '" + program.name + "': "));
  for (size_t i = 0; i < program.steps.size(); ++i) {
    StepKind k = program.steps[i].kind;
    if (!device->runs(stepKindInfo(k)->runner)) {
      std::string why = "program '" + program.name + "' step " + std::to_string(i) + " (" +
                        stepKindName(k) + ") does not run on the " + device->name() + " device";
      if (k == StepKind::Matmul || k == StepKind::Kernel)
        why += " (it belongs to the cpu backend, which runs f32, bf16 and f16; run float64 on "
               "the reference backend)";
      return Status::invalid(why);
    }
  }
  const std::string context = "program '" + program.name + "': ";
  EINRT_TRY(device->check(program).withContext(context));
  EINRT_TRY(device->prepare(program).withContext(context));
  Executor ex;
  ex.prog = program;
  ex.dev = std::move(device);
  ex.runKey = newRunKey();
  ex.plan = planMemory(program, StorageSizes::of(*ex.dev), useArena);
  EINRT_TRY(ex.allocate());
  std::vector<const void *> addresses;
  for (size_t b = 0; b < program.buffers.size(); ++b)
    addresses.push_back(ex.deviceData(b));
  EINRT_TRY(ex.dev->bind(program, addresses).withContext(context));
  for (size_t b = 0; b < program.buffers.size(); ++b) {
    const Buffer &src = program.buffers[b];
    if (src.role != BufferRole::Constant || src.constant.empty() || !ex.deviceData(b))
      continue;
    std::vector<double> values(size_t(src.elementCount()), src.constant[0]);
    if (src.constant.size() > 1)
      values = src.constant;
    EINRT_TRY(ex.write(b, values.data(), values.size()));
  }
  return ex;
}

Expected<Executor> Executor::create(const Program &program, Precision precision, bool useArena) {
  return create(program, std::make_shared<HostDevice>(precision), useArena);
}

int64_t Executor::plannedBytes(const Program &program, const Device &device) {
  return planMemory(program, StorageSizes::of(device)).totalBytes();
}

Status Executor::allocate() {
  // Both blocks checked together before either is allocated.
  std::string what = "program '" + prog.name + "' (arena and buffers)";
  Expected<DeviceMemory> whole = dev->allocate(plan.totalBytes(), what);
  if (!whole.ok())
    return whole.takeStatus();
  // The arena first, the resident buffers after it: one allocation.
  arena = *whole;
  resident = {static_cast<uint8_t *>(arena.data) + plan.arenaBytes, plan.residentBytes};
  arena.bytes = plan.arenaBytes;
  return Status::success();
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
  if (!dev || !other.arena.data)
    return;
  // A copy that cannot get memory has none (every later access fails with
  // a message); copies are made of small programs by tests and tools.
  if (!allocate().ok() || !dev->copy(arena.data, other.arena.data, plan.totalBytes()).ok())
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

Status Executor::checkBuffer(size_t b) const {
  if (b >= prog.buffers.size())
    return Status::invalid("buffer index " + std::to_string(b) + " out of range (" +
                           std::to_string(prog.buffers.size()) + " buffers)");
  if (!deviceData(b))
    return Status::invalid(
        "buffer " + std::to_string(b) + " ('" + prog.buffers[b].name + "') has no storage" +
        (arena.data || plan.totalBytes() == 0 ? " (no step touches it)"
                                              : " (the executor has no memory)"));
  return Status::success();
}

Status Executor::run() { return run({}); }

Status Executor::run(const std::function<void(size_t)> &afterStep) {
  if (!arena.data && plan.totalBytes() > 0)
    return Status(StatusCode::OutOfMemory, "program '" + prog.name + "' has no memory to run in");
  if (!profiling)
    return runSteps(afterStep);
  using Clock = std::chrono::steady_clock;
  profileSeconds.resize(prog.steps.size(), 0.0);
  EINRT_TRY(dev->synchronize());
  Clock::time_point last = Clock::now();
  for (size_t i = 0; i < prog.steps.size(); ++i) {
    EINRT_TRY(runStep(i));
    EINRT_TRY(dev->synchronize());
    Clock::time_point now = Clock::now();
    profileSeconds[i] += std::chrono::duration<double>(now - last).count();
    if (afterStep) { // not the step's time
      afterStep(i);
      now = Clock::now();
    }
    last = now;
  }
  ++profileRuns;
  return Status::success();
}

Status Executor::runSteps(const std::function<void(size_t)> &afterStep) {
  // A host device's steps are done when they return; elsewhere only the
  // run's synchronize says so.
  const bool stepwise = afterStep && dynamic_cast<const HostDevice *>(dev.get());
  auto runStepObserved = [&](size_t i) {
    Status st = runStep(i);
    if (st.ok() && stepwise)
      afterStep(i);
    return st;
  };
  Expected<Device::RunStart> start = dev->beginRun(runKey);
  if (!start.ok())
    return start.takeStatus();
  if (*start == Device::RunStart::Steps) {
    Status steps;
    for (size_t i = 0; i < prog.steps.size() && steps.ok(); ++i)
      steps = runStepObserved(i);
    Expected<Device::RunEnd> end = dev->endRun(runKey, steps.ok());
    if (!end.ok())
      return steps.ok() ? end.takeStatus() : steps; // a failed step's error first
    if (*end == Device::RunEnd::IssueAgain) {       // nothing ran: the steps, unrecorded
      for (size_t i = 0; i < prog.steps.size(); ++i)
        EINRT_TRY(runStepObserved(i));
    } else if (!steps.ok()) {
      return steps;
    }
  }
  EINRT_TRY(dev->synchronize());
  if (afterStep && !stepwise)
    for (size_t i = 0; i < prog.steps.size(); ++i)
      afterStep(i);
  return Status::success();
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

Status Executor::runStep(size_t index) {
  const Step &s = prog.steps[index];
  Status st;
  switch (stepKindInfo(s.kind)->runner) {
  case StepRunner::Reference: {
    std::vector<DeviceSpan> inputs;
    inputs.reserve(s.inputs.size());
    for (int32_t b : s.inputs)
      inputs.push_back(span(b));
    st = dev->reference(s, inputs, span(s.output));
    break;
  }
  case StepRunner::Gemm: {
    const GemmDesc &g = s.as<GemmDesc>();
    if (!g.post.present()) {
      st = dev->gemm(g, deviceData(size_t(s.inputs[0])), deviceData(size_t(s.inputs[1])),
                     deviceData(size_t(s.output)));
      break;
    }
    std::vector<DeviceSpan> post;
    for (int32_t b : g.post.operands)
      post.push_back(span(b));
    for (int32_t b : g.post.outputs)
      post.push_back(span(b));
    st = dev->gemmPost(g, deviceData(size_t(s.inputs[0])), deviceData(size_t(s.inputs[1])),
                       deviceData(size_t(s.output)), post);
    break;
  }
  case StepRunner::Launch: {
    std::vector<DeviceSpan> buffers;
    for (int32_t b : s.inputs)
      buffers.push_back(span(b));
    for (int32_t b : s.outputs())
      buffers.push_back(span(b));
    st = dev->launch(s.as<KernelLaunch>(), buffers);
    break;
  }
  }
  if (st.ok())
    return st;
  std::string where = "step " + std::to_string(index) + " (" + stepKindName(s.kind);
  if (!s.note.empty())
    where += ", " + s.note;
  return std::move(st).withContext(where + "): ");
}

Expected<std::vector<double>> Executor::read(size_t b) const {
  EINRT_TRY(checkBuffer(b));
  const size_t n = size_t(prog.buffers[b].elementCount());
  StorageType st = dev->storageOf(prog.buffers[b].dtype);
  std::vector<uint8_t> bytes(n * size_t(storageBytes(st)));
  EINRT_TRY(dev->download(bytes.data(), deviceData(b), int64_t(bytes.size())));
  return decode(st, bytes.data(), n);
}

Status Executor::write(size_t b, const double *values, size_t count) {
  EINRT_TRY(checkBuffer(b));
  const Buffer &buf = prog.buffers[b];
  if (int64_t(count) != buf.elementCount())
    return Status::invalid("buffer " + std::to_string(b) + " ('" + buf.name + "') has " +
                           std::to_string(buf.elementCount()) + " elements, got " +
                           std::to_string(count) + " values");
  std::vector<double> rounded(values, values + count);
  const bool keep = !roundLow && lowPrecision(buf.dtype);
  for (double &v : rounded)
    v = keep ? v : toDType(v, buf.dtype);
  std::vector<uint8_t> bytes = encode(dev->storageOf(buf.dtype), rounded.data(), count);
  return dev->upload(deviceData(b), bytes.data(), int64_t(bytes.size()));
}

namespace {
template <class T>
Status setArgumentImpl(Executor &ex, size_t argIndex, const T *data, size_t count) {
  if (argIndex >= ex.argumentCount())
    return Status::invalid("argument index " + std::to_string(argIndex) + " out of range (" +
                           std::to_string(ex.argumentCount()) + " arguments)");
  std::vector<double> v(data, data + count);
  return ex.write(size_t(ex.program().arguments[argIndex]), v.data(), count);
}
} // namespace

Status Executor::setArgument(size_t argIndex, const double *data, size_t count) {
  return setArgumentImpl(*this, argIndex, data, count);
}
Status Executor::setArgument(size_t argIndex, const float *data, size_t count) {
  return setArgumentImpl(*this, argIndex, data, count);
}
Status Executor::setArgument(size_t argIndex, const int32_t *data, size_t count) {
  return setArgumentImpl(*this, argIndex, data, count);
}

Expected<double> Executor::readScalar(size_t resultIndex) const {
  if (resultIndex >= prog.results.size())
    return Status::invalid("result index " + std::to_string(resultIndex) + " out of range (" +
                           std::to_string(prog.results.size()) + " results)");
  Expected<std::vector<double>> v = read(size_t(prog.results[resultIndex]));
  if (!v.ok())
    return v.takeStatus();
  if (v->empty())
    return Status::invalid("result " + std::to_string(resultIndex) + " has no elements");
  return (*v)[0];
}

Status Executor::copyFrom(size_t b, const Executor &source, size_t sourceBuffer) {
  EINRT_TRY(checkBuffer(b));
  EINRT_TRY(source.checkBuffer(sourceBuffer));
  const Buffer &to = prog.buffers[b], &from = source.prog.buffers[sourceBuffer];
  if (to.elementCount() != from.elementCount() || to.dtype != from.dtype)
    return Status::invalid("cannot copy '" + from.name + "' (" +
                           std::to_string(from.elementCount()) + " '" + dtypeName(from.dtype) +
                           "') into '" + to.name + "' (" + std::to_string(to.elementCount()) +
                           " '" + dtypeName(to.dtype) + "')");
  if (dev == source.dev)
    return dev->copy(deviceData(b), source.deviceData(sourceBuffer),
                     to.elementCount() * storageBytes(dev->storageOf(to.dtype)));
  Expected<std::vector<double>> v = source.read(sourceBuffer);
  if (!v.ok())
    return v.takeStatus();
  return write(b, v->data(), v->size());
}

Status Executor::zeroBuffer(size_t b) {
  EINRT_TRY(checkBuffer(b));
  const Buffer &buf = prog.buffers[b];
  return dev->zero(deviceData(b), buf.elementCount() * storageBytes(dev->storageOf(buf.dtype)));
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
  if (Expected<std::vector<double>> values = read(b); values.ok())
    t.values = values.take();
  return t;
}

int64_t Executor::findBuffer(const std::string &name) const {
  for (size_t b = 0; b < prog.buffers.size(); ++b)
    if (prog.buffers[b].name == name)
      return int64_t(b);
  return -1;
}

Expected<TensorData> Executor::exportBuffer(size_t b) const {
  Expected<std::vector<double>> v = read(b);
  if (!v.ok())
    return v.takeStatus();
  const Buffer &buf = prog.buffers[b];
  return TensorData::fromDoubles(buf.name, buf.dtype, buf.shape, v->data());
}

Status Executor::importBuffer(size_t b, const TensorData &t) {
  if (b >= prog.buffers.size())
    return Status::invalid("buffer index " + std::to_string(b) + " out of range");
  const Buffer &buf = prog.buffers[b];
  std::string where = "tensor '" + t.name + "' into buffer '" + buf.name + "': ";
  if (t.shape != buf.shape)
    return Status::invalid(where + "shapes differ");
  if (t.dtype != buf.dtype && !(isFloat(t.dtype) && isFloat(buf.dtype)))
    return Status::invalid(where + "dtype '" + dtypeName(t.dtype) + "' cannot load into '" +
                           dtypeName(buf.dtype) + "'");
  if (int64_t(t.bytes.size()) != t.elementCount() * dtypeSize(t.dtype))
    return Status(StatusCode::Corrupt, where + "byte length does not match shape and dtype");
  std::vector<double> v = t.toDoubles();
  return write(b, v.data(), v.size());
}

} // namespace einrt
