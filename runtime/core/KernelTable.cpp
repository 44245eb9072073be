//===- KernelTable.cpp - Compiled kernels linked in as object code --------===//
#include "runtime/core/KernelTable.h"

namespace einrt {

std::string targetSymbolPart(const std::string &target) {
  std::string s = target;
  for (char &c : s)
    if (c == '-' || c == '.')
      c = '_';
  return s;
}

static std::string base(const std::string &prefix, const std::string &target) {
  return prefix + "_" + targetSymbolPart(target);
}

std::string kernelSymbol(const std::string &prefix, const std::string &target, int64_t index) {
  return base(prefix, target) + "_k" + std::to_string(index);
}

std::string kernelTableSymbol(const std::string &prefix, const std::string &target) {
  return base(prefix, target) + "_kernels";
}

std::string kernelCountSymbol(const std::string &prefix, const std::string &target) {
  return base(prefix, target) + "_kernel_count";
}

bool isSymbolPrefix(const std::string &prefix) {
  if (prefix.empty())
    return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    char c = prefix[i];
    bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(i > 0 && c >= '0' && c <= '9'))
      return false;
  }
  return true;
}

std::vector<KernelEntry> kernelTable(const einrt_kernel_entry *entries, int64_t count) {
  std::vector<KernelEntry> table;
  table.reserve(size_t(count > 0 ? count : 0));
  for (int64_t i = 0; i < count; ++i)
    table.emplace_back(entries[i].fn, entries[i].extent);
  return table;
}

} // namespace einrt
