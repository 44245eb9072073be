//===- SourceLoc.h - Positions in a model file -------------------*- C++ -*-===//
#ifndef EINC_DSL_SOURCELOC_H
#define EINC_DSL_SOURCELOC_H

#include <cstdint>

namespace ein::dsl {

/// A 1-based line and column in the source file. line == 0 means "no position".
struct SourceLoc {
  uint32_t line = 0;
  uint32_t col = 0;
  bool isValid() const { return line != 0; }
  SourceLoc advanced(uint32_t columns) const { return {line, col + columns}; }
};

} // namespace ein::dsl

#endif // EINC_DSL_SOURCELOC_H
