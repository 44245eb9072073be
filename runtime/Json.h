//===- Json.h - A minimal strict JSON parser for file headers ---*- C++ -*-===//
//
// Enough JSON (RFC 8259) for the safetensors header: strict, depth-limited,
// never crashing on bad input (the runtime may not use LLVM's parser).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_JSON_H
#define EINC_RUNTIME_JSON_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace einrt {

struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  std::string text; // String: the decoded value; Number: the literal
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;
};

/// "null", "a boolean", "a number", ...: for error messages.
const char *kindName(Json::Kind k);
/// Parses a whole document; false with `error` on malformed input.
bool parseJson(const char *text, size_t size, Json &out, std::string &error);
/// A JSON number that is a non-negative integer fitting int64.
bool jsonToIndex(const Json &j, int64_t &v);
bool validUtf8(const std::string &s);
/// Appends `s` as a JSON string literal (quoted, escaped).
void appendJsonString(std::string &out, const std::string &s);

} // namespace einrt

#endif // EINC_RUNTIME_JSON_H
