//===- Pattern.cpp - einops pattern strings -------------------------------===//

#include "dsl/Pattern.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"

namespace ein::dsl {

namespace {

bool isNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigitChar(char c) { return c >= '0' && c <= '9'; }
bool isWordChar(char c) { return isNameStart(c) || isDigitChar(c); }
bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string printable(llvm::StringRef text) {
  std::string out;
  static const char hex[] = "0123456789abcdef";
  for (unsigned char c : text.take_front(40)) {
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (text.size() > 40)
    out += "...";
  return out;
}

struct SideParser {
  llvm::StringRef text; // the whole pattern
  size_t begin, end;    // this side
  const char *where;    // "on the left side", "in input 2", ...
  std::string &error;
  unsigned &errorOffset;

  bool fail(size_t offset, const llvm::Twine &message) {
    error = message.str();
    errorOffset = unsigned(offset);
    return false;
  }

  bool parse(PatternSide &side) {
    side.offset = unsigned(begin);
    size_t i = begin;
    while (i < end && isSpace(text[i]))
      ++i;
    if (i < end)
      side.offset = unsigned(i);

    PatternAxis group;
    bool inGroup = false;
    bool seenEllipsis = false;
    llvm::StringMap<size_t> seen;

    auto add = [&](PatternAxis axis) {
      if (inGroup)
        group.members.push_back(std::move(axis));
      else
        side.axes.push_back(std::move(axis));
    };

    while (i < end) {
      char c = text[i];
      if (isSpace(c)) {
        ++i;
        continue;
      }
      if (c == '(') {
        if (inGroup)
          return fail(i, "nested parentheses are not allowed in a pattern");
        inGroup = true;
        group = PatternAxis();
        group.kind = PatternAxis::Kind::Group;
        group.offset = unsigned(i);
        ++i;
        continue;
      }
      if (c == ')') {
        if (!inGroup)
          return fail(i, "unmatched ')' in pattern");
        inGroup = false;
        side.axes.push_back(std::move(group));
        ++i;
        continue;
      }
      if (c == '.') {
        if (text.substr(i, 3) != "...")
          return fail(i, "'.' is only allowed as part of '...'");
        if (i + 3 > end)
          return fail(i, "'.' is only allowed as part of '...'");
        if (seenEllipsis)
          return fail(i, llvm::Twine("'...' may appear only once ") + where);
        seenEllipsis = true;
        PatternAxis axis;
        axis.kind = PatternAxis::Kind::Ellipsis;
        axis.offset = unsigned(i);
        add(std::move(axis));
        i += 3;
        continue;
      }
      if (isWordChar(c)) {
        size_t start = i;
        while (i < end && isWordChar(text[i]))
          ++i;
        llvm::StringRef word = text.slice(start, i);
        PatternAxis axis;
        axis.offset = unsigned(start);
        if (isDigitChar(word[0])) {
          if (word.find_if_not(isDigitChar) != llvm::StringRef::npos)
            return fail(start,
                        "invalid axis name '" + printable(word) + "' (names are identifiers)");
          int64_t value = 0;
          if (word.getAsInteger(10, value))
            return fail(start, "anonymous axis size '" + printable(word) + "' is too large");
          if (value <= 0)
            return fail(start, "anonymous axis must have a positive size, "
                               "found '" +
                                   word + "'");
          axis.kind = value == 1 ? PatternAxis::Kind::Unit : PatternAxis::Kind::Number;
          axis.number = value;
          add(std::move(axis));
          continue;
        }
        if (word.front() == '_' || word.back() == '_')
          return fail(start, "axis name '" + printable(word) + "' must not start or end with '_'");
        auto inserted = seen.try_emplace(word, start);
        if (!inserted.second)
          return fail(start, "duplicate axis '" + word + "' " + where);
        axis.kind = PatternAxis::Kind::Name;
        axis.name = word.str();
        add(std::move(axis));
        continue;
      }
      if (c == ',')
        return fail(i, "',' may only separate the inputs, on the left of "
                       "'->'");
      if (c == '-' || c == '>')
        return fail(i, "unexpected '" + llvm::Twine(c) + "' in pattern (the arrow is '->')");
      return fail(i, "unexpected character '" + printable(text.substr(i, 1)) + "' in pattern");
    }
    if (inGroup)
      return fail(group.offset, "unclosed '(' in pattern");
    return true;
  }
};

} // namespace

std::optional<PatternSide> parsePatternSide(llvm::StringRef text, std::string &error,
                                            unsigned &errorOffset, unsigned baseOffset) {
  // Parse the text as is, then shift the offsets.
  PatternSide side;
  SideParser parser{text, 0, text.size(), "in the axis list", error, errorOffset};
  if (!parser.parse(side)) {
    errorOffset += baseOffset;
    return std::nullopt;
  }
  side.offset += baseOffset;
  for (PatternAxis &axis : side.axes) {
    axis.offset += baseOffset;
    for (PatternAxis &member : axis.members)
      member.offset += baseOffset;
  }
  return side;
}

std::optional<Pattern> parsePattern(llvm::StringRef text, std::string &error,
                                    unsigned &errorOffset) {
  size_t arrow = text.find("->");
  if (arrow == llvm::StringRef::npos) {
    error = "pattern must contain '->'";
    errorOffset = 0;
    return std::nullopt;
  }
  size_t second = text.find("->", arrow + 2);
  if (second != llvm::StringRef::npos) {
    error = "pattern must contain exactly one '->'";
    errorOffset = unsigned(second);
    return std::nullopt;
  }

  Pattern pattern;
  // Inputs: the left side split at ','.
  std::vector<std::pair<size_t, size_t>> ranges;
  size_t start = 0;
  for (size_t i = 0; i < arrow; ++i) {
    if (text[i] == ',') {
      ranges.push_back({start, i});
      start = i + 1;
    }
  }
  ranges.push_back({start, arrow});
  bool several = ranges.size() > 1;
  for (size_t n = 0; n < ranges.size(); ++n) {
    std::string where = several ? "in input " + std::to_string(n + 1) : "on the left side";
    PatternSide side;
    SideParser parser{text, ranges[n].first, ranges[n].second, where.c_str(), error, errorOffset};
    if (!parser.parse(side))
      return std::nullopt;
    pattern.inputs.push_back(std::move(side));
  }
  SideParser parser{text, arrow + 2, text.size(), "on the right side", error, errorOffset};
  if (!parser.parse(pattern.output))
    return std::nullopt;
  return pattern;
}

void collectPatternNames(const PatternSide &side, std::vector<std::string> &names) {
  for (const PatternAxis &axis : side.axes) {
    if (axis.kind == PatternAxis::Kind::Name)
      names.push_back(axis.name);
    for (const PatternAxis &member : axis.members)
      if (member.kind == PatternAxis::Kind::Name)
        names.push_back(member.name);
  }
}

std::vector<std::string> patternNames(const PatternSide &side) {
  std::vector<std::string> names;
  collectPatternNames(side, names);
  return names;
}

template <typename Pred> static bool anyAxis(const PatternSide &side, Pred pred) {
  for (const PatternAxis &axis : side.axes) {
    if (pred(axis))
      return true;
    for (const PatternAxis &member : axis.members)
      if (pred(member))
        return true;
  }
  return false;
}

bool hasEllipsis(const PatternSide &side) {
  return anyAxis(side, [](const PatternAxis &a) { return a.kind == PatternAxis::Kind::Ellipsis; });
}

bool hasComposition(const PatternSide &side) {
  return anyAxis(side, [](const PatternAxis &a) { return a.kind == PatternAxis::Kind::Group; });
}

bool hasAnonymousAxis(const PatternSide &side) {
  return anyAxis(side, [](const PatternAxis &a) {
    return a.kind == PatternAxis::Kind::Unit || a.kind == PatternAxis::Kind::Number;
  });
}

const PatternAxis *findPatternAxis(const PatternSide &side, llvm::StringRef name) {
  for (const PatternAxis &axis : side.axes) {
    if (axis.kind == PatternAxis::Kind::Name && axis.name == name)
      return &axis;
    for (const PatternAxis &member : axis.members)
      if (member.kind == PatternAxis::Kind::Name && member.name == name)
        return &member;
  }
  return nullptr;
}

std::string toString(const PatternAxis &axis) {
  switch (axis.kind) {
  case PatternAxis::Kind::Name:
    return axis.name;
  case PatternAxis::Kind::Unit:
  case PatternAxis::Kind::Number:
    return std::to_string(axis.number);
  case PatternAxis::Kind::Ellipsis:
    return "...";
  case PatternAxis::Kind::Group: {
    std::string out = "(";
    for (size_t i = 0; i < axis.members.size(); ++i) {
      if (i)
        out += " ";
      out += toString(axis.members[i]);
    }
    return out + ")";
  }
  }
  return "";
}

std::string toString(const PatternSide &side) {
  std::string out;
  for (size_t i = 0; i < side.axes.size(); ++i) {
    if (i)
      out += " ";
    out += toString(side.axes[i]);
  }
  return out;
}

std::string toString(const Pattern &pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.inputs.size(); ++i) {
    if (i)
      out += ", ";
    out += toString(pattern.inputs[i]);
  }
  out += " -> ";
  out += toString(pattern.output);
  if (pattern.output.axes.empty())
    out.pop_back();
  return out;
}

} // namespace ein::dsl
