//===- CudaKernels.cpp - Launch shapes of rendered CUDA kernels -----------===//
//
// cudaLaunchShape: the grid and block of one kernel from the device's
// properties and the occupancy calculator's answer (runtime/cuda/CudaKernels.h).
// Every number comes from its arguments; the kernels' only requirements are
// a block that is a multiple of the warp size, at most 1024 threads (the
// contract) and at most the device's maximum, and a grid of at least one.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaKernels.h"

#include "runtime/base/FieldsJson.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace einrt {

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool isIdentifier(const std::string &s) {
  if (s.empty() || s.size() > 1024 || std::isdigit((unsigned char)s[0]))
    return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
}

/// "sm_90", "sm_90a", "compute_90".
bool isArch(const std::string &s) {
  std::string digits;
  if (s.rfind("sm_", 0) == 0)
    digits = s.substr(3);
  else if (s.rfind("compute_", 0) == 0)
    digits = s.substr(8);
  else
    return false;
  if (!digits.empty() && digits.back() == 'a')
    digits.pop_back();
  return digits.size() >= 2 && digits.size() <= 4 &&
         std::all_of(digits.begin(), digits.end(),
                     [](char c) { return std::isdigit((unsigned char)c); });
}

} // namespace

const char *cudaLaunchKindName(CudaLaunchKind k) {
  switch (k) {
  case CudaLaunchKind::Elements:
    return "elements";
  case CudaLaunchKind::WarpRows:
    return "warp_rows";
  case CudaLaunchKind::BlockRows:
    return "block_rows";
  }
  return "?";
}

template <> struct EnumNames<CudaLaunchKind> {
  static const char *name(CudaLaunchKind k) { return cudaLaunchKindName(k); }
  static bool parse(const std::string &text, CudaLaunchKind &k) {
    for (uint8_t i = 0; i <= uint8_t(CudaLaunchKind::BlockRows); ++i)
      if (text == cudaLaunchKindName(CudaLaunchKind(i))) {
        k = CudaLaunchKind(i);
        return true;
      }
    return false;
  }
  static std::string expected() { return "a launch kind (elements, warp_rows, block_rows)"; }
};

Expected<std::vector<uint8_t>> encodeCudaKernelBundle(const CudaKernelBundle &bundle) {
  return encodeFieldsBlob(bundle);
}

Expected<CudaKernelBundle> decodeCudaKernelBundle(const std::vector<uint8_t> &section) {
  CudaKernelBundle bundle;
  if (Status s = decodeFieldsBlob(section, bundle); !s.ok())
    return s;
  return bundle;
}

std::string checkCudaKernelBundle(const CudaKernelBundle &bundle) {
  std::set<std::string> entries;
  for (size_t i = 0; i < bundle.kernels.size(); ++i) {
    const CudaKernelInfo &k = bundle.kernels[i];
    std::string at = "kernel " + std::to_string(i);
    if (!isIdentifier(k.entry))
      return at + ": its entry is not a C identifier";
    if (!entries.insert(k.entry).second)
      return at + ": a second kernel named '" + k.entry + "'";
    if (uint8_t(k.kind) > uint8_t(CudaLaunchKind::BlockRows))
      return at + " (" + k.entry + "): unknown launch kind";
    if (k.work < 0 || (k.kind != CudaLaunchKind::Elements && k.rowLength < 1))
      return at + " (" + k.entry + "): work " + std::to_string(k.work) + ", row length " +
             std::to_string(k.rowLength);
    if (k.params < 1 || k.params > 512)
      return at + " (" + k.entry + "): " + std::to_string(k.params) + " parameters";
    if (k.vector < 1 || k.vector > 16)
      return at + " (" + k.entry + "): a vector of " + std::to_string(k.vector);
    for (int32_t p : k.aligned)
      if (p < 0 || p >= k.params)
        return at + " (" + k.entry + "): aligned parameter " + std::to_string(p) + " of " +
               std::to_string(k.params);
  }
  std::set<std::string> archs;
  for (const CudaImage &image : bundle.images) {
    if (!isArch(image.arch))
      return "an image for '" + image.arch + "', not an architecture (sm_XY, compute_XY)";
    if (!archs.insert(image.arch).second)
      return "two images for " + image.arch;
    if (image.bytes.empty())
      return "the image for " + image.arch + " is empty";
    if (image.ptx != (image.arch.rfind("compute_", 0) == 0))
      return "the image for " + image.arch + (image.ptx ? " is PTX" : " is not PTX");
  }
  if (bundle.images.empty() && bundle.source.empty() && !bundle.kernels.empty())
    return "kernels without source or images";
  return "";
}

namespace {

/// An image's architecture number (90 of "sm_90a" and "compute_90"), and
/// whether it is architecture-specific ("a"); -1 when it has none.
int archNumber(const std::string &arch, bool &specific) {
  size_t digits = arch.find_first_of("0123456789");
  int n = -1;
  for (size_t i = digits; i < arch.size() && std::isdigit((unsigned char)arch[i]); ++i)
    n = (n < 0 ? 0 : n * 10) + (arch[i] - '0');
  specific = !arch.empty() && arch.back() == 'a';
  return n;
}

} // namespace

std::string cudaMisalignedParameter(const CudaKernelInfo &kernel,
                                    const std::vector<const void *> &params) {
  for (int32_t p : kernel.aligned) {
    if (p < 0 || size_t(p) >= params.size())
      continue;
    int64_t past = int64_t(reinterpret_cast<uintptr_t>(params[size_t(p)]) % kCudaVectorBytes);
    if (past == 0)
      continue;
    return "parameter " + std::to_string(p) + " starts " + std::to_string(past) + " bytes past a " +
           std::to_string(kCudaVectorBytes) + "-byte boundary";
  }
  return "";
}

Expected<const CudaImage *> cudaImageFor(const CudaKernelBundle &bundle, int major, int minor) {
  const int wanted = major * 10 + minor;
  // Ranks, best first: the cubin for exactly this sm_XY; its
  // architecture-specific sm_XYa (which runs on sm_XY alone); a cubin of
  // the same major and a lower minor, the highest (a cubin for sm_XY runs
  // on every sm_XZ with Z >= Y, never across majors); the newest PTX not
  // newer than the device (the driver compiles it).
  const CudaImage *best = nullptr;
  int bestRank = 0, bestArch = -1;
  std::string archs;
  for (const CudaImage &image : bundle.images) {
    archs += (archs.empty() ? "" : ", ") + image.arch + (image.ptx ? " (PTX)" : "");
    bool specific = false;
    int arch = archNumber(image.arch, specific);
    int rank = 0;
    if (arch < 0 || arch > wanted)
      rank = 0;
    else if (specific) // sm_90a, compute_90a: sm_90 alone
      rank = arch != wanted ? 0 : image.ptx ? 1 : 3;
    else if (image.ptx)
      rank = 1;
    else if (arch == wanted)
      rank = 4;
    else if (arch / 10 == major)
      rank = 2;
    if (rank > bestRank || (rank == bestRank && rank > 0 && arch > bestArch)) {
      best = &image;
      bestRank = rank;
      bestArch = arch;
    }
  }
  if (best)
    return best;
  const std::string cubin = "sm_" + std::to_string(wanted);
  return Status(StatusCode::Unavailable,
                "the kernels were compiled for " +
                    (archs.empty() ? std::string("no architecture") : archs) +
                    ", none of which runs on this " + cubin + " device (a cubin for " +
                    (minor == 0 ? cubin : "sm_" + std::to_string(major * 10) + " to " + cubin) +
                    ", or PTX for compute_" + std::to_string(wanted) + " or older, is needed)");
}

CudaLaunchShape cudaLaunchShape(const CudaKernelInfo &kernel, const CudaDeviceProperties &device,
                                const CudaOccupancy &occupancy) {
  const int64_t warp = device.warpSize > 0 ? device.warpSize : 32;
  // The largest block this kernel may have: the contract's and the device's
  // limit, a whole number of warps (never below one warp).
  int64_t limit = kCudaKernelMaxBlock;
  if (device.maxThreadsPerBlock > 0)
    limit = std::min<int64_t>(limit, device.maxThreadsPerBlock);
  limit = std::max(warp, limit / warp * warp);
  // The occupancy calculator's block, rounded down to whole warps; without
  // an answer, the largest block.
  int64_t block = occupancy.blockSize > 0 ? occupancy.blockSize / warp * warp : limit;
  block = std::clamp(block, warp, limit);

  const int64_t work = std::max<int64_t>(kernel.work, 0);
  const int64_t maxGrid =
      device.maxGridX > 0 ? std::min<int64_t>(device.maxGridX, UINT32_MAX) : int64_t(UINT32_MAX);
  // Threads per block that hold work: a block no larger than the work (in
  // whole warps), so a small kernel is not a mostly idle block.
  int64_t threadsOfWork = 0;
  switch (kernel.kind) {
  case CudaLaunchKind::Elements:
    threadsOfWork = work;
    break;
  case CudaLaunchKind::WarpRows:
    threadsOfWork = work * warp; // one warp per row
    break;
  case CudaLaunchKind::BlockRows:
    threadsOfWork = std::max<int64_t>(kernel.rowLength, 0); // one block per row
    break;
  }
  block = std::clamp(ceilDiv(threadsOfWork, warp) * warp, warp, block);

  int64_t grid = 1;
  if (kernel.kind == CudaLaunchKind::BlockRows) {
    grid = work; // one block per row; past maxGridX the rows are strided
  } else {
    const int64_t unitsPerBlock = kernel.kind == CudaLaunchKind::Elements ? block : block / warp;
    const int64_t needed = ceilDiv(work, unitsPerBlock);
    // The blocks that fill the device once: the calculator's resident
    // blocks per multiprocessor at this block size (or as many as the
    // multiprocessor's threads allow), times the multiprocessors.
    int64_t perSM = occupancy.activeBlocksPerMultiprocessor;
    if (perSM <= 0)
      perSM = device.maxThreadsPerMultiprocessor > 0
                  ? std::max<int64_t>(1, device.maxThreadsPerMultiprocessor / block)
                  : 1;
    const int64_t fill = std::max<int64_t>(1, device.multiprocessors) * perSM;
    grid = std::min(needed, fill);
  }
  grid = std::clamp<int64_t>(grid, 1, maxGrid);
  return {uint32_t(grid), uint32_t(block)};
}

} // namespace einrt
