//===- FirstFit.cpp - The arena's placement rule --------------------------===//
#include "runtime/FirstFit.h"

#include <algorithm>

namespace einrt {

int64_t placeFirstFit(std::vector<LiveRange> &items, std::vector<int64_t> &offset) {
  // Largest first; ties by first live step, then id (deterministic).
  std::sort(items.begin(), items.end(), [](const LiveRange &a, const LiveRange &b) {
    if (a.bytes != b.bytes)
      return a.bytes > b.bytes;
    if (a.first != b.first)
      return a.first < b.first;
    return a.id < b.id;
  });
  // Placed items, kept sorted by first live step, so that the ones whose
  // range overlaps [first, last] are found by scanning those starting at or
  // before `last` (and ending at or after `first`).
  struct Placed {
    int64_t first, last, lo, hi; // steps; bytes [lo, hi)
  };
  std::vector<Placed> placed;
  placed.reserve(items.size());
  std::vector<std::pair<int64_t, int64_t>> busy; // byte intervals in the way
  int64_t arena = 0;
  for (const LiveRange &it : items) {
    if (it.bytes == 0) {
      offset[size_t(it.id)] = 0;
      continue;
    }
    busy.clear();
    auto end = std::upper_bound(placed.begin(), placed.end(), it.last,
                                [](int64_t step, const Placed &p) { return step < p.first; });
    for (auto p = placed.begin(); p != end; ++p)
      if (p->last >= it.first)
        busy.emplace_back(p->lo, p->hi);
    std::sort(busy.begin(), busy.end());
    int64_t at = 0;
    for (const auto &b : busy) {
      if (b.first >= at + it.bytes)
        break; // the gap before b fits
      at = std::max(at, alignArena(b.second));
    }
    offset[size_t(it.id)] = at;
    arena = std::max(arena, at + it.bytes);
    Placed np{it.first, it.last, at, at + it.bytes};
    placed.insert(
        std::upper_bound(placed.begin(), placed.end(), np,
                         [](const Placed &a, const Placed &b) { return a.first < b.first; }),
        np);
  }
  return alignArena(arena);
}

} // namespace einrt
