//===- CudaDevice.cpp - The `cuda` device: driver API, cuBLASLt, graphs ---===//
//
// Built only with the CUDA headers (EINC_HAVE_CUDA). Every driver call goes
// through EINC_CU (runtime/cuda/CudaDriver.h): file, line, call and the error's
// name in the message.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaDevice.h"

#include "runtime/base/Memory.h"
#include "runtime/cuda/CublasLt.h"
#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/CudaModule.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

namespace einrt {

namespace {

#ifdef EINC_HAVE_ADD_IN_ORDER_PTX
// runtime/cuda/AddInOrder.cu, compiled to PTX by nvcc at build time.
const char kAddInOrderPtx[] =
#include "AddInOrderPtx.inc"
    ;
#endif

CUdeviceptr dptr(const void *p) { return CUdeviceptr(reinterpret_cast<uintptr_t>(p)); }

/// An executor's runs (Device::beginRun): the first issued step by step
/// (every kernel is loaded, cuBLASLt warmed), the second captured, the
/// rest replayed.
struct RecordedRun {
  bool warmed = false;
  bool uncapturable = false; // a capture failed: issued step by step from then on
  CUgraphExec graph = nullptr;
};

class CudaDeviceImpl final : public CudaDevice {
public:
  CudaDeviceImpl(std::shared_ptr<const CudaDriver> d, const CudaDeviceOptions &o)
      : driver(std::move(d)), cu(*driver), options(o) {}
  ~CudaDeviceImpl() override;

  Status open();

  // CudaDevice
  void setKernels(std::shared_ptr<const CudaKernelBundle> b) override { bundle = std::move(b); }
  std::string describe() const override;
  CudaDeviceProperties properties() const override { return props; }
  int64_t graphsRecorded() const override { return recorded; }
  std::string memoryShortfall(int64_t bytes, const std::string &what) override;
  void *nativeStream() const override { return stream; }
  Status makeCurrent() override { return current(); }
  int ordinal() const override { return options.ordinal; }

  // Device
  std::string name() const override { return "cuda"; }
  StorageType storageOf(DType t) const override { return cudaStorageOf(t); }
  bool runs(StepRunner) const override { return true; } // check() refines Reference
  Status check(const Program &program) const override {
    return cudaProgramProblem(program, bundle.get(), lt->options());
  }
  Status prepare(const Program &program) override;
  Status bind(const Program &program, const std::vector<const void *> &addresses) override;
  Expected<DeviceMemory> allocate(int64_t bytes, const std::string &what) override;
  void release(DeviceMemory &memory) override;
  Status upload(void *dst, const void *src, int64_t bytes) override;
  Status download(void *dst, const void *src, int64_t bytes) override;
  Status copy(void *dst, const void *src, int64_t bytes) override;
  Status zero(void *dst, int64_t bytes) override;
  Status gemm(const GemmDesc &g, const void *a, const void *b, void *c) override;
  Status gemmPost(const GemmDesc &g, const void *a, const void *b, void *c,
                  const std::vector<DeviceSpan> &post) override;
  Status launch(const KernelLaunch &k, const std::vector<DeviceSpan> &buffers) override;
  Status reference(const Step &s, const std::vector<DeviceSpan> &inputs,
                   const DeviceSpan &output) override;
  Status addInOrder(float *sum, const float *parts, int64_t partCount, int64_t partStride,
                    int64_t count) override;
  Status synchronize() override;
  Expected<RunStart> beginRun(uint64_t key) override;
  Expected<RunEnd> endRun(uint64_t key, bool stepsSucceeded) override;
  void forgetRun(uint64_t key) override;

private:
  /// The device's context on the calling thread.
  Status current() { return EINC_CU(cu, cuCtxSetCurrent(context)); }
  /// Waits until the previous copy through the staging buffer is done.
  Status waitForStaging() { return EINC_CU(cu, cuEventSynchronize(stagingFree)); }
  /// EINC_CUDA_SYNC=1: after a step's work is issued, waits for it and
  /// names `what` (the kernel, the GEMM) in its error.
  Status finishStep(const std::string &what);
  /// C := 0 for a Store GEMM of k = 0 (no product to compute).
  Status zeroMatrices(const GemmDesc &g, const CublasLtPlan &plan, void *c);

  std::shared_ptr<const CudaDriver> driver;
  const CudaDriver &cu;
  CudaDeviceOptions options;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  CUevent stagingFree = nullptr; // recorded after each copy from or to staging
  void *staging = nullptr;
  int64_t stagingCapacity = 0;
  CUdeviceptr workspace = 0;
  std::string deviceName;
  int64_t totalMemory = 0;
  CudaDeviceProperties props;
  std::unique_ptr<CublasLt> lt;
  std::shared_ptr<const CudaKernelBundle> bundle;
  CudaModules modules;
  CUmodule addModule = nullptr; // addInOrder's kernel, loaded at its first use
  CUfunction addFunction = nullptr;
  std::map<uint64_t, RecordedRun> recordedRuns;
  uint64_t capturing = 0; // the key whose run the stream is capturing (0: none)
  int64_t recorded = 0;
};

Status CudaDeviceImpl::open() {
  if (options.wrapOrdinal && cu.devices > 0 && options.ordinal >= 0)
    options.ordinal %= cu.devices;
  if (options.ordinal < 0 || options.ordinal >= cu.devices)
    return Status(StatusCode::Unavailable, "no CUDA device " + std::to_string(options.ordinal) +
                                               " (the driver sees " + std::to_string(cu.devices) +
                                               ")");
  EINRT_TRY(EINC_CU(cu, cuDeviceGet(&device, options.ordinal)));
  EINRT_TRY(EINC_CU(cu, cuDevicePrimaryCtxRetain(&context, device)));
  EINRT_TRY(current());
  char text[256] = {0};
  EINRT_TRY(EINC_CU(cu, cuDeviceGetName(text, int(sizeof text - 1), device)));
  deviceName = text;
  auto attribute = [&](CUdevice_attribute a, int32_t &out) {
    int v = 0;
    Status st = EINC_CU(cu, cuDeviceGetAttribute(&v, a, device));
    out = v;
    return st;
  };
  int32_t gridX = 0;
  EINRT_TRY(attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, props.multiprocessors));
  EINRT_TRY(attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, props.maxThreadsPerBlock));
  EINRT_TRY(attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                      props.maxThreadsPerMultiprocessor));
  EINRT_TRY(attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE, props.warpSize));
  EINRT_TRY(attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, gridX));
  EINRT_TRY(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, props.major));
  EINRT_TRY(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, props.minor));
  props.maxGridX = gridX;
  size_t freeBytes = 0, totalBytes = 0;
  EINRT_TRY(EINC_CU(cu, cuMemGetInfo(&freeBytes, &totalBytes)));
  totalMemory = int64_t(totalBytes);
  EINRT_TRY(EINC_CU(cu, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING)));
  EINRT_TRY(EINC_CU(cu, cuEventCreate(&stagingFree, CU_EVENT_DISABLE_TIMING)));
  // One pinned staging buffer of a fixed size, allocated now and never
  // regrown: freeing pinned memory synchronises the device, and what a
  // Program uploads is known only per executor, later. Copies go through
  // it in parts; pinned copies of tens of MiB already run at the link's
  // speed, so the default 64 MiB costs no bandwidth. Pinned memory is the
  // host's (never swapped out): checked against the host's, not the GPU's.
  stagingCapacity = std::max<int64_t>(1, options.stagingBytes);
  EINRT_TRY(cudaStagingProblem(stagingCapacity));
  EINRT_TRY(EINC_CU(cu, cuMemHostAlloc(&staging, size_t(stagingCapacity), 0)));

  CublasLtOptions gemm;
  gemm.tf32 = options.tf32;
  Expected<std::unique_ptr<CublasLt>> loaded = CublasLt::load(gemm);
  if (!loaded.ok())
    return loaded.takeStatus();
  lt = loaded.take();
  if (options.gemmWorkspaceBytes > 0) {
    if (int64_t(freeBytes) < options.gemmWorkspaceBytes)
      return Status(StatusCode::OutOfMemory, "cuBLASLt's workspace needs " +
                                                 formatBytes(options.gemmWorkspaceBytes) +
                                                 " but the cuda device has only " +
                                                 formatBytes(int64_t(freeBytes)) + " free");
    EINRT_TRY(EINC_CU(cu, cuMemAlloc(&workspace, size_t(options.gemmWorkspaceBytes))));
    lt->setWorkspace(workspace, size_t(options.gemmWorkspaceBytes));
  }
  return Status::success();
}

CudaDeviceImpl::~CudaDeviceImpl() {
  // Teardown: nothing to report to, so results are not checked.
  if (!context)
    return;
  cu.cuCtxSetCurrent(context);
  if (stream)
    cu.cuStreamSynchronize(stream);
  for (auto &[key, run] : recordedRuns)
    if (run.graph)
      cu.cuGraphExecDestroy(run.graph);
  lt.reset(); // its handle before the context goes
  modules.unload(cu);
  if (addModule)
    cu.cuModuleUnload(addModule);
  if (workspace)
    cu.cuMemFree(workspace);
  if (staging)
    cu.cuMemFreeHost(staging);
  if (stagingFree)
    cu.cuEventDestroy(stagingFree);
  if (stream)
    cu.cuStreamDestroy(stream);
  cu.cuDevicePrimaryCtxRelease(device);
}

std::string CudaDeviceImpl::describe() const {
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1f GiB", double(totalMemory) / double(1 << 30));
  return deviceName + " (sm_" + std::to_string(props.major * 10 + props.minor) + ", " +
         std::to_string(props.multiprocessors) + " multiprocessors, " + memory + "; CUDA " +
         std::to_string(cu.version / 1000) + "." + std::to_string(cu.version % 1000 / 10) +
         " driver, cuBLASLt " + std::to_string(lt->version()) + cudaSwitchesText(options) + ")";
}

Status CudaDeviceImpl::prepare(const Program &program) {
  EINRT_TRY(current());
  std::vector<int64_t> used;
  for (size_t i = 0; i < program.steps.size(); ++i) {
    const Step &s = program.steps[i];
    if (const auto *k = std::get_if<KernelLaunch>(&s.payload))
      used.push_back(k->kernel);
    else if (const auto *g = std::get_if<GemmDesc>(&s.payload); g && g->post.present())
      used.push_back(g->post.kernel); // run where cuBLASLt does not fuse it
  }
  return modules.prepare(cu, bundle, props, used);
}

Status CudaDeviceImpl::bind(const Program &program, const std::vector<const void *> &addresses) {
  // Each GEMM's plan for where its buffers are (bind's addresses are those
  // every run passes): its algorithms picked now, or its epilogue left to
  // its kernel where none fuses it. Then every kernel that will run, its
  // vector accesses against its buffers' addresses.
  std::vector<bool> epilogueLaunched(program.steps.size(), false);
  for (size_t i = 0; i < program.steps.size(); ++i) {
    const Step &s = program.steps[i];
    const auto *g = std::get_if<GemmDesc>(&s.payload);
    if (!g)
      continue;
    auto at = [&](int32_t b) { return addresses[size_t(b)]; };
    LtAlignments bases{addressAlignment(at(s.inputs[0])),
                       addressAlignment(at(s.inputs[1])),
                       addressAlignment(at(s.output)),
                       {}};
    std::vector<DType> postTypes;
    for (const std::vector<int32_t> *list : {&g->post.operands, &g->post.outputs})
      for (int32_t b : *list) {
        postTypes.push_back(program.buffers[size_t(b)].dtype);
        bases.post.push_back(addressAlignment(at(b)));
      }
    Expected<CublasLtPlan> plan = lt->plan(*g, g->post.present() ? &postTypes : nullptr, &bases);
    if (!plan.ok())
      return plan.takeStatus().withContext("step " + std::to_string(i) + " (matmul" +
                                           (s.note.empty() ? "" : ", " + s.note) + "): ");
    epilogueLaunched[i] = plan->epilogueKernel && g->post.present();
  }
  return bundle ? cudaAlignmentProblem(program, *bundle, addresses, epilogueLaunched)
                : Status::success();
}

std::string CudaDeviceImpl::memoryShortfall(int64_t bytes, const std::string &what) {
  if (Status st = current(); !st.ok())
    return st.message();
  size_t freeBytes = 0, totalBytes = 0;
  if (Status st = EINC_CU(cu, cuMemGetInfo(&freeBytes, &totalBytes)); !st.ok())
    return st.message();
  if (bytes <= 0 || uint64_t(bytes) <= freeBytes)
    return "";
  return what + " needs " + formatBytes(bytes) + " but only " + formatBytes(int64_t(freeBytes)) +
         " are available (free memory of the cuda device " + deviceName + ", " +
         formatBytes(int64_t(totalBytes)) + " in all)";
}

Expected<DeviceMemory> CudaDeviceImpl::allocate(int64_t bytes, const std::string &what) {
  if (bytes <= 0)
    return DeviceMemory{};
  if (std::string shortfall = memoryShortfall(bytes, what); !shortfall.empty())
    return Status(StatusCode::OutOfMemory, shortfall);
  CUdeviceptr p = 0;
  EINRT_TRY(EINC_CU(cu, cuMemAlloc(&p, size_t(bytes))));
  // The interface promises zeroed memory; a step may accumulate into it.
  Status zeroed = EINC_CU(cu, cuMemsetD8Async(p, 0, size_t(bytes), stream));
  if (zeroed.ok())
    zeroed = EINC_CU(cu, cuStreamSynchronize(stream));
  if (!zeroed.ok()) {
    cu.cuMemFree(p);
    return zeroed;
  }
  return DeviceMemory{reinterpret_cast<void *>(uintptr_t(p)), bytes};
}

void CudaDeviceImpl::release(DeviceMemory &memory) {
  if (memory.data) {
    // The stream may still read it (cuMemFree waits for the device, not
    // for this stream's queued work).
    cu.cuCtxSetCurrent(context);
    cu.cuStreamSynchronize(stream);
    cu.cuMemFree(dptr(memory.data));
  }
  memory = {};
}

Status CudaDeviceImpl::upload(void *dst, const void *src, int64_t bytes) {
  if (bytes <= 0)
    return Status::success();
  EINRT_TRY(current());
  for (int64_t done = 0; done < bytes;) {
    int64_t n = std::min(bytes - done, stagingCapacity);
    EINRT_TRY(waitForStaging());
    std::memcpy(staging, static_cast<const uint8_t *>(src) + done, size_t(n));
    // Asynchronous: the host goes on; the stream orders the copy before
    // every later step, and the next use of staging waits for it.
    EINRT_TRY(
        EINC_CU(cu, cuMemcpyHtoDAsync(dptr(dst) + CUdeviceptr(done), staging, size_t(n), stream)));
    EINRT_TRY(EINC_CU(cu, cuEventRecord(stagingFree, stream)));
    done += n;
  }
  return Status::success();
}

Status CudaDeviceImpl::download(void *dst, const void *src, int64_t bytes) {
  if (bytes <= 0)
    return Status::success();
  EINRT_TRY(current());
  for (int64_t done = 0; done < bytes;) {
    int64_t n = std::min(bytes - done, stagingCapacity);
    EINRT_TRY(waitForStaging());
    EINRT_TRY(
        EINC_CU(cu, cuMemcpyDtoHAsync(staging, dptr(src) + CUdeviceptr(done), size_t(n), stream)));
    EINRT_TRY(EINC_CU(cu, cuEventRecord(stagingFree, stream)));
    EINRT_TRY(EINC_CU(cu, cuEventSynchronize(stagingFree)));
    std::memcpy(static_cast<uint8_t *>(dst) + done, staging, size_t(n));
    done += n;
  }
  return Status::success();
}

// Both are steps of a run (Copy, a zeroed C) and host calls between runs
// (Executor::copyFrom, zeroBuffer), which may come from another thread.
Status CudaDeviceImpl::copy(void *dst, const void *src, int64_t bytes) {
  if (bytes <= 0)
    return Status::success();
  if (!capturing)
    EINRT_TRY(current());
  return EINC_CU(cu, cuMemcpyDtoDAsync(dptr(dst), dptr(src), size_t(bytes), stream));
}

Status CudaDeviceImpl::zero(void *dst, int64_t bytes) {
  if (bytes <= 0)
    return Status::success();
  if (!capturing)
    EINRT_TRY(current());
  return EINC_CU(cu, cuMemsetD8Async(dptr(dst), 0, size_t(bytes), stream));
}

Status CudaDeviceImpl::zeroMatrices(const GemmDesc &g, const CublasLtPlan &plan, void *c) {
  const int64_t size = storageBytes(cudaStorageOf(g.c));
  // Row-major C: g.m rows of g.n elements, ldc apart (the call's rowsC is
  // g.n, its colsC g.m).
  for (const CublasLtCall &call : plan.calls)
    for (int64_t b = 0; b < call.batch; ++b) {
      CUdeviceptr at = dptr(c) + CUdeviceptr((call.offsetC + b * call.strideC) * size);
      EINRT_TRY(
          EINC_CU(cu, cuMemsetD2D8Async(at, size_t(call.ldc * size), 0, size_t(call.rowsC * size),
                                        size_t(call.colsC), stream)));
    }
  return Status::success();
}

Status CudaDeviceImpl::gemm(const GemmDesc &g, const void *a, const void *b, void *c) {
  LtAlignments bases{addressAlignment(a), addressAlignment(b), addressAlignment(c), {}};
  Expected<CublasLtPlan> plan = lt->plan(g, nullptr, &bases);
  if (!plan.ok())
    return plan.takeStatus();
  if (plan->emptySum)
    return g.epilogue == GemmEpilogue::Accumulate ? Status::success() : zeroMatrices(g, *plan, c);
  EINRT_TRY(lt->run(g, *plan, dptr(a), dptr(b), dptr(c), stream));
  return finishStep("the cuBLASLt GEMM");
}

Status CudaDeviceImpl::gemmPost(const GemmDesc &g, const void *a, const void *b, void *c,
                                const std::vector<DeviceSpan> &post) {
  std::vector<DType> types;
  LtAlignments bases{addressAlignment(a), addressAlignment(b), addressAlignment(c), {}};
  for (const DeviceSpan &span : post) {
    types.push_back(span.dtype);
    bases.post.push_back(addressAlignment(span.data));
  }
  Expected<CublasLtPlan> plan = lt->plan(g, &types, &bases);
  if (!plan.ok())
    return plan.takeStatus();
  if (plan->epilogueKernel) // the product, then the rendered kernel
    return Device::gemmPost(g, a, b, c, post);
  auto at = [&](int32_t span) { return dptr(span < 0 ? c : post[size_t(span)].data); };
  CublasLtEpilogueAddresses addresses;
  addresses.d = at(plan->pointers.d);
  addresses.c = at(plan->pointers.c);
  addresses.bias = plan->pointers.bias < 0 ? 0 : at(plan->pointers.bias);
  addresses.aux = plan->pointers.aux < 0 ? 0 : at(plan->pointers.aux);
  EINRT_TRY(lt->run(g, *plan, dptr(a), dptr(b), dptr(c), stream, &addresses));
  return finishStep("the cuBLASLt GEMM and its epilogue");
}

Status CudaDeviceImpl::launch(const KernelLaunch &k, const std::vector<DeviceSpan> &buffers) {
  const PreparedKernel *kernel = modules.kernel(k.kernel);
  if (!kernel)
    return Status::internal("kernel " + std::to_string(k.kernel) +
                            " was not prepared on the cuda device (Executor::create prepares "
                            "every kernel a Program launches)");
  if (size_t(kernel->params) != buffers.size())
    return Status::internal("kernel '" + kernel->entry + "' takes " +
                            std::to_string(kernel->params) + " buffers, the step passes " +
                            std::to_string(buffers.size()));
  if (kernel->work == 0)
    return Status::success(); // nothing to compute
  std::vector<CUdeviceptr> pointers(buffers.size());
  std::vector<void *> params(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    pointers[i] = dptr(buffers[i].data);
    params[i] = &pointers[i];
  }
  // Shared memory is static in the rendered kernels: none is passed.
  const std::string what = "kernel '" + kernel->entry + "' (grid " +
                           std::to_string(kernel->shape.grid) + ", block " +
                           std::to_string(kernel->shape.block) + ")";
  EINRT_TRY(
      EINC_CU(cu, cuLaunchKernel(kernel->function, kernel->shape.grid, 1, 1, kernel->shape.block, 1,
                                 1, 0, stream, params.data(), nullptr))
          .withContext(what + ": "));
  return options.syncEveryStep ? finishStep(what) : Status::success();
}

Status CudaDeviceImpl::reference(const Step &s, const std::vector<DeviceSpan> &inputs,
                                 const DeviceSpan &output) {
  if (s.kind != StepKind::Copy || inputs.size() != 1)
    return Status::internal(std::string("the cuda device does not run '") + stepKindName(s.kind) +
                            "' steps (check() refuses such a Program)");
  EINRT_TRY(copy(output.data, inputs[0].data, output.count * storageBytes(output.storage)));
  return finishStep("the copy");
}

Status CudaDeviceImpl::addInOrder(float *sum, const float *parts, int64_t partCount,
                                  int64_t partStride, int64_t count) {
#ifndef EINC_HAVE_ADD_IN_ORDER_PTX
  (void)sum, (void)parts, (void)partCount, (void)partStride, (void)count;
  return Status(StatusCode::Unavailable,
                "this einc was built without nvcc: the cuda device has no ordered add");
#else
  if (count <= 0)
    return Status::success();
  if (!capturing)
    EINRT_TRY(current());
  if (!addFunction) {
    EINRT_TRY(EINC_CU(cu, cuModuleLoadDataEx(&addModule, kAddInOrderPtx, 0, nullptr, nullptr)));
    EINRT_TRY(EINC_CU(cu, cuModuleGetFunction(&addFunction, addModule, "einc_add_in_order")));
  }
  // A grid-stride loop: a few blocks per multiprocessor cover any count.
  const long long block = 256;
  const long long blocks =
      std::min<long long>((count + block - 1) / block, 8LL * std::max(1, props.multiprocessors));
  CUdeviceptr s = dptr(sum), p = dptr(parts);
  long long n = count, partsN = partCount, stride = partStride;
  void *params[] = {&s, &p, &partsN, &stride, &n};
  EINRT_TRY(EINC_CU(cu, cuLaunchKernel(addFunction, unsigned(blocks), 1, 1, unsigned(block), 1, 1,
                                       0, stream, params, nullptr)));
  return finishStep("the ordered add (einc_add_in_order)");
#endif
}

Status CudaDeviceImpl::finishStep(const std::string &what) {
  if (!options.syncEveryStep || capturing)
    return Status::success();
  return EINC_CU(cu, cuStreamSynchronize(stream))
      .withContext(what + " failed while running (EINC_CUDA_SYNC=1 checks after every step): ");
}

Status CudaDeviceImpl::synchronize() {
  EINRT_TRY(current());
  return EINC_CU(cu, cuStreamSynchronize(stream))
      .withContext("the cuda device failed while running: ");
}

Expected<Device::RunStart> CudaDeviceImpl::beginRun(uint64_t key) {
  // The steps that follow may come from another thread than the last run's.
  EINRT_TRY(current());
  if (!options.capturesGraphs() || key == 0)
    return RunStart::Steps;
  RecordedRun &run = recordedRuns[key];
  if (run.graph) {
    EINRT_TRY(EINC_CU(cu, cuGraphLaunch(run.graph, stream)));
    return RunStart::Replayed;
  }
  if (!run.warmed || run.uncapturable)
    return RunStart::Steps; // endRun marks it warmed
  // Thread-local: a call on this thread that cannot be captured (a
  // synchronous copy, an allocation) fails instead of joining the graph.
  EINRT_TRY(EINC_CU(cu, cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)));
  capturing = key;
  return RunStart::Steps;
}

Expected<Device::RunEnd> CudaDeviceImpl::endRun(uint64_t key, bool stepsSucceeded) {
  if (!options.capturesGraphs() || key == 0)
    return RunEnd::Done;
  RecordedRun &run = recordedRuns[key];
  if (capturing != key) { // an uncaptured run
    run.warmed = run.warmed || stepsSucceeded;
    return RunEnd::Done;
  }
  capturing = 0;
  // Capturing ran nothing. A capture that fails (a step failed inside it, or
  // the driver would not end or instantiate it) leaves this executor's runs
  // uncaptured and has the executor issue the steps again.
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  bool ok = stepsSucceeded && EINC_CU(cu, cuStreamEndCapture(stream, &graph)).ok() &&
            EINC_CU(cu, cuGraphInstantiateWithFlags(&exec, graph, 0)).ok();
  if (!stepsSucceeded)
    cu.cuStreamEndCapture(stream, &graph); // ends the capture; its error is the step's
  if (graph)
    cu.cuGraphDestroy(graph); // the executable graph holds what it needs
  if (!ok) {
    run.uncapturable = true;
    return RunEnd::IssueAgain;
  }
  run.graph = exec;
  ++recorded;
  // This run's work is the graph's first launch.
  EINRT_TRY(EINC_CU(cu, cuGraphLaunch(exec, stream)));
  return RunEnd::Done;
}

void CudaDeviceImpl::forgetRun(uint64_t key) {
  auto it = recordedRuns.find(key);
  if (it == recordedRuns.end())
    return;
  if (it->second.graph) {
    cu.cuCtxSetCurrent(context);
    cu.cuStreamSynchronize(stream); // a replay in flight finishes first
    cu.cuGraphExecDestroy(it->second.graph);
  }
  recordedRuns.erase(it);
}

} // namespace

Expected<std::shared_ptr<CudaDevice>> createCudaDevice(const CudaDeviceOptions &given) {
  CudaDeviceOptions options = given;
  EINRT_TRY(readCudaDebugSwitches(options));
  Expected<std::shared_ptr<const CudaDriver>> driver = CudaDriver::load(options.driver);
  if (!driver.ok())
    return driver.takeStatus();
  auto device = std::make_shared<CudaDeviceImpl>(driver.take(), options);
  EINRT_TRY(device->open());
  return std::shared_ptr<CudaDevice>(device);
}

} // namespace einrt
