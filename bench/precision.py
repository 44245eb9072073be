#!/usr/bin/env python3
"""Precision policies measured: the report's memory beside a training run.

For each model and each policy (fp32, bf16-mixed, fp16-mixed, bf16 by
default), on the bundled corpus (examples/data/kjv.txt through `einc data`):

  report   `einc report MODEL --set precision=P --format json`: bytes per
           parameter, activation bytes saved for the backward, the planned
           peak (= the arena the run allocates) on the cpu backend;
  train    `einc train MODEL --set precision=P --steps N --val val.bin` with
           evaluation at the end: the validation loss at step N (the same
           seed, data order and step count for every policy), the median
           step time of the logged steps after the first W, and for
           fp16-mixed the loss scale and skipped steps at the end (from the
           JSONL log);
  ratio    each policy's validation loss over fp32's (the issue asks for
           bf16-mixed within 2%, bf16 within 5%).

Prints a Markdown table; --json FILE keeps every number and every loss
curve, and --plot PREFIX draws each model's training-loss curves into
PREFIX-MODEL.svg (bench/precision_plot.py, which also draws them again from
the JSON without training: scripts/docs-pictures). A measurement, not a test:
nothing here runs in ctest.

  /usr/bin/python3 bench/precision.py --steps 300 --threads 2
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from precision_plot import loss_curves_svg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def einc_path(args):
    for p in [args.einc, os.path.join(ROOT, "build-bench/bin/einc"),
              os.path.join(ROOT, "build/bin/einc")]:
        if p and os.path.exists(p):
            return p
    sys.exit("no einc: build it or pass --einc")


def run(cmd, env=None):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          cwd=ROOT, env=env)
    return proc.returncode, proc.stdout


def git_commit():
    rc, out = run(["git", "rev-parse", "--short", "HEAD"])
    return out.strip() if rc == 0 else "an unknown commit"


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if n == 0:
        return float("nan")
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--einc")
    ap.add_argument("--models", default="examples/mlp_lm.ein,examples/gpt.ein")
    ap.add_argument("--policies", default="fp32,bf16-mixed,fp16-mixed,bf16")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=3, help="logged steps left out of the median")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--set", action="append", default=[],
                    help="MODEL_STEM:NAME=VALUE or NAME=VALUE overrides (repeatable)")
    ap.add_argument("--json")
    ap.add_argument("--plot", metavar="PREFIX", help="the loss curves into PREFIX-MODEL.svg")
    args = ap.parse_args()
    einc = einc_path(args)
    work = tempfile.mkdtemp(prefix="einc-precision-bench-")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               OPENBLAS_NUM_THREADS=str(args.threads))

    rc, text = run([einc, "data", "examples/data/kjv.txt", "--out", os.path.join(work, "data")])
    if rc != 0:
        sys.exit("einc data failed:\n" + text)
    train = os.path.join(work, "data", "train.bin")
    val = os.path.join(work, "data", "val.bin")

    rows = []
    for model in args.models.split(","):
        stem = os.path.splitext(os.path.basename(model))[0]
        sets = []
        for s in args.set:
            name, _, rest = s.partition(":")
            if "=" in name:  # NAME=VALUE for every model
                sets += ["--set", s]
            elif name == stem:
                sets += ["--set", rest]
        base = None
        for policy in args.policies.split(","):
            pset = ["--set", f"precision={policy}"]
            rc, text = run([einc, "report", model, "--format", "json"] + sets + pset, env)
            if rc != 0:
                sys.exit(f"einc report failed for {stem} {policy}:\n{text}")
            report = json.loads(text)
            mem = report["memory"]
            log = os.path.join(work, f"{stem}-{policy}.jsonl")
            rc, text = run([einc, "train", model, "--data", train, "--val", val,
                            "--steps", str(args.steps), "--checkpoint-dir",
                            os.path.join(work, f"ck-{stem}-{policy}"), "--log", log,
                            "--log-every", "1", "--threads", str(args.threads),
                            "--set", f"eval_every={args.steps}"] + sets + pset, env)
            if rc != 0:
                sys.exit(f"einc train failed for {stem} {policy}:\n{text[-3000:]}")
            lines = [json.loads(line) for line in open(log)]
            tokens = report["tokens_per_step"]
            times = [tokens / l["tokens_per_second"] for l in lines
                     if l.get("tokens_per_second")]
            vals = [l["val_loss"] for l in lines if "val_loss" in l]
            last = lines[-1]
            row = {
                "model": stem, "policy": policy,
                "val_loss": vals[-1] if vals else None,
                "train_loss": [l["loss"] for l in lines],
                "bytes_per_param": mem.get("bytes_per_param"),
                "activations": mem.get("activations"),
                "peak": mem.get("peak"),
                "step_seconds": median(times[args.warmup:]),
                "loss_scale": last.get("loss_scale"),
                "skipped": last.get("skipped_steps"),
            }
            if policy == "fp32":
                base = row
            row["ratio"] = (row["val_loss"] / base["val_loss"]
                            if base and row["val_loss"] and base["val_loss"] else None)
            rows.append(row)
            print(f"  {stem} {policy}: val {row['val_loss']}", file=sys.stderr)

    print(f"{args.steps} steps on the KJV byte tokens, {args.threads} threads, "
          f"step time = median after {args.warmup} logged steps")
    print()
    print("| model | policy | val loss | vs fp32 | bytes/param | activations | peak "
          "| CPU step | loss scale (skipped) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ratio = f"{(r['ratio'] - 1) * 100:+.2f}%" if r["ratio"] else "—"
        scale = (f"{r['loss_scale']:g} ({r['skipped']})" if r["loss_scale"] is not None
                 else "—")
        print(f"| {r['model']} | {r['policy']} | {r['val_loss']:.4f} | {ratio} | "
              f"{r['bytes_per_param']:.4g} | {r['activations'] / 2**20:.1f} MiB | "
              f"{r['peak'] / 2**20:.1f} MiB | {r['step_seconds'] * 1e3:.1f} ms | {scale} |")
    source = (f"bench/precision.py --models {args.models} --steps {args.steps} --threads {args.threads}"
              f"{''.join(' --set ' + x for x in args.set)}, {time.strftime('%Y-%m-%d')} "
              f"at {git_commit()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"source": source, "rows": rows}, f, indent=1)
    if args.plot:
        for model in dict.fromkeys(r["model"] for r in rows):
            with open(f"{args.plot}-{model}.svg", "w") as f:
                f.write(loss_curves_svg(rows, model, source))


if __name__ == "__main__":
    main()
