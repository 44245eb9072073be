//===- ReportKernels.cpp - The report's kernel table ----------------------===//
//
// Every kernel of the fused @train_step (passes/StepKernels.h) with its ops
// and their `.ein` locations, FLOPs, bytes read and written (the ops' fused
// costs, summed: the same ledger as the report's totals), intensity, bound
// and predicted time on the device's roofline; and, for every value one
// kernel writes and a later one reads, why fusion stopped there.
//
//===----------------------------------------------------------------------===//
#include "Report.h"

#include "passes/StepKernels.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace einc {

void buildKernelTable(func::FuncOp fn, const std::vector<ein::OpCost> &costs,
                      const ein::DeviceProfile &device, Report &r) {
  r.kernels.clear();
  r.fusionStops.clear();
  r.kernelSeconds = 0;
  r.kernelLatency = device.kernelLatency;
  r.launchSeconds = 0;
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return;
  llvm::DenseMap<Operation *, size_t> costOf;
  for (size_t i = 0; i < costs.size(); ++i)
    costOf[costs[i].op] = i;
  // An op in no kernel (a view) takes no time.
  for (ReportOp &op : r.ops)
    op.seconds = 0;

  std::vector<ein::StepKernel> kernels = ein::stepKernels(fn.getBody().front());
  // A broadcast every reader reads in place is no step (as a reshape).
  if (r.fusion) {
    ein::FusedValues fused = ein::fusedValues(fn);
    for (ein::StepKernel &k : kernels)
      if (k.kind == ein::KernelKind::Op && k.members.front()->getNumResults() == 1 &&
          fused.foldedBroadcasts.count(k.members.front()->getResult(0)))
        k.kind = ein::KernelKind::View;
  }
  ein::FusionPolicy policy;
  policy.elementwise = r.fusionSetting != "off";
  policy.epilogues = r.fusionSetting == "on" || r.fusionSetting == "all";
  policy.rows = r.fusionSetting == "all";

  std::vector<int64_t> row(kernels.size(), -1); // kernel -> its row in the table
  for (size_t k = 0; k < kernels.size(); ++k) {
    const ein::StepKernel &sk = kernels[k];
    if (sk.kind == ein::KernelKind::View)
      continue;
    ReportKernel out;
    out.index = int64_t(r.kernels.size());
    out.kind = ein::kernelKindName(sk.kind).str();
    double compute = 0;
    for (Operation *op : sk.members) {
      out.ops.push_back(op->getName().getStringRef().str());
      auto it = costOf.find(op);
      if (it == costOf.end())
        continue;
      const ein::OpCost &c = costs[it->second];
      const ReportOp &ro = r.ops[it->second];
      if (!c.location.empty() && !llvm::is_contained(out.locations, c.location))
        out.locations.push_back(c.location);
      if (out.phase.empty()) {
        out.phase = c.phase;
        out.layer = ro.layer;
        out.dtype = ro.dtype;
      }
      out.flops += c.flops;
      out.bytesRead += c.bytesRead;
      out.bytesWritten += c.bytesWritten;
      compute += ein::roofline(device, ro.dtype, ro.matrixUnits, double(c.flops), 0).seconds;
    }
    double bytes = double(out.bytesRead + out.bytesWritten);
    double memory = device.bandwidth > 0 ? bytes / device.bandwidth : 0;
    out.seconds = std::max(compute, memory) + device.kernelLatency;
    out.computeBound = out.flops > 0 && compute >= memory;
    // The kernel's time, shared among its ops by their own roofline times
    // (evenly where those are all 0), so that every sum of op times — the
    // step, a phase, a layer, a dtype — is a sum of kernel times.
    std::vector<size_t> members;
    double weights = 0;
    for (Operation *op : sk.members)
      if (auto it = costOf.find(op); it != costOf.end()) {
        members.push_back(it->second);
        weights += r.ops[it->second].rooflineSeconds;
      }
    for (size_t i : members)
      r.ops[i].seconds = weights > 0 ? out.seconds * r.ops[i].rooflineSeconds / weights
                                     : out.seconds / double(members.size());
    out.intensity = bytes > 0 ? double(out.flops) / bytes : 0;
    r.kernelSeconds += out.seconds;
    r.launchSeconds += device.kernelLatency;
    row[k] = out.index;
    r.kernels.push_back(std::move(out));
  }

  std::map<std::string, int64_t> counts;
  for (const ein::KernelBoundary &b : ein::fusionBoundaries(kernels, policy)) {
    if (row[b.from] < 0 || row[b.to] < 0)
      continue;
    ReportFusionStop stop;
    stop.to = row[b.to];
    stop.reason = ein::fusionStopName(b.stop).str();
    stop.detail = b.detail;
    if (b.via >= 0 && row[b.via] >= 0)
      stop.detail = "through #" + std::to_string(row[b.via]);
    ++counts[stop.reason];
    r.kernels[size_t(row[b.from])].stops.push_back(std::move(stop));
  }
  r.fusionStops.assign(counts.begin(), counts.end());
  std::stable_sort(r.fusionStops.begin(), r.fusionStops.end(),
                   [](const auto &a, const auto &b) { return a.second > b.second; });
}

} // namespace einc
