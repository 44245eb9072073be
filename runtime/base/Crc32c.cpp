//===- Crc32c.cpp - CRC-32C, slicing-by-8 ---------------------------------===//
#include "runtime/base/Crc32c.h"

#include <array>

namespace einrt {

namespace {

using Tables = std::array<std::array<uint32_t, 256>, 8>;

/// tables[0][b]: the CRC of byte b; tables[k][b]: of b followed by k zero
/// bytes, so eight bytes fold into the CRC in one step.
constexpr Tables makeTables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int bit = 0; bit < 8; ++bit)
      c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k)
    for (uint32_t b = 0; b < 256; ++b)
      t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
  return t;
}

constexpr Tables kTables = makeTables();

uint32_t load32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

} // namespace

uint32_t crc32c(const uint8_t *data, size_t size, uint32_t previous) {
  const Tables &t = kTables;
  uint32_t crc = ~previous;
  for (; size >= 8; data += 8, size -= 8) {
    uint32_t lo = crc ^ load32(data), hi = load32(data + 4);
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
          t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
  }
  for (; size > 0; ++data, --size)
    crc = (crc >> 8) ^ t[0][(crc ^ *data) & 0xFF];
  return ~crc;
}

} // namespace einrt
