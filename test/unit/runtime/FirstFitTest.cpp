//===- FirstFitTest.cpp - The arena's placement rule ------------------------===//
//
// placeFirstFit against a direct statement of its rule: each buffer, largest
// first (ties: earlier first step, then lower id), at the lowest 64-byte
// aligned offset where it collides with no placed buffer live at the same
// time. The reference below tries the candidate offsets (0 and the aligned
// ends of every placed buffer) one by one; placeFirstFit must pick the same.
//
//===----------------------------------------------------------------------===//
#include "runtime/base/FirstFit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace {

using einrt::LiveRange;

std::vector<int64_t> placeByRule(std::vector<LiveRange> items, int64_t &arena) {
  std::sort(items.begin(), items.end(), [](const LiveRange &a, const LiveRange &b) {
    if (a.bytes != b.bytes)
      return a.bytes > b.bytes;
    if (a.first != b.first)
      return a.first < b.first;
    return a.id < b.id;
  });
  std::vector<int64_t> offset(items.size(), -1);
  std::vector<LiveRange> placed;
  arena = 0;
  for (const LiveRange &it : items) {
    if (it.bytes == 0) {
      offset[size_t(it.id)] = 0;
      continue;
    }
    std::vector<int64_t> candidates{0};
    for (const LiveRange &p : placed)
      candidates.push_back(einrt::alignArena(offset[size_t(p.id)] + p.bytes));
    std::sort(candidates.begin(), candidates.end());
    for (int64_t at : candidates) {
      bool clash = std::any_of(placed.begin(), placed.end(), [&](const LiveRange &p) {
        int64_t lo = offset[size_t(p.id)];
        bool sameTime = p.first <= it.last && it.first <= p.last;
        return sameTime && lo < at + it.bytes && at < lo + p.bytes;
      });
      if (!clash) {
        offset[size_t(it.id)] = at;
        break;
      }
    }
    arena = std::max(arena, offset[size_t(it.id)] + it.bytes);
    placed.push_back(it);
  }
  arena = einrt::alignArena(arena);
  return offset;
}

TEST(FirstFit, MatchesTheRuleOnRandomRanges) {
  std::mt19937_64 rng(20261206);
  for (int trial = 0; trial < 300; ++trial) {
    int n = 1 + int(rng() % 60);
    int steps = 1 + int(rng() % 40);
    std::vector<LiveRange> ranges;
    for (int i = 0; i < n; ++i) {
      int64_t a = int64_t(rng() % steps), b = int64_t(rng() % steps);
      // Few distinct sizes, so that ties in size and in offset occur.
      int64_t bytes = int64_t(rng() % 5) * 64 + int64_t(rng() % 3) * 17;
      ranges.push_back({i, bytes, std::min(a, b), std::max(a, b)});
    }
    int64_t expectedArena = 0;
    std::vector<int64_t> expected = placeByRule(ranges, expectedArena);
    std::vector<int64_t> offsets(ranges.size(), -1);
    std::vector<LiveRange> work = ranges;
    int64_t arena = einrt::placeFirstFit(work, offsets);
    ASSERT_EQ(arena, expectedArena) << "trial " << trial;
    ASSERT_EQ(offsets, expected) << "trial " << trial;
    // And the placement is valid: aligned, inside the arena, no two buffers
    // live at the same time share a byte.
    for (const LiveRange &a : ranges) {
      EXPECT_EQ(offsets[size_t(a.id)] % einrt::kArenaAlign, 0);
      EXPECT_LE(offsets[size_t(a.id)] + a.bytes, arena);
      for (const LiveRange &b : ranges)
        if (a.id < b.id && a.bytes > 0 && b.bytes > 0 && a.first <= b.last && b.first <= a.last)
          EXPECT_TRUE(offsets[size_t(a.id)] + a.bytes <= offsets[size_t(b.id)] ||
                      offsets[size_t(b.id)] + b.bytes <= offsets[size_t(a.id)])
              << "trial " << trial << ": buffers " << a.id << " and " << b.id;
    }
  }
}

} // namespace
