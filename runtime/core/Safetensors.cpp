//===- Safetensors.cpp - Read and write the safetensors format ------------===//
#include "runtime/core/Safetensors.h"
#include "runtime/base/Crc32c.h"
#include "runtime/base/Memory.h"
#include "runtime/base/StrictJson.h"
#include "runtime/base/TerminalText.h"
#include "runtime/core/FloatFormats.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace einrt {

//===----------------------------------------------------------------------===//
// TensorData
//===----------------------------------------------------------------------===//

int64_t TensorData::elementCount() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<double> TensorData::toDoubles() const {
  int64_t n = elementCount();
  std::vector<double> v(n);
  const uint8_t *p = bytes.data();
  if ((int64_t)bytes.size() < n * dtypeSize(dtype))
    return {};
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
    case DType::F32: {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      v[i] = f;
      break;
    }
    case DType::F64:
      std::memcpy(&v[i], p + 8 * i, 8);
      break;
    case DType::BF16:
    case DType::F16: {
      uint16_t u;
      std::memcpy(&u, p + 2 * i, 2);
      v[i] = dtype == DType::BF16 ? bf16FromBits(u) : f16FromBits(u);
      break;
    }
    case DType::I32: {
      int32_t x;
      std::memcpy(&x, p + 4 * i, 4);
      v[i] = x;
      break;
    }
    case DType::I1:
      v[i] = p[i] ? 1 : 0;
      break;
    }
  }
  return v;
}

TensorData TensorData::fromDoubles(std::string name, DType dtype, std::vector<int64_t> shape,
                                   const double *values) {
  TensorData t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.shape = std::move(shape);
  int64_t n = t.elementCount();
  t.bytes.resize(n * dtypeSize(dtype));
  uint8_t *p = t.bytes.data();
  for (int64_t i = 0; i < n; ++i) {
    double x = values[i];
    switch (dtype) {
    case DType::F32: {
      float f = float(x);
      std::memcpy(p + 4 * i, &f, 4);
      break;
    }
    case DType::F64:
      std::memcpy(p + 8 * i, &x, 8);
      break;
    case DType::BF16:
    case DType::F16: {
      uint16_t u = dtype == DType::BF16 ? bf16Bits(x) : f16Bits(x);
      std::memcpy(p + 2 * i, &u, 2);
      break;
    }
    case DType::I32: {
      int32_t v = truncToI32(x);
      std::memcpy(p + 4 * i, &v, 4);
      break;
    }
    case DType::I1:
      p[i] = x != 0 ? 1 : 0;
      break;
    }
  }
  return t;
}

const char *safetensorsDTypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "F32";
  case DType::F64:
    return "F64";
  case DType::BF16:
    return "BF16";
  case DType::F16:
    return "F16";
  case DType::I32:
    return "I32";
  case DType::I1:
    return "BOOL";
  }
  return "?";
}

std::optional<DType> parseSafetensorsDType(const std::string &name) {
  for (DType t : {DType::F32, DType::F64, DType::BF16, DType::F16, DType::I32, DType::I1})
    if (name == safetensorsDTypeName(t))
      return t;
  return std::nullopt;
}

namespace {

constexpr uint64_t kMaxHeader = 100u << 20; // as the reference implementation

/// The metadata key of a tensor's checksum.
constexpr const char kDigestPrefix[] = "crc32c.";

std::string digestKey(const std::string &tensor) { return kDigestPrefix + tensor; }
bool isDigestKey(const std::string &key) { return key.rfind(kDigestPrefix, 0) == 0; }

std::string hex32(uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

/// Checks every tensor against its checksum and takes the checksums out of
/// `metadata`. "" when they hold (or the file has none); else the problem.
std::string verifyDigests(const std::vector<TensorData> &tensors, SafetensorsMetadata &metadata,
                          bool &checksummed) {
  std::map<std::string, std::string> digests;
  for (auto it = metadata.begin(); it != metadata.end();) {
    if (!isDigestKey(it->first)) {
      ++it;
      continue;
    }
    digests[it->first.substr(sizeof kDigestPrefix - 1)] = it->second;
    it = metadata.erase(it);
  }
  checksummed = !digests.empty();
  if (!checksummed)
    return "";
  for (const TensorData &t : tensors) {
    auto it = digests.find(t.name);
    if (it == digests.end())
      return "tensor \"" + t.name +
             "\" has no checksum while the other tensors have one: the header was changed";
    std::string computed = hex32(crc32c(t.bytes.data(), t.bytes.size()));
    if (it->second != computed)
      return "tensor \"" + t.name + "\": its data fails its checksum (CRC-32C " + computed +
             ", recorded " + it->second + "): the file is damaged";
    digests.erase(it);
  }
  if (!digests.empty())
    return "a checksum for \"" + digests.begin()->first +
           "\", which is no tensor of the file: the header was changed";
  return "";
}

} // namespace

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

Expected<std::vector<TensorData>> parseSafetensors(const uint8_t *data, size_t size,
                                                   SafetensorsMetadata &metadata,
                                                   bool *checksummed) {
  metadata.clear();
  if (size < 8)
    return Status(StatusCode::Corrupt, "file is " + std::to_string(size) +
                                           " bytes, shorter than the 8-byte header length");
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = (headerLen << 8) | data[i];
  if (headerLen > kMaxHeader)
    return Status(StatusCode::Corrupt,
                  "header length " + std::to_string(headerLen) + " exceeds the 100 MiB limit");
  if (headerLen > size - 8)
    return Status(StatusCode::Corrupt, "header length " + std::to_string(headerLen) +
                                           " exceeds the " + std::to_string(size - 8) +
                                           " bytes after the length field");
  const char *hdr = reinterpret_cast<const char *>(data + 8);
  if (headerLen == 0 || hdr[0] != '{')
    return Status(StatusCode::Corrupt, "header does not start with '{'");
  std::vector<std::string> keys; // the header's keys in file order
  Expected<nlohmann::json> parsed = parseStrictJson(hdr, headerLen, &keys);
  if (!parsed.ok())
    return Status(StatusCode::Corrupt, "header: " + parsed.status().message());
  nlohmann::json root = parsed.take();
  if (!root.is_object())
    return Status(StatusCode::Corrupt, "header is not a JSON object");
  const uint8_t *payload = data + 8 + headerLen;
  uint64_t payloadSize = size - 8 - headerLen;

  std::vector<TensorData> tensors;
  std::vector<std::pair<int64_t, int64_t>> ranges; // begin, end
  for (const std::string &name : keys) {
    const nlohmann::json &v = *root.find(name);
    if (name == "__metadata__") {
      if (!v.is_object())
        return Status(StatusCode::Corrupt, "__metadata__ is " + std::string(jsonKindName(v)) +
                                               ", expected an object of strings");
      for (auto &[k, mv] : v.items()) {
        if (!mv.is_string())
          return Status(StatusCode::Corrupt, "__metadata__ value for \"" + k + "\" is " +
                                                 jsonKindName(mv) + ", expected a string");
        metadata[k] = mv.get<std::string>();
      }
      continue;
    }
    std::string where = "tensor " + einrt::quoted(name) + ": ";
    if (!v.is_object())
      return Status(StatusCode::Corrupt,
                    where + "entry is " + jsonKindName(v) + ", expected an object");
    for (auto &[k, f] : v.items()) {
      if (k != "dtype" && k != "shape" && k != "data_offsets")
        return Status(StatusCode::Corrupt, where + "unknown field \"" + k + "\"");
    }
    if (!v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
      return Status(StatusCode::Corrupt, where + "needs \"dtype\", \"shape\" and \"data_offsets\"");
    const nlohmann::json &dt = v["dtype"], &shape = v["shape"], &offs = v["data_offsets"];
    if (!dt.is_string())
      return Status(StatusCode::Corrupt, where + "dtype is not a string");
    std::optional<DType> dtype = parseSafetensorsDType(dt.get<std::string>());
    if (!dtype)
      return Status(StatusCode::Corrupt,
                    where + "unsupported dtype \"" + dt.get<std::string>() + "\"");
    TensorData t;
    t.name = name;
    t.dtype = *dtype;
    if (!shape.is_array())
      return Status(StatusCode::Corrupt, where + "shape is not an array");
    // Element count with overflow checking (a zero dim makes it 0).
    for (const nlohmann::json &d : shape) {
      int64_t dim;
      if (!jsonToIndex(d, dim))
        return Status(StatusCode::Corrupt, where + "shape entries must be non-negative integers");
      t.shape.push_back(dim);
    }
    uint64_t count = 1;
    if (std::find(t.shape.begin(), t.shape.end(), 0) != t.shape.end()) {
      count = 0;
    } else {
      for (int64_t dim : t.shape) {
        if (count > (uint64_t(1) << 60) / uint64_t(dim))
          return Status(StatusCode::Corrupt, where + "shape is too large");
        count *= uint64_t(dim);
      }
    }
    if (!offs.is_array() || offs.size() != 2)
      return Status(StatusCode::Corrupt, where + "data_offsets must be an array [begin, end]");
    int64_t begin, end;
    if (!jsonToIndex(offs[0], begin) || !jsonToIndex(offs[1], end))
      return Status(StatusCode::Corrupt, where + "data_offsets must be non-negative integers");
    if (begin > end)
      return Status(StatusCode::Corrupt, where + "data_offsets [" + std::to_string(begin) + ", " +
                                             std::to_string(end) + "] has begin > end");
    if (uint64_t(end) > payloadSize)
      return Status(StatusCode::Corrupt, where + "data_offsets end " + std::to_string(end) +
                                             " is beyond the " + std::to_string(payloadSize) +
                                             " data bytes");
    uint64_t expected = count * uint64_t(dtypeSize(t.dtype));
    if (uint64_t(end - begin) != expected)
      return Status(StatusCode::Corrupt,
                    where + "shape and dtype need " + std::to_string(expected) +
                        " bytes but data_offsets span " + std::to_string(end - begin));
    t.bytes.assign(payload + begin, payload + end);
    ranges.emplace_back(begin, end);
    tensors.push_back(std::move(t));
  }
  // The ranges must tile the data region exactly: no overlap, no holes.
  std::vector<size_t> order(ranges.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ranges[a] < ranges[b]; });
  int64_t cursor = 0;
  for (size_t i : order) {
    if (ranges[i].first < cursor)
      return Status(StatusCode::Corrupt, "tensor " + einrt::quoted(tensors[i].name) +
                                             ": data_offsets [" + std::to_string(ranges[i].first) +
                                             ", " + std::to_string(ranges[i].second) +
                                             "] overlaps another tensor");
    if (ranges[i].first > cursor)
      return Status(StatusCode::Corrupt, "data bytes [" + std::to_string(cursor) + ", " +
                                             std::to_string(ranges[i].first) +
                                             ") belong to no tensor");
    cursor = ranges[i].second;
  }
  if (uint64_t(cursor) != payloadSize)
    return Status(StatusCode::Corrupt, "data bytes [" + std::to_string(cursor) + ", " +
                                           std::to_string(payloadSize) + ") belong to no tensor");
  bool digests = false;
  if (std::string problem = verifyDigests(tensors, metadata, digests); !problem.empty())
    return Status(StatusCode::Corrupt, problem);
  if (checksummed)
    *checksummed = digests;
  return tensors;
}

Expected<std::vector<TensorData>>
readSafetensors(const std::string &path, SafetensorsMetadata &metadata, bool *checksummed) {
  // The file's bytes, then the tensors copied out of them.
  Expected<std::vector<uint8_t>> bytes = readFileBytes(path, 2);
  if (!bytes.ok())
    return bytes.takeStatus();
  Expected<std::vector<TensorData>> tensors =
      parseSafetensors(bytes->data(), bytes->size(), metadata, checksummed);
  if (!tensors.ok())
    return tensors.takeStatus().withContext(einrt::quoted(path) + ": ");
  return tensors;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

Expected<std::vector<uint8_t>> serializeSafetensors(const std::vector<TensorData> &tensors,
                                                    const SafetensorsMetadata &metadata) {
  std::set<std::string> names;
  SafetensorsMetadata withDigests;
  for (auto &[k, v] : metadata)
    if (!isDigestKey(k))
      withDigests[k] = v;
  for (const TensorData &t : tensors)
    if (validUtf8(t.name)) // an invalid name is refused below, as such
      withDigests[digestKey(t.name)] = hex32(crc32c(t.bytes.data(), t.bytes.size()));
  // ordered_json: the header lists __metadata__, then the tensors in the
  // order given (the data follows in that order).
  nlohmann::ordered_json root = nlohmann::ordered_json::object();
  if (!withDigests.empty()) {
    nlohmann::ordered_json &md = root["__metadata__"] = nlohmann::ordered_json::object();
    for (auto &[k, v] : withDigests) {
      if (!validUtf8(k) || !validUtf8(v))
        return Status(StatusCode::Invalid,
                      "metadata key or value \"" + k + "\" is not valid UTF-8");
      md[k] = v;
    }
  }
  uint64_t offset = 0;
  for (const TensorData &t : tensors) {
    if (t.name.empty() || t.name == "__metadata__" || !validUtf8(t.name))
      return Status(StatusCode::Invalid, "invalid tensor name " + einrt::quoted(t.name));
    if (!names.insert(t.name).second)
      return Status(StatusCode::Invalid, "duplicate tensor name " + einrt::quoted(t.name));
    uint64_t count = 1;
    for (int64_t d : t.shape) {
      if (d < 0 || (d != 0 && count > (uint64_t(1) << 62) / uint64_t(d)))
        return Status(StatusCode::Invalid, "tensor " + einrt::quoted(t.name) + ": invalid shape");
      count *= uint64_t(d);
    }
    if (count * uint64_t(dtypeSize(t.dtype)) != t.bytes.size())
      return Status(StatusCode::Invalid, "tensor " + einrt::quoted(t.name) +
                                             ": shape and dtype need " +
                                             std::to_string(count * dtypeSize(t.dtype)) +
                                             " bytes, got " + std::to_string(t.bytes.size()));
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    entry["dtype"] = safetensorsDTypeName(t.dtype);
    entry["shape"] = t.shape;
    entry["data_offsets"] = {offset, offset + t.bytes.size()};
    root[t.name] = std::move(entry);
    offset += t.bytes.size();
  }
  std::string header = dumpJson(root);
  while (header.size() % 8 != 0)
    header += ' ';
  std::vector<uint8_t> out;
  out.reserve(8 + header.size() + offset);
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    out.push_back(uint8_t(n >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  for (const TensorData &t : tensors)
    out.insert(out.end(), t.bytes.begin(), t.bytes.end());
  return out;
}

Expected<std::vector<uint8_t>> readFileBytes(const std::string &path, int64_t copies) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status(errno == ENOENT ? StatusCode::NotFound : StatusCode::Io,
                  "cannot open " + einrt::quoted(path) + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status(StatusCode::Io, einrt::quoted(path) + " is not a regular file");
  }
  std::string shortfall =
      memoryShortfall(copies * int64_t(st.st_size), "reading " + einrt::quoted(path));
  if (!shortfall.empty()) {
    ::close(fd);
    return Status(StatusCode::OutOfMemory, shortfall);
  }
  std::vector<uint8_t> bytes(size_t(st.st_size), 0);
  size_t got = 0;
  while (got < bytes.size()) {
    ssize_t r = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      Status failed(StatusCode::Io, "cannot read " + einrt::quoted(path) + ": " +
                                        (r < 0 ? std::strerror(errno) : "unexpected end of file"));
      ::close(fd);
      return failed;
    }
    got += size_t(r);
  }
  ::close(fd);
  return bytes;
}

Status writeFileAtomically(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status(StatusCode::Io,
                  "cannot create " + einrt::quoted(tmp) + ": " + std::strerror(errno));
  auto failWith = [&](const std::string &what) {
    Status failed(StatusCode::Io, what + " " + einrt::quoted(tmp) + ": " + std::strerror(errno));
    ::close(fd);
    ::unlink(tmp.c_str());
    return failed;
  };
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      if (w == 0)
        errno = ENOSPC;
      return failWith("cannot write");
    }
    done += size_t(w);
  }
  if (::fsync(fd) != 0)
    return failWith("cannot fsync");
  if (::close(fd) != 0) {
    Status failed(StatusCode::Io,
                  "cannot close " + einrt::quoted(tmp) + ": " + std::strerror(errno));
    ::unlink(tmp.c_str());
    return failed;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status failed(StatusCode::Io, "cannot rename " + einrt::quoted(tmp) + " to " +
                                      einrt::quoted(path) + ": " + std::strerror(errno));
    ::unlink(tmp.c_str());
    return failed;
  }
  std::string dir = ".";
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos)
    dir = slash == 0 ? "/" : path.substr(0, slash);
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return Status(StatusCode::Io,
                  "cannot open directory " + einrt::quoted(dir) + ": " + std::strerror(errno));
  int rc = ::fsync(dfd);
  int savedErrno = errno;
  ::close(dfd);
  // Some filesystems do not support fsync on directories; that is no error.
  if (rc != 0 && savedErrno != EINVAL && savedErrno != ENOTSUP)
    return Status(StatusCode::Io, "cannot fsync directory " + einrt::quoted(dir) + ": " +
                                      std::strerror(savedErrno));
  return Status::success();
}

Status writeSafetensors(const std::string &path, const std::vector<TensorData> &tensors,
                        const SafetensorsMetadata &metadata) {
  Expected<std::vector<uint8_t>> bytes = serializeSafetensors(tensors, metadata);
  if (!bytes.ok())
    return bytes.takeStatus();
  return writeFileAtomically(path, *bytes);
}

} // namespace einrt
