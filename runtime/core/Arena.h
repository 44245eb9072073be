//===- Arena.h - Memory planning: one arena by liveness, one resident block -===//
//
// A Program's temporaries (Temp buffers that are not results) live only from
// the step that writes them to the last step that reads them, so they share
// one arena: planMemory gives each a byte offset such that two temporaries
// whose live ranges overlap never overlap in memory. Every other buffer the
// Program touches (arguments, results, constants) is resident: it has its
// own place in a second block, live throughout. Element sizes are the
// device's (StorageSizes: e.g. floats as 8 bytes on the f64 reference
// device, bf16 as 2 on CUDA). This plan is the one memory analysis: the
// executor allocates exactly it, and the report's peak is its total.
//
// Live range of a temporary: [first step writing it, last step reading or
// writing it], inclusive; a temporary never read is live only at its step.
// A view (Buffer::viewOf) has no storage: its reads and writes count as its
// root's, so the root lives as long as any view of it, and its place is
// the root's plus its offset.
// Placement is greedy interval-graph first fit (runtime/base/FirstFit.h): largest
// first, each at the lowest 64-byte-aligned offset that does not collide with
// an already placed buffer whose live range overlaps.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_ARENA_H
#define EINC_RUNTIME_ARENA_H

#include "runtime/base/FirstFit.h"
#include "runtime/core/Program.h"

#include <cstdint>
#include <vector>

namespace einrt {

class Device;

/// Bytes per element of each dtype, as a device stores them.
struct StorageSizes {
  int64_t bytes[kDTypeCount] = {4, 4, 4, 8, 4, 1}; // f32 bf16 f16 f64 i32 i1 on the host in f32
  int64_t of(DType t) const { return bytes[uint8_t(t)]; }
  static StorageSizes of(const Device &device);
};

struct MemoryPlan {
  /// Per buffer: byte offset in the arena / in the resident block; -1 where
  /// the buffer is not there (a buffer nothing touches has neither).
  std::vector<int64_t> arenaOffset, residentOffset;
  int64_t arenaBytes = 0, residentBytes = 0;
  /// The most bytes of temporaries live at one step (a lower bound for
  /// arenaBytes; the difference is first fit's fragmentation and alignment),
  /// and the first step where that many are live (-1: no temporaries).
  int64_t liveBytes = 0;
  int64_t peakStep = -1;
  /// Per step: the bytes of temporaries live while it runs (liveBytes is
  /// their maximum; with residentBytes, the memory timeline of the step).
  std::vector<int64_t> liveAtStep;
  /// The arena's buffers with their live steps (LiveRange::id is the
  /// buffer's index): liveAtStep[i] is the sum of the bytes of those live at
  /// step i (the report splits it by what each buffer holds).
  std::vector<LiveRange> temporaries;

  static constexpr int64_t kAlign = kArenaAlign;
  int64_t totalBytes() const { return arenaBytes + residentBytes; }
};

/// Plans a validated Program's memory. Without `useArena` every touched
/// buffer is resident.
MemoryPlan planMemory(const Program &program, const StorageSizes &sizes, bool useArena = true);

} // namespace einrt

#endif // EINC_RUNTIME_ARENA_H
