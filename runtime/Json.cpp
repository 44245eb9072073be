//===- Json.cpp - A minimal strict JSON parser (RFC 8259), depth-limited ---===//
#include "runtime/Json.h"

#include <cstring>
#include <limits>
#include <set>

namespace einrt {

const char *kindName(Json::Kind k) {
  switch (k) {
  case Json::Null:
    return "null";
  case Json::Bool:
    return "a boolean";
  case Json::Number:
    return "a number";
  case Json::String:
    return "a string";
  case Json::Array:
    return "an array";
  case Json::Object:
    return "an object";
  }
  return "?";
}

namespace {

class JsonParser {
public:
  JsonParser(const char *p, size_t n) : p(p), n(n) {}

  bool parseDocument(Json &out) {
    skipWs();
    if (!parseValue(out, 0))
      return false;
    skipWs();
    if (pos != n)
      return fail("unexpected trailing characters");
    return true;
  }
  const std::string &error() const { return err; }

private:
  static constexpr int kMaxDepth = 64;
  const char *p;
  size_t n;
  size_t pos = 0;
  std::string err;

  bool fail(const std::string &msg) {
    if (err.empty())
      err = "invalid JSON at byte " + std::to_string(pos) + ": " + msg;
    return false;
  }
  void skipWs() {
    while (pos < n && (p[pos] == ' ' || p[pos] == '\t' || p[pos] == '\n' || p[pos] == '\r'))
      ++pos;
  }
  bool literal(const char *word) {
    size_t len = std::strlen(word);
    if (n - pos < len || std::memcmp(p + pos, word, len) != 0)
      return fail("invalid literal");
    pos += len;
    return true;
  }

  bool parseValue(Json &out, int depth) {
    if (depth > kMaxDepth)
      return fail("nesting deeper than " + std::to_string(kMaxDepth));
    if (pos >= n)
      return fail("unexpected end of input");
    char c = p[pos];
    switch (c) {
    case '{':
      return parseObject(out, depth);
    case '[':
      return parseArray(out, depth);
    case '"':
      out.kind = Json::String;
      return parseString(out.text);
    case 't':
      out.kind = Json::Bool;
      out.boolean = true;
      return literal("true");
    case 'f':
      out.kind = Json::Bool;
      out.boolean = false;
      return literal("false");
    case 'n':
      out.kind = Json::Null;
      return literal("null");
    default:
      if (c == '-' || (c >= '0' && c <= '9'))
        return parseNumber(out);
      return fail(std::string("unexpected character '") +
                  (c >= 0x20 && c < 0x7f ? std::string(1, c) : "?") + "'");
    }
  }

  bool parseObject(Json &out, int depth) {
    out.kind = Json::Object;
    ++pos; // '{'
    skipWs();
    if (pos < n && p[pos] == '}') {
      ++pos;
      return true;
    }
    std::set<std::string> keys;
    while (true) {
      skipWs();
      if (pos >= n || p[pos] != '"')
        return fail("expected a string key");
      std::string key;
      if (!parseString(key))
        return false;
      if (!keys.insert(key).second)
        return fail("duplicate key \"" + key + "\"");
      skipWs();
      if (pos >= n || p[pos] != ':')
        return fail("expected ':'");
      ++pos;
      skipWs();
      Json v;
      if (!parseValue(v, depth + 1))
        return false;
      out.members.emplace_back(std::move(key), std::move(v));
      skipWs();
      if (pos >= n)
        return fail("unterminated object");
      if (p[pos] == ',') {
        ++pos;
        continue;
      }
      if (p[pos] == '}') {
        ++pos;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  bool parseArray(Json &out, int depth) {
    out.kind = Json::Array;
    ++pos; // '['
    skipWs();
    if (pos < n && p[pos] == ']') {
      ++pos;
      return true;
    }
    while (true) {
      skipWs();
      Json v;
      if (!parseValue(v, depth + 1))
        return false;
      out.items.push_back(std::move(v));
      skipWs();
      if (pos >= n)
        return fail("unterminated array");
      if (p[pos] == ',') {
        ++pos;
        continue;
      }
      if (p[pos] == ']') {
        ++pos;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  bool parseNumber(Json &out) {
    out.kind = Json::Number;
    size_t start = pos;
    if (p[pos] == '-')
      ++pos;
    if (pos >= n || !isDigit(p[pos]))
      return fail("invalid number");
    if (p[pos] == '0')
      ++pos;
    else
      while (pos < n && isDigit(p[pos]))
        ++pos;
    if (pos < n && p[pos] == '.') {
      ++pos;
      if (pos >= n || !isDigit(p[pos]))
        return fail("invalid number");
      while (pos < n && isDigit(p[pos]))
        ++pos;
    }
    if (pos < n && (p[pos] == 'e' || p[pos] == 'E')) {
      ++pos;
      if (pos < n && (p[pos] == '+' || p[pos] == '-'))
        ++pos;
      if (pos >= n || !isDigit(p[pos]))
        return fail("invalid number");
      while (pos < n && isDigit(p[pos]))
        ++pos;
    }
    out.text.assign(p + start, pos - start);
    return true;
  }

  bool hex4(uint32_t &v) {
    if (n - pos < 4)
      return fail("truncated \\u escape");
    v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = p[pos++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= c - '0';
      else if (c >= 'a' && c <= 'f')
        v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        v |= c - 'A' + 10;
      else
        return fail("invalid \\u escape");
    }
    return true;
  }

  static void appendUtf8(std::string &s, uint32_t cp) {
    if (cp < 0x80) {
      s += char(cp);
    } else if (cp < 0x800) {
      s += char(0xC0 | (cp >> 6));
      s += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += char(0xE0 | (cp >> 12));
      s += char(0x80 | ((cp >> 6) & 0x3F));
      s += char(0x80 | (cp & 0x3F));
    } else {
      s += char(0xF0 | (cp >> 18));
      s += char(0x80 | ((cp >> 12) & 0x3F));
      s += char(0x80 | ((cp >> 6) & 0x3F));
      s += char(0x80 | (cp & 0x3F));
    }
  }

  /// Validates one UTF-8 sequence starting at pos and appends it.
  bool utf8Sequence(std::string &s) {
    unsigned char c = p[pos];
    int len;
    uint32_t cp, min;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2, cp = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3, cp = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4, cp = c & 0x07, min = 0x10000;
    } else {
      return fail("invalid UTF-8");
    }
    if (n - pos < size_t(len))
      return fail("truncated UTF-8");
    for (int i = 1; i < len; ++i) {
      unsigned char cc = p[pos + i];
      if ((cc & 0xC0) != 0x80)
        return fail("invalid UTF-8");
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return fail("invalid UTF-8");
    s.append(p + pos, len);
    pos += len;
    return true;
  }

  bool parseString(std::string &s) {
    ++pos; // opening quote
    s.clear();
    while (true) {
      if (pos >= n)
        return fail("unterminated string");
      unsigned char c = p[pos];
      if (c == '"') {
        ++pos;
        return true;
      }
      if (c < 0x20)
        return fail("control character in string");
      if (c >= 0x80) {
        if (!utf8Sequence(s))
          return false;
        continue;
      }
      if (c != '\\') {
        s += char(c);
        ++pos;
        continue;
      }
      ++pos;
      if (pos >= n)
        return fail("unterminated escape");
      char e = p[pos++];
      switch (e) {
      case '"':
        s += '"';
        break;
      case '\\':
        s += '\\';
        break;
      case '/':
        s += '/';
        break;
      case 'b':
        s += '\b';
        break;
      case 'f':
        s += '\f';
        break;
      case 'n':
        s += '\n';
        break;
      case 'r':
        s += '\r';
        break;
      case 't':
        s += '\t';
        break;
      case 'u': {
        uint32_t cp = 0;
        if (!hex4(cp))
          return false;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
          return fail("lone low surrogate");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (n - pos < 2 || p[pos] != '\\' || p[pos + 1] != 'u')
            return fail("lone high surrogate");
          pos += 2;
          uint32_t lo = 0;
          if (!hex4(lo))
            return false;
          if (lo < 0xDC00 || lo > 0xDFFF)
            return fail("invalid surrogate pair");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        appendUtf8(s, cp);
        break;
      }
      default:
        return fail("invalid escape");
      }
    }
  }
};

} // namespace

bool parseJson(const char *text, size_t size, Json &out, std::string &error) {
  JsonParser parser(text, size);
  if (parser.parseDocument(out))
    return true;
  error = parser.error();
  return false;
}

/// A non-negative integer literal (no sign, fraction or exponent) that fits
/// in int64.
bool jsonToIndex(const Json &j, int64_t &v) {
  if (j.kind != Json::Number || j.text.empty())
    return false;
  uint64_t acc = 0;
  for (char c : j.text) {
    if (c < '0' || c > '9')
      return false;
    uint64_t d = c - '0';
    if (acc > (uint64_t(std::numeric_limits<int64_t>::max()) - d) / 10)
      return false;
    acc = acc * 10 + d;
  }
  v = int64_t(acc);
  return true;
}

bool validUtf8(const std::string &s) {
  Json j;
  std::string quoted = "\"";
  for (char c : s)
    if (c == '"' || c == '\\' || (unsigned char)c < 0x20)
      quoted += ' '; // only the UTF-8 structure matters here
    else
      quoted += c;
  quoted += '"';
  JsonParser parser(quoted.data(), quoted.size());
  return parser.parseDocument(j);
}

void appendJsonString(std::string &out, const std::string &s) {
  static const char *hex = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (c < 0x20) {
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 15];
      } else {
        out += char(c);
      }
    }
  }
  out += '"';
}

} // namespace einrt
