//===- ReportJson.cpp - `einc report --format json` -----------------------===//
//
// Stable field names, documented in docs/report.md and as a JSON Schema in
// docs/report.schema.json (test/report checks every report against it).
// Counts and bytes are integers; rates, seconds and ratios are numbers
// (einrt::jsonNumber: null when not finite).
//
//===----------------------------------------------------------------------===//
#include "Report.h"

#include "runtime/base/StrictJson.h"

#include "llvm/Support/raw_ostream.h"

namespace einc {

namespace {
using Json = nlohmann::ordered_json; // fields in the documented order
using einrt::jsonNumber;

Json deviceJson(const Report &r) {
  Json j;
  j["name"] = r.device;
  j["description"] = r.deviceDescription;
  j["compute_dtype"] = r.computeDtype;
  j["matrix_flops_per_second"] = jsonNumber(r.matrixPeak);
  j["vector_flops_per_second"] = jsonNumber(r.vectorPeak);
  j["bandwidth_bytes_per_second"] = jsonNumber(r.bandwidth);
  j["memory_bytes"] = jsonNumber(r.deviceMemory);
  return j;
}

Json fusionJson(const Report &r) {
  Json j;
  j["enabled"] = r.fusion;
  j["fused_kernels"] = r.fusionSummary.fusedKernels;
  j["row_kernels"] = r.fusionSummary.rowKernels;
  j["fused_ops"] = r.fusionSummary.fusedOps;
  j["folded_broadcasts"] = r.fusionSummary.foldedBroadcasts;
  j["iotas_in_kernels"] = r.fusionSummary.indexOpsComputed;
  j["gemm_epilogues"] = r.fusionSummary.epilogues;
  j["epilogue_bytes_from_cache"] = r.fusionSummary.epilogueBytes;
  j["bytes_unfused"] = r.fusionSummary.bytesUnfused;
  j["bytes"] = r.fusionSummary.bytes;
  return j;
}

Json flopsJson(const Report &r) {
  Json j;
  j["forward"] = r.flops.forward;
  j["backward"] = r.flops.backward;
  j["optimizer"] = r.flops.optimizer;
  j["recompute"] = r.flops.recompute;
  j["total"] = r.flops.total();
  j["per_token"] = jsonNumber(r.flopsPerToken);
  j["transcendentals"] = r.transcendentals;
  Json byKind = Json::object();
  for (const auto &[kind, flops] : r.flopsByKind)
    byKind[kind] = flops;
  j["by_kind"] = std::move(byKind);
  return j;
}

Json modelFlopsJson(const Report &r) {
  Json j;
  j["forward"] = r.modelFlops.forward;
  j["backward"] = r.modelFlops.backward;
  j["total"] = r.modelFlops.total();
  j["per_token"] = jsonNumber(r.modelFlopsPerToken);
  j["forward_per_token"] = jsonNumber(r.forwardModelFlopsPerToken);
  return j;
}

Json napkinJson(const Report &r) {
  Json j;
  j["six_n_per_token"] = jsonNumber(r.sixN);
  if (r.palmPerToken)
    j["palm_per_token"] = jsonNumber(*r.palmPerToken);
  return j;
}

Json fitJson(const ReportFitAdvice &f) {
  Json j;
  j["found"] = f.found;
  j["remat"] = f.remat;
  j["accumulate"] = f.accumulate;
  j["micro_batch"] = f.microBatch;
  j["peak"] = f.peak;
  j["recompute_seconds"] = jsonNumber(f.recomputeSeconds);
  j["command"] = f.command;
  j["why"] = f.why;
  return j;
}

Json memoryJson(const Report &r) {
  Json j;
  j["params"] = r.paramBytes;
  j["master_weights"] = r.masterBytes;
  j["grads"] = r.gradBytes;
  j["optimizer"] = r.optimizerBytes;
  j["activations"] = r.activationBytes;
  Json byDtype = Json::object();
  for (const auto &[dtype, bytes] : r.activationBytesByDtype)
    byDtype[dtype] = bytes;
  j["activations_by_dtype"] = std::move(byDtype);
  j["param_copies"] = r.paramCopyBytes;
  j["inputs"] = r.inputBytes;
  j["saved_inputs"] = r.savedInputBytes;
  j["peak"] = r.peakBytes;
  j["arena"] = r.arenaBytes;
  j["resident"] = r.residentBytes;
  j["planned_backend"] = r.plannedBackend;
  j["peak_step_index"] = r.peakOpIndex;
  j["peak_step"] = r.peakOp;
  j["bytes_per_param"] = jsonNumber(r.bytesPerParam);
  j["device"] = jsonNumber(r.deviceMemory);
  j["margin"] = jsonNumber(r.marginBytes);
  j["fits"] = r.fits;
  if (!r.fits && r.rematSweep && r.rematSweep->fit)
    j["fit_advice"] = fitJson(*r.rematSweep->fit);
  j["live_after"] = r.liveAfter;
  return j;
}

Json rooflineJson(const Report &r) {
  Json byDtype = Json::array();
  for (const ReportDtype &d : r.dtypes) {
    Json e;
    e["dtype"] = d.dtype;
    e["ops"] = d.ops;
    e["flops"] = d.flops;
    e["matrix_flops"] = d.matrixFlops;
    e["bytes"] = d.bytes;
    e["seconds"] = jsonNumber(d.seconds);
    e["matrix_flops_per_second"] = jsonNumber(d.matrixPeak);
    e["vector_flops_per_second"] = jsonNumber(d.vectorPeak);
    byDtype.push_back(std::move(e));
  }
  Json j;
  j["by_dtype"] = std::move(byDtype);
  return j;
}

Json predictedJson(const Report &r) {
  Json j;
  j["step_seconds"] = jsonNumber(r.stepSeconds);
  j["tokens_per_second"] = jsonNumber(r.tokensPerSecond);
  j["mfu"] = jsonNumber(r.mfu);
  j["hfu"] = jsonNumber(r.hfu);
  j["compute_bound_seconds"] = jsonNumber(r.computeBoundSeconds);
  j["matrix_seconds"] = jsonNumber(r.matrixSeconds);
  return j;
}

Json rematPlanJson(const ReportRematPlan &p, bool named) {
  Json j;
  if (named)
    j["policy"] = p.label;
  else
    j["budget"] = p.budget;
  j["peak"] = p.peak;
  j["recompute_flops"] = p.recomputeFlops;
  j["recompute_seconds"] = jsonNumber(p.recomputeSeconds);
  j["step_seconds"] = jsonNumber(p.stepSeconds);
  return j;
}

Json rematJson(const Report &r) {
  Json j;
  j["policy"] = r.remat.policy;
  j["recomputed_ops"] = r.remat.recomputedOps;
  j["kept"] = r.remat.kept;
  j["kept_bytes"] = r.remat.keptBytes;
  j["recompute_seconds"] = jsonNumber(r.remat.recomputeSeconds);
  if (r.rematSweep && r.rematSweep->ladder) {
    const ReportRematSweep &w = *r.rematSweep;
    Json frontier = Json::array(), policies = Json::array();
    for (const ReportRematPlan &p : w.frontier)
      frontier.push_back(rematPlanJson(p, false));
    for (const ReportRematPlan &p : w.policies)
      policies.push_back(rematPlanJson(p, true));
    j["frontier"] = std::move(frontier);
    j["policies"] = std::move(policies);
    j["frontier_points"] = w.frontierPoints;
    j["candidates"] = w.candidates;
    j["solver_seconds"] = jsonNumber(w.solverSeconds);
  }
  return j;
}

Json clusterJson(const ReportCluster &c) {
  Json j;
  j["gpus"] = c.gpus;
  j["tokens"] = jsonNumber(c.tokens);
  j["mfu"] = jsonNumber(c.mfu);
  j["mfu_given"] = c.mfuGiven;
  j["flops_per_token"] = jsonNumber(c.flopsPerToken);
  j["total_flops"] = jsonNumber(c.totalFlops);
  j["six_nd_flops"] = jsonNumber(c.sixNDFlops);
  j["seconds"] = jsonNumber(c.seconds);
  j["days"] = jsonNumber(c.days);
  j["gpu_hours"] = jsonNumber(c.gpuHours);
  j["bytes_per_param"] = jsonNumber(c.bytesPerParam);
  j["max_params"] = jsonNumber(c.maxParams);
  j["max_params_per_device"] = jsonNumber(c.maxParamsPerDevice);
  return j;
}

Json dataParallelJson(const ReportDataParallel &d) {
  Json j;
  j["gpus"] = d.gpus;
  j["nodes"] = d.nodes;
  j["link"] = d.link.empty() ? Json() : Json(d.link);
  j["link_bandwidth"] = jsonNumber(d.linkBandwidth);
  j["gradient_bytes"] = d.gradientBytes;
  j["ring_bytes"] = jsonNumber(d.ringBytes);
  j["comm_seconds"] = jsonNumber(d.commSeconds);
  j["compute_seconds"] = jsonNumber(d.computeSeconds);
  j["backward_seconds"] = jsonNumber(d.backwardSeconds);
  j["exposed_seconds"] = jsonNumber(d.exposedSeconds);
  j["step_seconds"] = jsonNumber(d.stepSeconds);
  j["hidden"] = d.hidden;
  j["mfu"] = jsonNumber(d.mfu);
  j["shard_optimizer"] = d.shardOptimizer;
  j["optimizer_bytes_per_rank"] = d.optimizerBytesPerRank;
  j["peak_bytes_per_rank"] = d.peakBytesPerRank;
  return j;
}

Json layerJson(const ReportLayer &l) {
  Json j;
  j["name"] = l.name;
  j["ops"] = l.ops;
  j["flops"] = l.flops;
  j["model_flops"] = l.modelFlops;
  j["bytes"] = l.bytes;
  j["seconds"] = jsonNumber(l.seconds);
  return j;
}

Json opJson(const ReportOp &op) {
  Json j;
  j["index"] = op.index;
  j["name"] = op.name;
  j["kind"] = op.kind;
  j["layer"] = op.layer;
  j["phase"] = op.phase;
  j["location"] = op.location;
  j["dtype"] = op.dtype;
  j["units"] = op.matrixUnits ? "matrix" : "vector";
  j["model"] = op.modelFlop;
  j["flops"] = op.flops;
  j["transcendentals"] = op.transcendentals;
  j["bytes"] = op.bytes;
  j["intensity"] = jsonNumber(op.intensity);
  j["bound"] = op.flops == 0 && op.bytes == 0 ? "none" : op.computeBound ? "compute" : "memory";
  j["seconds"] = jsonNumber(op.seconds);
  return j;
}
Json kernelJson(const ReportKernel &k) {
  Json j;
  j["index"] = k.index;
  j["kind"] = k.kind;
  j["phase"] = k.phase;
  j["layer"] = k.layer;
  j["dtype"] = k.dtype;
  j["ops"] = k.ops;
  j["locations"] = k.locations;
  j["flops"] = k.flops;
  j["bytes_read"] = k.bytesRead;
  j["bytes_written"] = k.bytesWritten;
  j["intensity"] = jsonNumber(k.intensity);
  j["bound"] = k.flops == 0 && k.bytesRead + k.bytesWritten == 0 ? "none"
               : k.computeBound                                  ? "compute"
                                                                 : "memory";
  j["seconds"] = jsonNumber(k.seconds);
  Json stops = Json::array();
  for (const ReportFusionStop &s : k.stops)
    stops.push_back(Json{{"to", s.to}, {"reason", s.reason}, {"detail", s.detail}});
  j["fusion_stops"] = std::move(stops);
  return j;
}

Json kernelsJson(const Report &r) {
  Json j;
  j["fusion"] = r.fusionSetting;
  j["count"] = int64_t(r.kernels.size());
  j["seconds"] = jsonNumber(r.kernelSeconds);
  Json stops = Json::object();
  for (const auto &[reason, count] : r.fusionStops)
    stops[reason] = count;
  j["fusion_stops"] = std::move(stops);
  Json list = Json::array();
  for (const ReportKernel &k : r.kernels)
    list.push_back(kernelJson(k));
  j["list"] = std::move(list);
  return j;
}
} // namespace

void printReportJson(const Report &r, llvm::raw_ostream &os) {
  Json j;
  j["schema_version"] = 1;
  j["model"] = r.model;
  j["device"] = deviceJson(r);
  j["precision"] = r.precision;
  j["optimizer"] = r.optimizer;
  j["optimizer_slots"] = r.optimizerSlots;
  j["fusion"] = fusionJson(r);
  j["tokens_per_step"] = r.tokensPerStep;
  j["tokens_known"] = r.tokensKnown;
  Json dims = Json::object();
  for (const auto &[name, size] : r.dims)
    dims[name] = size;
  j["dims"] = std::move(dims);
  j["params"] = r.params;
  j["flops"] = flopsJson(r);
  j["model_flops"] = modelFlopsJson(r);
  j["napkin"] = napkinJson(r);
  j["memory"] = memoryJson(r);
  j["predicted"] = predictedJson(r);
  j["roofline"] = rooflineJson(r);
  j["remat"] = rematJson(r);
  if (r.cluster)
    j["cluster"] = clusterJson(*r.cluster);
  if (r.dataParallel)
    j["data_parallel"] = dataParallelJson(*r.dataParallel);
  Json layers = Json::array();
  for (const ReportLayer &l : r.layers)
    layers.push_back(layerJson(l));
  j["layers"] = std::move(layers);
  Json ops = Json::array();
  for (const ReportOp &op : r.ops)
    ops.push_back(opJson(op));
  j["ops"] = std::move(ops);
  j["kernels"] = kernelsJson(r);
  os << einrt::dumpJson(j, 2) << "\n";
}

} // namespace einc
