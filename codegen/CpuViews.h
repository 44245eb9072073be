//===- CpuViews.h - Slices and concats as views of buffers ------*- C++ -*-===//
//
// The CPU backend's leading-dimension slices and concats
// (codegen/CpuLowering.cpp): a slice's buffer is a view of its input's
// rows (runtime/core/Program.h, Buffer::viewOf) and moves no data; a concat's
// inputs are views of its rows, written there by their producers where
// passes/ConcatInPlace.h says so and copied there by a Copy step otherwise.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_CPUVIEWS_H
#define EINC_CODEGEN_CPUVIEWS_H

#include "runtime/core/Program.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace ein::codegen {

/// Buffer `output` as the elements of buffer `input` (or of what it views)
/// from element `offset` on: `output` becomes a view, or, when it is a
/// result (which has storage of its own), a Copy step from a new view
/// writes it. `offset` is the slice's rows times its input type's row size:
/// `input` may be a reshape's source (CpuLowering's aliases), whose shape
/// has other rows.
void lowerSliceAsView(einrt::Program &program, int32_t input, int32_t output, int64_t offset,
                      const std::string &note);

/// `parts` one after the other in buffer `output`: part i becomes a view of
/// its rows when `inPlace[i]` and it is a temporary that `written` (a step
/// already lowered writes it), that is no view and no result and that
/// nothing views; otherwise a Copy step copies it into a new view of them.
void lowerConcatInViews(einrt::Program &program, llvm::ArrayRef<int32_t> parts, int32_t output,
                        llvm::ArrayRef<bool> inPlace, llvm::function_ref<bool(int32_t)> written,
                        const std::string &note);

} // namespace ein::codegen

#endif // EINC_CODEGEN_CPUVIEWS_H
