# Checks the kernel table of a JSON report (kernels.test): it partitions the
# step's ops and its ledger — Σ kernels' FLOPs and bytes = the report's
# totals, every non-view op in exactly one kernel, in order — and every
# fusion stop names an earlier kernel and a later one. Prints the counts by
# kind and by reason for FileCheck.
import json
import sys

r = json.load(open(sys.argv[1]))
k = r["kernels"]
kernels = k["list"]
problems = []
if k["count"] != len(kernels):
    problems.append("count %d != %d listed" % (k["count"], len(kernels)))
if [x["index"] for x in kernels] != list(range(len(kernels))):
    problems.append("indices not 0..n-1")
flops = sum(x["flops"] for x in kernels)
if flops != r["flops"]["total"]:
    problems.append("kernel FLOPs %d != report FLOPs %d" % (flops, r["flops"]["total"]))
# No step runs a constant (resident), a reshape or a slice (views); their bytes in
# the op ledger (a constant's write) are outside every kernel.
moved = sum(x["bytes_read"] + x["bytes_written"] for x in kernels)
ops_bytes = sum(op["bytes"] for op in r["ops"])
VIEWS = ("ein.constant", "ein.reshape", "ein.slice")
view_bytes = sum(op["bytes"] for op in r["ops"] if op["name"] in VIEWS)
if moved + view_bytes != ops_bytes:
    problems.append("kernel bytes %d + views' %d != ops' bytes %d" % (moved, view_bytes, ops_bytes))
# Every op with work is in one kernel; the ops of the kernels, in order, are
# the report's ops without views (reshape, constant, broadcast read in place,
# iota computed by its readers).
names = [n for x in kernels for n in x["ops"]]
MAYBE_VIEWS = ("ein.broadcast", "ein.iota")
work = [op["name"] for op in r["ops"] if op["name"] not in VIEWS + MAYBE_VIEWS]
if [n for n in names if n not in MAYBE_VIEWS] != work:
    problems.append("the kernels' ops are not the report's ops in order")
stops = {}
for x in kernels:
    for s in x["fusion_stops"]:
        if not x["index"] < s["to"] < len(kernels):
            problems.append("kernel %d stops before %d" % (x["index"], s["to"]))
        stops[s["reason"]] = stops.get(s["reason"], 0) + 1
if stops != k["fusion_stops"]:
    problems.append("stop counts %r != summary %r" % (stops, k["fusion_stops"]))
seconds = sum(x["seconds"] for x in kernels)
if abs(seconds - k["seconds"]) > 1e-9 * max(1.0, seconds):
    problems.append("Σ kernel seconds %g != %g" % (seconds, k["seconds"]))
# One number (issue 30): the headline step time is the kernels' sum, and so is
# every sum of op times (each op carries its share of its kernel's time); each
# kernel is its roofline time plus the device's kernel latency.
p = r["predicted"]
if abs(p["step_seconds"] - k["seconds"]) > 1e-9 * max(1e-9, seconds):
    problems.append("step time %g != Σ kernel seconds %g" % (p["step_seconds"], k["seconds"]))
op_seconds = sum(op["seconds"] for op in r["ops"])
if abs(op_seconds - k["seconds"]) > 1e-9 * max(1e-9, seconds):
    problems.append("Σ op seconds %g != Σ kernel seconds %g" % (op_seconds, k["seconds"]))
layer_seconds = sum(l["seconds"] for l in r["layers"])
if abs(layer_seconds - k["seconds"]) > 1e-9 * max(1e-9, seconds):
    problems.append("Σ layer seconds %g != Σ kernel seconds %g" % (layer_seconds, k["seconds"]))
latency = p["kernel_latency_seconds"]
if abs(p["launch_seconds"] - latency * len(kernels)) > 1e-15 * max(1, len(kernels)):
    problems.append("launch seconds %g != %d kernels x %g" % (p["launch_seconds"], len(kernels), latency))
if any(x["seconds"] < latency for x in kernels):
    problems.append("a kernel faster than the kernel latency")
print("kernel latency %.3g s" % latency)
kinds = {}
for x in kernels:
    kinds[x["kind"]] = kinds.get(x["kind"], 0) + 1
print("fusion %s: %s" % (k["fusion"], " ".join("%s=%d" % kv for kv in sorted(kinds.items()))))
print("stops: %s" % " ".join("%s=%d" % kv for kv in sorted(stops.items())))
print("PASS kernels" if not problems else "FAIL kernels: " + "; ".join(problems))
