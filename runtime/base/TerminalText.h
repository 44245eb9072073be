//===- TerminalText.h - Text from users made safe to print -------*- C++ -*-===//
//
// The one rule for what einc lets reach a terminal of text it did not write:
// file names, paths, names read from files, values given on the command line,
// and the model's own source in a diagnostic (dsl/Diagnostics.h builds its
// excerpts on printableLength). A file name holding ESC [2J or a newline must
// show as those bytes, not clear the screen or forge another line.
//
// Kept as they are: printable ASCII and well-formed UTF-8 of a character that
// is not a control (C1, U+0080-U+009F), a format character (bidi overrides,
// zero-width joiners, the BOM: Unicode's Cf), nor a line or paragraph
// separator. Everything else is shown one byte at a time as \xNN; a tab is
// \t. Plain C++ (no LLVM): the runtime, the runner and compiled executables
// print through it too.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_TERMINALTEXT_H
#define EINC_RUNTIME_TERMINALTEXT_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace einrt {

/// The bytes of the character at text[i] when it may be printed as it is
/// (see above); 0 when text[i] is to be escaped (a tab gives 0 too).
size_t printableLength(std::string_view text, size_t i);

/// `text` with every byte that is not part of a printable character as
/// \xNN and tabs as \t.
std::string terminalSafe(std::string_view text);

/// 'text', terminal-safe: how every message quotes a path, a name or a
/// value a user gave (`cannot read 'a\x1bb.ein': ...`).
std::string quoted(std::string_view text);

/// A shape (or any list of extents) as every runtime message prints one:
/// "[16, 128, 256]".
std::string shapeText(const std::vector<int64_t> &shape);

} // namespace einrt

#endif // EINC_RUNTIME_TERMINALTEXT_H
