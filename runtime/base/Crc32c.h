//===- Crc32c.h - CRC-32C (Castagnoli), the program file's checksum -*- C++ -*-===//
//
// The CRC of iSCSI, ext4 and SCTP: polynomial 0x1EDC6F41 (reflected
// 0x82F63B78), initial value and final xor 0xFFFFFFFF. It finds every
// change of up to 32 consecutive bits (so every changed byte) and all but
// one in 2^32 of the rest: a check against damage, not against tampering.
// Computed eight bytes at a time from tables (slicing-by-8), in portable
// C++ (no CPU instruction, no library).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_CRC32C_H
#define EINC_RUNTIME_CRC32C_H

#include <cstddef>
#include <cstdint>

namespace einrt {

/// The CRC-32C of `size` bytes at `data`; pass the CRC of the bytes before
/// as `previous` to continue it (crc32c of "123456789" is 0xE3069283).
uint32_t crc32c(const uint8_t *data, size_t size, uint32_t previous = 0);

} // namespace einrt

#endif // EINC_RUNTIME_CRC32C_H
