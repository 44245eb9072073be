//===- StrictJson.h - nlohmann::json, read strictly, written one way -*- C++ -*-===//
//
// einc reads and writes JSON with nlohmann::json (Debian's nlohmann-json3-dev,
// header-only). This header holds the project's policy around it, in one
// place for the runtime (safetensors headers, the metrics log), the device
// profiles and the report:
//
//  - parseStrictJson: RFC 8259 as nlohmann parses it (UTF-8 checked, no
//    comments, nothing after the value), and also no duplicate keys and at
//    most kMaxJsonDepth nested containers. It never throws or aborts — it
//    drives nlohmann's SAX parser, which reports errors as return values — so
//    it is safe in the targets built with -fno-exceptions.
//    checkStrictJson applies the same rules without building the document.
//  - jsonNumber: the form numbers are written in.
//  - dumpJson: serialisation that cannot fail (invalid UTF-8 is replaced).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_STRICTJSON_H
#define EINC_RUNTIME_STRICTJSON_H

#include "runtime/base/Status.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace einrt {

/// Deeper nesting is an error (hostile input; no file einc reads needs it).
constexpr int kMaxJsonDepth = 64;

/// Parses one whole document; Invalid ("invalid JSON at byte N: ...", no
/// input bytes quoted) on malformed input (a reader of a file calls that
/// file Corrupt where it should not be). With `topLevelKeys`, the root
/// object's keys are recorded in document order (nlohmann::json keeps keys
/// sorted).
Expected<nlohmann::json> parseStrictJson(const char *text, size_t size,
                                         std::vector<std::string> *topLevelKeys = nullptr);

/// Whether the whole of `text` is one document parseStrictJson accepts,
/// without building it (a fraction of the time and memory: for text that
/// is checked now and read, if at all, later): the same failure otherwise.
Status checkStrictJson(const char *text, size_t size);

/// "null", "a boolean", "a number", "a string", "an array", "an object".
const char *jsonKindName(const nlohmann::json &j);

/// A non-negative integer literal (no sign, fraction or exponent) that fits
/// int64.
bool jsonToIndex(const nlohmann::json &j, int64_t &v);

/// Whether `s` is valid UTF-8 (what a JSON string must hold).
bool validUtf8(const std::string &s);

/// A double as einc writes it: null when not finite (JSON has no infinity),
/// an integer when it is one exactly and within ±2^53, else nlohmann's
/// shortest form that reads back to the same double.
template <class Json = nlohmann::ordered_json> Json jsonNumber(double v) {
  if (!std::isfinite(v))
    return Json(nullptr);
  if (v == std::trunc(v) && std::fabs(v) <= 9007199254740992.0)
    return Json(static_cast<int64_t>(v));
  return Json(v);
}

/// Serialises `j` (indent < 0: one line, no spaces; else pretty-printed with
/// that many spaces). Invalid UTF-8 in a string becomes U+FFFD rather than an
/// exception.
template <class Json> std::string dumpJson(const Json &j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

} // namespace einrt

#endif // EINC_RUNTIME_STRICTJSON_H
