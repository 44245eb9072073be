//===- ReplayMain.cpp - Run the fuzz target over files, without libFuzzer ---===//
//
//   einc-fuzz-replay PATH...
//
// Calls LLVMFuzzerTestOneInput once per regular file (directories are walked
// recursively, in sorted order) and prints how many inputs it ran. A crash is
// the failure signal; ctest replays test/fuzz/corpus this way in every build.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

static bool collect(const fs::path &path, std::vector<fs::path> &files) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec))
        files.push_back(it->path());
    if (ec) {
      std::fprintf(stderr, "einc-fuzz-replay: cannot read '%s': %s\n", path.c_str(),
                   ec.message().c_str());
      return false;
    }
    return true;
  }
  if (fs::is_regular_file(path, ec)) {
    files.push_back(path);
    return true;
  }
  std::fprintf(stderr, "einc-fuzz-replay: no such file or directory: '%s'\n", path.c_str());
  return false;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE-OR-DIR...\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> files;
  bool ok = true;
  for (int i = 1; i < argc; ++i)
    ok &= collect(argv[i], files);
  std::sort(files.begin(), files.end());

  size_t ran = 0;
  for (const fs::path &path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "einc-fuzz-replay: cannot open '%s'\n", path.c_str());
      ok = false;
      continue;
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
    ++ran;
  }
  std::printf("einc-fuzz-replay: ran %zu input%s\n", ran, ran == 1 ? "" : "s");
  if (ran == 0) {
    std::fprintf(stderr, "einc-fuzz-replay: no inputs\n");
    return 1;
  }
  return ok ? 0 : 1;
}
