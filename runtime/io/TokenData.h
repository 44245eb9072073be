//===- TokenData.h - Token files and random training windows --------------===//
//
// A token file is a memory-mapped array of little-endian uint16 token ids:
//   * nanoGPT's `.bin`: the tokens and nothing else;
//   * llm.c's format: a 256 × int32 little-endian header (header[0] = magic
//     20240520, header[1] = version, 1 = uint16 tokens, header[2] = token
//     count), then the tokens. Recognised by its magic.
//
// Opening checks only the size: an odd byte count or a header whose count
// disagrees with the file size is Corrupt, naming the file (a file that is
// not there is NotFound). checkVocabulary
// scans every token id against the vocabulary (a vectorised max over blocks:
// about a millisecond per 2 M tokens), so a bad id is found before training,
// not at the step whose window first draws it; the error names the file, the
// position and the value. WindowSampler::create runs it.
//
// A WindowSampler draws random windows (seeded einrt::Rng, state saveable)
// and maps each onto a step's inputs:
//   * next_token: context i32[batch, window] = data[i : i+window],
//                 targets i32[batch]         = data[i+window];
//   * shifted:    context i32[batch, ctx]    = data[i : i+ctx],
//                 targets i32[batch, ctx]    = data[i+1 : i+ctx+1].
// Either way a row spans `context + 1` tokens and its start i is uniform in
// [0, size - context - 1]. Rows are drawn one after another from one stream,
// so k micro-batches of b rows see exactly the windows of one batch of k·b.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_TOKENDATA_H
#define EINC_RUNTIME_TOKENDATA_H

#include "runtime/core/Executor.h"
#include "runtime/core/Init.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace einrt {

/// A read-only memory-mapped token file. Movable, not copyable.
class TokenFile {
public:
  enum class Format { Raw, LlmC };

  static Expected<TokenFile> open(const std::string &path);
  TokenFile(TokenFile &&other) noexcept;
  TokenFile &operator=(TokenFile &&other) noexcept;
  TokenFile(const TokenFile &) = delete;
  TokenFile &operator=(const TokenFile &) = delete;
  ~TokenFile();

  const std::string &path() const { return filePath; }
  Format format() const { return fmt; }
  const char *formatName() const; // "uint16" or "llm.c"
  /// Number of tokens.
  int64_t size() const { return count; }
  /// Token i (0 ≤ i < size()), unchecked against any vocabulary.
  uint16_t token(int64_t i) const;
  /// The byte offset of token i in the file (header included).
  int64_t byteOffset(int64_t i) const { return headerBytes + 2 * i; }

  /// Every token id is < vocab; else Invalid naming the file, the first bad
  /// token (index and byte offset) and its value.
  Status checkVocabulary(int32_t vocab) const;

  /// Copies tokens [start, start + n) as int32 into `out`; with vocab > 0
  /// every id must be < vocab, else Invalid naming the file, the position
  /// (token index and byte offset) and the value.
  Status read(int64_t start, int64_t n, int32_t vocab, int32_t *out) const;

private:
  TokenFile() = default;
  void release();
  std::string badTokenMessage(int64_t i, int32_t vocab) const;

  std::string filePath;
  Format fmt = Format::Raw;
  const uint8_t *map = nullptr; // whole file
  size_t mapBytes = 0;
  int64_t headerBytes = 0;
  int64_t count = 0;
};

/// How a window maps onto the step's inputs (the model's `train { }`).
enum class WindowMapping { NextToken, Shifted };
const char *windowMappingName(WindowMapping m); // "next_token", "shifted"
std::optional<WindowMapping> parseWindowMapping(const std::string &name);

/// Where the windows go in a Program: the first i32 Input argument is the
/// context, the second the targets; shapes come from the argument buffers.
struct WindowLayout {
  WindowMapping mapping = WindowMapping::NextToken;
  size_t contextArg = 0; // argument indices
  size_t targetArg = 1;
  int64_t batch = 0;   // rows
  int64_t context = 0; // context tokens per row
  /// Tokens one row spans: context + 1.
  int64_t span() const { return context + 1; }
  /// Predicted tokens per batch: batch (next_token) or batch × context.
  int64_t targetsPerBatch() const;
};

/// The layout of `program`'s inputs for `mapping`: exactly two i32 Input
/// arguments with the shapes above, else Invalid naming the argument.
Expected<WindowLayout> windowLayout(const Program &program, WindowMapping mapping);
/// next_token when the second i32 input has rank 1, shifted when rank 2;
/// Invalid otherwise.
Expected<WindowMapping> inferWindowMapping(const Program &program);

/// Draws random windows from a TokenFile. The file must outlive it.
class WindowSampler {
public:
  /// Invalid when the file is too short for one window of `layout.span()`
  /// tokens (the message names the file and both lengths) or, with vocab > 0,
  /// holds an id >= vocab anywhere (TokenFile::checkVocabulary).
  static Expected<WindowSampler> create(const TokenFile &file, const WindowLayout &layout,
                                        uint64_t seed, int32_t vocab);

  const WindowLayout &layout() const { return lay; }
  /// Draws `layout().batch` rows into `context` and `targets` (resized).
  Status next(std::vector<int32_t> &context, std::vector<int32_t> &targets);
  /// Draws a batch and sets it as the executor's two token arguments.
  Status feed(Executor &ex);

  /// Draws `batches` × `layout().batch` windows as next() would, reading
  /// none (another rank's micro-batches of a data-parallel step).
  void skip(int64_t batches);
  /// Windows (rows) drawn so far.
  uint64_t drawn() const { return rows; }
  /// The generator's state and the row count, as text (for checkpoints):
  /// "rows:<n>;rng:<hex>".
  std::string saveState() const;
  /// Corrupt for text saveState did not write.
  Status restoreState(const std::string &state);
  /// Back to the state right after construction.
  void rewind();

private:
  WindowSampler(const TokenFile &f, WindowLayout l, uint64_t seed)
      : file(&f), lay(l), seed(seed), rng(Rng::forStream(seed, "data")) {}
  const TokenFile *file;
  WindowLayout lay;
  uint64_t seed;
  Rng rng;
  uint64_t rows = 0;
  std::vector<int32_t> row; // scratch: one window
};

/// Rng state as 64 hex digits for the four words, then the spare normal
/// flag and value ("<64 hex>:<0|1>:<16 hex of the double's bits>").
std::string rngStateToHex(const Rng::State &st);
bool rngStateFromHex(const std::string &text, Rng::State &st);

} // namespace einrt

#endif // EINC_RUNTIME_TOKENDATA_H
