//===- CpuViews.cpp - Slices and concats as views of buffers --------------===//
#include "codegen/CpuViews.h"

#include "llvm/ADT/STLExtras.h"

using einrt::Buffer;
using einrt::BufferRole;
using einrt::Step;
using einrt::StepKind;

namespace ein::codegen {
namespace {

/// A new temporary viewing buffer `root` from element `offset` on, with
/// `like`'s dtype and shape.
int32_t newView(einrt::Program &program, int32_t root, int64_t offset, const Buffer &like) {
  Buffer view;
  view.dtype = like.dtype;
  view.shape = like.shape;
  view.role = BufferRole::Temp;
  view.viewOf = root;
  view.viewOffset = offset;
  view.name = "%" + std::to_string(program.buffers.size());
  program.buffers.push_back(std::move(view));
  return int32_t(program.buffers.size() - 1);
}

bool isViewed(const einrt::Program &program, int32_t buffer) {
  return llvm::any_of(program.buffers, [&](const Buffer &b) { return b.viewOf == buffer; });
}

} // namespace

void lowerSliceAsView(einrt::Program &program, int32_t input, int32_t output, int64_t offset,
                      const std::string &note) {
  const Buffer &src = program.buffers[input];
  offset += src.viewOffset;
  int32_t root = src.viewOf >= 0 ? src.viewOf : input;
  if (!llvm::is_contained(program.results, output)) {
    program.buffers[output].viewOf = root;
    program.buffers[output].viewOffset = offset;
    return;
  }
  Buffer like = program.buffers[output];
  int32_t view = newView(program, root, offset, like);
  program.steps.emplace_back(StepKind::Copy, std::vector<int32_t>{view}, output, einrt::NoPayload{},
                             note + " (copied: returned)");
}

void lowerConcatInViews(einrt::Program &program, llvm::ArrayRef<int32_t> parts, int32_t output,
                        llvm::ArrayRef<bool> inPlace, llvm::function_ref<bool(int32_t)> written,
                        const std::string &note) {
  int64_t at = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    int32_t part = parts[i];
    Buffer p = program.buffers[part];
    // The IR's choice (passes/ConcatInPlace.h) holds for the Program; it is
    // checked, to copy rather than alias wrongly should the two disagree.
    bool own = p.role == BufferRole::Temp && p.viewOf < 0 && part != output &&
               !llvm::is_contained(program.results, part) && !isViewed(program, part) &&
               written(part);
    if (inPlace[i] && own) {
      program.buffers[part].viewOf = output;
      program.buffers[part].viewOffset = at;
    } else {
      int32_t view = newView(program, output, at, p);
      program.steps.emplace_back(StepKind::Copy, std::vector<int32_t>{part}, view,
                                 einrt::NoPayload{},
                                 note + " (input " + std::to_string(i) + " copied)");
    }
    at += p.elementCount();
  }
}

} // namespace ein::codegen
