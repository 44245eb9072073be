//===- Diagnostics.cpp - Errors with file:line:col and a caret ------------===//

#include "dsl/Diagnostics.h"

#include "llvm/ADT/Twine.h"

namespace ein::dsl {

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
    diags_.push_back({Diagnostic::Severity::Error, SourceLoc{},
                      "too many errors; stopping"});
    return;
  }
  diags_.push_back({Diagnostic::Severity::Error, loc, message.str()});
}

void DiagnosticEngine::note(SourceLoc loc, const llvm::Twine &message) {
  if (droppedLast_ || stopped_)
    return;
  diags_.push_back({Diagnostic::Severity::Note, loc, message.str()});
}

void DiagnosticEngine::print(llvm::raw_ostream &os,
                             const Diagnostic &diag) const {
  const char *kind =
      diag.severity == Diagnostic::Severity::Error ? "error" : "note";
  os << file_.path();
  if (!diag.loc.isValid()) {
    os << ": " << kind << ": " << diag.message << "\n";
    return;
  }
  os << ":" << diag.loc.line << ":" << diag.loc.col << ": " << kind << ": "
     << diag.message << "\n";
  os << file_.line(diag.loc.line) << "\n";
  uint32_t col = diag.loc.col == 0 ? 1 : diag.loc.col;
  // Columns come from the lexer, so they stay near the line; clamp anyway.
  if (col > 1 << 20)
    col = 1 << 20;
  os.indent(col - 1) << "^\n";
}

void DiagnosticEngine::print(llvm::raw_ostream &os) const {
  for (const Diagnostic &diag : diags_)
    print(os, diag);
}

} // namespace ein::dsl
