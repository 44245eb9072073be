//===- Diagnostics.h - Errors with file:line:col and a caret -----*- C++ -*-===//
//
// Every error the front end reports goes through a DiagnosticEngine. Printed form:
//
//   model.ein:12:9: error: cannot add [batch=256, hidden=512] and [vocab=256] ...
//       h = x + y
//             ^
//
// Errors are collected (the parser recovers at statement boundaries) up to a
// limit, then printed in source order of reporting.
//
// What reaches the terminal is safe and bounded whatever the file holds: the
// source line is cut to a window around the caret ("..." marks a cut side),
// and bytes that are not printable UTF-8 (control bytes such as NUL, ESC and
// CR, invalid UTF-8, bidi and other format characters: runtime/base/TerminalText.h,
// the rule for everything einc prints of a user's text) are shown as \xNN,
// one escape per byte. Tabs become spaces up to the next multiple of 8 columns.
// The caret sits under its character by display columns (a CJK character is
// two columns, an escape four). The column in `file:line:col` counts bytes.
// Messages, notes and the file name get the same escaping, and a message
// longer than kMaxMessageColumns keeps its start and end around " ... ".
//
//===----------------------------------------------------------------------===//
#ifndef EINC_DSL_DIAGNOSTICS_H
#define EINC_DSL_DIAGNOSTICS_H

#include "dsl/SourceLoc.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace ein::dsl {

/// The text of one model file, with line lookup for carets.
class SourceFile {
public:
  SourceFile(std::string path, std::string text);
  llvm::StringRef path() const { return path_; }
  llvm::StringRef text() const { return text_; }
  /// The text of a 1-based line, without its newline; empty when out of range.
  llvm::StringRef line(uint32_t line) const;

private:
  std::string path_;
  std::string text_;
  std::vector<size_t> lineStarts_;
};

/// Display columns the printed source excerpt may take (elision marks included).
constexpr unsigned kMaxExcerptColumns = 120;
/// Display columns a printed message may take before its middle is elided.
constexpr unsigned kMaxMessageColumns = 400;

/// `text` made safe for a terminal: printable UTF-8 kept, tabs as `\t`, every
/// other byte (control, invalid UTF-8, format characters) as `\xNN`. When the
/// result would be wider than maxColumns display columns (a zero-width
/// character counting one), its middle is replaced with " ... " (a maxColumns
/// of 0 means no limit).
std::string escapeForTerminal(llvm::StringRef text, unsigned maxColumns = 0);

/// One source line as a diagnostic prints it: the escaped window of at most
/// maxColumns display columns around `col`, and where the caret goes.
struct SourceExcerpt {
  std::string text;
  /// 0-based display column of the caret within `text`.
  unsigned caretColumn = 0;
};
/// The excerpt of `line` for a caret at the 1-based byte column `col` (a
/// column past the end puts the caret just after the last character).
SourceExcerpt excerptLine(llvm::StringRef line, uint32_t col,
                          unsigned maxColumns = kMaxExcerptColumns);

struct Diagnostic {
  enum class Severity { Error, Warning, Note };
  Severity severity = Severity::Error;
  SourceLoc loc;
  std::string message;
};

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceFile &file, unsigned maxErrors = 20)
      : file_(file), maxErrors_(maxErrors) {}

  void error(SourceLoc loc, const llvm::Twine &message);
  /// A note attaches to the error before it (printed right after it).
  void note(SourceLoc loc, const llvm::Twine &message);

  unsigned errorCount() const { return errors_; }
  bool hasErrors() const { return errors_ != 0; }
  /// True once maxErrors errors were reported: callers may stop early.
  bool tooMany() const { return errors_ >= maxErrors_; }
  /// True once the error limit was exceeded and "too many errors; stopping"
  /// was recorded: every later error and note is dropped.
  bool stopped() const { return stopped_; }
  const std::vector<Diagnostic> &diagnostics() const { return diags_; }

  /// Prints every diagnostic as `file:line:col: error: msg`, the source line and
  /// a caret under the column.
  void print(llvm::raw_ostream &os) const;
  /// Prints one diagnostic in the same form.
  void print(llvm::raw_ostream &os, const Diagnostic &diag) const;

private:
  const SourceFile &file_;
  unsigned maxErrors_;
  unsigned errors_ = 0;
  std::vector<Diagnostic> diags_;
  bool stopped_ = false;
  bool droppedLast_ = false; // the last error was dropped: drop its notes too
};

} // namespace ein::dsl

#endif // EINC_DSL_DIAGNOSTICS_H
