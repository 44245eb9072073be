//===- Fields.h - What the `fields(self, visit)` visitors give -*- C++ -*-===//
//
// A struct lists its members once, in order:
//
//   template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
//     visit("name", self.name); ...
//   }
//
// (runtime/core/StepPayloads.h, Program.h, TrainSettings.h, ModelBundle.h). From
// that list this header derives identity (`identical`), and the program file
// (runtime/base/FieldsJson.h) its reading and writing, so a new member is
// compared, written and read without touching either.
//
// A member is a number, bool, enum or std::string; a std::vector,
// std::optional or std::map<std::string, T> of members; a std::variant of
// structs with fields; a struct with fields; or `asBytes(self.text)`: a
// string stored as raw bytes rather than as text (see FieldsJson.h).
//
// A document written for people and scripts (the report's JSON) also lists
// `computed(value)`: a figure derived from other members (a total, a name for
// a flag), written but never read or compared; `orNull(self.opt)`: an
// optional written as null when absent (rather than left out); and
// `group([&](auto &&visit) {...})`: members listed inline that the document
// nests as one object ("device": {...} from the report's flat members).
// A std::vector<std::pair<std::string, T>> is a map in its own order.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_FIELDS_H
#define EINC_RUNTIME_FIELDS_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace einrt {

/// A string member visited as bytes: `visit("source", asBytes(self.source))`.
template <class S> struct AsBytes {
  S &text;
};
template <class S> AsBytes<S> asBytes(S &text) { return {text}; }

/// A value derived from other members: `visit("total", computed(self.total()))`.
template <class T> struct Computed {
  T value;
};
template <class T> Computed<T> computed(T value) { return {std::move(value)}; }
inline Computed<std::string> computed(const char *text) { return {text}; }

/// An optional member written as null when absent: `visit("link", orNull(self.link))`.
template <class O> struct OrNull {
  O &value;
};
template <class O> OrNull<O> orNull(O &value) { return {value}; }

/// Members nested as one object: `visit("device", group([&](auto &&v) { v("name", ...); }))`.
template <class F> struct Group {
  F list;
};
template <class F> Group<F> group(F list) { return {std::move(list)}; }

namespace fields_detail {

struct IgnoreField {
  template <class M> void operator()(const char *, M &&) const {}
};

template <class T> struct IsVector : std::false_type {};
template <class T> struct IsVector<std::vector<T>> : std::true_type {};
template <class T> struct IsOptional : std::false_type {};
template <class T> struct IsOptional<std::optional<T>> : std::true_type {};
template <class T> struct IsStringMap : std::false_type {};
template <class T> struct IsStringMap<std::map<std::string, T>> : std::true_type {};
template <class T> struct IsVariant : std::false_type {};
template <class... Ts> struct IsVariant<std::variant<Ts...>> : std::true_type {};
template <class T> struct IsAsBytes : std::false_type {};
template <class S> struct IsAsBytes<AsBytes<S>> : std::true_type {};
template <class T> struct IsComputed : std::false_type {};
template <class T> struct IsComputed<Computed<T>> : std::true_type {};
template <class T> struct IsOrNull : std::false_type {};
template <class O> struct IsOrNull<OrNull<O>> : std::true_type {};
template <class T> struct IsGroup : std::false_type {};
template <class F> struct IsGroup<Group<F>> : std::true_type {};
template <class T> struct IsPairVector : std::false_type {};
template <class T> struct IsPairVector<std::vector<std::pair<std::string, T>>> : std::true_type {};

} // namespace fields_detail

/// Whether `T` lists its members with a `fields` visitor.
template <class T, class = void> struct HasFields : std::false_type {};
template <class T>
struct HasFields<T, std::void_t<decltype(T::fields(std::declval<T &>(),
                                                   std::declval<fields_detail::IgnoreField &>()))>>
    : std::true_type {};

/// Calls `f(index, name, memberOfA, memberOfB)` for each member of `a` and
/// `b` in turn (both of type T): the visitor of `a` is walked once and, per
/// member, that of `b` up to the same member (structs have few members).
template <class T, class F> void forEachFieldPair(const T &a, const T &b, F &&f) {
  size_t i = 0;
  T::fields(a, [&](const char *name, auto &&ma) {
    size_t j = 0;
    T::fields(b, [&](const char *, auto &&mb) {
      if (j++ != i)
        return;
      using A = std::decay_t<decltype(ma)>;
      using B = std::decay_t<decltype(mb)>;
      if constexpr (std::is_same_v<A, B>)
        f(i, name, ma, mb);
    });
    ++i;
  });
}

/// Identical values: member by member through the visitors, containers
/// element by element, doubles bit for bit (so NaN is identical to the same
/// NaN, and 0 is not -0): what a round trip through a file must keep.
template <class T> bool identical(const T &a, const T &b) {
  using namespace fields_detail;
  if constexpr (std::is_floating_point_v<T>) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T> ||
                       std::is_same_v<T, std::string>) {
    return a == b;
  } else if constexpr (IsAsBytes<T>::value) {
    return a.text == b.text;
  } else if constexpr (IsComputed<T>::value) {
    return true; // derived from members compared on their own
  } else if constexpr (IsOrNull<T>::value) {
    return identical(a.value, b.value);
  } else if constexpr (IsPairVector<T>::value) {
    if (a.size() != b.size())
      return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].first != b[i].first || !identical(a[i].second, b[i].second))
        return false;
    return true;
  } else if constexpr (IsVector<T>::value) {
    if (a.size() != b.size())
      return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!identical(a[i], b[i]))
        return false;
    return true;
  } else if constexpr (IsOptional<T>::value) {
    return a.has_value() == b.has_value() && (!a || identical(*a, *b));
  } else if constexpr (IsStringMap<T>::value) {
    if (a.size() != b.size())
      return false;
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
      if (i->first != j->first || !identical(i->second, j->second))
        return false;
    return true;
  } else if constexpr (IsVariant<T>::value) {
    if (a.index() != b.index())
      return false;
    return std::visit(
        [&](const auto &x) { return identical(x, std::get<std::decay_t<decltype(x)>>(b)); }, a);
  } else {
    static_assert(HasFields<T>::value, "identical: a type without a fields visitor");
    bool same = true;
    forEachFieldPair(a, b, [&](size_t, const char *, const auto &ma, const auto &mb) {
      same = same && identical(ma, mb);
    });
    return same;
  }
}

/// The first member (a dotted path: "steps.3.payload.m") where `a` and `b`
/// are not identical; "" when they are. For test failure messages.
template <class T> std::string firstDifference(const T &a, const T &b) {
  using namespace fields_detail;
  if constexpr (IsVector<T>::value) {
    if (a.size() != b.size())
      return "size";
    for (size_t i = 0; i < a.size(); ++i)
      if (std::string d = firstDifference(a[i], b[i]); !d.empty() || !identical(a[i], b[i]))
        return std::to_string(i) + (d.empty() ? "" : "." + d);
    return "";
  } else if constexpr (IsVariant<T>::value) {
    if (a.index() != b.index())
      return "alternative";
    return std::visit(
        [&](const auto &x) { return firstDifference(x, std::get<std::decay_t<decltype(x)>>(b)); },
        a);
  } else if constexpr (HasFields<T>::value) {
    std::string found;
    forEachFieldPair(a, b, [&](size_t, const char *name, const auto &ma, const auto &mb) {
      if (!found.empty() || identical(ma, mb))
        return;
      std::string inner = firstDifference(ma, mb);
      found = std::string(name) + (inner.empty() ? "" : "." + inner);
    });
    return found;
  } else {
    return ""; // a leaf: the caller names it
  }
}

} // namespace einrt

#endif // EINC_RUNTIME_FIELDS_H
