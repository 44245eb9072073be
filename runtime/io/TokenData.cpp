//===- TokenData.cpp - Token files and random training windows ------------===//
#include "runtime/io/TokenData.h"
#include "runtime/base/TerminalText.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace einrt {

namespace {

constexpr int32_t kLlmcMagic = 20240520;
constexpr int64_t kLlmcHeaderBytes = 256 * 4;

int32_t readI32(const uint8_t *p) {
  uint32_t v = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
  int32_t r;
  std::memcpy(&r, &v, 4);
  return r;
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

bool parseHex64(const std::string &s, uint64_t &v) {
  if (s.size() != 16)
    return false;
  v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return false;
    v = v << 4 | uint64_t(d);
  }
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// TokenFile
//===----------------------------------------------------------------------===//

Expected<TokenFile> TokenFile::open(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return Status(err == ENOENT ? StatusCode::NotFound : StatusCode::Io,
                  "cannot open " + einrt::quoted(path) + ": " + std::strerror(err));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::invalid(einrt::quoted(path) + " is not a regular file");
  }
  TokenFile f;
  f.filePath = path;
  f.mapBytes = size_t(st.st_size);
  if (f.mapBytes > 0) {
    void *m = mmap(nullptr, f.mapBytes, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return Status(StatusCode::Io,
                    "cannot map " + einrt::quoted(path) + ": " + std::strerror(err));
    }
    f.map = static_cast<const uint8_t *>(m);
  }
  ::close(fd);

  // The size disagrees with the format: a damaged (or truncated) file.
  auto corrupt = [&](const std::string &problem) {
    return Status(StatusCode::Corrupt, einrt::terminalSafe(path) + ": " + problem);
  };
  int64_t bytes = int64_t(f.mapBytes);
  if (bytes >= 4 && readI32(f.map) == kLlmcMagic) {
    f.fmt = Format::LlmC;
    if (bytes < kLlmcHeaderBytes)
      return corrupt("llm.c token file (magic 20240520) of " + std::to_string(bytes) +
                     " bytes is shorter than its " + std::to_string(kLlmcHeaderBytes) +
                     "-byte header");
    int32_t version = readI32(f.map + 4);
    if (version != 1)
      return Status::invalid(einrt::terminalSafe(path) + ": llm.c token file version " +
                             std::to_string(version) +
                             " (header[1], byte 4) is not supported: only version 1 "
                             "(uint16 tokens)");
    int32_t declared = readI32(f.map + 8);
    int64_t body = bytes - kLlmcHeaderBytes;
    if (body % 2 != 0)
      return corrupt("odd byte count after the 1024-byte llm.c header (" + std::to_string(body) +
                     " bytes): not a whole number of uint16 tokens (the last byte, at offset " +
                     std::to_string(bytes - 1) + ", is left over)");
    if (declared < 0 || int64_t(declared) != body / 2)
      return corrupt("the llm.c header's token count (header[2], byte 8) is " +
                     std::to_string(declared) + " but the file holds " + std::to_string(body / 2) +
                     " tokens after the header");
    f.headerBytes = kLlmcHeaderBytes;
    f.count = body / 2;
    return std::move(f);
  }
  if (bytes % 2 != 0)
    return corrupt("odd byte count (" + std::to_string(bytes) +
                   " bytes): not a whole number of uint16 tokens (the last byte, at offset " +
                   std::to_string(bytes - 1) + ", is left over)");
  f.count = bytes / 2;
  return std::move(f);
}

TokenFile::TokenFile(TokenFile &&o) noexcept { *this = std::move(o); }

TokenFile &TokenFile::operator=(TokenFile &&o) noexcept {
  if (this != &o) {
    release();
    filePath = std::move(o.filePath);
    fmt = o.fmt;
    map = o.map;
    mapBytes = o.mapBytes;
    headerBytes = o.headerBytes;
    count = o.count;
    o.map = nullptr;
    o.mapBytes = 0;
    o.count = 0;
  }
  return *this;
}

TokenFile::~TokenFile() { release(); }

void TokenFile::release() {
  if (map)
    munmap(const_cast<uint8_t *>(map), mapBytes);
  map = nullptr;
  mapBytes = 0;
}

const char *TokenFile::formatName() const { return fmt == Format::LlmC ? "llm.c" : "uint16"; }

uint16_t TokenFile::token(int64_t i) const {
  const uint8_t *p = map + headerBytes + 2 * i;
  return uint16_t(p[0] | p[1] << 8);
}

Status TokenFile::checkVocabulary(int32_t vocab) const {
  if (vocab <= 0 || vocab > 65535)
    return Status::success(); // every uint16 id is below it
  // Blocks of tokens: the max of a block is a loop the compiler vectorises;
  // only a block holding a bad id is searched for the first one.
  constexpr int64_t kBlock = 1 << 14;
  const uint8_t *base = map + headerBytes;
  for (int64_t start = 0; start < count; start += kBlock) {
    const int64_t n = std::min(kBlock, count - start);
    const uint8_t *p = base + 2 * start;
    unsigned top = 0;
    for (int64_t i = 0; i < n; ++i)
      top = std::max(top, unsigned(p[2 * i]) | unsigned(p[2 * i + 1]) << 8);
    if (int32_t(top) < vocab)
      continue;
    for (int64_t i = start; i < start + n; ++i)
      if (int32_t(token(i)) >= vocab)
        return Status::invalid(badTokenMessage(i, vocab));
  }
  return Status::success();
}

std::string TokenFile::badTokenMessage(int64_t i, int32_t vocab) const {
  return filePath + ": token " + std::to_string(i) + " (byte offset " +
         std::to_string(byteOffset(i)) + ") is " + std::to_string(token(i)) +
         ", not below the vocabulary size " + std::to_string(vocab);
}

Status TokenFile::read(int64_t start, int64_t n, int32_t vocab, int32_t *out) const {
  if (start < 0 || n < 0 || start + n > count)
    return Status::invalid(einrt::terminalSafe(filePath) + ": tokens [" + std::to_string(start) +
                           ", " + std::to_string(start + n) + ") are outside the file's " +
                           std::to_string(count) + " tokens");
  for (int64_t i = 0; i < n; ++i) {
    uint16_t t = token(start + i);
    if (vocab > 0 && int32_t(t) >= vocab)
      return Status::invalid(badTokenMessage(start + i, vocab));
    out[i] = t;
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Window layout
//===----------------------------------------------------------------------===//

const char *windowMappingName(WindowMapping m) {
  return m == WindowMapping::NextToken ? "next_token" : "shifted";
}

std::optional<WindowMapping> parseWindowMapping(const std::string &name) {
  if (name == "next_token")
    return WindowMapping::NextToken;
  if (name == "shifted")
    return WindowMapping::Shifted;
  return std::nullopt;
}

int64_t WindowLayout::targetsPerBatch() const {
  return mapping == WindowMapping::NextToken ? batch : batch * context;
}

namespace {

/// The argument indices of the two i32 inputs (context, targets).
Expected<std::vector<size_t>> tokenInputs(const Program &p) {
  std::vector<size_t> args;
  for (size_t a = 0; a < p.arguments.size(); ++a) {
    const Buffer &b = p.buffers[p.arguments[a]];
    if (b.role != BufferRole::Input)
      continue;
    if (b.dtype != DType::I32)
      return Status::invalid("@" + p.name + ": input '" + b.name + "' is " + dtypeName(b.dtype) +
                             ", but the token data feeds only i32 inputs (context, targets)");
    args.push_back(a);
  }
  if (args.size() != 2)
    return Status::invalid("@" + p.name + " takes " + std::to_string(args.size()) +
                           " inputs; the token data feeds exactly two (context, targets)");
  return args;
}

} // namespace

Expected<WindowMapping> inferWindowMapping(const Program &p) {
  Expected<std::vector<size_t>> args = tokenInputs(p);
  if (!args.ok())
    return args.takeStatus();
  const Buffer &targets = p.buffers[p.arguments[(*args)[1]]];
  size_t rank = targets.shape.size();
  if (rank == 1)
    return WindowMapping::NextToken;
  if (rank == 2)
    return WindowMapping::Shifted;
  return Status::invalid("@" + p.name + ": the targets input '" + targets.name + "' has rank " +
                         std::to_string(rank) + "; expected 1 (next_token) or 2 (shifted)");
}

Expected<WindowLayout> windowLayout(const Program &p, WindowMapping mapping) {
  Expected<std::vector<size_t>> found = tokenInputs(p);
  if (!found.ok())
    return found.takeStatus();
  const std::vector<size_t> &args = *found;
  const Buffer &ctx = p.buffers[p.arguments[args[0]]];
  const Buffer &tgt = p.buffers[p.arguments[args[1]]];
  WindowLayout l;
  l.mapping = mapping;
  l.contextArg = args[0];
  l.targetArg = args[1];
  bool ok = ctx.shape.size() == 2 && ctx.shape[0] > 0 && ctx.shape[1] > 0;
  if (ok) {
    l.batch = ctx.shape[0];
    l.context = ctx.shape[1];
    if (mapping == WindowMapping::NextToken)
      ok = tgt.shape == std::vector<int64_t>{l.batch};
    else
      ok = tgt.shape == ctx.shape;
  }
  if (!ok)
    return Status::invalid("@" + p.name + ": inputs '" + ctx.name + "' " + shapeText(ctx.shape) +
                           " and '" + tgt.name + "' " + shapeText(tgt.shape) + " do not fit the " +
                           windowMappingName(mapping) + " mapping (expected " +
                           (mapping == WindowMapping::NextToken
                                ? "i32[batch, window] and i32[batch]"
                                : "i32[batch, ctx] and i32[batch, ctx]") +
                           ")");
  return l;
}

//===----------------------------------------------------------------------===//
// WindowSampler
//===----------------------------------------------------------------------===//

Expected<WindowSampler> WindowSampler::create(const TokenFile &file, const WindowLayout &layout,
                                              uint64_t seed, int32_t vocab) {
  if (file.size() < layout.span())
    return Status::invalid(
        einrt::terminalSafe(file.path()) + ": " + std::to_string(file.size()) +
        " tokens, too short for one window of " + std::to_string(layout.span()) + " tokens (" +
        std::to_string(layout.context) + " of context and the " +
        (layout.mapping == WindowMapping::NextToken ? "next token" : "shifted target") + ")");
  EINRT_TRY(file.checkVocabulary(vocab));
  WindowSampler s(file, layout, seed);
  s.row.resize(size_t(layout.span()));
  return s;
}

Status WindowSampler::next(std::vector<int32_t> &context, std::vector<int32_t> &targets) {
  const int64_t b = lay.batch, c = lay.context, span = lay.span();
  context.resize(size_t(b * c));
  targets.resize(size_t(lay.targetsPerBatch()));
  uint64_t starts = uint64_t(file->size() - span) + 1;
  for (int64_t r = 0; r < b; ++r) {
    int64_t start = int64_t(rng.below(starts));
    ++rows;
    // The ids were checked against the vocabulary at create().
    EINRT_TRY(file->read(start, span, /*vocab=*/0, row.data()));
    std::copy(row.begin(), row.begin() + c, context.begin() + r * c);
    if (lay.mapping == WindowMapping::NextToken)
      targets[size_t(r)] = row[size_t(c)];
    else
      std::copy(row.begin() + 1, row.end(), targets.begin() + r * c);
  }
  return Status::success();
}

void WindowSampler::skip(int64_t batches) {
  uint64_t starts = uint64_t(file->size() - lay.span()) + 1;
  for (int64_t r = 0; r < batches * lay.batch; ++r) {
    (void)rng.below(starts);
    ++rows;
  }
}

Status WindowSampler::feed(Executor &ex) {
  thread_local std::vector<int32_t> context, targets;
  EINRT_TRY(next(context, targets));
  EINRT_TRY(ex.setArgument(lay.contextArg, context.data(), context.size()));
  return ex.setArgument(lay.targetArg, targets.data(), targets.size());
}

std::string WindowSampler::saveState() const {
  return "rows:" + std::to_string(rows) + ";rng:" + rngStateToHex(rng.state());
}

Status WindowSampler::restoreState(const std::string &state) {
  const Status malformed(StatusCode::Corrupt, "malformed sampler state " + einrt::quoted(state));
  size_t semi = state.find(';');
  if (state.compare(0, 5, "rows:") != 0 || semi == std::string::npos ||
      state.compare(semi + 1, 4, "rng:") != 0)
    return malformed;
  std::string count = state.substr(5, semi - 5);
  Rng::State st;
  if (count.empty() || count.find_first_not_of("0123456789") != std::string::npos ||
      count.size() > 19 || !rngStateFromHex(state.substr(semi + 5), st))
    return malformed;
  rows = std::stoull(count);
  rng.setState(st);
  return Status::success();
}

void WindowSampler::rewind() {
  rng = Rng::forStream(seed, "data");
  rows = 0;
}

std::string rngStateToHex(const Rng::State &st) {
  std::string s;
  for (uint64_t w : st.s)
    s += hex64(w);
  uint64_t bits;
  std::memcpy(&bits, &st.spare, 8);
  return s + ":" + (st.hasSpare ? "1" : "0") + ":" + hex64(bits);
}

bool rngStateFromHex(const std::string &text, Rng::State &st) {
  if (text.size() != 64 + 1 + 1 + 1 + 16 || text[64] != ':' || text[66] != ':' ||
      (text[65] != '0' && text[65] != '1'))
    return false;
  for (int i = 0; i < 4; ++i)
    if (!parseHex64(text.substr(size_t(16 * i), 16), st.s[i]))
      return false;
  uint64_t bits;
  if (!parseHex64(text.substr(67), bits))
    return false;
  st.hasSpare = text[65] == '1';
  std::memcpy(&st.spare, &bits, 8);
  return true;
}

} // namespace einrt
