"""The report under precision policies, from the IR the policy built.

check_precision.py FP32.json BF16MIXED.json BF16.json: the reports of one
model (mlp_lm) under fp32, bf16-mixed and bf16; every figure compared here
is what the report counted in the step's IR, none is typed in.
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def say(ok, what):
    print(("ok " if ok else "FAIL: ") + what)
    return ok


def floats(by_dtype):
    return {k: v for k, v in by_dtype.items() if k in ("f32", "bf16", "f16")}


fp32, mixed, bf16 = (load(p) for p in sys.argv[1:4])
m32, mmx, mbf = fp32["memory"], mixed["memory"], bf16["memory"]
dims = fp32["dims"]

say(fp32["precision"] == "fp32" and mixed["precision"] == "bf16-mixed" and bf16["precision"] == "bf16",
    "policies fp32, bf16-mixed, bf16")
# The float activations saved for the backward are bf16 but for the f32
# statistics (a softmax's log of its sum: one value per row) and as many
# elements as under fp32: the bytes halve, up to the statistics' 2 extra bytes.
f32acts, mixacts = floats(m32["activations_by_dtype"]), floats(mmx["activations_by_dtype"])
rows = dims["batch"]
say(list(f32acts) == ["f32"] and sorted(mixacts) == ["bf16", "f32"], "fp32 activations f32, bf16-mixed bf16 and f32")
say(mixacts["f32"] == 4 * rows, "bf16-mixed: f32 statistics, one per row: %d bytes" % mixacts["f32"])
say(2 * (mixacts["bf16"] + mixacts["f32"] // 2) == f32acts["f32"],
    "float activations halve: %d -> %d" % (f32acts["f32"], mixacts["bf16"] + mixacts["f32"]))
# The working copies the backward reads: w1 and w2 (the contractions' weights) at 2 bytes.
copies = 2 * (dims["window"] * dims["embed"] * dims["hidden"] + dims["hidden"] * dims["vocab"])
say(mmx["param_copies"] == copies and m32["param_copies"] == 0,
    "working copies of w1, w2 read by the backward: %d bytes" % mmx["param_copies"])
# The fp32 master copy is the params' own buffers; grads and AdamW state fp32: 16 bytes/param.
say(mmx["master_weights"] == mmx["params"] == 4 * mixed["params"], "master copy = params = 4 N")
say(mmx["grads"] == 4 * mixed["params"] and mmx["optimizer"] == 8 * mixed["params"], "grads 4 N, m and v 8 N")
say(m32["bytes_per_param"] == 16 and mmx["bytes_per_param"] == 16, "16 bytes/param under fp32 and bf16-mixed")
# bf16: params and grads bf16, no master, AdamW state f32: 12 bytes/param.
say(mbf["params"] == 2 * bf16["params"] and mbf["grads"] == 2 * bf16["params"] and mbf["master_weights"] == 0,
    "bf16: params and grads 2 N, no master copy")
say(mbf["optimizer"] == 8 * bf16["params"] and mbf["bytes_per_param"] == 12, "bf16: f32 state, 12 bytes/param")
# Roofline: every model FLOP is a bf16 contraction under bf16-mixed, priced at the device's bf16 peak.
by = {d["dtype"]: d for d in mixed["roofline"]["by_dtype"]}
say(by["bf16"]["matrix_flops"] == mixed["model_flops"]["total"] and mixed["device"]["compute_dtype"] == "bf16",
    "bf16-mixed: all model FLOPs on bf16 matrix units")
say(by["bf16"]["matrix_flops_per_second"] == mixed["device"]["matrix_flops_per_second"] >
    fp32["device"]["matrix_flops_per_second"], "at the bf16 peak, above the f32 one")
say(list(d["dtype"] for d in fp32["roofline"]["by_dtype"]) == ["f32"], "fp32: one dtype")
# The peak is the planned arena + resident block, under every policy.
for r in (fp32, mixed, bf16):
    m = r["memory"]
    say(m["peak"] == m["arena"] + m["resident"], "%s: peak = arena + resident" % r["precision"])
