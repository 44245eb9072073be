#!/usr/bin/env python3
"""Remat policies measured: the report's prediction beside a training run.

For each policy (none, selective, sqrt, full and budgets), on one model:

  report   `einc report MODEL --device cpu --format json` (the `cpu`
           profile `einc calibrate` measures, written under a temporary
           XDG_CONFIG_HOME that every child of this script sees, so that
           `einc train` prices `budget:` plans on it too; ~/.config is left
           alone): planned peak, arena, recompute FLOPs, predicted step time;
  train    `einc train MODEL --data train.bin --steps W+S --log-every 1` in a
           child process: the median step time of the S steps after W warm-up
           steps (tokens / tokens_per_second of each log line) and the peak
           resident memory of the process (ru_maxrss, os.wait4: the front
           end, the JIT and every buffer);
  solver   `solver_ms` of the budget policies (ein-remat's record, `einc emit
           --stage=fused`), and for --solver-layers L the same on a gpt of L
           layers (the issue's < 2 s).

Prints a Markdown table; --json FILE keeps every number. It is a
measurement, not a test: nothing here runs in ctest.

  /usr/bin/python3 bench/remat.py --layers 12 --threads 2
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def einc_path(args):
    for p in [args.einc, os.path.join(ROOT, "build-bench/bin/einc"),
              os.path.join(ROOT, "build/bin/einc")]:
        if p and os.path.exists(p):
            return p
    sys.exit("no einc: build it or pass --einc")


ENV = dict(os.environ)


def run(cmd, out_path=None, env=None):
    """Runs cmd; returns (rc, stdout text or "", peak MiB)."""
    env = env or ENV
    out = open(out_path, "w") if out_path else subprocess.PIPE
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                            text=True)
    text = ""
    if not out_path:
        text = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if out_path:
        out.close()
    return os.waitstatus_to_exitcode(status), text, usage.ru_maxrss / 1024.0


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def mib(b):
    return b / (1 << 20)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--einc")
    ap.add_argument("--model", default="examples/gpt.ein")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--set", action="append", default=[], help="more NAME=VALUE overrides")
    ap.add_argument("--policies", default="none,selective,sqrt,full,budget:60,budget:75",
                    help="budget:P is P%% of the way from the least peak to none's")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--solver-layers", type=int, default=48)
    ap.add_argument("--json")
    args = ap.parse_args()
    einc = einc_path(args)
    work = tempfile.mkdtemp(prefix="einc-remat-bench-")
    ENV["XDG_CONFIG_HOME"] = os.path.join(work, "config")
    env = dict(ENV, OMP_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS=str(args.threads))
    sets = ["--set", f"layers={args.layers}"] + sum((["--set", s] for s in args.set), [])

    rc, text, _ = run([einc, "calibrate"])
    if rc != 0:
        sys.exit("einc calibrate failed:\n" + text)
    data_dir = os.path.join(work, "data")
    rc, text, _ = run([einc, "data", "examples/data/kjv.txt", "--out", data_dir])
    if rc != 0:
        sys.exit("einc data failed:\n" + text)
    data = os.path.join(data_dir, "train.bin")

    def report(extra):
        rc, text, _ = run([einc, "report", args.model, "--device", "cpu", "--format", "json"] +
                          sets + extra)
        if rc != 0:
            sys.exit("einc report failed:\n" + text)
        return json.loads(text)

    sweep = report(["--remat-sweep"])
    least = min(p["peak"] for p in sweep["remat"]["frontier"])
    none_peak = sweep["memory"]["peak"]
    rows = []
    for policy in args.policies.split(","):
        setting = policy
        if policy.startswith("budget:"):
            share = float(policy.split(":")[1]) / 100
            setting = "budget:%d" % int(least + (none_peak - least) * share)
        r = report(["--set", f"remat={setting}"])
        log = os.path.join(work, f"train-{len(rows)}.jsonl")
        out = os.path.join(work, f"train-{len(rows)}.out")
        total = args.warmup + args.steps
        rc, _, rss = run([einc, "train", args.model, "--data", data, "--steps", str(total),
                          "--checkpoint-dir", os.path.join(work, f"ck-{len(rows)}"),
                          "--log", log, "--log-every", "1", "--threads", str(args.threads),
                          "--set", f"remat={setting}"] + sets, out, env)
        if rc != 0:
            sys.exit(f"einc train failed for {setting}:\n" + open(out).read()[-3000:])
        tokens = r["tokens_per_step"]
        times = [tokens / json.loads(line)["tokens_per_second"] for line in open(log)]
        solver_ms = None
        if setting.startswith("budget:"):
            rc, text, _ = run([einc, "emit", "--stage=fused", args.model,
                               "--set", f"remat={setting}"] + sets)
            m = re.search(r"func.func @train_step.*solver_ms = (\d+)", text)
            solver_ms = int(m.group(1)) if m else None
        rows.append({
            "policy": policy, "setting": setting,
            "peak": r["memory"]["peak"], "arena": r["memory"]["arena"],
            "recompute_flops": r["flops"]["recompute"],
            "predicted_step": r["predicted"]["step_seconds"],
            "measured_step": median(times[args.warmup:]), "rss_mib": rss,
            "solver_ms": solver_ms,
        })
        print(f"  {setting}: done", file=sys.stderr)

    big = None
    if args.solver_layers:
        rc, text, _ = run([einc, "emit", "--stage=fused", args.model, "--set",
                           f"layers={args.solver_layers}", "--set", "remat=budget:3GB"])
        m = re.search(r"func.func @train_step.*candidates = (\d+).*solver_ms = (\d+)", text)
        if m:
            big = {"layers": args.solver_layers, "candidates": int(m.group(1)),
                   "solver_ms": int(m.group(2))}

    print(f"{args.model} --set layers={args.layers} {' '.join(args.set)}, "
          f"{args.threads} threads, median of {args.steps} steps after {args.warmup}")
    print()
    print("| policy | report peak | planned arena | measured RSS | recompute FLOPs "
          "| predicted step | measured step | solver |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(f"| `{row['setting']}` | {mib(row['peak']):.0f} MiB | {mib(row['arena']):.0f} MiB | "
              f"{row['rss_mib']:.0f} MiB | {row['recompute_flops'] / 1e9:.2f} G | "
              f"{row['predicted_step'] * 1e3:.0f} ms | {row['measured_step'] * 1e3:.0f} ms | "
              + (f"{row['solver_ms']} ms" if row['solver_ms'] is not None else "—") + " |")
    print()
    print("--remat-sweep frontier (budget → peak, recompute FLOPs, predicted step):")
    for p in sweep["remat"]["frontier"]:
        print(f"  {mib(p['budget']):7.0f} MiB → {mib(p['peak']):6.0f} MiB, "
              f"{p['recompute_flops'] / 1e9:6.2f} G, {p['step_seconds'] * 1e3:6.0f} ms")
    if big:
        print(f"\nsolver on layers={big['layers']}: {big['candidates']} plans priced in "
              f"{big['solver_ms']} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "frontier": sweep["remat"]["frontier"], "solver": big}, f,
                      indent=2)


if __name__ == "__main__":
    main()
