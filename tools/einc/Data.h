//===- Data.h - `einc data`: text to byte-token files -----------*- C++ -*-===//
#ifndef EINC_TOOLS_EINC_DATA_H
#define EINC_TOOLS_EINC_DATA_H

#include "Options.h"
#include "runtime/base/Status.h"

#include <string>

namespace einc {

/// `einc data TEXT --out DIR [--val-fraction F]`: every byte of TEXT is a
/// token (vocab 256) written as little-endian uint16 (nanoGPT's `.bin`) to
/// DIR/train.bin (the head) and DIR/val.bin (the tail, F of the tokens);
/// each file is written atomically. Returns the exit status.
int prepareData(const Options &o);

/// Creates `dir` and its parents (std::filesystem::create_directories); Io
/// when it cannot, also when `dir` exists and is not a folder.
einrt::Status makeDirs(const std::string &dir);

} // namespace einc

#endif // EINC_TOOLS_EINC_DATA_H
