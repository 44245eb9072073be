#!/usr/bin/python3
"""Training-step time: einc's CPU backend against PyTorch and JAX, side by side.

    python3 bench/train_step.py [--precision fp32,bf16-mixed,fp16-mixed] [--threads 1,2]
        [--peers eager,compile,jax|none] [--steps N] [--warmup N] [--rounds R]
        [--models mlp_lm,gpt] [--einc PATH] [--json FILE]

For each model (examples/mlp_lm.ein, examples/gpt.ein), precision and thread
count it runs, in one invocation and back to back (round after round with
--rounds):

  einc    `einc train MODEL --data train.bin --steps W+S --log-every 1 --log L
          --precision P --threads T` in a child process; a step's time is
          tokens / tokens_per_second of its log line (the trainer times each
          step: drawing the batch, the compiled @train_step, carrying params
          and optimizer state over).
  peers   the same model in PyTorch eager and torch.compile
          (bench/torch_worker.py: the forward under torch.autocast at the
          mixed precisions) and JAX (bench/jax_worker.py), each in a child
          process; a step is drawing the batch, forward, backward, clipping,
          optimizer step, timed with time.perf_counter.

All read random windows of the same token file (the bundled corpus, turned
into byte tokens by `einc data`), with the same thread count: OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS, einc's --threads and the peers' thread settings. The
first --warmup steps are dropped; medians are over --steps steps (every
round's steps pooled). Peak memory is the child's ru_maxrss (os.wait4). The
predicted step time and einc's saved activations are from `einc report MODEL
--device cpu --precision P --format json` (`einc calibrate` is run first when
there is no cpu profile); PyTorch eager's saved activations are counted with
saved_tensors_hooks in an untimed step. step_table.py prints the tables.

Not a test: a measurement. See bench/README.md.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import step_table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = {"mlp_lm": "examples/mlp_lm.ein", "gpt": "examples/gpt.ein"}
PRECISIONS = ["fp32", "bf16-mixed", "fp16-mixed"]


# ----------------------------------------------------------------- driver
def child_env(threads):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    env["OPENBLAS_NUM_THREADS"] = str(threads)
    return env


def run_child(cmd, env, out_path):
    """Runs cmd with stdout+stderr to out_path; returns (rc, seconds, peak MiB)."""
    with open(out_path, "w") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.perf_counter() - start
    return proc.returncode, elapsed, usage.ru_maxrss / 1024.0  # KiB -> MiB


def tail(path, n=20):
    with open(path) as f:
        return "".join(f.readlines()[-n:])


def tokens_per_step(model):
    return 256 if model == "mlp_lm" else 16 * 128  # mlp_lm: batch; gpt: batch × ctx


def run_einc(args, job, data, work, round_):
    """job = (model, precision, threads): einc train's step times from its log."""
    model, precision, threads = job
    tag = f"{model}-{precision}-{threads}-{round_}"
    ck, log = os.path.join(work, f"ck-{tag}"), os.path.join(work, f"{tag}.jsonl")
    out = os.path.join(work, f"einc-{tag}.out")
    total = args.warmup + args.steps
    cmd = [args.einc, "train", MODELS[model], "--data", data, "--steps", str(total),
           "--checkpoint-dir", ck, "--log", log, "--log-every", "1", "--precision", precision,
           "--set", f"seed={args.seed}", "--threads", str(threads)]
    rc, _, peak = run_child(cmd, child_env(threads), out)
    if rc != 0:
        sys.exit(f"einc train failed ({rc}):\n{tail(out)}")
    tokens = tokens_per_step(model)
    times, losses, norms = [], [], []
    with open(log) as f:
        for line in f:
            m = json.loads(line)
            times.append(tokens / m["tokens_per_second"])
            losses.append(m["loss"])
            norms.append(m["grad_norm"])
    if len(times) != total:
        sys.exit(f"einc train logged {len(times)} steps, expected {total} ({log})")
    compile_s, banner = None, ""  # "einc train: MODEL  (cpu backend, compiled in X s; ...)"
    with open(out) as f:
        for line in f:
            if "compiled in " in line:
                banner = line.strip()
                try:
                    compile_s = float(line.split("compiled in ", 1)[1].split()[0])
                except (IndexError, ValueError):
                    pass
                break
    return {"times": times[args.warmup:], "losses": losses, "grad_norms": norms,
            "peak_mib": peak, "compile_s": compile_s, "banner": banner}


def run_worker(args, cmd, threads, out, what):
    """A peer's child process: its last JSON line, warm-up steps dropped;
    {"na": why} where the peer cannot run this precision here."""
    rc, _, peak = run_child(cmd, child_env(threads), out)
    if rc != 0:
        sys.exit(f"{what} failed ({rc}):\n{tail(out)}")
    with open(out) as f:
        result = json.loads([l for l in f if l.startswith("{")][-1])
    if "na" not in result:
        result["times"] = result["times"][args.warmup:]
        result["peak_mib"] = peak
    return result


def worker_args(args, job, data):
    model, precision, threads = job
    return [model, "--data", data, "--precision", precision, "--steps", str(args.steps),
            "--warmup", str(args.warmup), "--threads", str(threads), "--seed", str(args.seed)]


def run_torch(args, job, data, work, round_, mode):
    out = os.path.join(work, f"torch-{mode}-{'-'.join(map(str, job))}-{round_}.out")
    cmd = [args.python, os.path.join(ROOT, "bench", "torch_worker.py"), "--mode", mode] + \
        worker_args(args, job, data)
    return run_worker(args, cmd, job[2], out, f"torch worker ({mode})")


def run_jax(args, job, data, work, round_):
    out = os.path.join(work, f"jax-{'-'.join(map(str, job))}-{round_}.out")
    cmd = [args.python, os.path.join(ROOT, "bench", "jax_worker.py")] + worker_args(args, job, data)
    return run_worker(args, cmd, job[2], out, "jax worker")


PEERS = {"eager": lambda *a: run_torch(*a, "eager"),
         "compile": lambda *a: run_torch(*a, "compile"),
         "jax": run_jax}
VENV = os.path.join(ROOT, "bench", ".venv")


def make_venv():
    """bench/.venv with PyTorch 2.x and JAX from PyPI (the peers' Python)."""
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    subprocess.run([py, "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
    subprocess.run([py, "-m", "pip", "install", "-q", "torch", "jax", "numpy"], check=True)
    return py


def peer_versions(python):
    code = ("import importlib\n"
            "for m in ('torch', 'jax'):\n"
            "    try: print(m, importlib.import_module(m).__version__)\n"
            "    except Exception: print(m, '-')")
    res = subprocess.run([python, "-c", code], capture_output=True, text=True)
    return dict(l.split() for l in res.stdout.splitlines() if len(l.split()) == 2)


def cpu_profile_path():
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "einc", "devices.json")


def has_cpu_profile():
    try:
        with open(cpu_profile_path()) as f:
            return "cpu" in json.dumps(json.load(f))
    except (OSError, ValueError):
        return False


def einc_report(args, model, precision):
    """`einc report MODEL --device cpu --precision P --format json`, or None."""
    cmd = [args.einc, "report", MODELS[model], "--device", "cpu", "--precision", precision,
           "--format", "json"]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=child_env(1))
    if res.returncode != 0:
        print(f"warning: einc report failed: {res.stderr.strip()}", file=sys.stderr)
        return None
    return json.loads(res.stdout)


def breakdown(report, top=8):
    """The report's predicted seconds by phase and by op kind, and the top ops."""
    by_phase, by_kind = {}, {}
    for op in report["ops"]:
        by_phase[op.get("phase") or "-"] = by_phase.get(op.get("phase") or "-", 0) + op["seconds"]
        by_kind[op["kind"]] = by_kind.get(op["kind"], 0) + op["seconds"]
    total = sum(by_phase.values()) or 1
    lines = ["  by phase: " + ", ".join(f"{k} {v * 1e3:.2f} ms ({100 * v / total:.0f}%)"
                                        for k, v in sorted(by_phase.items(), key=lambda x: -x[1]))]
    lines.append("  by kind:  " + ", ".join(f"{k} {v * 1e3:.2f} ms ({100 * v / total:.0f}%)"
                                         for k, v in sorted(by_kind.items(), key=lambda x: -x[1])[:8]))
    groups = {}  # the same op at the same place in the same phase: one line
    for o in report["ops"]:
        key = (o["name"], o.get("phase") or "-", o.get("location") or "", o["bound"])
        n, s = groups.get(key, (0, 0.0))
        groups[key] = (n + 1, s + o["seconds"])
    for (name, phase, loc, bound), (n, s) in sorted(groups.items(), key=lambda x: -x[1][1])[:top]:
        lines.append(f"    {s * 1e3:8.2f} ms  {n:3d}x {bound:7s} {name:16s} {phase:9s} {loc}")
    return "\n".join(lines)


def find_einc():
    for d in ("build-bench", "build"):
        p = os.path.join(ROOT, d, "bin", "einc")
        if os.access(p, os.X_OK):
            return p
    return None


def parse_list(text, what, valid=None):
    items = [x.strip() for x in text.split(",") if x.strip()]
    for x in items:
        if valid is not None and x not in valid:
            sys.exit(f"unknown {what} '{x}' (valid: {', '.join(valid)})")
    if not items:
        sys.exit(f"no {what} given")
    return items


def parse_threads(text):
    try:
        threads = [int(x) for x in parse_list(text, "thread count")]
    except ValueError:
        sys.exit(f"--threads takes counts like 1,2, not '{text}'")
    if any(t < 1 for t in threads):
        sys.exit(f"--threads: a count is at least 1, not '{text}'")
    return threads


def measure(args, job, peers, data, work):
    """einc and every peer on one (model, precision, threads), --rounds times."""
    model, precision, threads = job
    e_runs, p_runs = [], {p: [] for p in peers}
    for r in range(args.rounds):
        print(f"  {model} {precision} {threads} thread(s): einc", file=sys.stderr)
        e_runs.append(run_einc(args, job, data, work, r))
        for p in peers:
            print(f"  {model} {precision} {threads} thread(s): {p}", file=sys.stderr)
            p_runs[p].append(PEERS[p](args, job, data, work, r))
    tok = tokens_per_step(model)
    e_times = [t for run in e_runs for t in run["times"]]
    row = {"model": model, "precision": precision, "threads": threads, "tokens_per_step": tok,
           "einc_s": statistics.median(e_times), "einc_times_s": e_times,
           "einc_peak_mib": max(r["peak_mib"] for r in e_runs),
           "einc_compile_s": e_runs[0]["compile_s"], "einc_banner": e_runs[0]["banner"],
           "einc_loss_first_last": [e_runs[0]["losses"][0], e_runs[0]["losses"][-1]],
           "peers": {}}
    for p, runs in p_runs.items():
        if "na" in runs[0]:
            row["peers"][p] = {"na": runs[0]["na"]}
            continue
        times = [t for run in runs for t in run["times"]]
        row["peers"][p] = {"median_s": statistics.median(times), "times_s": times,
                           "peak_mib": max(r["peak_mib"] for r in runs),
                           "loss_first_last": [runs[0]["losses"][0], runs[0]["losses"][-1]],
                           "saved": runs[0].get("saved")}
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--einc", default=find_einc(), help="the einc binary (default: build-bench/bin/einc, else build/bin/einc)")
    ap.add_argument("--threads", default=str(os.cpu_count()),
                    help="comma-separated thread counts, each measured in turn (default: every core)")
    ap.add_argument("--precision", default="fp32",
                    help=f"comma-separated: {', '.join(PRECISIONS)} (default fp32)")
    ap.add_argument("--steps", type=int, default=30, help="timed steps per run (default 30)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps first (default 5)")
    ap.add_argument("--rounds", type=int, default=1, help="einc then the peers, this many times per row (default 1)")
    ap.add_argument("--models", default="mlp_lm,gpt", help="comma-separated (default mlp_lm,gpt)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", help="a token file (default: einc data examples/data/kjv.txt into a temp dir)")
    ap.add_argument("--breakdown", action="store_true", help="also print the report's predicted time by phase, kind and top ops")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, checkpoints, child output)")
    ap.add_argument("--peers", default="eager",
                    help="comma-separated: eager (PyTorch), compile (torch.compile, Inductor), jax "
                         "(jax.jit), or none (einc alone); default eager")
    ap.add_argument("--python", help="the peers' Python (default: bench/.venv's, else this one)")
    ap.add_argument("--make-venv", action="store_true",
                    help="create bench/.venv with PyTorch 2.x and JAX from PyPI first")
    args = ap.parse_args()

    if not args.einc:
        sys.exit("no einc binary: build it (see bench/README.md) or pass --einc")
    if args.steps < 1 or args.warmup < 0 or args.rounds < 1:
        sys.exit("--steps and --rounds are at least 1, --warmup at least 0")
    if args.steps < 20:
        print("note: fewer than 20 timed steps: the medians are noisy", file=sys.stderr)
    models = parse_list(args.models, "model", MODELS)
    precisions = parse_list(args.precision, "precision", PRECISIONS)
    threads = parse_threads(args.threads)
    peers = [] if args.peers.strip() == "none" else parse_list(args.peers, "peer", PEERS)
    if args.make_venv:
        args.python = make_venv()
    if not args.python:
        venv_py = os.path.join(VENV, "bin", "python")
        args.python = venv_py if os.path.exists(venv_py) else sys.executable
    versions = peer_versions(args.python)
    for p in peers:
        need = "jax" if p == "jax" else "torch"
        if versions.get(need, "-") == "-":
            sys.exit(f"peer '{p}' needs {need} in {args.python} (--make-venv installs it)")
        if p == "compile" and not versions["torch"].split(".")[0].isdigit() or \
                p == "compile" and int(versions["torch"].split(".")[0]) < 2:
            sys.exit(f"peer 'compile' needs PyTorch 2.x; {args.python} has {versions['torch']}")
    work = tempfile.mkdtemp(prefix="einc-bench-")
    data = args.data
    if not data:
        res = subprocess.run([args.einc, "data", "examples/data/kjv.txt", "--out", work],
                             capture_output=True, text=True, cwd=ROOT)
        if res.returncode != 0:
            sys.exit(f"einc data failed: {res.stderr}")
        data = os.path.join(work, "train.bin")
    if not has_cpu_profile():
        print("no cpu profile: running einc calibrate", file=sys.stderr)
        subprocess.run([args.einc, "calibrate"], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)

    rows = [measure(args, (m, p, t), peers, data, work)
            for m in models for p in precisions for t in threads]
    reports = {(m, p): einc_report(args, m, p) for m in models for p in precisions}
    saved = {}
    for r in rows:
        report = reports[(r["model"], r["precision"])]
        r["predicted_s"] = report["predicted"]["step_seconds"] if report else None
        mem = report["memory"] if report else {}
        eager = r["peers"].get("eager") or {}
        entry = saved.setdefault((r["model"], r["precision"]), {
            "einc": {"activations": mem.get("activations"),
                     "param_copies": mem.get("param_copies")} if mem else None})
        entry.setdefault("eager", eager.get("saved"))

    name, flags = step_table.cpu_info(open("/proc/cpuinfo").read())
    gemms = []
    for r in rows:
        gemms += [g for g in step_table.gemm_parts(r["einc_banner"]) if g not in gemms]
    print(f"einc train-step benchmark  {time.strftime('%Y-%m-%d %H:%M')}; "
          f"{args.warmup} warm-up + {args.steps} timed steps x {args.rounds} round(s), medians")
    print(f"  {step_table.cpu_line(name, flags)}; {os.cpu_count()} cpus")
    print(f"  PyTorch {versions.get('torch', '-')}, JAX {versions.get('jax', '-')} ({args.python})")
    print(f"  einc ({args.einc}) GEMMs, from its banner: {'; '.join(gemms) or '-'}")
    try:  # the machine's ceilings, as einc calibrate measured them (every thread)
        with open(cpu_profile_path()) as f:
            cpu_prof = next(x for x in json.load(f)["profiles"] if x["name"] == "cpu")
        print(f"  ceilings (einc calibrate, every thread): sgemm "
              f"{cpu_prof['matmulFlops']['f32'] / 1e9:.1f} GFLOP/s, FMA loop "
              f"{cpu_prof['vectorFlops']['f32'] / 1e9:.1f} GFLOP/s, bandwidth "
              f"{cpu_prof['bandwidth'] / 1e9:.1f} GB/s")
    except (OSError, ValueError, KeyError, StopIteration):
        pass
    print()
    print("\n".join(step_table.step_table(rows, peers)))
    print("peer cells: median ms (peer / einc: above 1, einc is faster); eager = PyTorch eager, "
          "torch.compile = Inductor, JAX = jax.jit of the step; mixed precisions under "
          "torch.autocast / bf16/f16 casts in JAX")
    for note in step_table.na_notes(rows, peers):
        print(note)
    print()
    print("\n".join(step_table.detail_table(rows, peers)))
    print("pred = einc report --device cpu --precision P (the every-thread cpu profile); "
          "MiB = peak resident memory of the process")
    print()
    print("Activations saved for backward, one step (einc: its report's memory.activations and "
          "param_copies; eager: saved_tensors_hooks over unique storages, params and the batch "
          "left out, casts of params apart):")
    print("\n".join(step_table.saved_table(saved)))
    print()
    for r in rows:
        el = r["einc_loss_first_last"]
        comp = f"; einc kernel compile {r['einc_compile_s']:.2f} s (not in step time)" \
            if r["einc_compile_s"] is not None else ""
        losses = ", ".join(f"{p} {q['loss_first_last'][0]:.3f}/{q['loss_first_last'][1]:.3f}"
                           for p, q in r["peers"].items() if "loss_first_last" in q)
        print(f"  {r['model']} {r['precision']} {r['threads']}: loss first/last einc "
              f"{el[0]:.3f}/{el[1]:.3f}{', ' + losses if losses else ''}{comp}")
    if args.breakdown:
        for (model, precision), report in reports.items():
            if report:
                print(f"\n{model} {precision}: predicted "
                      f"{report['predicted']['step_seconds'] * 1e3:.2f} ms")
                print(breakdown(report))
    for p in peers:
        timed = [r for r in rows if "median_s" in r["peers"][p]]
        wins = sum(r["peers"][p]["median_s"] >= r["einc_s"] for r in timed)
        print(f"einc not slower than {step_table.PEER_TITLES[p]}: {wins} of {len(timed)} rows")
    if args.keep:
        print(f"kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": name, "cpu_flags": flags, "versions": versions,
                       "einc_gemms": gemms, "rows": rows,
                       "saved": [{"model": m, "precision": p, **s}
                                 for (m, p), s in saved.items()]}, f, indent=1)


if __name__ == "__main__":
    main()
