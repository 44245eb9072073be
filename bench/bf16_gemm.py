#!/usr/bin/env python3
"""One GEMM in f32 and in bf16 on the CPU backend, per bf16 GEMM path.

For each size S (or MxKxN): a model whose forward is one contraction of an
M x K input by a K x N param (`einsum(x, w, "m k, k n -> m n")`), declared
f32 and declared bf16, run with `einc run --forward --profile` (the first
run and 5 timed runs); the figure is the profile's `matmul` group, ms per
run. The bf16 model runs once per path in --paths (EINC_CPU_BF16: emulate
widens both operands to f32 and runs cblas_sgemm; avx512bf16 runs the
VDPBF16PS kernel and needs a CPU with AVX-512 BF16; onednn runs oneDNN's
matmul primitive and needs its bf16 brgemm kernel (AVX512-BF16 or AMX);
model is the VDPBF16PS kernel's scalar model, slow, only to see it run).
The lowest of --rounds alternating runs is printed, as a Markdown table. A
measurement, not a test.

  /usr/bin/python3 bench/bf16_gemm.py --sizes 256,512,1024 --threads 1
  /usr/bin/python3 bench/bf16_gemm.py --sizes 2048x256x1024 --paths emulate,avx512bf16,onednn
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODEL = """dim m = {m}
dim k = {k}
dim n = {n}
input x : {t}[m, k]
param w : {t}[k, n] ~ normal(std=1)
y = einsum(x, w, "m k, k n -> m n")
output y
minimize reduce(y, "m n -> ", mean)
"""


def matmul_ms(einc, model, threads, path):
    env = dict(os.environ)
    if path:
        env["EINC_CPU_BF16"] = path
    out = subprocess.run([einc, "run", model, "--forward", "--profile", "--threads",
                          str(threads)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"einc run {model} failed:\n{out.stdout}{out.stderr}")
    m = re.search(r"^  matmul\s+\d+\s+([0-9.]+)", out.stdout, re.M)
    if not m:
        sys.exit(f"no matmul line in:\n{out.stdout}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--einc", default=os.path.join(ROOT, "build/bin/einc"))
    ap.add_argument("--sizes", default="256,512,1024")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--paths", default="emulate")
    args = ap.parse_args()
    sizes = [tuple(int(d) for d in s.split("x")) * (3 if "x" not in s else 1)
             for s in args.sizes.split(",")]
    paths = args.paths.split(",")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for s in sizes:
            files = {}
            for t in ["f32", "bf16"]:
                files[t] = os.path.join(tmp, f"gemm-{'x'.join(map(str, s))}-{t}.ein")
                with open(files[t], "w") as f:
                    f.write(MODEL.format(m=s[0], k=s[1], n=s[2], t=t))
            best = {}
            for _ in range(args.rounds):
                for key, model, path in [("f32", files["f32"], None)] + \
                        [(p, files["bf16"], p) for p in paths]:
                    ms = matmul_ms(args.einc, model, args.threads, path)
                    best[key] = min(best.get(key, ms), ms)
            gflops = 2.0 * s[0] * s[1] * s[2] / 1e6  # MFLOP, so MFLOP / ms = GFLOP/s
            rows.append((s, best, gflops))
    head = "| size (MxKxN) | f32 ms (GFLOP/s) | " + " | ".join(f"bf16 {p} ms (GFLOP/s)" for p in paths)
    print(head + " |")
    print("|---" * (2 + len(paths)) + "|")
    for s, best, gflops in rows:
        rate = lambda k: gflops / best[k]
        cells = [f"{best[k]:.2f} ({rate(k):.{0 if rate(k) >= 10 else 2}f})"
                 for k in ["f32"] + paths]
        size = str(s[0]) if s[0] == s[1] == s[2] else "x".join(map(str, s))
        print(f"| {size} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
