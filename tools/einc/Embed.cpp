//===- Embed.cpp - The model's half of a compiled executable --------------===//
#include "Embed.h"

#include "tools/exe/EmbeddedModel.h"

#include "runtime/core/KernelTable.h"

#include "llvm/Object/ObjectFile.h"

#include <string>

namespace einc {
namespace {

/// `text` as an assembler string literal.
std::string quoted(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

} // namespace

std::string embeddingAssembly(const std::string &programFile,
                              const std::vector<std::string> &targets) {
  using namespace einc::exe;
  std::string file(kProgramFileSymbol), size(kProgramFileSizeSymbol), table(kTargetsSymbol),
      count(kTargetCountSymbol);
  std::string s = "# Written by einc compile: the program file and the kernel tables linked\n"
                  "# beside it (tools/exe/EmbeddedModel.h).\n";
  s += "\t.section " + std::string(kProgramSection) + ",\"a\",@progbits\n";
  s += "\t.balign 16\n\t.globl " + file + "\n\t.type " + file + ", @object\n";
  s += file + ":\n\t.incbin " + quoted(programFile) + "\n.Lprogram_end:\n";
  s += "\t.size " + file + ", .Lprogram_end - " + file + "\n";
  s += "\n\t.section .rodata\n\t.balign 8\n";
  s += "\t.globl " + size + "\n\t.type " + size + ", @object\n\t.size " + size + ", 8\n";
  s += size + ":\n\t.quad .Lprogram_end - " + file + "\n";
  s += "\t.globl " + count + "\n\t.type " + count + ", @object\n\t.size " + count + ", 8\n";
  s += count + ":\n\t.quad " + std::to_string(targets.size()) + "\n";
  for (size_t i = 0; i < targets.size(); ++i)
    s += ".Ltarget" + std::to_string(i) + ":\n\t.asciz " + quoted(targets[i]) + "\n";
  // Pointers: relocated when a position-independent executable is loaded.
  s += "\n\t.section .data.rel.ro,\"aw\"\n\t.balign 8\n";
  s += "\t.globl " + table + "\n\t.type " + table + ", @object\n";
  s += "\t.size " + table + ", " + std::to_string(24 * targets.size()) + "\n" + table + ":\n";
  for (size_t i = 0; i < targets.size(); ++i) {
    s += "\t.quad .Ltarget" + std::to_string(i) + "\n";
    s += "\t.quad " + einrt::kernelTableSymbol(kKernelPrefix, targets[i]) + "\n";
    s += "\t.quad " + einrt::kernelCountSymbol(kKernelPrefix, targets[i]) + "\n";
  }
  s += "\n\t.section .note.GNU-stack,\"\",@progbits\n";
  return s;
}

bool isEincExecutable(const std::string &path) {
  auto object = llvm::object::ObjectFile::createObjectFile(path);
  if (!object) {
    llvm::consumeError(object.takeError());
    return false;
  }
  for (const llvm::object::SectionRef &section : object->getBinary()->sections()) {
    auto name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name == exe::kProgramSection)
      return true;
  }
  return false;
}

} // namespace einc
