//===- Link.h - How einc compile links an executable ------------*- C++ -*-===//
//
// With the system's compiler driver (gcc's or clang's: it knows the C
// runtime's start files and the dynamic loader) and the kit CMake builds
// beside einc (tools/exe/CMakeLists.txt): bin/einc finds it in
// bin/../lib/einc-exe, as clang finds its resource directory.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_EINC_LINK_H
#define EINC_TOOLS_EINC_LINK_H

#include <string>
#include <vector>

namespace einc {

/// The driver: $CXX when set (a program name or a path; one word), else
/// `c++` on PATH. "" with `error` when there is none.
std::string findLinker(std::string &error);

/// The kit's folder (bin/../lib/einc-exe beside einc's executable) and the
/// arguments of its link.txt, relative paths made absolute. False with
/// `error` when the kit is missing or says it cannot link.
bool kitArguments(std::string &kitDir, std::vector<std::string> &args, std::string &error);

/// Runs `program` with `args` (not through a shell); false with `error`
/// holding what it printed (or why it did not start).
bool runProgram(const std::string &program, const std::vector<std::string> &args,
                std::string &error);

} // namespace einc

#endif // EINC_TOOLS_EINC_LINK_H
