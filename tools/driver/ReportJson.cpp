//===- ReportJson.cpp - `einc report --format json` -----------------------===//
//
// Stable field names, documented in docs/report.md and as a JSON Schema in
// docs/report.schema.json (test/report checks every report against it).
// Each struct of Report.h lists its JSON once, in its `fields` visitor; the
// Report's own list (below) nests its flat members as the document does.
// einrt::BasicFieldsWriter writes them in JsonForm::Document: every member
// in the listed order; counts and bytes are integers; rates, seconds and
// ratios are numbers (einrt::jsonNumber: null when not finite).
//
//===----------------------------------------------------------------------===//
#include "Report.h"

#include "runtime/base/FieldsJson.h"

#include "llvm/Support/raw_ostream.h"

namespace einc {

namespace {
/// docs/report.md's `schema_version`.
constexpr int64_t kReportSchemaVersion = 1;
} // namespace

template <class Self, class Visit> void Report::fields(Self &r, Visit &&visit) {
  using einrt::computed;
  using einrt::group;
  visit("schema_version", computed(kReportSchemaVersion));
  visit("model", r.model);
  visit("device", group([&](auto &&v) {
          v("name", r.device);
          v("description", r.deviceDescription);
          v("compute_dtype", r.computeDtype);
          v("matrix_flops_per_second", r.matrixPeak);
          v("vector_flops_per_second", r.vectorPeak);
          v("bandwidth_bytes_per_second", r.bandwidth);
          v("memory_bytes", r.deviceMemory);
        }));
  visit("precision", r.precision);
  visit("optimizer", r.optimizer);
  visit("optimizer_slots", r.optimizerSlots);
  visit("fusion", group([&](auto &&v) {
          const mlir::ein::FusionSummary &f = r.fusionSummary;
          v("enabled", r.fusion);
          v("fused_kernels", f.fusedKernels);
          v("row_kernels", f.rowKernels);
          v("fused_ops", f.fusedOps);
          v("folded_broadcasts", f.foldedBroadcasts);
          v("iotas_in_kernels", f.indexOpsComputed);
          v("gemm_epilogues", f.epilogues);
          v("epilogue_bytes_from_cache", f.epilogueBytes);
          v("bytes_unfused", f.bytesUnfused);
          v("bytes", f.bytes);
        }));
  visit("tokens_per_step", r.tokensPerStep);
  visit("tokens_known", r.tokensKnown);
  visit("dims", r.dims);
  visit("params", r.params);
  visit("flops", group([&](auto &&v) {
          v("forward", r.flops.forward);
          v("backward", r.flops.backward);
          v("optimizer", r.flops.optimizer);
          v("recompute", r.flops.recompute);
          v("total", computed(r.flops.total()));
          v("per_token", r.flopsPerToken);
          v("transcendentals", r.transcendentals);
          v("by_kind", r.flopsByKind);
        }));
  visit("model_flops", group([&](auto &&v) {
          v("forward", r.modelFlops.forward);
          v("backward", r.modelFlops.backward);
          v("total", computed(r.modelFlops.total()));
          v("per_token", r.modelFlopsPerToken);
          v("forward_per_token", r.forwardModelFlopsPerToken);
        }));
  visit("napkin", group([&](auto &&v) {
          v("six_n_per_token", r.sixN);
          v("palm_per_token", r.palmPerToken);
        }));
  visit("memory", group([&](auto &&v) {
          v("params", r.paramBytes);
          v("master_weights", r.masterBytes);
          v("grads", r.gradBytes);
          v("optimizer", r.optimizerBytes);
          v("activations", r.activationBytes);
          v("activations_by_dtype", r.activationBytesByDtype);
          v("param_copies", r.paramCopyBytes);
          v("inputs", r.inputBytes);
          v("saved_inputs", r.savedInputBytes);
          v("peak", r.peakBytes);
          v("arena", r.arenaBytes);
          v("resident", r.residentBytes);
          v("planned_backend", r.plannedBackend);
          v("peak_step_index", r.peakOpIndex);
          v("peak_step", r.peakOp);
          v("bytes_per_param", r.bytesPerParam);
          v("device", r.deviceMemory);
          v("margin", r.marginBytes);
          v("fits", r.fits);
          // The advice of a step that does not fit.
          if (!r.fits && r.rematSweep)
            v("fit_advice", r.rematSweep->fit);
          v("live_after", r.liveAfter);
          v("timeline", r.memoryTimeline);
        }));
  visit("predicted", group([&](auto &&v) {
          v("step_seconds", r.stepSeconds);
          v("kernel_latency_seconds", r.kernelLatency);
          v("launch_seconds", r.launchSeconds);
          v("tokens_per_second", r.tokensPerSecond);
          v("mfu", r.mfu);
          v("hfu", r.hfu);
          v("compute_bound_seconds", r.computeBoundSeconds);
          v("matrix_seconds", r.matrixSeconds);
        }));
  visit("roofline", group([&](auto &&v) { v("by_dtype", r.dtypes); }));
  visit("remat", group([&](auto &&v) {
          v("policy", r.remat.policy);
          v("recomputed_ops", r.remat.recomputedOps);
          v("kept", r.remat.kept);
          v("kept_bytes", r.remat.keptBytes);
          v("recompute_seconds", r.remat.recomputeSeconds);
          // The trade-off, when --remat-sweep asked for it.
          if (r.rematSweep && r.rematSweep->ladder) {
            const ReportRematSweep &w = *r.rematSweep;
            v("frontier", w.frontier);
            v("policies", w.policies);
            v("frontier_points", w.frontierPoints);
            v("candidates", w.candidates);
            v("solver_seconds", w.solverSeconds);
          }
        }));
  visit("cluster", r.cluster);
  visit("data_parallel", r.dataParallel);
  visit("layers", r.layers);
  visit("ops", r.ops);
  visit("kernels", group([&](auto &&v) {
          v("fusion", r.fusionSetting);
          v("count", computed(int64_t(r.kernels.size())));
          v("seconds", r.kernelSeconds);
          v("fusion_stops", r.fusionStops);
          v("list", r.kernels);
        }));
}

void printReportJson(const Report &r, llvm::raw_ostream &os) {
  einrt::BasicFieldsWriter<nlohmann::ordered_json> writer(einrt::JsonForm::Document);
  os << einrt::dumpJson(writer.write(r), 2) << "\n";
}

} // namespace einc
