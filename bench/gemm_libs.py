#!/usr/bin/python3
"""GEMM libraries on this CPU: OpenBLAS, oneDNN, BLIS and einc's measured table.

    python3 bench/gemm_libs.py [--threads 1,2] [--steps 5] [--models mlp_lm,gpt]
                               [--seconds 10] [--einc PATH] [--json FILE]

For each model it runs, in one invocation:

  1. `einc calibrate --gemm MODEL` into a temporary cache folder: every GEMM
     call shape of the model's step timed on each library, one thread (the
     per-shape table, printed as einc prints it);
  2. `einc run MODEL --step --steps N --profile --threads T` with
     EINC_GEMM=openblas, onednn, onednn-sgemm, blis, and with the table just measured: the
     matmul steps' time per step (the profile's `matmul` and
     `matmul+epilogue` groups), their GFLOP/s (the report's contraction
     FLOPs / that time), and the step;
  3. the machine's ceilings beside them: `einc calibrate` (sgemm 2048^3 and
     the FMA loop on every thread, STREAM).

Not a test: a measurement (bench/README.md, "GEMM libraries").
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = {"mlp_lm": "examples/mlp_lm.ein", "gpt": "examples/gpt.ein"}


def find_einc(given):
    for path in [given, os.path.join(ROOT, "build-bench/bin/einc"), os.path.join(ROOT, "build/bin/einc")]:
        if path and os.path.exists(path):
            return path
    sys.exit("gemm_libs: no einc (build it, or pass --einc PATH)")


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit("gemm_libs: %s failed:\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return r.stdout


def profile(einc, model, threads, steps, env):
    out = run([einc, "run", model, "--step", "--steps", str(steps), "--profile",
               "--threads", str(threads)], env)
    total = float(re.search(r"profile of @train_step: \d+ steps, ([0-9.]+) ms per run", out).group(1))
    matmul = 0.0
    for m in re.finditer(r"^\s+(matmul|matmul\+epilogue)\s+\d+\s+([0-9.]+)", out, re.M):
        matmul += float(m.group(2))
    return total, matmul


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--models", default="mlp_lm,gpt")
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--einc")
    p.add_argument("--json")
    a = p.parse_args()
    einc = find_einc(a.einc)
    threads = [int(t) for t in a.threads.split(",")]
    cache = tempfile.mkdtemp(prefix="einc-gemm-bench-")
    env = dict(os.environ, EINC_CACHE_DIR=cache)
    env.pop("EINC_GEMM", None)
    results = {"threads": threads, "models": {}}

    prof = os.path.join(cache, "devices.json")
    ceilings = run([einc, "calibrate", "-o", prof, "--seconds", "3"], env)
    print("## The machine\n")
    for line in ceilings.splitlines():
        if re.match(r"(cpu|matmul f32|vector f32|bandwidth):", line):
            print("    " + line)
    results["ceilings"] = ceilings

    for name in a.models.split(","):
        model = os.path.join(ROOT, MODELS[name])
        print("\n## %s\n" % name)
        table = run([einc, "calibrate", "--gemm", model, "--seconds", str(a.seconds)], env)
        print("\n".join("    " + l for l in table.splitlines()))
        report = json.loads(run([einc, "report", model, "--format", "json", "--device", "cpu",
                                 "--device-file", prof], env))
        flops = report["flops"]["by_kind"].get("contraction", 0)
        rows = []
        for t in threads:
            for lib in ["openblas", "onednn", "onednn-sgemm", "blis", "table"]:
                e = dict(env)
                if lib != "table":
                    e["EINC_GEMM"] = lib
                total, matmul = profile(einc, model, t, a.steps, e)
                rows.append({"threads": t, "library": lib, "step_ms": total, "matmul_ms": matmul,
                             "matmul_gflops": flops / (matmul * 1e-3) / 1e9 if matmul else 0})
        print("\n| threads | GEMMs on | matmul ms/step | GFLOP/s | vs openblas | step ms |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            base = next(x for x in rows if x["threads"] == r["threads"] and x["library"] == "openblas")
            print("| %d | %s | %.1f | %.1f | %.2fx | %.1f |" % (
                r["threads"], r["library"], r["matmul_ms"], r["matmul_gflops"],
                base["matmul_ms"] / r["matmul_ms"] if r["matmul_ms"] else 0, r["step_ms"]))
        results["models"][name] = {"table": table, "contraction_flops": flops, "rows": rows}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
