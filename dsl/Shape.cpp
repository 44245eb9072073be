//===- Shape.cpp - Tensor shapes with named axes --------------------------===//
#include "dsl/Shape.h"

#include <cstdio>

namespace ein::dsl {

std::string formatAxes(llvm::ArrayRef<Axis> axes) {
  std::string out = "[";
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i)
      out += ", ";
    // An anonymous axis is named by its size: print it once.
    if (axes[i].name == std::to_string(axes[i].size))
      out += axes[i].name;
    else
      out += axes[i].name + "=" + std::to_string(axes[i].size);
  }
  return out + "]";
}

std::string formatNumber(double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string countOf(int64_t n, const char *one, const char *many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

std::optional<int64_t> elementCount(llvm::ArrayRef<Axis> axes) {
  int64_t n = 1;
  for (const Axis &a : axes) {
    auto r = checkedMul(n, a.size);
    if (!r)
      return std::nullopt;
    n = *r;
  }
  return n;
}

void DimTable::set(const std::string &name, int64_t size) {
  auto it = sizes_.find(name);
  if (it != sizes_.end()) {
    it->second = size;
    for (auto &entry : ordered_)
      if (entry.first == name)
        entry.second = size;
    return;
  }
  sizes_.emplace(name, size);
  ordered_.emplace_back(name, size);
}

std::optional<int64_t> DimTable::lookup(llvm::StringRef name) const {
  auto it = sizes_.find(name);
  if (it == sizes_.end())
    return std::nullopt;
  return it->second;
}

} // namespace ein::dsl
