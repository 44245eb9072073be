//===- Arena.h - Memory planning: one arena per storage class -------------===//
//
// A Program's temporaries (Temp buffers that are not results) live only from
// the step that writes them to the last step that reads them, so they can
// share memory. planArena gives each such buffer a byte offset in the arena
// of its storage class (float, int32, byte) such that two buffers whose live
// ranges overlap never overlap in memory; arguments, results and constants
// keep their own storage (they are live throughout or set once).
//
// Live range of a temporary: [first step writing it, last step reading or
// writing it], inclusive; a temporary never read is live only at its step.
// Placement is greedy interval-graph first fit: largest first, each at the
// lowest 64-byte-aligned offset that does not collide with an already placed
// buffer whose live range overlaps.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_ARENA_H
#define EINC_RUNTIME_ARENA_H

#include "runtime/Program.h"

#include <cstdint>
#include <vector>

namespace einrt {

/// The storage classes of the executor: float dtypes (4 bytes, or 8 when
/// floats are stored as double), i32 (4 bytes), i1 (1 byte).
enum class StorageClass : uint8_t { Float = 0, Int32 = 1, Byte = 2 };

StorageClass storageClass(DType t);
/// Bytes per element of `t` as the executor stores it.
int64_t storageSize(DType t, bool wideFloats);

struct ArenaPlan {
  /// Per buffer: byte offset in the arena of its storage class; -1 = not in
  /// an arena (owns its storage).
  std::vector<int64_t> offset;
  /// Per storage class (StorageClass): the arena's size in bytes.
  int64_t bytes[3] = {0, 0, 0};
  /// Per storage class: the most bytes of its buffers live at one step (a
  /// lower bound for `bytes`; the difference is first fit's fragmentation
  /// and alignment).
  int64_t liveBytes[3] = {0, 0, 0};

  static constexpr int64_t kAlign = 64;
  int64_t totalBytes() const { return bytes[0] + bytes[1] + bytes[2]; }
};

/// Plans the arenas of a validated Program.
ArenaPlan planArena(const Program &program, bool wideFloats);

} // namespace einrt

#endif // EINC_RUNTIME_ARENA_H
