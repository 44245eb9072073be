//===- Embed.h - The model's half of a compiled executable ------*- C++ -*-===//
//
// The assembly file `einc compile` links beside the kernel objects and the
// kit (tools/exe/EmbeddedModel.h): the program file embedded with `.incbin`
// in its own section, and the table of linked kernel tables. `.incbin`
// rather than `ld -r -b binary` or a C array: the symbols are named by us,
// the section and alignment are ours, any GNU-compatible driver assembles
// it (gcc or clang), and the bytes are not re-encoded (docs/decisions.md).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_EINC_EMBED_H
#define EINC_TOOLS_EINC_EMBED_H

#include <string>
#include <vector>

namespace einc {

/// The assembly that embeds the program file at `programFile` and lists the
/// kernel tables of `targets` (their names, best first; the objects use the
/// symbol prefix einc::exe::kKernelPrefix).
std::string embeddingAssembly(const std::string &programFile,
                              const std::vector<std::string> &targets);

/// Whether `path` is an ELF file with the program section: an executable
/// that einc compile wrote.
bool isEincExecutable(const std::string &path);

} // namespace einc

#endif // EINC_TOOLS_EINC_EMBED_H
