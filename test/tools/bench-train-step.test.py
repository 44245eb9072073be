"""Checks bench/step_table.py on fixed inputs, then the --json of a
train_step.py run: a row per precision x thread count, and einc's saved
activations equal to its report's memory.activations / param_copies.

    python3 bench-train-step.test.py OUT.json REPORT_BF16.json
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import step_table  # noqa: E402

# /proc/cpuinfo: the first processor's name and flags; absent flags are "no".
name, flags = step_table.cpu_info(
    "processor\t: 0\nmodel name\t: Test CPU 9000\nflags\t\t: fpu avx2 avx512f amx_bf16\n"
    "processor\t: 1\nmodel name\t: Other\nflags\t\t: avx512_fp16\n")
assert name == "Test CPU 9000", name
assert flags == {"avx2": True, "avx512f": True, "avx512_bf16": False, "avx512_fp16": False,
                 "amx_bf16": True}, flags
assert step_table.cpu_line(name, flags) == ("CPU: Test CPU 9000; avx2 yes, avx512f yes, "
                                             "avx512_bf16 no, avx512_fp16 no, amx_bf16 yes")

# The banner: '; ' inside nested parentheses does not split.
banner = ("einc train: examples/gpt.ein  (cpu backend, compiled in 1.04 s; 28 kernels compiled; "
          "1 thread; bf16 GEMMs: onednn amx_bf16; f32 GEMMs: the measured table (15 shapes: "
          "13 onednn, 2 openblas; others openblas))")
assert step_table.gemm_parts(banner) == [
    "bf16 GEMMs: onednn amx_bf16",
    "f32 GEMMs: the measured table (15 shapes: 13 onednn, 2 openblas; others openblas)"], \
    step_table.gemm_parts(banner)
assert step_table.gemm_parts("no parentheses") == []

# The table: ms (peer / einc), n/a with its reason under the table.
rows = [{"model": "gpt", "precision": "bf16-mixed", "threads": 2, "einc_s": 0.2,
         "tokens_per_step": 2048, "predicted_s": 0.1, "einc_peak_mib": 600,
         "peers": {"eager": {"median_s": 0.3, "peak_mib": 1000},
                   "jax": {"na": "no kernel"}}}]
assert step_table.step_table(rows, ["eager", "jax"]) == [
    "| model | precision | threads | einc ms | eager | JAX |", "|---|---|---|---|---|---|",
    "| gpt | bf16-mixed | 2 | 200.00 | 300.00 (1.50) | n/a |"], step_table.step_table(rows, ["eager", "jax"])
assert step_table.na_notes(rows, ["eager", "jax"]) == ["n/a: JAX at bf16-mixed: no kernel"]
assert step_table.detail_table(rows, ["eager", "jax"])[2] == \
    "| gpt | bf16-mixed | 2 | 10240 | 100.00 | 600 | 1000 | n/a |"
saved = {("gpt", "fp32"): {"einc": {"activations": 3 << 20, "param_copies": 0},
                           "eager": {"activations": 2 << 20, "param_copies": 0}},
         ("gpt", "fp16-mixed"): {"einc": {"activations": 1 << 20, "param_copies": 1 << 19},
                                 "eager": None}}
assert step_table.saved_table(saved)[2:] == [
    "| gpt | fp32 | 3.0 | 2.0 | 1.50 | 0.0 | 0.0 |",
    "| gpt | fp16-mixed | 1.0 | - | - | 0.5 | - |"], step_table.saved_table(saved)
print("step_table: cpu_info, banner, tables ok")

out = json.load(open(sys.argv[1]))
report = json.load(open(sys.argv[2]))
got = [(r["model"], r["precision"], r["threads"]) for r in out["rows"]]
assert got == [("mlp_lm", p, t) for p in ("fp32", "bf16-mixed") for t in (1, 2)], got
for r in out["rows"]:
    assert r["einc_s"] > 0 and len(r["einc_times_s"]) == 2 and r["peers"] == {}, r
    assert f"{r['threads']} thread" in r["einc_banner"], r["einc_banner"]
bf16 = next(s for s in out["saved"] if s["precision"] == "bf16-mixed")
assert bf16["einc"] == {"activations": report["memory"]["activations"],
                        "param_copies": report["memory"]["param_copies"]}, bf16
assert bf16["eager"] is None, bf16
print(f"run: {len(out['rows'])} rows, einc's saved activations are the report's")
