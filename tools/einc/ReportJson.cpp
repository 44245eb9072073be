//===- ReportJson.cpp - `einc report --format json` -----------------------===//
//
// Stable field names, documented in docs/report.md and as a JSON Schema in
// docs/report.schema.json (test/report checks every report against it).
// Counts and bytes are integers; rates, seconds and ratios are numbers.
//
//===----------------------------------------------------------------------===//
#include "Report.h"

#include "llvm/Support/JSON.h"

#include <cmath>

namespace einc {

namespace {
/// A finite number (JSON has no infinity): non-finite values print as null.
void number(llvm::json::OStream &j, llvm::StringRef key, double v) {
  if (std::isfinite(v))
    j.attribute(key, v);
  else
    j.attribute(key, nullptr);
}
} // namespace

void printReportJson(const Report &r, llvm::raw_ostream &os) {
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attribute("schema_version", 1);
    j.attribute("model", r.model);
    j.attributeObject("device", [&] {
      j.attribute("name", r.device);
      j.attribute("description", r.deviceDescription);
      j.attribute("compute_dtype", r.computeDtype);
      number(j, "matrix_flops_per_second", r.matrixPeak);
      number(j, "vector_flops_per_second", r.vectorPeak);
      number(j, "bandwidth_bytes_per_second", r.bandwidth);
      number(j, "memory_bytes", r.deviceMemory);
    });
    j.attribute("precision", r.precision);
    j.attribute("optimizer", r.optimizer);
    j.attribute("optimizer_slots", r.optimizerSlots);
    j.attributeObject("fusion", [&] {
      j.attribute("enabled", r.fusion);
      j.attribute("fused_kernels", r.fusionSummary.fusedKernels);
      j.attribute("fused_ops", r.fusionSummary.fusedOps);
      j.attribute("folded_broadcasts", r.fusionSummary.foldedBroadcasts);
      j.attribute("bytes_unfused", r.fusionSummary.bytesUnfused);
      j.attribute("bytes", r.fusionSummary.bytes);
    });
    j.attribute("tokens_per_step", r.tokensPerStep);
    j.attribute("tokens_known", r.tokensKnown);
    j.attributeObject("dims", [&] {
      for (const auto &[name, size] : r.dims)
        j.attribute(name, size);
    });
    j.attribute("params", r.params);
    j.attributeObject("flops", [&] {
      j.attribute("forward", r.flops.forward);
      j.attribute("backward", r.flops.backward);
      j.attribute("optimizer", r.flops.optimizer);
      j.attribute("total", r.flops.total());
      number(j, "per_token", r.flopsPerToken);
      j.attribute("transcendentals", r.transcendentals);
      j.attributeObject("by_kind", [&] {
        for (const auto &[kind, flops] : r.flopsByKind)
          j.attribute(kind, flops);
      });
    });
    j.attributeObject("model_flops", [&] {
      j.attribute("forward", r.modelFlops.forward);
      j.attribute("backward", r.modelFlops.backward);
      j.attribute("total", r.modelFlops.total());
      number(j, "per_token", r.modelFlopsPerToken);
      number(j, "forward_per_token", r.forwardModelFlopsPerToken);
    });
    j.attributeObject("napkin", [&] {
      number(j, "six_n_per_token", r.sixN);
      if (r.palmPerToken)
        number(j, "palm_per_token", *r.palmPerToken);
    });
    j.attributeObject("memory", [&] {
      j.attribute("params", r.paramBytes);
      j.attribute("master_weights", r.masterBytes);
      j.attribute("grads", r.gradBytes);
      j.attribute("optimizer", r.optimizerBytes);
      j.attribute("activations", r.activationBytes);
      j.attribute("inputs", r.inputBytes);
      j.attribute("saved_inputs", r.savedInputBytes);
      j.attribute("peak", r.peakBytes);
      j.attribute("peak_op_index", r.peakOpIndex);
      j.attribute("peak_op", r.peakOp);
      number(j, "bytes_per_param",
             r.params ? double(r.paramBytes + r.gradBytes + r.optimizerBytes) / r.params : 0);
      number(j, "device", r.deviceMemory);
      number(j, "margin", r.marginBytes);
      j.attribute("fits", r.fits);
      j.attributeArray("live_after", [&] {
        for (int64_t b : r.liveAfter)
          j.value(b);
      });
    });
    j.attributeObject("predicted", [&] {
      number(j, "step_seconds", r.stepSeconds);
      number(j, "tokens_per_second", r.tokensPerSecond);
      number(j, "mfu", r.mfu);
      number(j, "compute_bound_seconds", r.computeBoundSeconds);
      number(j, "matrix_seconds", r.matrixSeconds);
    });
    if (r.cluster) {
      const ReportCluster &c = *r.cluster;
      j.attributeObject("cluster", [&] {
        j.attribute("gpus", c.gpus);
        number(j, "tokens", c.tokens);
        number(j, "mfu", c.mfu);
        j.attribute("mfu_given", c.mfuGiven);
        number(j, "flops_per_token", c.flopsPerToken);
        number(j, "total_flops", c.totalFlops);
        number(j, "six_nd_flops", c.sixNDFlops);
        number(j, "seconds", c.seconds);
        number(j, "days", c.days);
        number(j, "gpu_hours", c.gpuHours);
        number(j, "bytes_per_param", c.bytesPerParam);
        number(j, "max_params", c.maxParams);
        number(j, "max_params_per_device", c.maxParamsPerDevice);
      });
    }
    j.attributeArray("layers", [&] {
      for (const ReportLayer &l : r.layers)
        j.object([&] {
          j.attribute("name", l.name);
          j.attribute("ops", l.ops);
          j.attribute("flops", l.flops);
          j.attribute("model_flops", l.modelFlops);
          j.attribute("bytes", l.bytes);
          number(j, "seconds", l.seconds);
        });
    });
    j.attributeArray("ops", [&] {
      for (const ReportOp &op : r.ops)
        j.object([&] {
          j.attribute("index", op.index);
          j.attribute("name", op.name);
          j.attribute("kind", op.kind);
          j.attribute("layer", op.layer);
          j.attribute("phase", op.phase);
          j.attribute("location", op.location);
          j.attribute("dtype", op.dtype);
          j.attribute("units", op.matrixUnits ? "matrix" : "vector");
          j.attribute("model", op.modelFlop);
          j.attribute("flops", op.flops);
          j.attribute("transcendentals", op.transcendentals);
          j.attribute("bytes", op.bytes);
          number(j, "intensity", op.intensity);
          j.attribute("bound", op.flops == 0 && op.bytes == 0 ? "none"
                               : op.computeBound              ? "compute"
                                                              : "memory");
          number(j, "seconds", op.seconds);
        });
    });
  });
  os << "\n";
}

} // namespace einc
