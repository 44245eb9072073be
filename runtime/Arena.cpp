//===- Arena.cpp - Memory planning for a Program's temporaries ------------===//
#include "runtime/Arena.h"

#include <algorithm>
#include <numeric>

namespace einrt {

StorageClass storageClass(DType t) {
  if (t == DType::I32)
    return StorageClass::Int32;
  if (t == DType::I1)
    return StorageClass::Byte;
  return StorageClass::Float;
}

int64_t storageSize(DType t, bool wideFloats) {
  switch (storageClass(t)) {
  case StorageClass::Int32:
    return 4;
  case StorageClass::Byte:
    return 1;
  default:
    return wideFloats ? 8 : 4;
  }
}

namespace {

struct Item {
  int32_t buffer;
  int64_t bytes;
  int64_t first, last; // live steps, inclusive
};

int64_t alignUp(int64_t v) {
  const int64_t a = ArenaPlan::kAlign;
  return (v + a - 1) / a * a;
}

/// First fit of `items` (one storage class) into one arena; writes offsets
/// into `offset` and returns the arena's size.
int64_t place(std::vector<Item> &items, std::vector<int64_t> &offset) {
  // Largest first; ties by first live step, then buffer index (deterministic).
  std::sort(items.begin(), items.end(), [](const Item &a, const Item &b) {
    if (a.bytes != b.bytes)
      return a.bytes > b.bytes;
    if (a.first != b.first)
      return a.first < b.first;
    return a.buffer < b.buffer;
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
  for (const Item &it : items) {
    if (it.bytes == 0) {
      offset[size_t(it.buffer)] = 0;
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
      at = std::max(at, alignUp(b.second));
    }
    offset[size_t(it.buffer)] = at;
    arena = std::max(arena, at + it.bytes);
    Placed np{it.first, it.last, at, at + it.bytes};
    placed.insert(
        std::upper_bound(placed.begin(), placed.end(), np,
                         [](const Placed &a, const Placed &b) { return a.first < b.first; }),
        np);
  }
  return alignUp(arena);
}

} // namespace

ArenaPlan planArena(const Program &program, bool wideFloats) {
  const size_t nbuf = program.buffers.size();
  ArenaPlan plan;
  plan.offset.assign(nbuf, -1);

  std::vector<char> candidate(nbuf, 0);
  for (size_t b = 0; b < nbuf; ++b)
    candidate[b] = program.buffers[b].role == BufferRole::Temp;
  for (int32_t r : program.results)
    if (r >= 0 && size_t(r) < nbuf)
      candidate[size_t(r)] = 0;
  for (int32_t a : program.arguments)
    if (a >= 0 && size_t(a) < nbuf)
      candidate[size_t(a)] = 0;

  std::vector<int64_t> first(nbuf, -1), last(nbuf, -1);
  for (size_t si = 0; si < program.steps.size(); ++si) {
    const Step &s = program.steps[si];
    int64_t i = int64_t(si);
    for (int32_t b : s.inputs)
      if (b >= 0 && size_t(b) < nbuf)
        last[size_t(b)] = i;
    auto written = [&](int32_t b) {
      if (b < 0 || size_t(b) >= nbuf)
        return;
      size_t o = size_t(b);
      if (first[o] < 0)
        first[o] = i;
      last[o] = std::max(last[o], i);
    };
    for (int32_t b : s.outputs())
      written(b);
  }

  std::vector<Item> items[3];
  for (size_t b = 0; b < nbuf; ++b) {
    // A temporary no step writes (so none reads it, by validation) keeps
    // its own zeroed storage.
    if (!candidate[b] || first[b] < 0)
      continue;
    const Buffer &buf = program.buffers[b];
    int64_t bytes = buf.elementCount() * storageSize(buf.dtype, wideFloats);
    items[int(storageClass(buf.dtype))].push_back(Item{int32_t(b), bytes, first[b], last[b]});
  }
  for (int c = 0; c < 3; ++c) {
    std::vector<int64_t> delta(program.steps.size() + 1, 0);
    for (const Item &it : items[c]) {
      delta[size_t(it.first)] += it.bytes;
      delta[size_t(it.last) + 1] -= it.bytes;
    }
    int64_t live = 0;
    for (int64_t d : delta)
      plan.liveBytes[c] = std::max(plan.liveBytes[c], live += d);
    plan.bytes[c] = place(items[c], plan.offset);
  }
  return plan;
}

} // namespace einrt
