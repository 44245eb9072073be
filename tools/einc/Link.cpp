//===- Link.cpp - How einc compile links an executable --------------------===//
#include "Link.h"

#include "runtime/base/TerminalText.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>
#include <optional>

namespace einc {

einrt::Expected<std::string> findLinker() {
  const char *cxx = std::getenv("CXX");
  std::string name = cxx && *cxx ? cxx : "c++";
  // A name with a '/' is a path, which findProgramByName returns unchecked.
  auto found = llvm::sys::findProgramByName(name);
  std::string why = found ? "" : found.getError().message();
  if (found && !llvm::sys::fs::can_execute(*found))
    why = llvm::sys::fs::exists(*found) ? "not executable" : "no such file";
  if (why.empty())
    return *found;
  return einrt::Status(einrt::StatusCode::Unavailable,
                       cxx && *cxx
                           ? "no linker: CXX is " + einrt::quoted(name) +
                                 ", which is not a program (" + why + "); install g++ or set CXX"
                           : "no linker: cannot find c++ on PATH; install g++ or set CXX");
}

einrt::Expected<LinkKit> kitArguments() {
  static int anchor; // an address in einc, for getMainExecutable
  std::string self = llvm::sys::fs::getMainExecutable("einc", &anchor);
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(llvm::sys::path::parent_path(self)));
  llvm::sys::path::append(dir, "lib", "einc-exe");
  LinkKit kit;
  kit.dir = dir.str().str();
  llvm::SmallString<256> linkFile(dir);
  llvm::sys::path::append(linkFile, "link.txt");
  auto text = llvm::MemoryBuffer::getFile(linkFile);
  if (!text)
    return einrt::Status(
        einrt::StatusCode::NotFound,
        "cannot read " + einrt::quoted(linkFile.str().str()) + " (" + text.getError().message() +
            "): einc's executable kit is built beside einc (the CMake target einc-exe-kit)");
  llvm::SmallVector<llvm::StringRef> lines;
  (*text)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (line.empty() || line.starts_with("#"))
      continue;
    if (line.starts_with("!")) // the kit cannot link: why
      return einrt::Status(einrt::StatusCode::Unavailable, line.drop_front().str());
    if (line.starts_with("-") || llvm::sys::path::is_absolute(line)) {
      kit.args.push_back(line.str());
      continue;
    }
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, line);
    if (!llvm::sys::fs::exists(path))
      return einrt::Status(einrt::StatusCode::NotFound, "einc's executable kit lacks " +
                                                            einrt::quoted(path.str().str()) +
                                                            " (rebuild einc)");
    kit.args.push_back(path.str().str());
  }
  return kit;
}

einrt::Status runProgram(const std::string &program, const std::vector<std::string> &args) {
  llvm::SmallString<128> output;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("einc-link", "txt", output))
    return einrt::Status(einrt::StatusCode::Io, "cannot create a temporary file: " + ec.message());
  std::vector<llvm::StringRef> argv{program};
  for (const std::string &a : args)
    argv.push_back(a);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, output.str(), output.str()};
  std::string why;
  int status = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects, 0, 0, &why);
  auto printed = llvm::MemoryBuffer::getFile(output);
  std::string text = printed ? (*printed)->getBuffer().str() : "";
  llvm::sys::fs::remove(output);
  if (status == 0)
    return einrt::Status::success();
  std::string said =
      status < 0 ? "cannot run " + einrt::quoted(program) + ": " + why
                 : einrt::quoted(program) + " failed (exit status " + std::to_string(status) + ")";
  if (!text.empty())
    said += ":\n" + text;
  return einrt::Status(status < 0 ? einrt::StatusCode::Unavailable : einrt::StatusCode::Internal,
                       said);
}

} // namespace einc
