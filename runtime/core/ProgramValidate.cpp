//===- ProgramValidate.cpp - Program::validate: a Program's structure -----===//
//
// validate() checks a Program's structure: every index in range, every
// temporary written before it is read, views inside their buffers, and each
// step against its kind's rule (StepCheck.h: the payload's type, arity,
// element types and shapes). That is what a device needs to run a step
// without reading or writing out of bounds; what an op means is its `ein`
// verifier's business (ir/EinOps.td). A corrupt Program, from a bug or a
// damaged file, is an Invalid Status naming the step, never a crash in the
// executor.
//
//===----------------------------------------------------------------------===//
#include "runtime/base/TerminalText.h"
#include "runtime/core/Program.h"
#include "runtime/core/StepCheck.h"

#include <algorithm>

namespace einrt {

namespace {

constexpr int64_t kMaxElements = int64_t(1) << 48; // sane upper bound

bool isKnownKind(StepKind k) { return stepKindInfo(k) != nullptr; }

bool isKnownDType(DType t) { return static_cast<uint8_t>(t) <= static_cast<uint8_t>(DType::I1); }

std::string shapeStr(const std::vector<int64_t> &shape) { return shapeText(shape); }

std::string stepPrefix(size_t index, const Step &s) {
  std::string r = "step " + std::to_string(index) + " (" +
                  (isKnownKind(s.kind) ? stepKindName(s.kind) : "unknown");
  if (!s.note.empty())
    r += ", " + s.note;
  return r + "): ";
}

} // namespace

Status Program::validate() const {
  const int64_t nbuf = buffers.size();
  for (int64_t b = 0; b < nbuf; ++b) {
    const Buffer &buf = buffers[b];
    std::string where = "buffer " + std::to_string(b) + " ('" + buf.name + "')";
    if (!isKnownDType(buf.dtype))
      return Status::invalid(where + ": unknown dtype " + std::to_string(int(buf.dtype)));
    if (static_cast<uint8_t>(buf.role) > static_cast<uint8_t>(BufferRole::Temp))
      return Status::invalid(where + ": unknown role " + std::to_string(int(buf.role)));
    int64_t n = 1;
    for (int64_t d : buf.shape) {
      if (d < 0)
        return Status::invalid(where + ": negative dimension in shape " + shapeStr(buf.shape));
      if (d != 0 && n > kMaxElements / d)
        return Status::invalid(where + ": shape " + shapeStr(buf.shape) + " is too large");
      n *= d;
    }
    if (buf.role == BufferRole::Constant) {
      if (buf.constant.size() != 1 && (int64_t)buf.constant.size() != n &&
          !(n == 0 && buf.constant.empty()))
        return Status::invalid(where + ": constant has " + std::to_string(buf.constant.size()) +
                               " values but the shape " + shapeStr(buf.shape) + " has " +
                               std::to_string(n) + " elements");
    }
    if (buf.role == BufferRole::Param) {
      const Init &in = buf.init;
      if (in.kind != "normal" && in.kind != "uniform" && in.kind != "zeros" && in.kind != "ones")
        return Status::invalid(where + ": unknown init kind '" + in.kind + "'");
      if (in.kind == "normal" && (!(in.std >= 0) || !(in.clip >= 0)))
        return Status::invalid(where + ": normal init needs std >= 0 and clip >= 0");
      if (in.kind == "uniform" && !(in.low <= in.high))
        return Status::invalid(where + ": uniform init needs low <= high");
    }
  }

  // Views: rows of a buffer that is no view, of its dtype, in its bounds.
  for (int64_t b = 0; b < nbuf; ++b) {
    const Buffer &buf = buffers[b];
    std::string where = "buffer " + std::to_string(b) + " ('" + buf.name + "')";
    if (buf.viewOf < 0) {
      if (buf.viewOf != -1 || buf.viewOffset != 0)
        return Status::invalid(where + ": view_of " + std::to_string(buf.viewOf) + " with offset " +
                               std::to_string(buf.viewOffset) +
                               " (-1 and 0 for a buffer that is no view)");
      continue;
    }
    if (buf.viewOf >= nbuf || buf.viewOf == b)
      return Status::invalid(where + ": views buffer " + std::to_string(buf.viewOf) + " (" +
                             (buf.viewOf == b ? "itself" : "out of range") + ")");
    const Buffer &root = buffers[buf.viewOf];
    if (root.viewOf >= 0)
      return Status::invalid(where + ": views buffer " + std::to_string(buf.viewOf) +
                             ", itself a view");
    if (buf.role != BufferRole::Temp)
      return Status::invalid(where + ": a view must be a temporary");
    if (buf.dtype != root.dtype)
      return Status::invalid(where + ": a view of dtype '" + dtypeName(buf.dtype) + "' of buffer " +
                             std::to_string(buf.viewOf) + " of dtype '" + dtypeName(root.dtype) +
                             "'");
    if (buf.viewOffset < 0 || buf.viewOffset > root.elementCount() - buf.elementCount())
      return Status::invalid(where + ": elements [" + std::to_string(buf.viewOffset) + ", " +
                             std::to_string(buf.viewOffset + buf.elementCount()) + ") of buffer " +
                             std::to_string(buf.viewOf) + ", which has " +
                             std::to_string(root.elementCount()));
  }
  // Storage: (buffer holding it, first element, end).
  struct Extent {
    int64_t root, begin, end;
    bool overlaps(const Extent &o) const {
      return root == o.root && begin < o.end && o.begin < end && begin < end;
    }
  };
  auto extent = [&](int64_t b) {
    const Buffer &buf = buffers[b];
    int64_t root = buf.viewOf >= 0 ? buf.viewOf : b;
    return Extent{root, buf.viewOffset, buf.viewOffset + buf.elementCount()};
  };

  std::vector<char> isArgument(nbuf, 0);
  for (size_t a = 0; a < arguments.size(); ++a) {
    int32_t b = arguments[a];
    if (b < 0 || b >= nbuf)
      return Status::invalid("argument " + std::to_string(a) + ": buffer index " +
                             std::to_string(b) + " out of range (" + std::to_string(nbuf) +
                             " buffers)");
    BufferRole r = buffers[b].role;
    if (r == BufferRole::Temp || r == BufferRole::Constant)
      return Status::invalid("argument " + std::to_string(a) + ": buffer " + std::to_string(b) +
                             " ('" + buffers[b].name + "') is a " +
                             (r == BufferRole::Temp ? "temporary" : "constant"));
    if (isArgument[b]++)
      return Status::invalid("argument " + std::to_string(a) + ": buffer " + std::to_string(b) +
                             " is listed twice");
  }
  if (!resultNames.empty() && resultNames.size() != results.size())
    return Status::invalid(std::to_string(resultNames.size()) + " result names for " +
                           std::to_string(results.size()) + " results");

  // Non-temporaries hold values before the first step; temporaries must be
  // written before they are read. A view is written with the buffer it
  // views; that buffer is written when views covering it are (each element
  // once: the views written into one buffer do not overlap).
  std::vector<char> written(nbuf, 0);
  for (int64_t b = 0; b < nbuf; ++b)
    written[b] = buffers[b].role != BufferRole::Temp;
  std::vector<int64_t> covered(nbuf, 0);
  std::vector<std::vector<int64_t>> writtenViews(nbuf);
  auto isWritten = [&](int64_t b) {
    return written[b] || (buffers[b].viewOf >= 0 && written[buffers[b].viewOf]);
  };

  for (size_t si = 0; si < steps.size(); ++si) {
    const Step &s = steps[si];
    std::string prefix = stepPrefix(si, s);
    if (!isKnownKind(s.kind))
      return Status::invalid(prefix + "unknown step kind " + std::to_string(int(s.kind)));
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      int32_t b = s.inputs[k];
      if (b < 0 || b >= nbuf)
        return Status::invalid(prefix + "input " + std::to_string(k) + ": buffer index " +
                               std::to_string(b) + " out of range (" + std::to_string(nbuf) +
                               " buffers)");
      if (b == s.output)
        return Status::invalid(prefix + "input " + std::to_string(k) +
                               " is also the output buffer " + std::to_string(b));
      if (!isWritten(b))
        return Status::invalid(prefix + "input " + std::to_string(k) + " reads temporary " +
                               std::to_string(b) + " ('" + buffers[b].name +
                               "') before any step writes it");
    }
    if (s.output < 0 || s.output >= nbuf)
      return Status::invalid(prefix + "output buffer index " + std::to_string(s.output) +
                             " out of range (" + std::to_string(nbuf) + " buffers)");
    if (buffers[s.output].role == BufferRole::Constant)
      return Status::invalid(prefix + "writes constant buffer " + std::to_string(s.output) + " ('" +
                             buffers[s.output].name + "')");
    const std::vector<int32_t> outs = s.outputs();
    for (size_t k = 1; k < outs.size(); ++k) {
      int32_t b = outs[k];
      std::string which = prefix + "extra output " + std::to_string(k - 1) + ": ";
      if (b < 0 || b >= nbuf)
        return Status::invalid(which + "buffer index " + std::to_string(b) + " out of range (" +
                               std::to_string(nbuf) + " buffers)");
      if (buffers[b].role == BufferRole::Constant)
        return Status::invalid(which + "writes constant buffer " + std::to_string(b) + " ('" +
                               buffers[b].name + "')");
      if (std::find(outs.begin(), outs.begin() + k, b) != outs.begin() + k)
        return Status::invalid(which + "buffer " + std::to_string(b) + " is written twice");
      if (std::find(s.inputs.begin(), s.inputs.end(), b) != s.inputs.end())
        return Status::invalid(which + "buffer " + std::to_string(b) + " is also an input");
    }
    // An accumulating GEMM reads its C.
    if (const auto *g = std::get_if<GemmDesc>(&s.payload))
      if (g->epilogue == GemmEpilogue::Accumulate && !written[s.output])
        return Status::invalid(prefix + "accumulates into temporary " + std::to_string(s.output) +
                               " ('" + buffers[s.output].name + "') before any step writes it");
    std::string e = checkStepRule(*this, s);
    if (!e.empty())
      return Status::invalid(prefix + e);
    for (int32_t o : outs)
      for (size_t k = 0; k < s.inputs.size(); ++k)
        if (extent(o).overlaps(extent(s.inputs[k])))
          return Status::invalid(prefix + "input " + std::to_string(k) + " (buffer " +
                                 std::to_string(s.inputs[k]) +
                                 ") shares storage with output buffer " + std::to_string(o));
    for (int32_t b : outs) {
      if (written[b]) // e.g. a GEMM accumulating into its C
        continue;
      written[b] = 1;
      int32_t root = buffers[b].viewOf;
      if (root < 0)
        continue;
      for (int64_t w : writtenViews[root])
        if (extent(w).overlaps(extent(b)))
          return Status::invalid(prefix + "writes view " + std::to_string(b) + " of buffer " +
                                 std::to_string(root) + " over view " + std::to_string(w) +
                                 ", written before");
      writtenViews[root].push_back(b);
      covered[root] += buffers[b].elementCount();
      if (covered[root] >= buffers[root].elementCount())
        written[root] = 1;
    }
  }

  for (size_t r = 0; r < results.size(); ++r) {
    int32_t b = results[r];
    if (b < 0 || b >= nbuf)
      return Status::invalid("result " + std::to_string(r) + ": buffer index " + std::to_string(b) +
                             " out of range (" + std::to_string(nbuf) + " buffers)");
    if (buffers[b].viewOf >= 0)
      return Status::invalid("result " + std::to_string(r) + ": buffer " + std::to_string(b) +
                             " ('" + buffers[b].name +
                             "') is a view (a result has storage of its own)");
    if (!written[b])
      return Status::invalid("result " + std::to_string(r) + ": temporary " + std::to_string(b) +
                             " ('" + buffers[b].name + "') is never written");
  }
  return Status::success();
}

} // namespace einrt
