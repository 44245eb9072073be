//===- CudaRenderer.h - The CPU backend's kernels as CUDA C++ -*- C++ -*-===//
//
// The CUDA backend renders the very kernel descriptions the CPU backend
// compiles (KernelSpec, codegen/KernelSpec.h: one per entry of a
// KernelSpecTable, e.g. a KernelCompiler's table) as CUDA C++ source, one `extern "C" __global__`
// function per kernel, written to runtime/cuda/CudaKernels.h's contract: one
// pointer parameter per buffer of the step (inputs, output, extra outputs),
// shapes compiled in, grid-stride loops valid for any launch shape (blockDim
// a multiple of 32 up to 1024), results independent of the launch shape, no
// value through an atomic (a chunked row's counter only picks which warp
// combines: CudaRenderChunks.cpp).
//
// Kernel families (docs/cuda-backend.md):
//   elementwise  unary, binary, cmp, select, cast, stochastic_round, reshape
//                (a copy) and fused bodies: Elements, `vector` elements per
//                thread (16-byte loads and stores of the widest type), a
//                scalar tail; Scalar / Prefix / Suffix operands read in place
//   rows         a reduce over trailing dims: WarpRows (a warp per row) or
//                BlockRows (a block per row, 1024 fixed partials), except
//                narrow sums (sequential, in order) and short rows; a reduce
//                over leading dims of 256 rows or more: BlockRows over
//                tiles of columns
//   outputs      any other reduce (e.g. a narrow sum over rows: one thread
//                per kept column walking the rows in order), transpose,
//                broadcast, iota, gather, scatter_add (one thread per column
//                and chunk of rows, ids in order): Elements
//
// The math is the CPU kernels', operation for operation: f32 arithmetic in
// explicitly rounded intrinsics (__fadd_rn, ...: never contracted to FMA,
// whatever -fmad says), CUDA's expf/logf/tanhf/powf (not the fast-math
// intrinsics; their error bounds are in docs/cuda-backend.md), narrow values
// rounded to nearest even wherever one is made, NaN-propagating max / min.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_CUDARENDERER_H
#define EINC_CODEGEN_CUDARENDERER_H

#include "runtime/core/Program.h"
#include "runtime/cuda/CudaKernels.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ein::codegen {

struct KernelSpec; // codegen/KernelSpec.h
class KernelSpecTable;

/// One kernel rendered: its launch description and its source (a comment,
/// device helpers it needs, the entry). `narrow` says whether the source
/// uses bf16 / f16 (cuda_bf16.h, cuda_fp16.h).
struct CudaKernelSource {
  einrt::CudaKernelInfo info;
  std::string text;
  bool bf16 = false, f16 = false;
};

/// Renders `spec` as the kernel `k<index>_<name>`. `note` (the ops it
/// computes and their .ein locations, e.g. from the Program steps that
/// launch it) goes into the comment and into info.note.
CudaKernelSource renderCudaKernel(const KernelSpec &spec, int64_t index, const std::string &note);

/// The name after `k<index>_`: what the kernel computes ("fused_sub_exp_mul",
/// "reduce_sum", "cast_f32_bf16", ...).
std::string cudaKernelBaseName(const KernelSpec &spec);

/// What the kernels of a translation unit share: the headers, the scalar
/// helpers (ein_add, ein_max, ...), vector loads and stores, the thread
/// indexing of grid-stride loops.
std::string cudaPrelude(bool bf16, bool f16);

/// Every kernel of `kernels`' table as one translation unit (kernel i is
/// bundle.kernels[i], named k<i>_...); notes from the Kernel steps of
/// `programs` that launch each kernel. `images` is left empty (NVRTC fills
/// it: runtime/cuda/Nvrtc.h).
einrt::CudaKernelBundle renderCudaBundle(const KernelSpecTable &kernels,
                                         llvm::ArrayRef<const einrt::Program *> programs = {});

/// The notes of the Kernel steps of `programs` (and of the Matmul steps'
/// epilogues: the epilogue part of their notes), per kernel index (`count`
/// entries): "ein.add at f.ein:3:5; ein.add at f.ein:9:7", distinct notes in
/// program order, at most a few (then "and N more").
std::vector<std::string> cudaKernelNotes(llvm::ArrayRef<const einrt::Program *> programs,
                                         int64_t count);

} // namespace ein::codegen

#endif // EINC_CODEGEN_CUDARENDERER_H
