//===- FieldsJson.h - Values to JSON and back through their fields -*- C++ -*-===//
//
// The program file's header (docs/program-file.md) is JSON written from and
// read into the runtime's structs through their `fields` visitors
// (runtime/base/Fields.h), so a new member is written and read without touching
// this code. The forms:
//
//   struct with fields      an object, one member per field, no others; a
//                           member that holds its default (what a
//                           default-constructed struct holds) is left out,
//                           and a member left out is read as its default
//   bool, integers          JSON booleans and integers (int32 range checked)
//   double                  a number, or "inf", "-inf", "nan" (JSON has none)
//   std::string             a string (valid UTF-8)
//   enum                    its name (EnumNames<T>)
//   std::vector<T>          an array; std::optional<T>: null or the value;
//                           std::map<std::string, T>: an object
//   std::variant            the alternative's object; the reader fills the
//                           alternative the value already holds (fieldRead)
//   std::vector<double>,    a binary section {"offset": O, "size": N}: N
//   std::vector<uint8_t>,   bytes at O in the file's data (doubles as
//   asBytes(string)         little-endian IEEE binary64, bit for bit)
//
// The same visitors write documents (JsonForm::Document: the report's JSON;
// DocumentWithDoubles: the device check's): every member in order, numbers
// as jsonNumber (or doubles as doubles), and the document-only members of
// Fields.h (computed, orNull, group); these are written, not read back.
//
// Reading never throws and never trusts a length: every type, range and
// section is checked, and a problem is the path to it and what is wrong
// ("programs[1].program.steps[7].payload.m: expected an integer, got a
// string").
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_FIELDSJSON_H
#define EINC_RUNTIME_FIELDSJSON_H

#include "runtime/base/Fields.h"
#include "runtime/base/Status.h"
#include "runtime/base/StrictJson.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace einrt {

/// The names of an enum's values, specialised per enum: `name(v)` for a
/// value, `parse(text, v)` back (false for no value's name), `expected()`
/// for messages ("a dtype (f32, bf16, ...)").
template <class T> struct EnumNames;

/// Called by the reader after each member of a struct is read: overload it
/// for a struct (argument-dependent lookup finds it) where what a later
/// member holds depends on an earlier one (a Step's payload on its kind).
template <class T> void fieldRead(T &, const char *) {}

/// The data part of a program file being written: sections appended at
/// offsets that are multiples of 8.
class SectionWriter {
public:
  nlohmann::json add(const uint8_t *data, size_t size) {
    while (bytes.size() % 8 != 0)
      bytes.push_back(0);
    nlohmann::json ref = nlohmann::json::object();
    ref["offset"] = uint64_t(bytes.size());
    ref["size"] = uint64_t(size);
    bytes.insert(bytes.end(), data, data + size);
    return ref;
  }
  std::vector<uint8_t> bytes;
};

/// The data part of a program file being read.
struct SectionReader {
  const uint8_t *data = nullptr;
  uint64_t size = 0;
};

/// Where a value is in the header, for messages; built on the stack as the
/// reader descends and only printed on an error.
struct JsonPath {
  const JsonPath *parent = nullptr;
  const char *key = nullptr; // a member, or null for an array index
  size_t index = 0;

  JsonPath member(const char *k) const { return {this, k, 0}; }
  JsonPath element(size_t i) const { return {this, nullptr, i}; }
  std::string str() const {
    std::string out = parent ? parent->str() : "";
    if (!parent && !key)
      return out; // the root
    if (key)
      return out + (out.empty() ? "" : ".") + key;
    return out + "[" + std::to_string(index) + "]";
  }
};

namespace fields_detail {
template <class T>
constexpr bool isSection = std::is_same_v<T, std::vector<double>> ||
                           std::is_same_v<T, std::vector<uint8_t>> || IsAsBytes<T>::value;
} // namespace fields_detail

/// How FieldsWriter writes a value.
enum class JsonForm {
  /// The program file's header: a member holding its default is left out,
  /// doubles are exact (with "inf", "-inf", "nan"), read back by FieldsReader.
  ProgramFile,
  /// A document for people and scripts (the report): every member in its
  /// visitor's order (with nlohmann::ordered_json), an absent optional member
  /// left out (orNull's written as null), doubles as jsonNumber (null when
  /// not finite, an integer when exactly one). Computed and group members
  /// are for this form.
  Document,
  /// A document whose doubles stay doubles (4.0, not 4; null when not
  /// finite): the device check's, whose readers print them as they come.
  DocumentWithDoubles,
};

/// Writes values as JSON of type `Json`; binary sections go to `sections`.
/// The only failure is a string that is not UTF-8 (`error`, the first one).
template <class Json> class BasicFieldsWriter {
public:
  explicit BasicFieldsWriter(SectionWriter &sections, JsonForm form = JsonForm::ProgramFile)
      : sections(&sections), form(form) {}
  /// A writer for values without binary sections.
  explicit BasicFieldsWriter(JsonForm form) : form(form) {}
  std::string error;

  template <class T> Json write(const T &v, const JsonPath &path = {}) {
    using namespace fields_detail;
    if constexpr (isSection<T>) {
      return writeSection(v);
    } else if constexpr (IsComputed<T>::value) {
      return write(v.value, path);
    } else if constexpr (IsOrNull<T>::value) {
      return v.value ? write(*v.value, path) : Json(nullptr);
    } else if constexpr (IsGroup<T>::value) {
      Json o = Json::object();
      v.list([&](const char *name, auto &&m) { writeMember(o, name, m, path); });
      return o;
    } else if constexpr (std::is_same_v<T, bool>) {
      return Json(v);
    } else if constexpr (std::is_floating_point_v<T>) {
      if (form == JsonForm::Document)
        return jsonNumber<Json>(double(v));
      if (form == JsonForm::DocumentWithDoubles)
        return std::isfinite(v) ? Json(double(v)) : Json(nullptr);
      if (std::isnan(v))
        return Json("nan");
      if (std::isinf(v))
        return Json(v > 0 ? "inf" : "-inf");
      return Json(double(v));
    } else if constexpr (std::is_integral_v<T>) {
      return Json(int64_t(v));
    } else if constexpr (std::is_enum_v<T>) {
      return Json(EnumNames<T>::name(v));
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (error.empty() && !validUtf8(v))
        error = path.str() + ": not valid UTF-8";
      return Json(v);
    } else if constexpr (IsStringMap<T>::value || IsPairVector<T>::value) {
      Json o = Json::object();
      for (const auto &[key, value] : v) {
        if (error.empty() && !validUtf8(key))
          error = path.str() + ": a key that is not valid UTF-8";
        o[key] = write(value, path.member(key.c_str()));
      }
      return o;
    } else if constexpr (IsVector<T>::value) {
      Json a = Json::array();
      for (size_t i = 0; i < v.size(); ++i)
        a.push_back(write(v[i], path.element(i)));
      return a;
    } else if constexpr (IsOptional<T>::value) {
      return v ? write(*v, path) : Json(nullptr);
    } else if constexpr (IsVariant<T>::value) {
      return std::visit([&](const auto &alt) { return write(alt, path); }, v);
    } else {
      static_assert(HasFields<T>::value, "FieldsWriter: a type without a fields visitor");
      Json o = Json::object();
      if (form != JsonForm::ProgramFile) {
        T::fields(v, [&](const char *name, auto &&m) { writeMember(o, name, m, path); });
        return o;
      }
      const T defaults{};
      forEachFieldPair(v, defaults, [&](size_t, const char *name, const auto &m, const auto &d) {
        if (!identical(m, d))
          o[name] = write(m, path.member(name));
      });
      return o;
    }
  }

private:
  SectionWriter *sections = nullptr;
  JsonForm form;

  /// A member of a document's object: left out when it is an absent optional.
  template <class M> void writeMember(Json &o, const char *name, const M &m, const JsonPath &path) {
    using namespace fields_detail;
    if constexpr (IsOptional<M>::value) {
      if (!m)
        return;
    } else if constexpr (IsComputed<M>::value) {
      if constexpr (IsOptional<decltype(m.value)>::value)
        if (!m.value)
          return;
    }
    o[name] = write(m, path.member(name));
  }

  template <class T> Json writeSection(const T &v) {
    assert(sections && "a binary section needs the writer's SectionWriter");
    if constexpr (std::is_same_v<T, std::vector<double>>) {
      std::vector<uint8_t> le(v.size() * 8);
      for (size_t i = 0; i < v.size(); ++i) {
        uint64_t bits;
        std::memcpy(&bits, &v[i], 8);
        for (int k = 0; k < 8; ++k)
          le[8 * i + k] = uint8_t(bits >> (8 * k));
      }
      return sections->add(le.data(), le.size());
    } else if constexpr (std::is_same_v<T, std::vector<uint8_t>>) {
      return sections->add(v.data(), v.size());
    } else {
      return sections->add(reinterpret_cast<const uint8_t *>(v.text.data()), v.text.size());
    }
  }
};

/// The program file's writer.
using FieldsWriter = BasicFieldsWriter<nlohmann::json>;

/// Reads values from JSON written by FieldsWriter; false with `error` (the
/// path and the problem) on anything else.
class FieldsReader {
public:
  explicit FieldsReader(const SectionReader &sections) : sections(sections) {}
  std::string error;

  template <class T> bool read(const nlohmann::json &j, T &out, const JsonPath &path = {}) {
    using namespace fields_detail;
    if constexpr (isSection<T>) {
      const uint8_t *p;
      uint64_t n;
      if (!section(j, path, p, n))
        return false;
      if constexpr (std::is_same_v<T, std::vector<double>>) {
        if (n % 8 != 0)
          return fail(path, "a section of " + std::to_string(n) + " bytes is not whole doubles");
        out.resize(n / 8);
        for (size_t i = 0; i < out.size(); ++i) {
          uint64_t bits = 0;
          for (int k = 0; k < 8; ++k)
            bits |= uint64_t(p[8 * i + k]) << (8 * k);
          std::memcpy(&out[i], &bits, 8);
        }
      } else if constexpr (std::is_same_v<T, std::vector<uint8_t>>) {
        out.assign(p, p + n);
      } else {
        out.text.assign(reinterpret_cast<const char *>(p), size_t(n));
      }
      return true;
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!j.is_boolean())
        return expected(path, "a boolean", j);
      out = j.get<bool>();
      return true;
    } else if constexpr (std::is_floating_point_v<T>) {
      if (j.is_number()) {
        out = T(j.get<double>());
        return true;
      }
      if (j.is_string()) {
        const std::string &s = j.get_ref<const std::string &>();
        if (s == "inf" || s == "-inf" || s == "nan") {
          out = s == "nan" ? std::numeric_limits<T>::quiet_NaN()
                           : (s == "inf" ? 1 : -1) * std::numeric_limits<T>::infinity();
          return true;
        }
      }
      return expected(path, "a number (or \"inf\", \"-inf\", \"nan\")", j);
    } else if constexpr (std::is_integral_v<T>) {
      static_assert(std::is_signed_v<T> || sizeof(T) < 8, "FieldsReader: uint64 members");
      int64_t v;
      if (j.is_number_unsigned()) {
        if (j.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
          return fail(path, "the integer is out of range");
        v = int64_t(j.get<uint64_t>());
      } else if (j.is_number_integer()) {
        v = j.get<int64_t>();
      } else {
        return expected(path, "an integer", j);
      }
      if (v < int64_t(std::numeric_limits<T>::min()) || v > int64_t(std::numeric_limits<T>::max()))
        return fail(path, std::to_string(v) + " is out of range for a " +
                              std::to_string(8 * sizeof(T)) + "-bit integer");
      out = T(v);
      return true;
    } else if constexpr (std::is_enum_v<T>) {
      if (!j.is_string())
        return expected(path, "a name", j);
      if (!EnumNames<T>::parse(j.get_ref<const std::string &>(), out))
        return fail(path, "'" + printable(j.get_ref<const std::string &>()) + "' is not " +
                              EnumNames<T>::expected());
      return true;
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!j.is_string())
        return expected(path, "a string", j);
      out = j.get_ref<const std::string &>();
      return true;
    } else if constexpr (IsVector<T>::value) {
      if (!j.is_array())
        return expected(path, "an array", j);
      out.clear();
      out.resize(j.size());
      for (size_t i = 0; i < out.size(); ++i)
        if (!read(j[i], out[i], path.element(i)))
          return false;
      return true;
    } else if constexpr (IsOptional<T>::value) {
      if (j.is_null()) {
        out.reset();
        return true;
      }
      out.emplace();
      return read(j, *out, path);
    } else if constexpr (IsStringMap<T>::value) {
      if (!j.is_object())
        return expected(path, "an object", j);
      out.clear();
      for (auto it = j.begin(); it != j.end(); ++it)
        if (!read(it.value(), out[it.key()], path.member(it.key().c_str())))
          return false;
      return true;
    } else if constexpr (IsVariant<T>::value) {
      return std::visit([&](auto &alt) { return read(j, alt, path); }, out);
    } else {
      static_assert(HasFields<T>::value, "FieldsReader: a type without a fields visitor");
      if (!j.is_object())
        return expected(path, "an object", j);
      out = T{}; // a member left out holds its default
      bool ok = true;
      size_t found = 0;
      std::vector<const char *> names;
      T::fields(out, [&](const char *name, auto &&m) {
        names.push_back(name);
        if (!ok)
          return;
        if (auto it = j.find(name); it != j.end()) {
          ++found;
          ok = read(*it, m, path.member(name));
        }
        if (ok)
          fieldRead(out, name);
      });
      if (ok && found != j.size())
        for (auto it = j.begin(); it != j.end(); ++it)
          if (std::find_if(names.begin(), names.end(),
                           [&](const char *n) { return it.key() == n; }) == names.end())
            return fail(path, "unknown member '" + printable(it.key()) + "'");
      return ok;
    }
  }

private:
  const SectionReader &sections;

  bool fail(const JsonPath &path, const std::string &problem) {
    std::string where = path.str();
    error = where.empty() ? problem : where + ": " + problem;
    return false;
  }
  bool expected(const JsonPath &path, const char *what, const nlohmann::json &j) {
    return fail(path, std::string("expected ") + what + ", got " + jsonKindName(j));
  }

  /// A name from the file for a message: control bytes as '?', cut at 64.
  static std::string printable(const std::string &s) {
    std::string out;
    for (char c : s.substr(0, 64))
      out += (unsigned char)c < 0x20 || c == 0x7f ? '?' : c;
    return s.size() > 64 ? out + "..." : out;
  }

  bool section(const nlohmann::json &j, const JsonPath &path, const uint8_t *&p, uint64_t &n) {
    if (!j.is_object() || j.size() != 2 || !j.contains("offset") || !j.contains("size"))
      return fail(path, "expected a section {\"offset\": O, \"size\": N}");
    int64_t offset, size;
    if (!jsonToIndex(j["offset"], offset) || !jsonToIndex(j["size"], size))
      return fail(path, "a section's offset and size are non-negative integers");
    if (uint64_t(offset) > sections.size || uint64_t(size) > sections.size - uint64_t(offset))
      return fail(path, "the section [" + std::to_string(offset) + ", +" + std::to_string(size) +
                            ") lies outside the data (" + std::to_string(sections.size) +
                            " bytes)");
    p = sections.data + offset;
    n = uint64_t(size);
    return true;
  }
};

/// A struct with fields as one self-contained blob: the JSON's length (8
/// bytes, little-endian), the JSON (keys sorted: the same value, the same
/// bytes), padding to 8, then its sections. How a backend's kernel section
/// sits in a program file (ModelBundle::kernelSections) without the file
/// knowing its type. Fails (Invalid) on text that is not UTF-8.
template <class T> Expected<std::vector<uint8_t>> encodeFieldsBlob(const T &value) {
  SectionWriter sections;
  FieldsWriter writer(sections);
  nlohmann::json header = writer.write(value);
  if (!writer.error.empty())
    return Status::invalid(writer.error);
  std::string text = dumpJson(header);
  while (text.size() % 8 != 0)
    text += ' ';
  std::vector<uint8_t> out;
  for (int k = 0; k < 8; ++k)
    out.push_back(uint8_t(uint64_t(text.size()) >> (8 * k)));
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), sections.bytes.begin(), sections.bytes.end());
  return out;
}

/// Reads a blob of encodeFieldsBlob; Corrupt (where, and what is wrong) on
/// anything else.
template <class T> Status decodeFieldsBlob(const std::vector<uint8_t> &blob, T &out) {
  if (blob.size() < 8)
    return Status(StatusCode::Corrupt, "truncated to " + std::to_string(blob.size()) + " bytes");
  uint64_t headerBytes = 0;
  for (int k = 0; k < 8; ++k)
    headerBytes |= uint64_t(blob[size_t(k)]) << (8 * k);
  if (headerBytes > blob.size() - 8)
    return Status(StatusCode::Corrupt, "a header of " + std::to_string(headerBytes) + " bytes in " +
                                           std::to_string(blob.size()));
  Expected<nlohmann::json> parsed =
      parseStrictJson(reinterpret_cast<const char *>(blob.data() + 8), size_t(headerBytes));
  if (!parsed.ok())
    return Status(StatusCode::Corrupt, parsed.status().message());
  nlohmann::json header = parsed.take();
  SectionReader sections{blob.data() + 8 + headerBytes, blob.size() - 8 - headerBytes};
  FieldsReader reader(sections);
  if (!reader.read(header, out))
    return Status(StatusCode::Corrupt, reader.error);
  return Status::success();
}

} // namespace einrt

#endif // EINC_RUNTIME_FIELDSJSON_H
