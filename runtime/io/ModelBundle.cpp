//===- ModelBundle.cpp - The program file: frame, header, checks ----------===//
//
// The byte layout is docs/program-file.md's; the header is the bundle's
// fields as JSON (runtime/base/FieldsJson.h), the enums below by name.
//
//===----------------------------------------------------------------------===//
#include "runtime/io/ModelBundle.h"

#include "runtime/base/Crc32c.h"
#include "runtime/base/FieldsJson.h"
#include "runtime/base/Memory.h"
#include "runtime/base/TerminalText.h"
#include "runtime/core/Backend.h"
#include "runtime/core/Safetensors.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace einrt {

namespace {

/// The names of an enum's values, in the enum's order.
template <class T, size_t N>
bool parseByName(const char *const (&names)[N], const std::string &text, T &v) {
  for (size_t i = 0; i < N; ++i)
    if (text == names[i]) {
      v = T(i);
      return true;
    }
  return false;
}
template <size_t N> std::string joined(const char *const (&names)[N]) {
  std::string out;
  for (size_t i = 0; i < N; ++i)
    out += (i ? ", " : "") + std::string(names[i]);
  return out;
}

const char *const kRoleNames[] = {"input",  "param",    "opt_state", "accumulator",
                                  "scalar", "constant", "temp"};
static_assert(std::size(kRoleNames) == size_t(BufferRole::Temp) + 1);
const char *const kEpilogueNames[] = {"store", "accumulate"};
static_assert(std::size(kEpilogueNames) == size_t(GemmEpilogue::Accumulate) + 1);
const char *const kActivationNames[] = {"none", "relu", "gelu"};
static_assert(std::size(kActivationNames) == size_t(GemmActivation::Gelu) + 1);
const char *const kWindowNames[] = {"next_token", "shifted"};
static_assert(std::size(kWindowNames) == size_t(WindowMapping::Shifted) + 1);

} // namespace

template <> struct EnumNames<DType> {
  static const char *name(DType t) { return dtypeName(t); }
  static bool parse(const std::string &text, DType &t) {
    for (uint8_t i = 0; i < kDTypeCount; ++i)
      if (text == dtypeName(DType(i))) {
        t = DType(i);
        return true;
      }
    return false;
  }
  static std::string expected() {
    std::string out = "a dtype (";
    for (uint8_t i = 0; i < kDTypeCount; ++i)
      out += (i ? ", " : "") + std::string(dtypeName(DType(i)));
    return out + ")";
  }
};

template <> struct EnumNames<StepKind> {
  static const char *name(StepKind k) { return stepKindName(k); }
  static bool parse(const std::string &text, StepKind &k) {
    return stepKindByName(text.c_str(), k);
  }
  static std::string expected() { return "a step kind this einc knows"; }
};

template <> struct EnumNames<BufferRole> {
  static const char *name(BufferRole r) { return kRoleNames[size_t(r)]; }
  static bool parse(const std::string &text, BufferRole &r) {
    return parseByName(kRoleNames, text, r);
  }
  static std::string expected() { return "a buffer role (" + joined(kRoleNames) + ")"; }
};

template <> struct EnumNames<GemmEpilogue> {
  static const char *name(GemmEpilogue e) { return kEpilogueNames[size_t(e)]; }
  static bool parse(const std::string &text, GemmEpilogue &e) {
    return parseByName(kEpilogueNames, text, e);
  }
  static std::string expected() { return "a GEMM epilogue (" + joined(kEpilogueNames) + ")"; }
};

template <> struct EnumNames<GemmActivation> {
  static const char *name(GemmActivation a) { return kActivationNames[size_t(a)]; }
  static bool parse(const std::string &text, GemmActivation &a) {
    return parseByName(kActivationNames, text, a);
  }
  static std::string expected() {
    return "a GEMM epilogue activation (" + joined(kActivationNames) + ")";
  }
};

template <> struct EnumNames<WindowMapping> {
  static const char *name(WindowMapping m) { return kWindowNames[size_t(m)]; }
  static bool parse(const std::string &text, WindowMapping &m) {
    return parseByName(kWindowNames, text, m);
  }
  static std::string expected() { return "a window mapping (" + joined(kWindowNames) + ")"; }
};

/// A step's payload has the type its kind carries: the reader reads "kind"
/// first (Step::fields' order) and then fills that type.
void fieldRead(Step &s, const char *member) {
  if (std::strcmp(member, "kind") == 0)
    s.payload = defaultPayload(s.kind);
}

namespace {

// The frame (docs/program-file.md): the same in every format version.
constexpr char kMagic[8] = {'E', 'I', 'N', 'C', 'P', 'R', 'O', 'G'};
constexpr size_t kPreamble = 16;     // magic, version, writer length
constexpr size_t kChecksumBytes = 4; // CRC-32C, last
constexpr uint32_t kMaxWriterBytes = 256;

void put32(std::vector<uint8_t> &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(uint8_t(v >> (8 * i)));
}
void put64(std::vector<uint8_t> &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(uint8_t(v >> (8 * i)));
}
uint32_t get32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
uint64_t get64(const uint8_t *p) { return uint64_t(get32(p)) | uint64_t(get32(p + 4)) << 32; }

size_t align8(size_t n) { return (n + 7) / 8 * 8; }

/// A message holding names from a crafted file: terminal-safe (control
/// bytes as \xNN, runtime/base/TerminalText.h), cut (at a UTF-8 boundary) when
/// past 500 bytes, so that it stays one short line.
std::string oneLine(const std::string &message) {
  std::string m = terminalSafe(message);
  if (m.size() > 500) {
    size_t cut = 500;
    while (cut > 0 && ((unsigned char)m[cut] & 0xC0) == 0x80)
      --cut;
    m = m.substr(0, cut) + "...";
  }
  return m;
}

std::string checkSettings(const TrainSettings &s) {
  TrainSettings scratch; // setTrain* check a value against its row
  for (const SettingInfo &info : trainSettingTable()) {
    std::string problem;
    std::visit(
        [&](auto member) {
          const auto &value = s.*member;
          using Field = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<Field, std::string>)
            problem = setTrainWord(scratch, info, value);
          else if constexpr (std::is_same_v<Field, std::optional<std::string>>)
            problem = value ? setTrainWord(scratch, info, *value) : "";
          else if constexpr (fields_detail::IsOptional<Field>::value)
            problem = value ? setTrainNumber(scratch, info, double(*value)) : "";
          else
            problem = setTrainNumber(scratch, info, double(value));
        },
        info.field);
    if (!problem.empty())
      return "settings: " + problem;
  }
  std::set<std::string> given;
  for (const std::string &key : s.given) {
    if (!findTrainSetting(key))
      return "settings: " + einrt::quoted(key) + " is given but is no setting";
    if (!given.insert(key).second)
      return "settings: " + einrt::quoted(key) + " is given twice";
  }
  return "";
}

/// Whether `lowering` is some backend's programLowering(); the list of them.
bool isProgramLowering(const std::string &lowering) {
  for (const Backend *backend : backends())
    if (lowering == backend->programLowering())
      return true;
  return false;
}
std::string programLoweringNames() {
  std::vector<std::string> names;
  for (const Backend *backend : backends())
    if (std::find(names.begin(), names.end(), backend->programLowering()) == names.end())
      names.push_back(backend->programLowering());
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

std::string checkPrograms(const ModelBundle &b) {
  std::set<std::string> names;
  for (size_t i = 0; i < b.programs.size(); ++i) {
    const BundledProgram &bp = b.programs[i];
    const std::string &name = bp.program.name;
    if (name.empty())
      return "program " + std::to_string(i) + " has no function name";
    if (!names.insert(name).second)
      return "two programs of function " + einrt::quoted(name);
    if (!isProgramLowering(bp.backend))
      return "program " + einrt::quoted(name) + ": unknown backend " + einrt::quoted(bp.backend) +
             " (expected " + programLoweringNames() + ")";
    if (einrt::Status problem = bp.program.validate(); !problem.ok())
      return "program " + einrt::quoted(name) + ": " + problem.message();
  }
  return "";
}

std::string checkKernelObjects(const ModelBundle &b) {
  std::set<std::string> names;
  for (const KernelObject &k : b.kernelObjects) {
    size_t slash = k.name.find('/');
    if (slash == 0 || slash == std::string::npos || slash + 1 == k.name.size())
      return "kernel object " + einrt::quoted(k.name) + ": the name is not <backend>/<target>";
    if (!names.insert(k.name).second)
      return "two kernel objects named " + einrt::quoted(k.name);
    if (k.kernelCount < 0)
      return "kernel object " + einrt::quoted(k.name) + ": negative kernel count";
  }
  // Every target's object holds the backend's whole kernel table.
  for (const BundledProgram &bp : b.programs)
    for (const KernelObject &k : b.kernelObjects) {
      if (k.backend() != bp.backend)
        continue;
      const std::vector<Step> &steps = bp.program.steps;
      for (size_t i = 0; i < steps.size(); ++i)
        if (const auto *launch = std::get_if<KernelLaunch>(&steps[i].payload))
          if (launch->kernel >= k.kernelCount)
            return "program " + einrt::quoted(bp.program.name) + " step " + std::to_string(i) +
                   " launches kernel " + std::to_string(launch->kernel) + "; " +
                   einrt::quoted(k.name) + " holds " + std::to_string(k.kernelCount);
    }
  return "";
}

/// Each kernel section checked by its backend against the programs of its
/// lowering (and the kernel count of their host kernel objects).
std::string checkKernelSections(const ModelBundle &b) {
  for (const auto &[section, bytes] : b.kernelSections) {
    const Backend *backend = backendOfSection(section);
    if (!backend)
      return "kernel section " + einrt::quoted(section) + ": no backend of this einc runs it";
    std::vector<const Program *> programs;
    for (const BundledProgram &bp : b.programs)
      if (bp.backend == backend->programLowering())
        programs.push_back(&bp.program);
    int64_t hostKernels = -1;
    for (const KernelObject &k : b.kernelObjects)
      if (k.backend() == backend->programLowering())
        hostKernels = k.kernelCount;
    if (std::string problem = backend->checkSection(bytes, programs, hostKernels); !problem.empty())
      return section + ": " + problem;
  }
  return "";
}

} // namespace

std::string KernelObject::backend() const { return name.substr(0, name.find('/')); }

int64_t ModelBundle::vocab() const {
  auto it = dims.find("vocab");
  return it == dims.end() ? 0 : it->second;
}

const std::vector<uint8_t> *ModelBundle::kernelSection(const std::string &name) const {
  auto it = kernelSections.find(name);
  return it == kernelSections.end() ? nullptr : &it->second;
}

const BundledProgram *ModelBundle::find(const std::string &function) const {
  for (const BundledProgram &bp : programs)
    if (bp.program.name == function)
      return &bp;
  return nullptr;
}

bool operator==(const ModelBundle &a, const ModelBundle &b) {
  return a.writtenBy == b.writtenBy && identical(a, b);
}

std::string checkModelBundle(const ModelBundle &b) {
  if (b.writtenBy.size() > kMaxWriterBytes)
    return "the writer's name is longer than " + std::to_string(kMaxWriterBytes) + " bytes";
  if (b.window && size_t(*b.window) >= std::size(kWindowNames))
    return "window: unknown mapping " + std::to_string(int(*b.window));
  for (const auto &[dim, size] : b.dims)
    if (dim.empty() || size < 1)
      return "dims: " + einrt::quoted(dim) + " = " + std::to_string(size) +
             " (a dim is a name and a size >= 1)";
  if (std::string problem = checkSettings(b.settings); !problem.empty())
    return problem;
  if (std::string problem = checkPrograms(b); !problem.empty())
    return problem;
  if (std::string problem = checkKernelObjects(b); !problem.empty())
    return problem;
  if (std::string problem = checkKernelSections(b); !problem.empty())
    return problem;
  if (!b.reportJson.empty()) {
    // Checked, not built: read (if at all) by who prints it.
    if (Status problem = checkStrictJson(b.reportJson.data(), b.reportJson.size()); !problem.ok())
      return "report: " + problem.message();
  }
  return "";
}

Expected<std::vector<uint8_t>> serializeModelBundle(const ModelBundle &b) {
  if (std::string problem = checkModelBundle(b); !problem.empty())
    return Status::invalid("cannot write the program file: " + problem);
  SectionWriter sections;
  FieldsWriter writer(sections);
  nlohmann::json header = writer.write(b);
  if (!writer.error.empty())
    return Status::invalid("cannot write the program file: " + writer.error);
  std::string text = dumpJson(header); // keys sorted: the same bundle, the same bytes
  while (text.size() % 8 != 0)
    text += ' ';

  std::vector<uint8_t> out;
  out.insert(out.end(), kMagic, kMagic + 8);
  put32(out, kProgramFormatVersion);
  put32(out, uint32_t(b.writtenBy.size()));
  out.insert(out.end(), b.writtenBy.begin(), b.writtenBy.end());
  out.resize(align8(out.size()), 0);
  put64(out, text.size());
  put64(out, sections.bytes.size());
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), sections.bytes.begin(), sections.bytes.end());
  put32(out, crc32c(out.data(), out.size()));
  return out;
}

Expected<ModelBundle> parseModelBundle(const uint8_t *data, size_t size, const std::string &name) {
  const std::string file = einrt::quoted(name);
  // Every message starts with `file`; most failures are a damaged file.
  auto fail = [&](const std::string &message, StatusCode code = StatusCode::Corrupt) {
    return Status(code, file + oneLine(message.substr(file.size())));
  };
  if (size < sizeof(kMagic) || std::memcmp(data, kMagic, sizeof(kMagic)) != 0)
    return fail(file + " is not an einc program file" + (size == 0 ? " (it is empty)" : ""),
                StatusCode::Invalid);
  if (size < kPreamble + kChecksumBytes)
    return fail(file + " is corrupt: truncated to " + std::to_string(size) + " bytes");
  const size_t checked = size - kChecksumBytes;
  if (crc32c(data, checked) != get32(data + checked))
    return fail(file + " is corrupt: checksum mismatch");

  // The checksum holds: what follows was written this way.
  const uint32_t version = get32(data + 8), writerBytes = get32(data + 12);
  if (writerBytes > kMaxWriterBytes || kPreamble + writerBytes > checked)
    return fail(file + " is corrupt: a writer's name of " + std::to_string(writerBytes) + " bytes");
  if (version != kProgramFormatVersion)
    return fail(file + " was written by " +
                    (writerBytes
                         ? terminalSafe(std::string_view(
                               reinterpret_cast<const char *>(data + kPreamble), writerBytes))
                         : "an unnamed einc") +
                    " (program format " + std::to_string(version) + "); this einc reads format " +
                    std::to_string(kProgramFormatVersion) + ": recompile the model",
                StatusCode::Invalid);

  // Format 1: the header's and the data's lengths, the header, the data.
  const size_t lengths = align8(kPreamble + writerBytes);
  if (lengths + 16 > checked)
    return fail(file + " is corrupt: truncated before the header");
  const uint64_t headerBytes = get64(data + lengths), dataBytes = get64(data + lengths + 8);
  const size_t headerAt = lengths + 16;
  if (headerBytes > checked - headerAt || dataBytes != checked - headerAt - headerBytes)
    return fail(file + " is corrupt: a header of " + std::to_string(headerBytes) +
                " bytes and data of " + std::to_string(dataBytes) +
                " bytes do not fill the file's " + std::to_string(size) + " bytes");

  Expected<nlohmann::json> parsed =
      parseStrictJson(reinterpret_cast<const char *>(data + headerAt), size_t(headerBytes));
  if (!parsed.ok())
    return fail(file + ": header: " + parsed.status().message());
  const nlohmann::json header = parsed.take();
  SectionReader sections{data + headerAt + headerBytes, dataBytes};
  FieldsReader reader(sections);
  ModelBundle b;
  if (!reader.read(header, b))
    return fail(file + ": header: " + reader.error);
  b.writtenBy.assign(reinterpret_cast<const char *>(data + kPreamble), writerBytes);
  if (std::string invalid = checkModelBundle(b); !invalid.empty())
    return fail(file + ": " + invalid);
  return b;
}

Status writeModelBundle(const std::string &path, const ModelBundle &b) {
  Expected<std::vector<uint8_t>> bytes = serializeModelBundle(b);
  if (!bytes.ok())
    return bytes.takeStatus();
  return writeFileAtomically(path, *bytes);
}

Expected<ModelBundle> readModelBundle(const std::string &path) {
  // The file's bytes, then the bundle copied out of them.
  Expected<std::vector<uint8_t>> bytes = readFileBytes(path, 2);
  if (!bytes.ok())
    return bytes.takeStatus();
  return parseModelBundle(bytes->data(), bytes->size(), path);
}

} // namespace einrt
