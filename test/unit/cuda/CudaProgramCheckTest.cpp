//===- CudaProgramCheckTest.cpp - Which Programs the cuda device refuses --===//
//
// cudaProgramProblem (runtime/cuda/CudaDevice.h), the cuda device's check(),
// without a GPU: reference steps other than Copy are refused by name, as
// are kernels missing from the bundle or called with another number of
// buffers and GEMMs cuBLASLt cannot run; storage types as on the CPU.
//
//===----------------------------------------------------------------------===//
#include "../runtime/ProgramBuilder.h"

#include "runtime/cuda/CudaDevice.h"

#include <gtest/gtest.h>

namespace einrt {
namespace {

using test::ProgramBuilder;

CudaKernelBundle bundleOf(std::vector<int32_t> params) {
  CudaKernelBundle b;
  for (size_t i = 0; i < params.size(); ++i) {
    CudaKernelInfo k;
    k.entry = "kernel_" + std::to_string(i);
    k.params = params[i];
    k.work = 16;
    b.kernels.push_back(k);
  }
  return b;
}

TEST(CudaProgramCheck, MatmulsKernelsAndCopiesRun) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {4, 8});
  int32_t w = b.arg(DType::F32, {8, 4});
  int32_t y = b.step(StepKind::Matmul, {x, w}, DType::F32, {4, 4}, {{1, 4, 4, 8, 0, 0, 8, 4, 4}});
  int32_t z = b.step(StepKind::Kernel, {y}, DType::F32, {4, 4}, {}, 0);
  int32_t r = b.step(StepKind::Copy, {z}, DType::F32, {4, 4});
  b.result(r);
  ASSERT_EQ(b.p.validate().message(), "");
  CudaKernelBundle bundle = bundleOf({2});
  EXPECT_EQ(cudaProgramProblem(b.p, &bundle, {}).message(), "");
}

TEST(CudaProgramCheck, ReferenceStepsOtherThanCopyAreRefusedByName) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {4, 8});
  QuantizeSpec q;
  q.format = "e4m3";
  int32_t y = b.op(StepKind::Quantize, {x}, DType::F32, {4, 8}, q, "ein.quantize at model.ein:3:5");
  b.result(y);
  ASSERT_EQ(b.p.validate().message(), "");
  std::string why = cudaProgramProblem(b.p, nullptr, {}).message();
  EXPECT_NE(why.find("step 0 (quantize, ein.quantize at model.ein:3:5)"), std::string::npos) << why;
  EXPECT_NE(why.find("not on the cuda device yet"), std::string::npos) << why;

  ProgramBuilder e;
  int32_t a = e.arg(DType::F32, {4});
  e.result(e.step(StepKind::Exp, {a}, DType::F32, {4}));
  why = cudaProgramProblem(e.p, nullptr, {}).message();
  EXPECT_NE(why.find("step 0 (exp"), std::string::npos) << why;
}

TEST(CudaProgramCheck, KernelsMustBeInTheBundleWithTheirBuffers) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {4});
  b.result(b.step(StepKind::Kernel, {x}, DType::F32, {4}, {}, 1, "fused add at m.ein:1:1"));
  ASSERT_EQ(b.p.validate().message(), "");
  std::string why = cudaProgramProblem(b.p, nullptr, {}).message();
  EXPECT_NE(why.find("given no kernels"), std::string::npos) << why;
  CudaKernelBundle one = bundleOf({2});
  why = cudaProgramProblem(b.p, &one, {}).message();
  EXPECT_NE(why.find("launches kernel 1, which is not in the cuda device's bundle of 1 kernels"),
            std::string::npos)
      << why;
  CudaKernelBundle wrong = bundleOf({2, 3});
  why = cudaProgramProblem(b.p, &wrong, {}).message();
  EXPECT_NE(why.find("passes 2 buffers to kernel 1 ('kernel_1'), which takes 3"), std::string::npos)
      << why;
  CudaKernelBundle right = bundleOf({2, 2});
  EXPECT_EQ(cudaProgramProblem(b.p, &right, {}).message(), "");
}

TEST(CudaProgramCheck, GemmsCublasLtCannotRun) {
  ProgramBuilder b;
  // f32 operands into a bf16 result: a valid Program (the CPU widens and
  // rounds), not a cuBLASLt type combination.
  int32_t x = b.arg(DType::F32, {4, 8});
  int32_t w = b.arg(DType::F32, {8, 4});
  b.result(b.step(StepKind::Matmul, {x, w}, DType::BF16, {4, 4}, {{1, 4, 4, 8, 0, 0, 8, 4, 4}}));
  ASSERT_EQ(b.p.validate().message(), "");
  std::string why = cudaProgramProblem(b.p, nullptr, {}).message();
  EXPECT_NE(why.find("step 0 (matmul, test matmul): cuBLASLt has no GEMM of A 'f32' and B 'f32' "
                     "into C 'bf16'"),
            std::string::npos)
      << why;
}

TEST(CudaProgramCheck, StorageAsOnTheCpu) {
  EXPECT_EQ(cudaStorageOf(DType::F32), StorageType::F32);
  EXPECT_EQ(cudaStorageOf(DType::BF16), StorageType::BF16);
  EXPECT_EQ(cudaStorageOf(DType::F16), StorageType::F16);
  EXPECT_EQ(cudaStorageOf(DType::I32), StorageType::I32);
  EXPECT_EQ(cudaStorageOf(DType::I1), StorageType::U8);
}

} // namespace
} // namespace einrt

namespace einrt {
namespace {

// A Matmul with an epilogue (GemmPost): its kernel is in the bundle and
// takes the epilogue's operands and outputs, whether or not cuBLASLt fuses it.
TEST(CudaProgramCheck, EpilogueKernelsMustBeInTheBundle) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {4, 8});
  int32_t w = b.arg(DType::F32, {8, 4});
  int32_t bias = b.arg(DType::F32, {4});
  int32_t c = b.step(StepKind::Matmul, {x, w}, DType::F32, {4, 4}, {{1, 4, 4, 8, 0, 0, 8, 4, 4}});
  int32_t out = b.buffer(DType::F32, {4, 4}, BufferRole::Temp);
  Step &s = b.p.steps.back();
  s.inputs.push_back(bias);
  GemmPost &post = s.as<GemmDesc>().post;
  post.kernel = 0;
  post.operands = {c, bias};
  post.outputs = {out};
  b.result(out);
  ASSERT_EQ(b.p.validate().message(), "");
  std::string why = cudaProgramProblem(b.p, nullptr, {}).message();
  EXPECT_NE(why.find("step 0 (matmul, test matmul)'s epilogue launches kernel 0, but the cuda "
                     "device was given no kernels"),
            std::string::npos)
      << why;
  CudaKernelBundle two = bundleOf({2});
  why = cudaProgramProblem(b.p, &two, {}).message();
  EXPECT_NE(why.find("passes 3 buffers to kernel 0 ('kernel_0'), which takes 2"), std::string::npos)
      << why;
  CudaKernelBundle three = bundleOf({3});
  EXPECT_EQ(cudaProgramProblem(b.p, &three, {}).message(), "");

  // Where the epilogue's kernel runs (cuBLASLt did not fuse it), the
  // buffers it moves in 16-byte vectors must start 16-byte aligned.
  three.kernels[0].aligned = {0, 2}; // C and the result, not the bias
  std::vector<const void *> at(b.p.buffers.size());
  for (size_t i = 0; i < at.size(); ++i)
    at[i] = reinterpret_cast<const void *>(uintptr_t(0x10000) * (i + 1));
  at[size_t(bias)] = reinterpret_cast<const void *>(uintptr_t(0x50004)); // read element-wise
  EXPECT_EQ(cudaAlignmentProblem(b.p, three, at, {true}).message(), "");
  at[size_t(out)] = reinterpret_cast<const void *>(uintptr_t(0x60008));
  EXPECT_EQ(cudaAlignmentProblem(b.p, three, at, {false}).message(), ""); // fused: no kernel runs
  EXPECT_EQ(cudaAlignmentProblem(b.p, three, at, {true}).message(),
            "step 0 (matmul, test matmul): kernel 'kernel_0' moves buffer " + std::to_string(out) +
                " ('" + b.p.buffers[size_t(out)].name +
                "') in 16-byte vectors, but it starts 8 bytes past a 16-byte boundary; the cuda "
                "device does not run this program (the cpu backend does)");
}

TEST(CudaProgramCheck, VectorParametersStartAligned) {
  CudaKernelInfo k;
  k.entry = "k0_add";
  k.params = 3;
  k.work = 4;
  k.aligned = {0, 2};
  auto p = [](uintptr_t a) { return reinterpret_cast<const void *>(a); };
  EXPECT_EQ(cudaMisalignedParameter(k, {p(0x100), p(0x204), p(0x310)}), "");
  EXPECT_EQ(cudaMisalignedParameter(k, {p(0x100), p(0x200), p(0x306)}),
            "parameter 2 starts 6 bytes past a 16-byte boundary");
  CudaKernelBundle b;
  b.kernels = {k};
  b.source = "x";
  EXPECT_EQ(checkCudaKernelBundle(b), "");
  b.kernels[0].aligned = {3};
  EXPECT_EQ(checkCudaKernelBundle(b), "kernel 0 (k0_add): aligned parameter 3 of 3");
}

} // namespace
} // namespace einrt
