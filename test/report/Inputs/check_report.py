#!/usr/bin/env python3
"""Checks on `einc report --format json` output (standard library only).

Usage: check_report.py CHECK REPORT.json [ARGS...]

Every expected value is either the lecture's number (CS336 lecture 2, see
docs/report.md) or computed here from the model's dims as the report prints
them; nothing is copied from a previous run. Prints one line per check with
the report's own numbers and exits 1 on the first failure.
"""
import json
import math
import sys


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def close(actual, expected, rel, what):
    if expected == 0:
        ok = actual == 0
    else:
        ok = abs(actual - expected) <= rel * abs(expected)
    if not ok:
        fail("%s: got %r, expected %r (within %g%%)" % (what, actual, expected, rel * 100))
    print("ok %s: %r (expected %r, within %g%%)" % (what, actual, expected, rel * 100))


def equal(actual, expected, what):
    if actual != expected:
        fail("%s: got %r, expected %r" % (what, actual, expected))
    print("ok %s: %r" % (what, actual))


def load(path):
    with open(path) as f:
        return json.load(f)


def check_bytes(r):
    # A (32, 1024, 4096) bf16 param: elements x 2 bytes.
    d = r["dims"]
    equal(r["memory"]["params"], d["a"] * d["s"] * d["h"] * 2, "param bytes of a bf16 (32,1024,4096)")
    equal(r["memory"]["params"], 268435456, "the lecture's figure")


def check_matmul(r):
    d = r["dims"]
    ops = [o for o in r["ops"] if o["phase"] == "forward" and o["kind"] == "contraction"]
    equal(len(ops), 1, "forward contractions")
    op = ops[0]
    equal(op["flops"], 2 * d["m"] * d["k"] * d["n"], "FLOPs of (m x k) @ (k x n) = 2mkn")
    equal(op["flops"], 68719476736, "the lecture's figure")
    equal(op["dtype"], "bf16", "dtype")
    equal(op["bound"], "compute", "bound")
    close(op["roofline_seconds"], op["flops"] / r["device"]["matrix_flops_per_second"], 1e-9,
          "seconds = FLOPs / bf16 matrix peak")
    close(op["roofline_seconds"] * 1e6, 69.0, 0.01, "microseconds at H100 bf16 peak (lecture: about 69)")


def check_ratio(r, expected):
    m = r["model_flops"]
    L = r["dims"]["layers"]
    close(m["backward"] / m["forward"], (2 * L - 1) / L, 1e-12, "backward/forward = (2L-1)/L, L=%d" % L)
    close(m["backward"] / m["forward"], float(expected), 1e-3, "the lecture's figure")


def check_six_nd(r, expected):
    m = r["model_flops"]
    L = r["dims"]["layers"]
    ratio = m["total"] / (r["params"] * r["tokens_per_step"])
    close(ratio, 2 * (3 * L - 1) / L, 1e-12, "model FLOPs / (N D) = 2(3L-1)/L, L=%d" % L)
    close(ratio, float(expected), 1e-3, "the lecture's figure")


def check_state(r, slots):
    mem = r["memory"]
    equal(r["precision"], "fp32", "precision")
    equal(mem["params"], r["params"] * 4, "fp32 param bytes = 4 N")
    equal(mem["optimizer"], int(slots) * mem["params"],
          "%s state = %s x fp32 param bytes" % (r["optimizer"], slots))


def check_frozen(r, plain_path, frozen_elements, slots):
    """r froze params of `frozen_elements` f32 elements that the run at
    plain_path trains: the params' bytes are the same, the gradients drop by
    4 bytes an element and the optimizer state by `slots` times that."""
    plain = load(plain_path)["memory"]
    mem = r["memory"]
    frozen = int(frozen_elements) * 4
    equal(mem["params"], plain["params"], "param bytes (frozen ones kept)")
    equal(plain["grads"] - mem["grads"], frozen, "gradient bytes drop by the frozen params' bytes")
    equal(plain["optimizer"] - mem["optimizer"], int(slots) * frozen,
          "optimizer state drops by %s x the frozen params' bytes" % slots)


def check_sixteen(r):
    mem = r["memory"]
    n = r["params"]
    equal(n, r["dims"]["r"] * r["dims"]["c"], "params")
    # `mixed` is read as bf16-mixed. The step's own buffers: the params are
    # the fp32 master copy (their bf16 working copies are forward values).
    equal(r["precision"], "bf16-mixed", "precision")
    equal(r["optimizer"], "adamw", "optimizer")
    equal(mem["params"], 4 * n, "params: the fp32 master = 4 N")
    equal(mem["master_weights"], 4 * n, "fp32 master weights = 4 N")
    equal(mem["grads"], 4 * n, "fp32 grads of the master = 4 N")
    equal(mem["optimizer"], 8 * n, "fp32 m and v = 8 N")
    persistent = mem["params"] + mem["grads"] + mem["optimizer"]
    equal(persistent / n, 16.0, "bytes per param (params + grads + state)")
    close(mem["bytes_per_param"], 16.0, 0, "memory.bytes_per_param")
    equal(persistent, 112 * 10**9, "7B params -> 112 GB")
    equal(mem["fits"], False, "fits in one 80 GB H100")


def check_cluster(r, unit, expected):
    c = r["cluster"]
    n = r["params"]
    # Counted FLOPs per token (model FLOPs) should be ~6N for these models.
    close(c["flops_per_token"] / (6 * n), 1.0, 0.03, "counted training FLOPs per token / 6N")
    value = c["days"] if unit == "days" else c["gpu_hours"] / c["gpus"]
    # The formula, recomputed from the report's own figures.
    seconds = c["flops_per_token"] * c["tokens"] / (c["gpus"] * r["device"]["matrix_flops_per_second"] * c["mfu"])
    close(c["seconds"], seconds, 1e-9, "seconds = FLOPs/token x D / (G x peak x MFU)")
    close(c["days"], seconds / 86400, 1e-9, "days")
    close(c["gpu_hours"], seconds / 3600 * c["gpus"], 1e-9, "GPU-hours")
    close(value, float(expected), 0.05, "%s (the lecture's figure)" % unit)


def check_schedule(r, steps):
    # The run the schedule fixes: D = steps x tokens per step x accumulate x G,
    # so its time is steps x accumulate x the (data-parallel) step time.
    c = r["cluster"]
    steps = int(steps)
    if c["schedule_steps"] != steps:
        fail("schedule steps %d, expected %d" % (c["schedule_steps"], steps))
    tokens = steps * r["tokens_per_step"] * c["accumulate"] * c["gpus"]
    close(c["tokens"], tokens, 0, "D = steps x tokens/step x accumulate x G")
    step = r["data_parallel"]["step_seconds"] if "data_parallel" in r else r["predicted"]["step_seconds"]
    close(c["seconds"], steps * c["accumulate"] * step, 1e-9, "seconds = steps x accumulate x step time")
    close(c["days"], c["seconds"] / 86400, 1e-12, "days")


def check_max_params(r, expected):
    c = r["cluster"]
    close(c["max_params"], c["gpus"] * r["device"]["memory_bytes"] / c["bytes_per_param"], 1e-12,
          "max params = G x memory / bytes per param")
    close(c["max_params"], float(expected), 1e-9, "largest model on the cluster")


def check_activations(r):
    # docs/analyses.md: a forward value is saved when a backward op reads it.
    # ReLU = max(h, 0) against a constant reads its output, which the next
    # layer's dW reads too: one B x D per layer, L in all -- the lecture's
    # count. The input x is read by layer 0's dW: a saved input.
    d = r["dims"]
    L, B, D = d["layers"], d["batch"], d["d"]
    copy = B * D * 4
    mem = r["memory"]
    equal(mem["activations"], L * copy, "activations = L B D x 4 bytes, L=%d" % L)
    equal(mem["saved_inputs"], copy, "saved inputs = the input x (B D x 4 bytes)")
    print("   = %d copies of B x D plus the input" % (mem["activations"] // copy))


def check_gpt(r):
    d = r["dims"]
    V, C, D, L, F = d["vocab"], d["ctx"], d["d"], d["layers"], d["ff"]
    per_layer = 2 * D + D * 3 * D + D * D + 2 * D + D * F + F * D
    n = V * D + C * D + L * per_layer + 2 * D
    equal(r["params"], n, "param count from the dims")
    fwd = r["model_flops"]["forward_per_token"]
    palm_fwd = 2 * n + 4 * L * C * D
    close(fwd, palm_fwd, 0.05, "forward FLOPs/token vs 2N + 4 L ctx d (d=%d, layers=%d, ctx=%d)" % (D, L, C))
    hw_fwd = r["flops"]["forward"] / r["tokens_per_step"]
    close(hw_fwd, palm_fwd, 0.05, "all forward FLOPs/token (elementwise too) vs 2N + 4 L ctx d")
    close(r["napkin"]["palm_per_token"], 6 * n + 12 * L * C * D, 1e-12, "napkin.palm_per_token")


def check_llama(r):
    # examples/llama.ein: untied head, no wpe, RMSNorm gains only, grouped k
    # and v (kv_heads of hd each), SwiGLU (three d x ff matrices).
    d = r["dims"]
    V, C, D, L, F = d["vocab"], d["ctx"], d["d"], d["layers"], d["ff"]
    H, KV, B, half = d["heads"], d["kv_heads"], d["batch"], d["half"]
    hd = D // H
    matrices = D * H * hd + 2 * D * KV * hd + H * hd * D + 3 * D * F  # per layer
    n = V * D + L * (matrices + 2 * D) + D + D * V
    equal(r["params"], n, "param count from the dims")
    # Every matrix param is read by one contraction per token (2 FLOPs per
    # multiply-add) except wte, which is gathered; attention's two
    # contractions (q.k and att.v) are 2 ctx hd per head and token each,
    # 4 ctx d per layer, the causal half counted as a dense product does.
    # RoPE's angle, cos and sin tables depend only on dims: ein-fold-constants
    # computes them at compile time, so no step counts them.
    n_matmul = L * matrices + D * V
    tokens = r["tokens_per_step"]
    equal(tokens, B * C, "tokens per step = batch ctx")
    m = r["model_flops"]
    forward = tokens * (2 * n_matmul + 4 * L * C * D)
    equal(m["forward"], forward, "forward FLOPs = D (2 N_matmul + 4 L ctx d)")
    # The backward: twice each contraction (the gradients of both operands).
    equal(m["backward"], 2 * forward, "backward FLOPs = 2 forward")
    close(m["per_token"], 3 * forward / tokens, 1e-12, "FLOPs/token = 6 N_matmul + 12 L ctx d")
    # The report's napkin figure counts every param, the gathered wte too
    # (tied in gpt, read by the logits there): 6 V d above the count here.
    close(r["napkin"]["palm_per_token"], 6 * n + 12 * L * C * D, 1e-12,
          "napkin.palm_per_token = 6N + 12 L ctx d (d=%d, layers=%d, ctx=%d)" % (D, L, C))


def main():
    check, path = sys.argv[1], sys.argv[2]
    args = sys.argv[3:]
    r = load(path)
    {
        "bytes": check_bytes,
        "matmul": check_matmul,
        "ratio": check_ratio,
        "six-nd": check_six_nd,
        "state": check_state,
        "frozen": check_frozen,
        "sixteen": check_sixteen,
        "cluster": check_cluster,
        "max-params": check_max_params,
        "schedule": check_schedule,
        "activations": check_activations,
        "gpt": check_gpt,
        "llama": check_llama,
    }[check](r, *args)
    print("PASS " + check)


if __name__ == "__main__":
    main()
