//===- CudaKernels.h - Rendered CUDA kernels as the runtime sees them -*- C++ -*-===//
//
// The contract between the CUDA renderer (codegen/CudaRenderer.h, which
// turns the CPU backend's kernel descriptions into CUDA C++) and the `cuda`
// device (runtime/cuda/CudaDevice.h), which launches them. No MLIR, no CUDA
// headers: plain data that the program file can carry.
//
// A Program lowered for the CPU backend (codegen/CpuLowering.h) is also the
// Program the cuda device runs: its Kernel steps index a kernel table, and
// on the cuda device that table is a CudaKernelBundle's `kernels`. Kernel i
// is the `extern "C" __global__` function `kernels[i].entry` of the bundle's
// one module (every kernel of a Program in one translation unit). Its
// parameters are one pointer per buffer of the step, in the step's order:
// the inputs, the output, then the launch's extra outputs
// (runtime/core/StepPayloads.h's KernelLaunch). Shapes are compiled into the
// source; no other parameter is passed.
//
// Launch shapes are not in the kernel: every kernel is written for any
// blockDim.x that is a multiple of the warp size (32) up to 1024 and any
// gridDim.x >= 1 (grid-stride loops), and the device picks both at run time
// from the driver's occupancy calculator and the device's properties
// (cudaLaunchShape). `kind` says what one unit of `work` is:
//
//   Elements  one thread per work item (an element, or a vector of
//             `vector` elements: 16-byte loads and stores)
//   WarpRows  one warp per row: `work` rows of `rowLength` elements,
//             reduced with warp shuffles
//   BlockRows one block per row (rows too long for a warp): shuffles within
//             each warp, then the warps' partials through shared memory
//
// Results do not depend on the launch shape: reductions combine partials in
// an order fixed by the row length alone, and no value goes through an
// atomic (a long row's chunks, a WarpRows work item each, count themselves
// done on a per-row counter: the last one's warp combines them).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_CUDAKERNELS_H
#define EINC_RUNTIME_CUDAKERNELS_H

#include "runtime/base/Fields.h"
#include "runtime/base/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace einrt {

enum class CudaLaunchKind : uint8_t { Elements, WarpRows, BlockRows };
const char *cudaLaunchKindName(CudaLaunchKind k);

/// The largest block every kernel is written for (see above).
constexpr int32_t kCudaKernelMaxBlock = 1024;

/// One rendered kernel.
struct CudaKernelInfo {
  std::string entry; // the __global__ function's name
  CudaLaunchKind kind = CudaLaunchKind::Elements;
  int64_t work = 0;      // work items (Elements) or rows (WarpRows, BlockRows)
  int64_t rowLength = 0; // elements per row (WarpRows, BlockRows)
  int32_t vector = 1;    // elements per work item (Elements)
  int32_t params = 0;    // pointer parameters: inputs, output, extra outputs
  std::string note;      // the ops it computes and their .ein locations
  /// The parameters it reads or writes as 16-byte vectors (ein_load,
  /// ein_store): each must start 16-byte aligned (cudaMisalignedParameter).
  std::vector<int32_t> aligned;
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("entry", self.entry);
    visit("kind", self.kind);
    visit("work", self.work);
    visit("row_length", self.rowLength);
    visit("vector", self.vector);
    visit("params", self.params);
    visit("note", self.note);
    visit("aligned", self.aligned);
  }
};

/// Compiled code for one architecture: a cubin ("sm_90") or PTX
/// ("compute_90", which the driver compiles for newer devices).
struct CudaImage {
  std::string arch;
  bool ptx = false;
  std::string bytes;
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("arch", self.arch);
    visit("ptx", self.ptx);
    visit("bytes", asBytes(self.bytes));
  }
};

/// Every kernel of a Program (or of several Programs sharing one kernel
/// table) as one CUDA translation unit and its compiled images.
struct CudaKernelBundle {
  std::vector<CudaKernelInfo> kernels; // indexed as the Programs' Kernel steps
  std::string source;                  // the CUDA C++ translation unit
  std::vector<CudaImage> images;       // may be empty: the device compiles `source`
  std::string compilerVersion;         // NVRTC's "major.minor" that made `images`
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("kernels", self.kernels);
    visit("source", asBytes(self.source));
    visit("images", self.images);
    visit("compiler_version", self.compilerVersion);
  }
};

/// The alignment in bytes that CudaKernelInfo::aligned parameters need.
constexpr int64_t kCudaVectorBytes = 16;

/// "" when every parameter `kernel` accesses as 16-byte vectors starts
/// 16-byte aligned at `params` (the launch's pointers, in parameter order);
/// else the first that does not: "parameter 1 starts 4 bytes past a
/// 16-byte boundary". A view sits at any element offset of its root
/// (runtime/core/Arena.h), and such an access there would kill the context.
std::string cudaMisalignedParameter(const CudaKernelInfo &kernel,
                                    const std::vector<const void *> &params);

/// "" when `bundle` is well-formed: every kernel named (a C identifier,
/// names unique), its kind's work and row length in range, 1 to 512
/// parameters, a vector of 1 to 16, aligned parameters among them; every image's architecture
/// "sm_XY", "sm_XYa" or "compute_XY", each at most once, with bytes. Else the first problem. (The
/// program file's reader runs it.)
std::string checkCudaKernelBundle(const CudaKernelBundle &bundle);

/// The bundle as the program file's "cuda" kernel section
/// (ModelBundle::kernelSections; runtime/base/FieldsJson.h's blob), and back:
/// a section that does not decode is Corrupt.
Expected<std::vector<uint8_t>> encodeCudaKernelBundle(const CudaKernelBundle &bundle);
Expected<CudaKernelBundle> decodeCudaKernelBundle(const std::vector<uint8_t> &section);

/// What cudaLaunchShape needs of a device (read through the driver).
struct CudaDeviceProperties {
  int32_t multiprocessors = 0;
  int32_t maxThreadsPerBlock = 0;
  int32_t maxThreadsPerMultiprocessor = 0;
  int32_t warpSize = 32;
  int64_t maxGridX = 0;
  int32_t major = 0, minor = 0; // compute capability
};

/// What the driver's occupancy calculator says of one kernel
/// (cuOccupancyMaxPotentialBlockSize, cuOccupancyMaxActiveBlocksPerMultiprocessor).
struct CudaOccupancy {
  int32_t blockSize = 0;                     // threads per block it suggests
  int32_t activeBlocksPerMultiprocessor = 0; // at that block size
};

struct CudaLaunchShape {
  uint32_t grid = 1, block = 32;
};

/// The image of `bundle` a device of compute capability major.minor loads:
/// the cubin for exactly its sm_XY, else for sm_XYa (architecture-specific:
/// that architecture only), else the highest cubin sm_XW of the same major
/// with W < Y (a cubin runs on later minors of its major, never across
/// majors: sm_80's on sm_86 and sm_89), else the newest PTX not newer than
/// it (the driver compiles PTX for newer devices), else Unavailable naming
/// the architectures the bundle has. Pure: unit-tested.
Expected<const CudaImage *> cudaImageFor(const CudaKernelBundle &bundle, int major, int minor);

/// The grid and block for `kernel` on a device: Elements and WarpRows use
/// the occupancy block size (a multiple of the warp size) and a grid that
/// covers the work but no more than fills the device once (grid-stride
/// loops do the rest); BlockRows one block per row. Pure: unit-tested.
CudaLaunchShape cudaLaunchShape(const CudaKernelInfo &kernel, const CudaDeviceProperties &device,
                                const CudaOccupancy &occupancy);

} // namespace einrt

#endif // EINC_RUNTIME_CUDAKERNELS_H
