//===- FirstFit.h - The arena's placement rule -------------------*- C++ -*-===//
//
// Interval-graph first fit, the one placement rule of the memory plan
// (runtime/core/Arena.h): buffers with live ranges [first, last] (inclusive
// steps) placed largest first (ties: earlier first step, then lower id),
// each at the lowest 64-byte-aligned offset that does not collide with an
// already placed buffer whose live range overlaps. planMemory places a
// Program's temporaries with it; the remat solver (passes/RematGraph.h)
// places the temporaries of a plan it has not built yet with it, so that
// its arena is the one the runtime will allocate.
//
// Plain C++17, its own library (EinFirstFit) so that passes/ links it
// without the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_FIRSTFIT_H
#define EINC_RUNTIME_FIRSTFIT_H

#include <cstdint>
#include <vector>

namespace einrt {

struct LiveRange {
  int32_t id; // the caller's index; `offsets` is indexed by it
  int64_t bytes;
  int64_t first, last; // live steps, inclusive
};

constexpr int64_t kArenaAlign = 64;

inline int64_t alignArena(int64_t v) { return (v + kArenaAlign - 1) / kArenaAlign * kArenaAlign; }

/// Places `ranges` (reordered in place) and writes each one's offset into
/// `offsets[id]` (which must be large enough); returns the arena's size,
/// aligned.
int64_t placeFirstFit(std::vector<LiveRange> &ranges, std::vector<int64_t> &offsets);

} // namespace einrt

#endif // EINC_RUNTIME_FIRSTFIT_H
