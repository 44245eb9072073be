//===- Safetensors.h - Read and write the safetensors format --------------===//
//
// File layout: an 8-byte little-endian header length N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
//    ..., "__metadata__": {"key": "value", ...}}
// (padded with spaces to 8-byte alignment), then the raw little-endian data;
// offsets are relative to the start of the data. Dtypes: F32, F64, BF16, F16,
// I32, BOOL (↔ DType::I1).
//
// Reading is strict and bounds-checked everywhere (a corrupt file is an error
// message, never a crash). Writing is atomic: `path.tmp.<pid>`, fsync, rename
// over `path`, fsync the directory.
//
// Checksums: einc writes the CRC-32C (runtime/base/Crc32c.h) of every tensor's
// bytes into the metadata, as `"crc32c.NAME": "8 hex digits"`, and reading
// verifies them: a changed byte of tensor data is an error naming the tensor.
// The keys are taken out of the metadata a reader gets. Files of other
// writers (PyTorch's safetensors) carry none and are read unverified; a file
// with a checksum for some tensors but not all is refused.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_SAFETENSORS_H
#define EINC_RUNTIME_SAFETENSORS_H

#include "runtime/core/Program.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace einrt {

/// One named tensor: shape, dtype and its raw little-endian bytes.
struct TensorData {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t elementCount() const;
  /// The values as doubles (floats decoded from their format, i32 and bool
  /// exactly).
  std::vector<double> toDoubles() const;
  /// Encodes `values` (count = product of shape) in `dtype`; floats are
  /// rounded to nearest even, ints truncated toward zero (NaN → 0,
  /// saturating), bool is `!= 0`.
  static TensorData fromDoubles(std::string name, DType dtype, std::vector<int64_t> shape,
                                const double *values);
};

using SafetensorsMetadata = std::map<std::string, std::string>;

/// The safetensors name of a dtype ("F32", "BOOL", ...), and back.
const char *safetensorsDTypeName(DType t);
std::optional<DType> parseSafetensorsDType(const std::string &name);

/// Parses a whole file held in memory. Tensors come back in header order.
/// `checksummed`, if given, says whether the file carried checksums (all
/// verified, since the parse succeeded). Corrupt for a file that fails any
/// check.
Expected<std::vector<TensorData>> parseSafetensors(const uint8_t *data, size_t size,
                                                   SafetensorsMetadata &metadata,
                                                   bool *checksummed = nullptr);

/// readFileBytes, then parseSafetensors (its failure names the file).
Expected<std::vector<TensorData>> readSafetensors(const std::string &path,
                                                  SafetensorsMetadata &metadata,
                                                  bool *checksummed = nullptr);

/// The complete file contents (header + data) for `tensors`, in the order
/// given, with each tensor's checksum added to `metadata` (any `crc32c.*`
/// key given is replaced). Invalid for duplicate or empty names, the
/// reserved name "__metadata__", or a byte length that disagrees with
/// shape × dtype.
Expected<std::vector<uint8_t>> serializeSafetensors(const std::vector<TensorData> &tensors,
                                                    const SafetensorsMetadata &metadata);

/// Atomic write (see the file comment).
Status writeSafetensors(const std::string &path, const std::vector<TensorData> &tensors,
                        const SafetensorsMetadata &metadata);

/// The whole regular file `path`, after checking that `copies` times its
/// size fits into the memory available (runtime/base/Memory.h): NotFound,
/// Io or OutOfMemory otherwise.
Expected<std::vector<uint8_t>> readFileBytes(const std::string &path, int64_t copies);

/// Writes `bytes` to `path` atomically (tmp file, fsync, rename, fsync dir);
/// Io when the file system refuses.
Status writeFileAtomically(const std::string &path, const std::vector<uint8_t> &bytes);

} // namespace einrt

#endif // EINC_RUNTIME_SAFETENSORS_H
