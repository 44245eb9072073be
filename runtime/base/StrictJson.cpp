//===- StrictJson.cpp - nlohmann::json, read strictly ---------------------===//
#include "runtime/base/StrictJson.h"

#include <limits>
#include <unordered_set>

namespace einrt {

using nlohmann::json;

namespace {

/// A key for a message: control bytes shown as '?', long keys cut.
std::string shownKey(const std::string &k) {
  std::string s;
  for (char c : k.substr(0, 64))
    s += (unsigned char)c < 0x20 || c == 0x7f ? '?' : c;
  return k.size() > 64 ? s + "..." : s;
}

/// nlohmann's text without its "[json.exception...] parse error at line
/// L, column C: " prefix or the "; last read: '...'" quote of the input
/// (which can be megabytes of a hostile file).
std::string withoutInput(const std::string &what) {
  std::string m = what;
  size_t colon = m.find(": ");
  if (colon != std::string::npos)
    m = m.substr(colon + 2);
  else if (size_t bracket = m.find("] "); bracket != std::string::npos)
    m = m.substr(bracket + 2);
  size_t quote = m.find("; last read: '");
  if (quote != std::string::npos) {
    size_t expected = m.rfind("'; expected ");
    m = m.substr(0, quote) +
        (expected != std::string::npos && expected > quote ? m.substr(expected + 1) : "");
  }
  if (m.size() > 200)
    m = m.substr(0, 200) + "...";
  return m;
}

/// Builds the document from nlohmann's SAX events (json::parse has no hook
/// for duplicate keys or depth, and throws). A handler returning false
/// stops the parse.
class StrictBuilder final : public nlohmann::json_sax<json> {
public:
  StrictBuilder(json &root, std::vector<std::string> *topLevelKeys)
      : root(root), topLevelKeys(topLevelKeys) {}

  const std::string &failure() const { return err; }

  bool null() override { return place(json(nullptr)) != nullptr; }
  bool boolean(bool v) override { return place(json(v)) != nullptr; }
  bool number_integer(number_integer_t v) override { return place(json(v)) != nullptr; }
  bool number_unsigned(number_unsigned_t v) override { return place(json(v)) != nullptr; }
  bool number_float(number_float_t v, const string_t &) override {
    return place(json(v)) != nullptr;
  }
  bool string(string_t &v) override { return place(json(std::move(v))) != nullptr; }
  bool binary(binary_t &) override { return fail("binary values are not JSON"); }

  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t &k) override {
    json &object = *stack.back();
    if (object.contains(k))
      return fail("duplicate key \"" + shownKey(k) + "\"");
    if (topLevelKeys && stack.size() == 1)
      topLevelKeys->push_back(k);
    slot = &object[k];
    return true;
  }

  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &ex) override {
    err = "invalid JSON at byte " + std::to_string(position) + ": " + withoutInput(ex.what());
    return false;
  }

private:
  json &root;
  std::vector<std::string> *topLevelKeys;
  std::vector<json *> stack; // the open containers, innermost last
  json *slot = nullptr;      // the member the last key named
  std::string err;

  bool fail(const std::string &what) {
    err = "invalid JSON: " + what;
    return false;
  }

  /// Puts `v` where the document expects the next value; nullptr when the
  /// nesting is too deep. Pointers stay valid: a container is only appended
  /// to while it is the innermost open one.
  json *place(json v) {
    if (stack.size() > size_t(kMaxJsonDepth)) {
      fail("nesting deeper than " + std::to_string(kMaxJsonDepth));
      return nullptr;
    }
    if (stack.empty()) {
      root = std::move(v);
      return &root;
    }
    json &top = *stack.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    *slot = std::move(v);
    return slot;
  }

  bool open(json container) {
    json *at = place(std::move(container));
    if (!at)
      return false;
    stack.push_back(at);
    return true;
  }

  bool close() {
    stack.pop_back();
    return true;
  }
};

/// The same rules without building anything: the containers open, each
/// object's keys so far.
class StrictChecker final : public nlohmann::json_sax<json> {
public:
  const std::string &failure() const { return err; }

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t &) override { return value(); }
  bool string(string_t &) override { return value(); }
  bool binary(binary_t &) override { return fail("binary values are not JSON"); }

  bool start_object(std::size_t) override { return open(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t &k) override {
    if (!stack.back().keys.insert(k).second)
      return fail("duplicate key \"" + shownKey(k) + "\"");
    return true;
  }

  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &ex) override {
    err = "invalid JSON at byte " + std::to_string(position) + ": " + withoutInput(ex.what());
    return false;
  }

private:
  struct Open {
    std::unordered_set<std::string> keys; // an object's; empty for an array
  };
  std::vector<Open> stack;
  std::string err;

  bool fail(const std::string &what) {
    err = "invalid JSON: " + what;
    return false;
  }
  bool value() {
    if (stack.size() > size_t(kMaxJsonDepth))
      return fail("nesting deeper than " + std::to_string(kMaxJsonDepth));
    return true;
  }
  bool open() {
    if (!value())
      return false;
    stack.emplace_back();
    return true;
  }
  bool close() {
    stack.pop_back();
    return true;
  }
};

} // namespace

Expected<json> parseStrictJson(const char *text, size_t size,
                               std::vector<std::string> *topLevelKeys) {
  json out;
  if (topLevelKeys)
    topLevelKeys->clear();
  StrictBuilder builder(out, topLevelKeys);
  if (json::sax_parse(text, text + size, &builder))
    return out;
  return Status::invalid(builder.failure().empty() ? "invalid JSON" : builder.failure());
}

Status checkStrictJson(const char *text, size_t size) {
  StrictChecker checker;
  if (json::sax_parse(text, text + size, &checker))
    return Status::success();
  return Status::invalid(checker.failure().empty() ? "invalid JSON" : checker.failure());
}

const char *jsonKindName(const json &j) {
  switch (j.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
  case json::value_t::number_float:
    return "a number";
  case json::value_t::string:
    return "a string";
  case json::value_t::array:
    return "an array";
  case json::value_t::object:
    return "an object";
  default:
    return "not a JSON value";
  }
}

bool jsonToIndex(const json &j, int64_t &v) {
  // nlohmann reads a literal without sign, fraction or exponent as unsigned
  // ("-0" is number_integer, "2.0" number_float, beyond uint64 a float).
  if (!j.is_number_unsigned())
    return false;
  uint64_t u = j.get<uint64_t>();
  if (u > uint64_t(std::numeric_limits<int64_t>::max()))
    return false;
  v = int64_t(u);
  return true;
}

bool validUtf8(const std::string &s) {
  // Serialising drops invalid bytes under `ignore` and writes U+FFFD for
  // them under `replace`: the two agree exactly when there are none.
  json j = s;
  return j.dump(-1, ' ', false, json::error_handler_t::ignore) ==
         j.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace einrt
