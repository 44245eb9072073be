//===- Shape.cpp - Tensor shapes with named axes --------------------------===//
#include "dsl/Shape.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/bit.h"

#include <algorithm>
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

namespace {

/// How many edits a misspelling may have, given the shorter name's length.
unsigned typoLimit(size_t shorterLength) {
  if (shorterLength < 3)
    return 0; // `d`, `e`, `k`, `hd`: every short name is near another one
  return shorterLength < 8 ? 1 : 2;
}

/// Identifiers longer than this are not compared (the distance is quadratic
/// and nobody misspells a name that long into another dim's).
constexpr size_t kMaxComparedLength = 64;

/// Distance-table cells one program may spend on the search (about a tenth of
/// a second). A real program spends a few thousand; only crafted ones (15,000
/// dims and 15,000 local names, all permutations of the same letters, which
/// the character-set filter cannot tell apart) get near it, and past it their
/// remaining names are not searched rather than the check taking minutes.
constexpr uint64_t kSearchBudgetCells = uint64_t(50) << 20;

llvm::StringRef withoutNumberSuffix(llvm::StringRef name) { return name.rtrim("0123456789_"); }

/// One bit per identifier character (63 of them; anything else shares the
/// last bit). An edit changes the set of characters a name has by at most two
/// (a changed letter), a swap not at all, so names whose sets differ by more
/// than 2 * limit are further apart than limit: a test of a few instructions
/// that spares the distance for nearly every pair.
uint64_t characterSet(llvm::StringRef name) {
  uint64_t set = 0;
  for (char c : name) {
    unsigned bit = c >= 'a' && c <= 'z'   ? unsigned(c - 'a')
                   : c >= 'A' && c <= 'Z' ? 26 + unsigned(c - 'A')
                   : c >= '0' && c <= '9' ? 52 + unsigned(c - '0')
                   : c == '_'             ? 62
                                          : 63;
    set |= uint64_t(1) << bit;
  }
  return set;
}

} // namespace

void DimTable::set(const std::string &name, int64_t size, SourceLoc declaredAt) {
  if (declaredAt.isValid())
    locs_[name] = declaredAt;
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
  characterSets_.push_back(characterSet(name));
  misspeltCache_.clear();
}

std::optional<int64_t> DimTable::lookup(llvm::StringRef name) const {
  auto it = sizes_.find(name);
  if (it == sizes_.end())
    return std::nullopt;
  return it->second;
}

SourceLoc DimTable::declaredAt(llvm::StringRef name) const {
  auto it = locs_.find(name);
  return it == locs_.end() ? SourceLoc{} : it->second;
}

unsigned typoDistance(llvm::StringRef a, llvm::StringRef b, unsigned limit) {
  // d[i][j]: distance between the first i characters of a and the first j
  // of b; three rows suffice (a transposition looks two rows back).
  size_t n = a.size(), m = b.size();
  llvm::SmallVector<unsigned, 66> older(m + 1), prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j)
    prev[j] = unsigned(j);
  unsigned prevMin = 0;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = unsigned(i);
    unsigned curMin = cur[0];
    for (size_t j = 1; j <= m; ++j) {
      unsigned cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], older[j - 2] + 1);
      curMin = std::min(curMin, cur[j]);
    }
    // Every later cell grows from these two rows: both past the limit means
    // the distance is too.
    if (curMin > limit && prevMin > limit)
      return limit + 1;
    prevMin = curMin;
    std::swap(older, prev);
    std::swap(prev, cur);
  }
  return std::min(prev[m], limit + 1);
}

std::optional<std::string> DimTable::misspeltDim(llvm::StringRef name) const {
  if (isDeclared(name) || name.size() > kMaxComparedLength)
    return std::nullopt;
  // A program names the same local axis many times: remember the answers.
  auto cached = misspeltCache_.find(name);
  if (cached != misspeltCache_.end())
    return cached->second;
  uint64_t nameSet = characterSet(name);
  std::optional<std::string> best;
  unsigned bestDistance = 0;
  for (size_t i = 0; i < ordered_.size(); ++i) {
    llvm::StringRef d = ordered_[i].first;
    size_t shorter = std::min(d.size(), name.size());
    size_t longer = std::max(d.size(), name.size());
    unsigned limit = typoLimit(shorter);
    if (limit == 0 || longer - shorter > limit || d.size() > kMaxComparedLength ||
        unsigned(llvm::popcount(characterSets_[i] ^ nameSet)) > 2 * limit)
      continue;
    if (withoutNumberSuffix(d) == withoutNumberSuffix(name))
      continue;
    uint64_t cells = uint64_t(d.size()) * name.size();
    if (searchCells_ + cells > kSearchBudgetCells) {
      searchCells_ = kSearchBudgetCells; // spent: later names stop here too
      return std::nullopt;               // not cached: the answer is unknown, not "none"
    }
    searchCells_ += cells;
    unsigned distance = typoDistance(name, d, limit);
    if (distance <= limit && (!best || distance < bestDistance)) {
      best = d.str();
      bestDistance = distance;
    }
  }
  misspeltCache_[name] = best;
  return best;
}

} // namespace ein::dsl
