#!/usr/bin/env python3
"""Sampling tokens per second with the KV cache and without it.

One checkpoint of the model (`einc run MODEL --step --steps 1
--save-params`, params after one step: sampling speed does not depend on
training) and one executable of it (`einc compile MODEL -o EXE`: what a
user ships; `einc sample` would compile the model on every run, and that
noise swamps a tenth of a second of cached decoding), then `EXE sample`
with and without `--no-kv-cache`, each at two token counts, SHORT and LONG;
tokens/s is (LONG - SHORT) / (time(LONG) - time(SHORT)), the median over
--rounds, so that start-up and the prompt cancel out. Prompt + LONG stays within the window (ctx): past it
the window slides and both recompute it (docs/sampling.md). The two texts
are compared too (the same --seed: the same bytes).

Prints both rates and their ratio. It is a measurement, not a test.

  /usr/bin/python3 bench/sample_kv_cache.py --threads 1
"""
import argparse
import os
import statistics
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
    sys.exit("sample_kv_cache.py: no einc (build it, or --einc PATH)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--einc", default=None)
    ap.add_argument("--model", default=os.path.join(ROOT, "examples/gpt.ein"))
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a dim or setting for both (repeatable; default: the model's, ctx 128)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--short", type=int, default=8, help="tokens of the short run (default 8)")
    ap.add_argument("--long", type=int, default=120,
                    help="tokens of the long run (default 120; prompt + LONG <= ctx)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--prompt", default="I")
    args = ap.parse_args()
    einc = einc_path(args)
    sets = [a for kv in args.set for a in ("--set", kv)]

    with tempfile.TemporaryDirectory() as tmp:
        ck = os.path.join(tmp, "params.safetensors")
        subprocess.run([einc, "run", args.model, "--step", "--steps", "1", "--save-params", ck,
                        "--threads", str(args.threads)] + sets,
                       check=True, stdout=subprocess.DEVNULL)
        exe = os.path.join(tmp, "model")
        subprocess.run([einc, "compile", args.model, "-o", exe] + sets, check=True,
                       stdout=subprocess.DEVNULL)

        def sample(tokens, cached):
            cmd = [exe, "sample", "--checkpoint", ck, "--tokens", str(tokens),
                   "--prompt", args.prompt, "--seed", "1", "--threads", str(args.threads)]
            if not cached:
                cmd.append("--no-kv-cache")
            start = time.perf_counter()
            out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE).stdout
            return time.perf_counter() - start, out

        rates, texts = {}, {}
        for cached in (True, False):
            per = []
            for _ in range(args.rounds):
                short, _ = sample(args.short, cached)
                long_, texts[cached] = sample(args.long, cached)
                per.append((args.long - args.short) / (long_ - short))
            rates[cached] = statistics.median(per)

    with_cache, without = rates[True], rates[False]
    print(f"EXE sample (einc compile {' '.join([os.path.relpath(args.model, ROOT)] + sets)}) "
          f"--threads {args.threads}: tokens {args.short} and {args.long}, "
          f"median of {args.rounds}")
    print(f"  recomputing the window (--no-kv-cache): {without:8.1f} tokens/s")
    print(f"  KV cache (default):                      {with_cache:8.1f} tokens/s")
    print(f"  ratio: {with_cache / without:.1f}x")
    print(f"  same text: {'yes' if texts[True] == texts[False] else 'NO'}")


if __name__ == "__main__":
    main()
