//===- ScalarOps.h - The reference kernels' scalar arithmetic ---*- C++ -*-===//
//
// What one element of a primitive op computes, for T = float, double,
// int32_t: i32 arithmetic wraps (two's complement, never undefined
// behaviour); max/min propagate NaN; integer division by zero sets `fault`.
// runtime/core/StepKinds.def's elementwise rows are written in these.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_SCALAROPS_H
#define EINC_RUNTIME_SCALAROPS_H

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace einrt {
namespace ref {

template <class T> constexpr bool isFloatT() { return std::is_floating_point<T>::value; }
template <class T> constexpr bool isI32T() { return std::is_same<T, int32_t>::value; }

template <class T> T addT(T a, T b) {
  if constexpr (isI32T<T>())
    return int32_t(uint32_t(a) + uint32_t(b));
  else
    return a + b;
}
template <class T> T subT(T a, T b) {
  if constexpr (isI32T<T>())
    return int32_t(uint32_t(a) - uint32_t(b));
  else
    return a - b;
}
template <class T> T mulT(T a, T b) {
  if constexpr (isI32T<T>())
    return int32_t(uint32_t(a) * uint32_t(b));
  else
    return a * b;
}
template <class T> T negT(T x) { return subT<T>(0, x); }
template <class T> T absT(T x) {
  if constexpr (isFloatT<T>())
    return std::fabs(x);
  else
    return x < 0 ? negT(x) : x;
}
/// Integer division truncates; INT_MIN / -1 wraps to INT_MIN; by zero sets
/// `fault`.
template <class T> T divT(T a, T b, bool &fault) {
  if constexpr (isFloatT<T>()) {
    return a / b;
  } else {
    if (b == 0) {
      fault = true;
      return 0;
    }
    return (a == std::numeric_limits<T>::min() && b == -1) ? a : a / b;
  }
}
template <class T> T maxProp(T a, T b) {
  if constexpr (isFloatT<T>())
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<T>::quiet_NaN();
  return a > b ? a : b;
}
template <class T> T minProp(T a, T b) {
  if constexpr (isFloatT<T>())
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<T>::quiet_NaN();
  return a < b ? a : b;
}

} // namespace ref
} // namespace einrt

#endif // EINC_RUNTIME_SCALAROPS_H
