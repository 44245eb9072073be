//===- ModelBundle.h - A compiled model as one file ----------------*- C++ -*-===//
//
// What `einc compile` puts beside the runtime in a standalone executable:
// the lowered Programs, the compiled kernels as object code, the model's
// metadata (its source, dims, train settings, window mapping) and the
// static report, in one versioned, checksummed file (the program file,
// docs/program-file.md). Plain C++ (no MLIR, no LLVM).
//
// Reading checks everything before returning a bundle: the magic, the
// checksum, the format version, every length and offset, every member's
// type and range, every enum by name, each Program (Program::validate), the
// settings against their table, kernel indices against the kernel objects.
// A damaged or foreign file is an error message, never a crash.
//
// The memory plan is not stored: a runner recomputes it from the Programs.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_MODELBUNDLE_H
#define EINC_RUNTIME_MODELBUNDLE_H

#include "runtime/base/Fields.h"
#include "runtime/base/Status.h"
#include "runtime/base/TrainSettings.h"
#include "runtime/core/Program.h"
#include "runtime/io/TokenData.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace einrt {

/// The program file format this runtime reads and writes
/// (docs/program-file.md says when it changes).
constexpr uint32_t kProgramFormatVersion = 9;

/// One lowered function.
struct BundledProgram {
  std::string backend; // its lowering: a backend's programLowering() ("cpu", "reference")
  Program program;     // program.name: the function ("forward", "train_step", ...)
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("backend", self.backend);
    visit("program", self.program);
  }
};

/// Compiled kernels for one CPU target, as the compiler emitted them: for
/// "cpu/<target>" a relocatable ELF object holding the kernel table of
/// runtime/core/KernelTable.h (every kernel's function and parallel extent).
/// Other backends' kernels are ModelBundle::kernelSections.
struct KernelObject {
  std::string name;        // "<backend>/<target>": "cpu/x86-64-v3"
  int64_t kernelCount = 0; // entries in its table: the backend's Kernel steps index them
  std::map<std::string, std::string> metadata; // e.g. "symbol_prefix"
  std::vector<uint8_t> bytes;
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("name", self.name);
    visit("kernel_count", self.kernelCount);
    visit("metadata", self.metadata);
    visit("bytes", self.bytes);
  }
  /// The part of `name` before the '/'.
  std::string backend() const;
};

struct ModelBundle {
  /// The einc that wrote the file ("einc 0.1.0 (f66b2e2)"): kept in the
  /// file's fixed preamble, so that a file of another format still names
  /// it; not one of the fields below.
  std::string writtenBy;

  std::string modelName;  // the model's name (its file's stem)
  std::string sourceName; // the .ein file it was compiled from
  std::string source;     // that file's text
  /// The model's dims; the vocab, where there is one, is dims["vocab"].
  std::map<std::string, int64_t> dims;
  TrainSettings settings; // the `train { }` settings with --set applied
  /// How a token window maps onto the train step's inputs (set or
  /// inferred); absent without a train step.
  std::optional<WindowMapping> window;
  /// What the loss is: "cross_entropy" (one cross_entropy and nothing more:
  /// nats per token, bits per byte on byte tokens), "objective" (other terms
  /// beside it, or no cross_entropy), "" (a file from before this member).
  std::string loss;
  std::vector<BundledProgram> programs;    // one per function, names unique
  std::vector<KernelObject> kernelObjects; // names unique
  /// Kernels a backend carries in its own format, by its kernelSection()
  /// name (runtime/core/Backend.h), which checks and decodes them: "cuda",
  /// the cpu programs' kernel table rendered as CUDA C++ with its images
  /// (runtime/cuda/CudaKernels.h). Empty unless compiled for such a target.
  std::map<std::string, std::vector<uint8_t>> kernelSections;
  std::string reportJson; // `einc report --format json`, or ""
  std::string reportText; // the same report as `einc report` prints it, or ""

  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("model_name", self.modelName);
    visit("source_name", self.sourceName);
    visit("source", asBytes(self.source));
    visit("dims", self.dims);
    visit("settings", self.settings);
    visit("window", self.window);
    visit("loss", self.loss);
    visit("programs", self.programs);
    visit("kernel_objects", self.kernelObjects);
    visit("kernel_sections", self.kernelSections);
    visit("report", asBytes(self.reportJson));
    visit("report_text", asBytes(self.reportText));
  }

  /// dims["vocab"], or 0.
  int64_t vocab() const;
  /// The program of `function`, or null.
  const BundledProgram *find(const std::string &function) const;
  /// The kernel section `name`, or null.
  const std::vector<uint8_t> *kernelSection(const std::string &name) const;
};

/// Every member identical (runtime/base/Fields.h), writtenBy included.
bool operator==(const ModelBundle &a, const ModelBundle &b);
inline bool operator!=(const ModelBundle &a, const ModelBundle &b) { return !(a == b); }

/// "" when `b` is what a reader accepts; else the first problem (a Program's
/// validate() message, a duplicate name, a setting out of its range, ...).
std::string checkModelBundle(const ModelBundle &b);

/// The file's bytes: the same bundle always gives the same bytes. Invalid
/// when checkModelBundle fails, or on text that is not UTF-8.
Expected<std::vector<uint8_t>> serializeModelBundle(const ModelBundle &b);

/// Reads a whole file held in memory; `name` is the file's for messages:
///   Invalid: "'NAME' is not an einc program file"
///   Corrupt: "'NAME' is corrupt: checksum mismatch"
///   Invalid: "'NAME' was written by einc X (program format N); this einc
///            reads format M: recompile the model"
///   Corrupt: "'NAME': <where>: <problem>" (a checksum-valid file einc did
///            not write)
Expected<ModelBundle> parseModelBundle(const uint8_t *data, size_t size, const std::string &name);

/// serializeModelBundle, written atomically (runtime/core/Safetensors.h's
/// writeFileAtomically: Io when the file system refuses).
Status writeModelBundle(const std::string &path, const ModelBundle &b);
/// Reads and parses `path` (its bytes checked against the memory available:
/// readFileBytes's NotFound, Io or OutOfMemory, then parseModelBundle's).
Expected<ModelBundle> readModelBundle(const std::string &path);

} // namespace einrt

#endif // EINC_RUNTIME_MODELBUNDLE_H
