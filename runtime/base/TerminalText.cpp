//===- TerminalText.cpp - Text from users made safe to print --------------===//
#include "runtime/base/TerminalText.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace einrt {

namespace {

/// Code points a terminal must not be given: C1 controls, and Unicode's
/// format characters (Cf) and line/paragraph separators (Zl, Zp), as of
/// Unicode 15.
constexpr uint32_t kUnprintable[][2] = {
    {0x80, 0x9F},       {0xAD, 0xAD},       {0x600, 0x605},     {0x61C, 0x61C},
    {0x6DD, 0x6DD},     {0x70F, 0x70F},     {0x890, 0x891},     {0x8E2, 0x8E2},
    {0x180E, 0x180E},   {0x200B, 0x200F},   {0x2028, 0x202E},   {0x2060, 0x2064},
    {0x2066, 0x206F},   {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD},
    {0x110CD, 0x110CD}, {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A},
    {0xE0001, 0xE0001}, {0xE0020, 0xE007F},
};

bool unprintable(uint32_t cp) {
  auto after = std::upper_bound(std::begin(kUnprintable), std::end(kUnprintable), cp,
                                [](uint32_t v, const uint32_t(&range)[2]) { return v < range[0]; });
  return after != std::begin(kUnprintable) && cp <= (*std::prev(after))[1];
}

/// The code point of the well-formed UTF-8 sequence at text[i] (RFC 3629:
/// shortest form, no surrogates, at most U+10FFFF) and its length; 0 when
/// there is none.
size_t decodeUtf8(std::string_view text, size_t i, uint32_t &cp) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  unsigned char lead = byte(0);
  size_t n = lead >= 0xF0 && lead <= 0xF4 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0;
  if (lead >= 0xF5 || n == 0 || i + n > text.size())
    return 0;
  cp = lead & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(k) & 0xC0) != 0x80)
      return 0;
    cp = cp << 6 | (byte(k) & 0x3F);
  }
  static const uint32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kLeast[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

} // namespace

size_t printableLength(std::string_view text, size_t i) {
  unsigned char c = static_cast<unsigned char>(text[i]);
  if (c < 0x80)
    return c >= 0x20 && c < 0x7F ? 1 : 0;
  uint32_t cp = 0;
  size_t n = decodeUtf8(text, i, cp);
  return n != 0 && !unprintable(cp) ? n : 0;
}

std::string terminalSafe(std::string_view text) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (size_t n = printableLength(text, i)) {
      out.append(text.data() + i, n);
      i += n;
      continue;
    }
    unsigned char c = static_cast<unsigned char>(text[i++]);
    if (c == '\t') {
      out += "\\t";
      continue;
    }
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

std::string quoted(std::string_view text) { return "'" + terminalSafe(text) + "'"; }

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

} // namespace einrt
