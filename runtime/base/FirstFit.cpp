//===- FirstFit.cpp - The arena's placement rule --------------------------===//
#include "runtime/base/FirstFit.h"

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
  // Placed items, kept sorted by their lowest byte: the lowest offset that
  // fits is found in one walk up the bytes, skipping the items whose live
  // range does not overlap [first, last], until a gap before the next
  // overlapping item holds the new one (no per-item sort of what is in the
  // way; items with equal `lo` may come in any order, the result is the same).
  struct Placed {
    int64_t first, last, lo, hi; // steps; bytes [lo, hi)
  };
  std::vector<Placed> placed;
  placed.reserve(items.size());
  int64_t arena = 0;
  for (const LiveRange &it : items) {
    if (it.bytes == 0) {
      offset[size_t(it.id)] = 0;
      continue;
    }
    int64_t at = 0;
    for (const Placed &p : placed) {
      if (p.last < it.first || p.first > it.last)
        continue; // not live at the same time
      if (p.lo >= at + it.bytes)
        break; // the gap before p fits
      at = std::max(at, alignArena(p.hi));
    }
    offset[size_t(it.id)] = at;
    arena = std::max(arena, at + it.bytes);
    Placed np{it.first, it.last, at, at + it.bytes};
    placed.insert(std::upper_bound(placed.begin(), placed.end(), np,
                                   [](const Placed &a, const Placed &b) { return a.lo < b.lo; }),
                  np);
  }
  return alignArena(arena);
}

} // namespace einrt
