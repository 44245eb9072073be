//===- Diagnostics.cpp - Errors with file:line:col and a caret ------------===//

#include "dsl/Diagnostics.h"
#include "runtime/base/TerminalText.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Unicode.h"

#include <algorithm>

namespace ein::dsl {

//===----------------------------------------------------------------------===//
// Terminal-safe text
//===----------------------------------------------------------------------===//

namespace {

constexpr unsigned kTabStop = 8;

/// The unit text is printed in: one printable character, a tab, or one byte
/// that is shown as \xNN.
struct Piece {
  enum Kind { Char, Tab, Byte };
  size_t begin = 0, end = 0; // bytes of the text
  Kind kind = Byte;
  unsigned width = 4; // display columns (a tab: its widest)
};

Piece pieceAt(llvm::StringRef text, size_t i) {
  if (text[i] == '\t')
    return {i, i + 1, Piece::Tab, kTabStop};
  // What may be printed is runtime/base/TerminalText.h's rule; LLVM gives the
  // display width (0 for a combining mark, 2 for CJK; an unassigned code
  // point, which LLVM does not know, takes one column).
  size_t n = einrt::printableLength(text, i);
  if (n == 0)
    return {i, i + 1, Piece::Byte, 4};
  int width = n == 1 ? 1 : llvm::sys::unicode::columnWidthUTF8(text.substr(i, n));
  return {i, i + n, Piece::Char, unsigned(width < 0 ? 1 : width)};
}

/// Appends `piece` of `text` to `out`, a tab as \t (tabAsSpaces false) or as
/// spaces up to the next tab stop of `out`.
void appendPiece(std::string &out, unsigned &column, llvm::StringRef text, const Piece &piece,
                 bool tabAsSpaces) {
  static const char hex[] = "0123456789abcdef";
  switch (piece.kind) {
  case Piece::Char:
    out.append(text.data() + piece.begin, piece.end - piece.begin);
    column += piece.width;
    return;
  case Piece::Tab:
    if (tabAsSpaces) {
      unsigned spaces = kTabStop - column % kTabStop;
      out.append(spaces, ' ');
      column += spaces;
    } else {
      out += "\\t";
      column += 2;
    }
    return;
  case Piece::Byte: {
    unsigned char c = text[piece.begin];
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
    column += 4;
    return;
  }
  }
}

/// What a piece costs against a column budget: its display columns, and at
/// least one, so a run of zero-width combining marks is bounded too.
unsigned cost(const Piece &piece) { return std::max(1u, piece.width); }

/// The cost of a piece in escaped (message) form, where a tab is `\t`.
unsigned messageCost(const Piece &piece) { return piece.kind == Piece::Tab ? 2 : cost(piece); }

} // namespace

std::string escapeForTerminal(llvm::StringRef text, unsigned maxColumns) {
  if (maxColumns == 0)
    return einrt::terminalSafe(text);
  size_t total = 0;
  for (size_t i = 0; i < text.size();) {
    Piece p = pieceAt(text, i);
    total += messageCost(p);
    i = p.end;
  }
  const llvm::StringRef gap = " ... ";
  bool elide = maxColumns != 0 && total > maxColumns;
  // Keep three quarters of the room for the start, the rest for the end.
  size_t room = elide && maxColumns > gap.size() ? maxColumns - gap.size() : 0;
  size_t headRoom = room * 3 / 4, tailRoom = room - headRoom;
  std::string out;
  unsigned column = 0;
  size_t seen = 0; // columns of the pieces before the current one
  bool gapWritten = false;
  for (size_t i = 0; i < text.size();) {
    Piece p = pieceAt(text, i);
    size_t w = messageCost(p);
    bool keep = !elide || seen + w <= headRoom || total - seen <= tailRoom;
    if (keep) {
      appendPiece(out, column, text, p, /*tabAsSpaces=*/false);
    } else if (!gapWritten) {
      out += gap;
      column += gap.size();
      gapWritten = true;
    }
    seen += w;
    i = p.end;
  }
  return out;
}

SourceExcerpt excerptLine(llvm::StringRef line, uint32_t col, unsigned maxColumns) {
  size_t caret = col == 0 ? 0 : std::min<size_t>(col - 1, line.size());
  // Only a window of bytes around the caret can be shown: decode just that,
  // so a 10 MB line costs no more than a short one.
  size_t reach = size_t(maxColumns) * 4;
  size_t lo = caret > reach ? caret - reach : 0;
  size_t hi = std::min(line.size(), caret + reach);
  for (unsigned k = 0; k < 3 && lo > 0 && (line[lo] & 0xC0) == 0x80; ++k)
    ++lo; // start on a character, not inside one
  std::vector<Piece> pieces;
  for (size_t i = lo; i < hi;) {
    pieces.push_back(pieceAt(line, i));
    i = pieces.back().end;
  }
  size_t n = pieces.size();
  size_t k = 0; // the piece the caret points into (n: past the end)
  while (k < n && pieces[k].end <= caret)
    ++k;

  size_t total = 0;
  for (const Piece &p : pieces)
    total += cost(p);
  size_t windowEnd = n ? pieces.back().end : lo;
  bool whole = lo == 0 && windowEnd >= line.size() && total < maxColumns;

  size_t first = 0, last = n; // the pieces shown: [first, last)
  if (!whole) {
    const size_t marks = 6; // "..." on both sides
    size_t budget = maxColumns > marks + kTabStop ? maxColumns - marks : kTabStop;
    size_t rightWanted = 1; // the caret needs a column even past the end
    for (size_t j = k; j < n && rightWanted < budget; ++j)
      rightWanted += cost(pieces[j]);
    size_t leftBudget = budget - std::min(rightWanted, budget / 2);
    size_t used = 0;
    first = k;
    while (first > 0 && used + cost(pieces[first - 1]) <= leftBudget)
      used += cost(pieces[--first]);
    last = k;
    while (last < n && (last == k || used + cost(pieces[last]) <= budget))
      used += cost(pieces[last++]);
  }
  size_t beginByte = first < n ? pieces[first].begin : windowEnd;
  size_t endByte = last > first ? pieces[last - 1].end : beginByte;

  SourceExcerpt result;
  unsigned column = 0;
  if (beginByte > 0) {
    result.text = "...";
    column = 3;
  }
  result.caretColumn = column;
  for (size_t j = first; j < last; ++j) {
    if (j == k)
      result.caretColumn = column;
    appendPiece(result.text, column, line, pieces[j], /*tabAsSpaces=*/true);
  }
  if (k >= last)
    result.caretColumn = column;
  if (endByte < line.size())
    result.text += "...";
  return result;
}

//===----------------------------------------------------------------------===//
// SourceFile and DiagnosticEngine
//===----------------------------------------------------------------------===//

SourceFile::SourceFile(std::string path, std::string text)
    : path_(std::move(path)), text_(std::move(text)) {
  lineStarts_.push_back(0);
  for (size_t i = 0, e = text_.size(); i != e; ++i)
    if (text_[i] == '\n')
      lineStarts_.push_back(i + 1);
}

llvm::StringRef SourceFile::line(uint32_t line) const {
  if (line == 0 || line > lineStarts_.size())
    return {};
  size_t begin = lineStarts_[line - 1];
  size_t end = line < lineStarts_.size() ? lineStarts_[line] - 1 : text_.size();
  llvm::StringRef result(text_.data() + begin, end - begin);
  // A Windows line ending: leave the '\r' out of the printed line.
  if (result.ends_with("\r"))
    result = result.drop_back();
  return result;
}

void DiagnosticEngine::error(SourceLoc loc, const llvm::Twine &message) {
  if (stopped_) {
    droppedLast_ = true;
    return;
  }
  ++errors_;
  droppedLast_ = false;
  if (errors_ > maxErrors_) {
    stopped_ = true;
    droppedLast_ = true;
    diags_.push_back({Diagnostic::Severity::Error, SourceLoc{}, "too many errors; stopping"});
    return;
  }
  diags_.push_back({Diagnostic::Severity::Error, loc, message.str()});
}

void DiagnosticEngine::note(SourceLoc loc, const llvm::Twine &message) {
  if (droppedLast_ || stopped_)
    return;
  diags_.push_back({Diagnostic::Severity::Note, loc, message.str()});
}

void DiagnosticEngine::print(llvm::raw_ostream &os, const Diagnostic &diag) const {
  const char *kind = diag.severity == Diagnostic::Severity::Error     ? "error"
                     : diag.severity == Diagnostic::Severity::Warning ? "warning"
                                                                      : "note";
  std::string message = escapeForTerminal(diag.message, kMaxMessageColumns);
  os << escapeForTerminal(file_.path(), kMaxMessageColumns);
  if (!diag.loc.isValid()) {
    os << ": " << kind << ": " << message << "\n";
    return;
  }
  os << ":" << diag.loc.line << ":" << diag.loc.col << ": " << kind << ": " << message << "\n";
  SourceExcerpt excerpt = excerptLine(file_.line(diag.loc.line), diag.loc.col);
  os << excerpt.text << "\n";
  os.indent(excerpt.caretColumn) << "^\n";
}

void DiagnosticEngine::print(llvm::raw_ostream &os) const {
  for (const Diagnostic &diag : diags_)
    print(os, diag);
}

} // namespace ein::dsl
