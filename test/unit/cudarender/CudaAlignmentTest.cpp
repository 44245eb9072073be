//===- CudaAlignmentTest.cpp - Views off a 16-byte boundary on the cuda device ===//
//
// Issue 26, item 2, without a GPU: a view sits at its root's address plus
// offset × element size, unrounded (runtime/core/Arena.h), so where the cuda
// device places a model's buffers (the memory plan with its storage sizes,
// in a 256-byte-aligned allocation) some start off a 16-byte boundary. A
// rendered kernel that moves such a buffer in 16-byte vectors
// (CudaKernelInfo::aligned) is refused when the executor is created
// (cudaAlignmentProblem, the device's bind), naming the step, the kernel and
// the buffer, instead of a fault that kills the context; the GEMMs' calls
// carry the alignment of their buffers into cuBLASLt's heuristic.
//
//===----------------------------------------------------------------------===//
#include "test/unit/StatusTesting.h"
#include "tools/driver/Compile.h"
#include "tools/driver/Frontend.h"

#include "codegen/CpuKernelGen.h"
#include "codegen/CudaRenderer.h"
#include "dsl/Elaborator.h"
#include "runtime/core/Arena.h"
#include "runtime/cuda/CublasLtMapping.h"
#include "runtime/cuda/CudaDevice.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

namespace {

struct Compiled {
  std::unique_ptr<mlir::MLIRContext> context;
  einc::CompiledModel model;
};

/// The training step of `path` (from the source tree) with `overrides`.
bool compile(const std::string &path,
             const std::vector<std::pair<std::string, std::string>> &overrides, Compiled &out) {
  out.context = std::make_unique<mlir::MLIRContext>();
  ein::dsl::registerElaboratorDialects(*out.context);
  einc::CompileRequest request;
  request.modelPath = std::string(EINC_SOURCE_DIR) + "/" + path;
  request.overrides = overrides;
  einc::Frontend fe;
  if (!fe.load(request.modelPath) || !fe.parse())
    return false;
  auto module = fe.lower(*out.context, request.overrides, request.use);
  fe.printDiagnostics();
  if (!module)
    return false;
  request.functions = {"train_step"};
  request.settings = fe.settings;
  request.frontend = &fe;
  return einc::compileModel(*module, request, out.model);
}

/// Where the cuda device puts a Program's buffers: runtime/core/Arena.h's plan
/// with its storage sizes, in an allocation aligned to 256 bytes.
struct CudaPlacement {
  einrt::MemoryPlan plan;
  explicit CudaPlacement(const einrt::Program &p) {
    einrt::StorageSizes sizes;
    for (uint8_t t = 0; t < einrt::kDTypeCount; ++t)
      sizes.bytes[t] = einrt::storageBytes(einrt::cudaStorageOf(einrt::DType(t)));
    plan = einrt::planMemory(p, sizes);
  }
  /// Bytes from the allocation's start.
  int64_t offset(int32_t b) const {
    return plan.arenaOffset[size_t(b)] >= 0 ? plan.arenaOffset[size_t(b)]
                                            : plan.arenaBytes + plan.residentOffset[size_t(b)];
  }
  int32_t alignment(int32_t b) const {
    return einrt::addressAlignment(reinterpret_cast<void *>((uintptr_t(1) << 32) + offset(b)));
  }
};

/// Every buffer's address where the cuda device puts it.
std::vector<const void *> addressesOf(const einrt::Program &p, const CudaPlacement &place) {
  std::vector<const void *> at;
  for (size_t b = 0; b < p.buffers.size(); ++b)
    at.push_back(reinterpret_cast<const void *>((uintptr_t(1) << 32) + place.offset(int32_t(b))));
  return at;
}

// odd-unpack.ein's halves sit 63 elements apart (252 f32 bytes, 126 bf16
// bytes) and the backward writes their gradients into views of one buffer:
// a kernel step moves one of them in 16-byte vectors, which the check
// refuses, naming the step, the kernel and the buffer. Where every buffer
// starts aligned (gpt at its own dims' multiples of 16 bytes, or the same
// model placed at aligned addresses) nothing is refused.
TEST(CudaAlignment, KernelsOnUnalignedViewsAreRefused) {
  for (std::string precision : {"fp32", "bf16-mixed"}) {
    SCOPED_TRACE(precision);
    Compiled m;
    ASSERT_TRUE(
        compile("test/unit/cudarender/Inputs/odd-unpack.ein", {{"precision", precision}}, m));
    const einrt::Program *p = m.model.program("train_step");
    ASSERT_NE(p, nullptr);
    einrt::CudaKernelBundle bundle = ein::codegen::renderCudaBundle(*m.model.kernels, {p});
    CudaPlacement place(*p);
    std::vector<const void *> at = addressesOf(*p, place);
    std::string why = einrt::cudaAlignmentProblem(*p, bundle, at).message();
    ASSERT_FALSE(why.empty());
    std::printf("[cuda-alignment] %s: %s\n", precision.c_str(), why.c_str());
    EXPECT_NE(why.find("): kernel 'k"), std::string::npos) << why;
    EXPECT_NE(why.find("-byte vectors, but it starts "), std::string::npos) << why;
    EXPECT_NE(why.find(" bytes past a 16-byte boundary (a view 63 elements into buffer "),
              std::string::npos)
        << why;
    EXPECT_NE(why.find("the cuda device does not run this program (the cpu backend does)"),
              std::string::npos)
        << why;
    EXPECT_EQ(why.rfind("step ", 0), 0u) << why;
    // The same buffers at addresses rounded up to 16 bytes: nothing refused.
    for (const void *&a : at)
      a = reinterpret_cast<const void *>((reinterpret_cast<uintptr_t>(a) + 15) / 16 * 16);
    EXPECT_EQ(einrt::cudaAlignmentProblem(*p, bundle, at).message(), "");
  }
  Compiled gpt;
  ASSERT_TRUE(compile(
      "examples/gpt.ein",
      {{"batch", "2"}, {"ctx", "16"}, {"d", "64"}, {"layers", "1"}, {"vocab", "256"}}, gpt));
  const einrt::Program *p = gpt.model.program("train_step");
  ASSERT_NE(p, nullptr);
  einrt::CudaKernelBundle bundle = ein::codegen::renderCudaBundle(*gpt.model.kernels, {p});
  EXPECT_EQ(einrt::cudaAlignmentProblem(*p, bundle, addressesOf(*p, CudaPlacement(*p))).message(),
            "");
}

// gpt at odd dims: q, k and v are views of the qkv product 50 elements
// (200 f32 bytes) apart, read by the attention GEMMs. Each call's
// alignments are at most its buffers' where the cuda device places them
// (the heuristic is asked for algorithms valid there), some below 16.
TEST(CudaAlignment, GemmCallsCarryTheirBuffersAlignment) {
  Compiled m;
  ASSERT_TRUE(compile("examples/gpt.ein",
                      {{"batch", "1"},
                       {"ctx", "5"},
                       {"d", "10"},
                       {"heads", "2"},
                       {"layers", "1"},
                       {"vocab", "40"},
                       {"precision", "fp32"}},
                      m));
  const einrt::Program *p = m.model.program("train_step");
  ASSERT_NE(p, nullptr);
  CudaPlacement place(*p);
  int32_t least = 256;
  for (const einrt::Step &step : p->steps) {
    const auto *g = std::get_if<einrt::GemmDesc>(&step.payload);
    if (!g)
      continue;
    einrt::LtAlignments bases{place.alignment(step.inputs[0]),
                              place.alignment(step.inputs[1]),
                              place.alignment(step.output),
                              {}};
    std::vector<einrt::DType> types;
    for (const std::vector<int32_t> *list : {&g->post.operands, &g->post.outputs})
      for (int32_t b : *list) {
        types.push_back(p->buffers[size_t(b)].dtype);
        bases.post.push_back(place.alignment(b));
      }
    einrt::CublasLtPlan calls;
    EINC_ASSERT_OK_AND_ASSIGN(
        calls, einrt::mapGemmToCublasLt(*g, {}, g->post.present() ? &types : nullptr, &bases));
    for (const einrt::CublasLtCall &call : calls.calls) {
      EXPECT_LE(call.alignA, bases.b); // cuBLASLt's A is the step's B
      EXPECT_LE(call.alignB, bases.a);
      if (!call.separateD)
        EXPECT_LE(call.alignC, bases.c);
      least = std::min({least, call.alignA, call.alignB, call.alignC});
    }
  }
  EXPECT_LT(least, 16); // below what a 16-byte access needs
  std::printf("[cuda-alignment] gpt at odd dims: GEMM calls as little as %d-byte aligned\n", least);
}

} // namespace
