//===- KernelSpec.cpp - The backend-neutral kernel helpers ----------------===//
#include "codegen/KernelSpec.h"

namespace ein::codegen {

const char *elemName(ElemKind k) {
  static const char *names[] = {"f32", "i32", "i1", "bf16", "f16"};
  return names[int(k)];
}

bool isUnary(llvm::StringRef n) {
#define EIN_UNARY_OP(Kind, name, Types, Rounding, Dsl, Ref, CudaF32, CudaI32, CpuF32, CpuI32)      \
  n == "ein." name ||
  return
#include "runtime/base/ElementwiseOps.def"
      false;
}
bool isBinary(llvm::StringRef n) {
#define EIN_BINARY_OP(Kind, name, Types, Rounding, Ref, CudaF32, CudaI32, CpuF32, CpuI32)          \
  n == "ein." name ||
  return
#include "runtime/base/ElementwiseOps.def"
      false;
}

std::vector<ReduceGroup> reduceGroups(const KernelSpec &s) {
  const std::vector<int64_t> &inShape = s.operands[0].shape;
  std::vector<char> reduced(inShape.size(), 0);
  for (int64_t d : s.dims)
    reduced[d] = 1;
  std::vector<int64_t> outShape;
  for (size_t d = 0; d < inShape.size(); ++d)
    if (!reduced[d])
      outShape.push_back(inShape[d]);
  std::vector<int64_t> os = stridesOf(outShape), is = stridesOf(inShape);
  std::vector<int64_t> inToOut(inShape.size(), 0);
  for (size_t d = 0, o = 0; d < inShape.size(); ++d)
    if (!reduced[d])
      inToOut[d] = os[o++];
  std::vector<ReduceGroup> groups;
  for (size_t d = 0; d < inShape.size(); ++d) {
    if (inShape[d] == 1)
      continue; // a size-1 dim adds no iterations
    if (!groups.empty() && groups.back().reduced == bool(reduced[d])) {
      groups.back().size *= inShape[d];
      groups.back().inStride = is[d];
      groups.back().outStride = inToOut[d];
    } else {
      groups.push_back({inShape[d], is[d], inToOut[d], bool(reduced[d])});
    }
  }
  return groups;
}

} // namespace ein::codegen
