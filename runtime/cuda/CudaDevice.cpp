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

  bool open(std::string &error);

  // CudaDevice
  void setKernels(std::shared_ptr<const CudaKernelBundle> b) override { bundle = std::move(b); }
  std::string describe() const override;
  CudaDeviceProperties properties() const override { return props; }
  int64_t graphsRecorded() const override { return recorded; }
  std::string memoryShortfall(int64_t bytes, const std::string &what) override;
  void *nativeStream() const override { return stream; }
  bool makeCurrent(std::string &error) override { return current(error); }
  int ordinal() const override { return options.ordinal; }

  // Device
  std::string name() const override { return "cuda"; }
  StorageType storageOf(DType t) const override { return cudaStorageOf(t); }
  bool runs(StepRunner) const override { return true; } // check() refines Reference
  std::string check(const Program &program) const override {
    return cudaProgramProblem(program, bundle.get(), lt->options());
  }
  bool prepare(const Program &program, std::string &error) override;
  bool bind(const Program &program, const std::vector<const void *> &addresses,
            std::string &error) override;
  bool allocate(int64_t bytes, DeviceMemory &out, const std::string &what,
                std::string &error) override;
  void release(DeviceMemory &memory) override;
  bool upload(void *dst, const void *src, int64_t bytes, std::string &error) override;
  bool download(void *dst, const void *src, int64_t bytes, std::string &error) override;
  bool copy(void *dst, const void *src, int64_t bytes, std::string &error) override;
  bool zero(void *dst, int64_t bytes, std::string &error) override;
  bool gemm(const GemmDesc &g, const void *a, const void *b, void *c, std::string &error) override;
  bool gemmPost(const GemmDesc &g, const void *a, const void *b, void *c,
                const std::vector<DeviceSpan> &post, std::string &error) override;
  bool launch(const KernelLaunch &k, const std::vector<DeviceSpan> &buffers,
              std::string &error) override;
  bool reference(const Step &s, const std::vector<DeviceSpan> &inputs, const DeviceSpan &output,
                 std::string &error) override;
  bool addInOrder(float *sum, const float *parts, int64_t partCount, int64_t partStride,
                  int64_t count, std::string &error) override;
  bool synchronize(std::string &error) override;
  RunStart beginRun(uint64_t key, std::string &error) override;
  RunEnd endRun(uint64_t key, bool stepsSucceeded, std::string &error) override;
  void forgetRun(uint64_t key) override;

private:
  /// The device's context on the calling thread.
  bool current(std::string &error) { return EINC_CU(cu, cuCtxSetCurrent(context)); }
  /// Waits until the previous copy through the staging buffer is done.
  bool waitForStaging(std::string &error) { return EINC_CU(cu, cuEventSynchronize(stagingFree)); }
  /// EINC_CUDA_SYNC=1: after a step's work is issued, waits for it and
  /// names `what` (the kernel, the GEMM) in its error.
  bool finishStep(const std::string &what, std::string &error);
  /// C := 0 for a Store GEMM of k = 0 (no product to compute).
  bool zeroMatrices(const GemmDesc &g, const CublasLtPlan &plan, void *c, std::string &error);

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

bool CudaDeviceImpl::open(std::string &error) {
  if (options.wrapOrdinal && cu.devices > 0 && options.ordinal >= 0)
    options.ordinal %= cu.devices;
  if (options.ordinal < 0 || options.ordinal >= cu.devices) {
    error = "no CUDA device " + std::to_string(options.ordinal) + " (the driver sees " +
            std::to_string(cu.devices) + ")";
    return false;
  }
  if (!EINC_CU(cu, cuDeviceGet(&device, options.ordinal)) ||
      !EINC_CU(cu, cuDevicePrimaryCtxRetain(&context, device)) || !current(error))
    return false;
  char text[256] = {0};
  if (!EINC_CU(cu, cuDeviceGetName(text, int(sizeof text - 1), device)))
    return false;
  deviceName = text;
  auto attribute = [&](CUdevice_attribute a, int32_t &out) {
    int v = 0;
    if (!EINC_CU(cu, cuDeviceGetAttribute(&v, a, device)))
      return false;
    out = v;
    return true;
  };
  int32_t gridX = 0;
  if (!attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, props.multiprocessors) ||
      !attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, props.maxThreadsPerBlock) ||
      !attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                 props.maxThreadsPerMultiprocessor) ||
      !attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE, props.warpSize) ||
      !attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, gridX) ||
      !attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, props.major) ||
      !attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, props.minor))
    return false;
  props.maxGridX = gridX;
  size_t freeBytes = 0, totalBytes = 0;
  if (!EINC_CU(cu, cuMemGetInfo(&freeBytes, &totalBytes)))
    return false;
  totalMemory = int64_t(totalBytes);
  if (!EINC_CU(cu, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING)) ||
      !EINC_CU(cu, cuEventCreate(&stagingFree, CU_EVENT_DISABLE_TIMING)))
    return false;
  // One pinned staging buffer of a fixed size, allocated now and never
  // regrown: freeing pinned memory synchronises the device, and what a
  // Program uploads is known only per executor, later. Copies go through
  // it in parts; pinned copies of tens of MiB already run at the link's
  // speed, so the default 64 MiB costs no bandwidth. Pinned memory is the
  // host's (never swapped out): checked against the host's, not the GPU's.
  stagingCapacity = std::max<int64_t>(1, options.stagingBytes);
  if (error = cudaStagingProblem(stagingCapacity); !error.empty())
    return false;
  if (!EINC_CU(cu, cuMemHostAlloc(&staging, size_t(stagingCapacity), 0)))
    return false;

  CublasLtOptions gemm;
  gemm.tf32 = options.tf32;
  lt = CublasLt::load(gemm, error);
  if (!lt)
    return false;
  if (options.gemmWorkspaceBytes > 0) {
    if (int64_t(freeBytes) < options.gemmWorkspaceBytes) {
      error = "cuBLASLt's workspace needs " + formatBytes(options.gemmWorkspaceBytes) +
              " but the cuda device has only " + formatBytes(int64_t(freeBytes)) + " free";
      return false;
    }
    if (!EINC_CU(cu, cuMemAlloc(&workspace, size_t(options.gemmWorkspaceBytes))))
      return false;
    lt->setWorkspace(workspace, size_t(options.gemmWorkspaceBytes));
  }
  return true;
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

bool CudaDeviceImpl::prepare(const Program &program, std::string &error) {
  if (!current(error))
    return false;
  std::vector<int64_t> used;
  for (size_t i = 0; i < program.steps.size(); ++i) {
    const Step &s = program.steps[i];
    if (const auto *k = std::get_if<KernelLaunch>(&s.payload))
      used.push_back(k->kernel);
    else if (const auto *g = std::get_if<GemmDesc>(&s.payload); g && g->post.present())
      used.push_back(g->post.kernel); // run where cuBLASLt does not fuse it
  }
  return modules.prepare(cu, bundle, props, used, error);
}

bool CudaDeviceImpl::bind(const Program &program, const std::vector<const void *> &addresses,
                          std::string &error) {
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
    CublasLtPlan plan;
    if (!lt->plan(*g, plan, error, g->post.present() ? &postTypes : nullptr, &bases)) {
      error = "step " + std::to_string(i) + " (matmul" + (s.note.empty() ? "" : ", " + s.note) +
              "): " + error;
      return false;
    }
    epilogueLaunched[i] = plan.epilogueKernel && g->post.present();
  }
  error = bundle ? cudaAlignmentProblem(program, *bundle, addresses, epilogueLaunched) : "";
  return error.empty();
}

std::string CudaDeviceImpl::memoryShortfall(int64_t bytes, const std::string &what) {
  std::string error;
  if (!current(error))
    return error;
  size_t freeBytes = 0, totalBytes = 0;
  if (!EINC_CU(cu, cuMemGetInfo(&freeBytes, &totalBytes)))
    return error;
  if (bytes <= 0 || uint64_t(bytes) <= freeBytes)
    return "";
  return what + " needs " + formatBytes(bytes) + " but only " + formatBytes(int64_t(freeBytes)) +
         " are available (free memory of the cuda device " + deviceName + ", " +
         formatBytes(int64_t(totalBytes)) + " in all)";
}

bool CudaDeviceImpl::allocate(int64_t bytes, DeviceMemory &out, const std::string &what,
                              std::string &error) {
  out = {};
  if (bytes <= 0)
    return true;
  error = memoryShortfall(bytes, what);
  if (!error.empty())
    return false;
  CUdeviceptr p = 0;
  if (!EINC_CU(cu, cuMemAlloc(&p, size_t(bytes))))
    return false;
  // The interface promises zeroed memory; a step may accumulate into it.
  if (!EINC_CU(cu, cuMemsetD8Async(p, 0, size_t(bytes), stream)) ||
      !EINC_CU(cu, cuStreamSynchronize(stream))) {
    cu.cuMemFree(p);
    return false;
  }
  out = {reinterpret_cast<void *>(uintptr_t(p)), bytes};
  return true;
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

bool CudaDeviceImpl::upload(void *dst, const void *src, int64_t bytes, std::string &error) {
  if (bytes <= 0)
    return true;
  if (!current(error))
    return false;
  for (int64_t done = 0; done < bytes;) {
    int64_t n = std::min(bytes - done, stagingCapacity);
    if (!waitForStaging(error))
      return false;
    std::memcpy(staging, static_cast<const uint8_t *>(src) + done, size_t(n));
    // Asynchronous: the host goes on; the stream orders the copy before
    // every later step, and the next use of staging waits for it.
    if (!EINC_CU(cu,
                 cuMemcpyHtoDAsync(dptr(dst) + CUdeviceptr(done), staging, size_t(n), stream)) ||
        !EINC_CU(cu, cuEventRecord(stagingFree, stream)))
      return false;
    done += n;
  }
  return true;
}

bool CudaDeviceImpl::download(void *dst, const void *src, int64_t bytes, std::string &error) {
  if (bytes <= 0)
    return true;
  if (!current(error))
    return false;
  for (int64_t done = 0; done < bytes;) {
    int64_t n = std::min(bytes - done, stagingCapacity);
    if (!waitForStaging(error) ||
        !EINC_CU(cu,
                 cuMemcpyDtoHAsync(staging, dptr(src) + CUdeviceptr(done), size_t(n), stream)) ||
        !EINC_CU(cu, cuEventRecord(stagingFree, stream)) ||
        !EINC_CU(cu, cuEventSynchronize(stagingFree)))
      return false;
    std::memcpy(static_cast<uint8_t *>(dst) + done, staging, size_t(n));
    done += n;
  }
  return true;
}

// Both are steps of a run (Copy, a zeroed C) and host calls between runs
// (Executor::copyFrom, zeroBuffer), which may come from another thread.
bool CudaDeviceImpl::copy(void *dst, const void *src, int64_t bytes, std::string &error) {
  if (bytes <= 0)
    return true;
  if (!capturing && !current(error))
    return false;
  return EINC_CU(cu, cuMemcpyDtoDAsync(dptr(dst), dptr(src), size_t(bytes), stream));
}

bool CudaDeviceImpl::zero(void *dst, int64_t bytes, std::string &error) {
  if (bytes <= 0)
    return true;
  if (!capturing && !current(error))
    return false;
  return EINC_CU(cu, cuMemsetD8Async(dptr(dst), 0, size_t(bytes), stream));
}

bool CudaDeviceImpl::zeroMatrices(const GemmDesc &g, const CublasLtPlan &plan, void *c,
                                  std::string &error) {
  const int64_t size = storageBytes(cudaStorageOf(g.c));
  // Row-major C: g.m rows of g.n elements, ldc apart (the call's rowsC is
  // g.n, its colsC g.m).
  for (const CublasLtCall &call : plan.calls)
    for (int64_t b = 0; b < call.batch; ++b) {
      CUdeviceptr at = dptr(c) + CUdeviceptr((call.offsetC + b * call.strideC) * size);
      if (!EINC_CU(cu, cuMemsetD2D8Async(at, size_t(call.ldc * size), 0, size_t(call.rowsC * size),
                                         size_t(call.colsC), stream)))
        return false;
    }
  return true;
}

bool CudaDeviceImpl::gemm(const GemmDesc &g, const void *a, const void *b, void *c,
                          std::string &error) {
  CublasLtPlan plan;
  LtAlignments bases{addressAlignment(a), addressAlignment(b), addressAlignment(c), {}};
  if (!lt->plan(g, plan, error, nullptr, &bases))
    return false;
  if (plan.emptySum)
    return g.epilogue == GemmEpilogue::Accumulate || zeroMatrices(g, plan, c, error);
  return lt->run(g, plan, dptr(a), dptr(b), dptr(c), stream, error) &&
         finishStep("the cuBLASLt GEMM", error);
}

bool CudaDeviceImpl::gemmPost(const GemmDesc &g, const void *a, const void *b, void *c,
                              const std::vector<DeviceSpan> &post, std::string &error) {
  std::vector<DType> types;
  LtAlignments bases{addressAlignment(a), addressAlignment(b), addressAlignment(c), {}};
  for (const DeviceSpan &span : post) {
    types.push_back(span.dtype);
    bases.post.push_back(addressAlignment(span.data));
  }
  CublasLtPlan plan;
  if (!lt->plan(g, plan, error, &types, &bases))
    return false;
  if (plan.epilogueKernel) // the product, then the rendered kernel
    return Device::gemmPost(g, a, b, c, post, error);
  auto at = [&](int32_t span) { return dptr(span < 0 ? c : post[size_t(span)].data); };
  CublasLtEpilogueAddresses addresses;
  addresses.d = at(plan.pointers.d);
  addresses.c = at(plan.pointers.c);
  addresses.bias = plan.pointers.bias < 0 ? 0 : at(plan.pointers.bias);
  addresses.aux = plan.pointers.aux < 0 ? 0 : at(plan.pointers.aux);
  return lt->run(g, plan, dptr(a), dptr(b), dptr(c), stream, error, &addresses) &&
         finishStep("the cuBLASLt GEMM and its epilogue", error);
}

bool CudaDeviceImpl::launch(const KernelLaunch &k, const std::vector<DeviceSpan> &buffers,
                            std::string &error) {
  const PreparedKernel *kernel = modules.kernel(k.kernel);
  if (!kernel) {
    error = "kernel " + std::to_string(k.kernel) +
            " was not prepared on the cuda device (Executor::create prepares every kernel a "
            "Program launches)";
    return false;
  }
  if (size_t(kernel->params) != buffers.size()) {
    error = "kernel '" + kernel->entry + "' takes " + std::to_string(kernel->params) +
            " buffers, the step passes " + std::to_string(buffers.size());
    return false;
  }
  if (kernel->work == 0)
    return true; // nothing to compute
  std::vector<CUdeviceptr> pointers(buffers.size());
  std::vector<void *> params(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    pointers[i] = dptr(buffers[i].data);
    params[i] = &pointers[i];
  }
  // Shared memory is static in the rendered kernels: none is passed.
  auto what = [&] {
    return "kernel '" + kernel->entry + "' (grid " + std::to_string(kernel->shape.grid) +
           ", block " + std::to_string(kernel->shape.block) + ")";
  };
  if (!EINC_CU(cu, cuLaunchKernel(kernel->function, kernel->shape.grid, 1, 1, kernel->shape.block,
                                  1, 1, 0, stream, params.data(), nullptr))) {
    error = what() + ": " + error;
    return false;
  }
  return !options.syncEveryStep || finishStep(what(), error);
}

bool CudaDeviceImpl::reference(const Step &s, const std::vector<DeviceSpan> &inputs,
                               const DeviceSpan &output, std::string &error) {
  if (s.kind != StepKind::Copy || inputs.size() != 1) {
    error = std::string("the cuda device does not run '") + stepKindName(s.kind) +
            "' steps (check() refuses such a Program)";
    return false;
  }
  return copy(output.data, inputs[0].data, output.count * storageBytes(output.storage), error) &&
         finishStep("the copy", error);
}

bool CudaDeviceImpl::addInOrder(float *sum, const float *parts, int64_t partCount,
                                int64_t partStride, int64_t count, std::string &error) {
#ifndef EINC_HAVE_ADD_IN_ORDER_PTX
  (void)sum, (void)parts, (void)partCount, (void)partStride, (void)count;
  error = "this einc was built without nvcc: the cuda device has no ordered add";
  return false;
#else
  if (count <= 0)
    return true;
  if (!capturing && !current(error))
    return false;
  if (!addFunction &&
      (!EINC_CU(cu, cuModuleLoadDataEx(&addModule, kAddInOrderPtx, 0, nullptr, nullptr)) ||
       !EINC_CU(cu, cuModuleGetFunction(&addFunction, addModule, "einc_add_in_order"))))
    return false;
  // A grid-stride loop: a few blocks per multiprocessor cover any count.
  const long long block = 256;
  const long long blocks =
      std::min<long long>((count + block - 1) / block, 8LL * std::max(1, props.multiprocessors));
  CUdeviceptr s = dptr(sum), p = dptr(parts);
  long long n = count, partsN = partCount, stride = partStride;
  void *params[] = {&s, &p, &partsN, &stride, &n};
  return EINC_CU(cu, cuLaunchKernel(addFunction, unsigned(blocks), 1, 1, unsigned(block), 1, 1, 0,
                                    stream, params, nullptr)) &&
         finishStep("the ordered add (einc_add_in_order)", error);
#endif
}

bool CudaDeviceImpl::finishStep(const std::string &what, std::string &error) {
  if (!options.syncEveryStep || capturing)
    return true;
  if (!EINC_CU(cu, cuStreamSynchronize(stream))) {
    error = what + " failed while running (EINC_CUDA_SYNC=1 checks after every step): " + error;
    return false;
  }
  return true;
}

bool CudaDeviceImpl::synchronize(std::string &error) {
  if (!current(error))
    return false;
  if (!EINC_CU(cu, cuStreamSynchronize(stream))) {
    error = "the cuda device failed while running: " + error;
    return false;
  }
  return true;
}

Device::RunStart CudaDeviceImpl::beginRun(uint64_t key, std::string &error) {
  // The steps that follow may come from another thread than the last run's.
  if (!current(error))
    return RunStart::Failed;
  if (!options.capturesGraphs() || key == 0)
    return RunStart::Steps;
  RecordedRun &run = recordedRuns[key];
  if (run.graph) {
    if (!EINC_CU(cu, cuGraphLaunch(run.graph, stream)))
      return RunStart::Failed;
    return RunStart::Replayed;
  }
  if (!run.warmed || run.uncapturable)
    return RunStart::Steps; // endRun marks it warmed
  // Thread-local: a call on this thread that cannot be captured (a
  // synchronous copy, an allocation) fails instead of joining the graph.
  if (!EINC_CU(cu, cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)))
    return RunStart::Failed;
  capturing = key;
  return RunStart::Steps;
}

Device::RunEnd CudaDeviceImpl::endRun(uint64_t key, bool stepsSucceeded, std::string &error) {
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
  bool ok = stepsSucceeded && EINC_CU(cu, cuStreamEndCapture(stream, &graph)) &&
            EINC_CU(cu, cuGraphInstantiateWithFlags(&exec, graph, 0));
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
  return EINC_CU(cu, cuGraphLaunch(exec, stream)) ? RunEnd::Done : RunEnd::Failed;
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

std::shared_ptr<CudaDevice> createCudaDevice(const CudaDeviceOptions &given, std::string &error) {
  CudaDeviceOptions options = given;
  if (!readCudaDebugSwitches(options, error))
    return nullptr;
  std::shared_ptr<const CudaDriver> driver = CudaDriver::load(error, options.driver);
  if (!driver)
    return nullptr;
  auto device = std::make_shared<CudaDeviceImpl>(driver, options);
  if (!device->open(error))
    return nullptr;
  return device;
}

} // namespace einrt
