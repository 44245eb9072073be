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

#include "runtime/base/Status.h"

#include <string>
#include <vector>

namespace einc {

/// The driver: $CXX when set (a program name or a path; one word), else
/// `c++` on PATH; Unavailable when there is none.
einrt::Expected<std::string> findLinker();

/// The kit's folder (bin/../lib/einc-exe beside einc's executable) and the
/// arguments of its link.txt, relative paths made absolute.
struct LinkKit {
  std::string dir;
  std::vector<std::string> args;
};
/// NotFound when the kit or one of its files is missing, Unavailable when
/// it says it cannot link.
einrt::Expected<LinkKit> kitArguments();

/// Runs `program` with `args` (not through a shell); Unavailable when it did
/// not start, Internal when it failed, with what it printed.
einrt::Status runProgram(const std::string &program, const std::vector<std::string> &args);

} // namespace einc

#endif // EINC_TOOLS_EINC_LINK_H
