//===- EmbeddedModel.h - What einc compile links beside the runner -*- C++ -*-===//
//
// An executable of `einc compile` is the runner's main (ExecutableMain.cpp,
// prebuilt) linked with three things written for the model:
//
//   * the kernel objects, one per CPU target (runtime/core/KernelTable.h's
//     symbols with the prefix kKernelPrefix: einc_model_x86_64_v3_kernels,
//     ...);
//   * an assembly file that embeds the program file (docs/program-file.md)
//     with `.incbin` in the section kProgramSection, and lists the linked
//     targets: the symbols below.
//
// einc compile writes that file from these names (tools/einc/Embed.cpp); the
// main reads the symbols. Plain C++: no MLIR, no LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_EXE_EMBEDDEDMODEL_H
#define EINC_TOOLS_EXE_EMBEDDEDMODEL_H

#include "runtime/core/KernelTable.h"

#include <cstdint>

extern "C" {
/// One target's kernel table as linked in.
struct einc_linked_target {
  const char *name;                  // "x86-64-v3"
  const einrt_kernel_entry *kernels; // <prefix>_<target>_kernels
  const int64_t *kernelCount;        // &<prefix>_<target>_kernel_count
};

extern const unsigned char einc_program_file[];        // the program file's bytes
extern const uint64_t einc_program_file_size;          // their count
extern const einc_linked_target einc_linked_targets[]; // best target first
extern const uint64_t einc_linked_target_count;
}

namespace einc::exe {

constexpr const char *kProgramFileSymbol = "einc_program_file";
constexpr const char *kProgramFileSizeSymbol = "einc_program_file_size";
constexpr const char *kTargetsSymbol = "einc_linked_targets";
constexpr const char *kTargetCountSymbol = "einc_linked_target_count";
/// The ELF section of the program file: how einc compile recognises a
/// previous executable of its own (and `objcopy --dump-section` extracts it).
constexpr const char *kProgramSection = ".einc_program";
/// The symbol prefix of the kernel objects.
constexpr const char *kKernelPrefix = "einc_model";

} // namespace einc::exe

#endif // EINC_TOOLS_EXE_EMBEDDEDMODEL_H
