//===- DType.h - Element types of Program buffers ---------------*- C++ -*-===//
#ifndef EINC_RUNTIME_DTYPE_H
#define EINC_RUNTIME_DTYPE_H

#include <cstdint>

namespace einrt {

enum class DType : uint8_t { F32, BF16, F16, F64, I32, I1 };
constexpr uint8_t kDTypeCount = 6;

/// Bytes per element as stored (i1 is one byte).
int64_t dtypeSize(DType t);
const char *dtypeName(DType t);
bool isFloat(DType t);

} // namespace einrt

#endif // EINC_RUNTIME_DTYPE_H
