#!/usr/bin/python3
"""Training-step time: einc's CPU backend against PyTorch eager, side by side.

    /usr/bin/python3 bench/train_step.py [--threads N] [--steps N] [--warmup N]
                                         [--rounds R] [--models mlp_lm,gpt] [--einc PATH]

For each model (examples/mlp_lm.ein, examples/gpt.ein) it runs, in one
invocation and back to back (round after round with --rounds):

  einc    `einc train MODEL --data train.bin --steps W+S --log-every 1 --log L`
          in a child process; a step's time is tokens / tokens_per_second of
          its log line (the trainer times each step: drawing the batch, the
          compiled @train_step, carrying params and optimizer state over).
  torch   the same model written in PyTorch (same shapes, same initialisers,
          AdamW with einc's defaults, clipping) in a child process of this
          script; a step is drawing the batch, forward, backward, clipping,
          optimizer step, timed with time.perf_counter.

Both read random windows of the same token file (the bundled corpus, turned
into byte tokens by `einc data`), with the same thread count: OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS and torch.set_num_threads all set to --threads (default:
every core). The first --warmup steps are dropped; medians are over --steps
steps (every round's steps pooled). Peak memory is the child's ru_maxrss
(os.wait4). The predicted step time is `einc report MODEL --device cpu
--format json`'s predicted.step_seconds (`einc calibrate` is run first when
there is no cpu profile).

Not a test: a measurement. See bench/README.md.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = {"mlp_lm": "examples/mlp_lm.ein", "gpt": "examples/gpt.ein"}


# ---------------------------------------------------------------- torch side
def torch_worker(args):
    """Runs in a child process: trains one model, prints one JSON line."""
    import numpy as np
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    def trunc_normal(shape, std, clip=None):
        t = torch.empty(shape)
        if clip is None:
            return torch.nn.init.normal_(t, 0.0, std)
        # einc: resample until within mean ± clip·std (trunc_normal_'s bounds)
        return torch.nn.init.trunc_normal_(t, 0.0, std, -clip * std, clip * std)

    params = {}

    def param(name, tensor):
        params[name] = torch.nn.Parameter(tensor)
        return params[name]

    if args.torch_worker == "mlp_lm":
        # examples/mlp_lm.ein
        batch, vocab, window, embed, hidden = 256, 256, 8, 64, 512
        wte = param("wte", trunc_normal((vocab, embed), 1.0, 3))
        w1 = param("w1", trunc_normal((window * embed, hidden), 1 / math.sqrt(window * embed), 3))
        b1 = param("b1", torch.zeros(hidden))
        w2 = param("w2", trunc_normal((hidden, vocab), 1 / math.sqrt(hidden), 3))
        context, shifted = window, False

        def loss_fn(tokens, targets):
            x = wte[tokens].reshape(batch, window * embed)
            h = torch.relu(x @ w1 + b1)
            logits = h @ w2
            return F.cross_entropy(logits, targets)
    else:
        # examples/gpt.ein
        batch, vocab, ctx, d, heads, layers = 16, 256, 128, 256, 4, 4
        hd, ff = d // heads, 4 * d
        wte = param("wte", trunc_normal((vocab, d), 0.02))
        wpe = param("wpe", trunc_normal((ctx, d), 0.02))
        L = []
        for i in range(layers):
            p = f"layer.{i}."
            L.append(dict(
                ln1_g=param(p + "ln1_g", torch.ones(d)),
                ln1_b=param(p + "ln1_b", torch.zeros(d)),
                w_qkv=param(p + "w_qkv", trunc_normal((d, 3 * heads * hd), 0.02)),
                w_o=param(p + "w_o", trunc_normal((heads * hd, d), 0.02 / math.sqrt(2 * layers))),
                ln2_g=param(p + "ln2_g", torch.ones(d)),
                ln2_b=param(p + "ln2_b", torch.zeros(d)),
                w_fc=param(p + "w_fc", trunc_normal((d, ff), 0.02)),
                w_pr=param(p + "w_pr", trunc_normal((ff, d), 0.02 / math.sqrt(2 * layers)))))
        lnf_g = param("lnf_g", torch.ones(d))
        lnf_b = param("lnf_b", torch.zeros(d))
        mask = torch.ones(ctx, ctx, dtype=torch.bool).triu(1)  # s > t
        context, shifted = ctx, True

        def loss_fn(idx, targets):
            x = wte[idx] + wpe
            for l in L:
                h = F.layer_norm(x, (d,), l["ln1_g"], l["ln1_b"], 1e-5)
                qkv = (h @ l["w_qkv"]).view(batch, ctx, 3, heads, hd).permute(2, 0, 3, 1, 4)
                q, k, v = qkv[0], qkv[1], qkv[2]
                att = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
                att = torch.softmax(att.masked_fill(mask, float("-inf")), dim=-1)
                y = (att @ v).transpose(1, 2).reshape(batch, ctx, heads * hd)
                x = x + y @ l["w_o"]
                h = F.layer_norm(x, (d,), l["ln2_g"], l["ln2_b"], 1e-5)
                x = x + F.gelu(h @ l["w_fc"], approximate="tanh") @ l["w_pr"]
            logits = F.layer_norm(x, (d,), lnf_g, lnf_b, 1e-5) @ wte.t()
            return F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))

    if args.torch_mode == "compile":
        # Inductor: forward and backward of the loss compiled (AOTAutograd);
        # the optimizer and clipping stay eager. The first (warm-up) steps
        # pay for compiling.
        loss_fn = torch.compile(loss_fn)

    # einc's defaults (docs/training.md, docs/train-step.md): AdamW β 0.9/0.999,
    # eps 1e-8, weight decay 0.01 on matrices (rank ≥ 2) only, clip 1.0, lr 1e-3.
    decay = [p for p in params.values() if p.dim() >= 2]
    no_decay = [p for p in params.values() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    all_params = list(params.values())

    data = np.memmap(args.data, dtype="<u2", mode="r")
    rng = np.random.default_rng(args.seed)
    span = context + 1

    def draw():
        starts = rng.integers(0, len(data) - span + 1, size=batch)
        rows = np.stack([np.asarray(data[s:s + span], dtype=np.int64) for s in starts])
        rows = torch.from_numpy(rows)
        if shifted:
            return rows[:, :-1], rows[:, 1:]
        return rows[:, :-1], rows[:, -1]

    times, losses, norms = [], [], []
    total = args.warmup + args.steps
    for _ in range(total):
        start = time.perf_counter()
        inputs, targets = draw()
        loss = loss_fn(inputs, targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(all_params, 1.0)
        opt.step()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
        norms.append(float(norm))
    print(json.dumps({"times": times, "losses": losses, "grad_norms": norms,
                      "threads": torch.get_num_threads(),
                      "params": sum(p.numel() for p in all_params)}))


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


def run_einc(args, model, data, work, round_):
    ck = os.path.join(work, f"ck-{model}-{round_}")
    log = os.path.join(work, f"{model}-{round_}.jsonl")
    out = os.path.join(work, f"einc-{model}-{round_}.out")
    total = args.warmup + args.steps
    cmd = [args.einc, "train", MODELS[model], "--data", data, "--steps", str(total),
           "--checkpoint-dir", ck, "--log", log, "--log-every", "1",
           "--set", f"seed={args.seed}", "--threads", str(args.threads)]
    rc, _, peak = run_child(cmd, child_env(args.threads), out)
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
    compile_s = None  # "einc train: MODEL  (cpu backend, compiled in X s; ...)"
    with open(out) as f:
        for line in f:
            if "compiled in " in line:
                try:
                    compile_s = float(line.split("compiled in ", 1)[1].split()[0])
                except (IndexError, ValueError):
                    pass
                break
    return {"times": times[args.warmup:], "losses": losses, "grad_norms": norms,
            "peak_mib": peak, "compile_s": compile_s}


def run_worker(args, cmd, out, what):
    """A peer's child process: its last JSON line, warm-up steps dropped."""
    rc, _, peak = run_child(cmd, child_env(args.threads), out)
    if rc != 0:
        sys.exit(f"{what} failed ({rc}):\n{tail(out)}")
    with open(out) as f:
        result = json.loads([l for l in f if l.startswith("{")][-1])
    result["times"] = result["times"][args.warmup:]
    result["peak_mib"] = peak
    return result


def run_torch(args, model, data, work, round_, mode="eager"):
    out = os.path.join(work, f"torch-{mode}-{model}-{round_}.out")
    cmd = [args.python, os.path.abspath(__file__), "--torch-worker", model, "--torch-mode", mode,
           "--data", data, "--steps", str(args.steps), "--warmup", str(args.warmup),
           "--threads", str(args.threads), "--seed", str(args.seed)]
    return run_worker(args, cmd, out, f"torch worker ({mode})")


def run_jax(args, model, data, work, round_):
    out = os.path.join(work, f"jax-{model}-{round_}.out")
    cmd = [args.python, os.path.join(ROOT, "bench", "jax_worker.py"), model, "--data", data,
           "--steps", str(args.steps), "--warmup", str(args.warmup),
           "--threads", str(args.threads), "--seed", str(args.seed)]
    return run_worker(args, cmd, out, "jax worker")


PEERS = {"eager": lambda a, m, d, w, r: run_torch(a, m, d, w, r, "eager"),
         "compile": lambda a, m, d, w, r: run_torch(a, m, d, w, r, "compile"),
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


def predicted(args, model):
    cmd = [args.einc, "report", MODELS[model], "--device", "cpu", "--format", "json"]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=child_env(args.threads))
    if res.returncode != 0:
        print(f"warning: einc report failed: {res.stderr.strip()}", file=sys.stderr)
        return None, None
    report = json.loads(res.stdout)
    return report["predicted"]["step_seconds"], report


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--einc", default=find_einc(), help="the einc binary (default: build-bench/bin/einc, else build/bin/einc)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="threads for both (default: every core)")
    ap.add_argument("--steps", type=int, default=30, help="timed steps per run (default 30)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps first (default 5)")
    ap.add_argument("--rounds", type=int, default=1, help="einc then torch, this many times per model (default 1)")
    ap.add_argument("--models", default="mlp_lm,gpt", help="comma-separated (default mlp_lm,gpt)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", help="a token file (default: einc data examples/data/kjv.txt into a temp dir)")
    ap.add_argument("--breakdown", action="store_true", help="also print the report's predicted time by phase, kind and top ops")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, checkpoints, child output)")
    ap.add_argument("--peers", default="eager",
                    help="comma-separated: eager (PyTorch), compile (torch.compile, Inductor), jax "
                         "(jax.jit); default eager")
    ap.add_argument("--python", help="the peers' Python (default: bench/.venv's, else this one)")
    ap.add_argument("--make-venv", action="store_true",
                    help="create bench/.venv with PyTorch 2.x and JAX from PyPI first")
    ap.add_argument("--torch-worker", help=argparse.SUPPRESS)
    ap.add_argument("--torch-mode", default="eager", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.torch_worker:
        return torch_worker(args)
    if not args.einc:
        sys.exit("no einc binary: build it (see bench/README.md) or pass --einc")
    if args.steps < 20:
        print("note: fewer than 20 timed steps: the medians are noisy", file=sys.stderr)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    for m in models:
        if m not in MODELS:
            sys.exit(f"unknown model '{m}' (valid: {', '.join(MODELS)})")

    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    for p in peers:
        if p not in PEERS:
            sys.exit(f"unknown peer '{p}' (valid: {', '.join(PEERS)})")
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
        subprocess.run([args.einc, "calibrate"], check=True, cwd=ROOT)

    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    print(f"einc train-step benchmark  {time.strftime('%Y-%m-%d %H:%M')}  {cpu}, "
          f"{os.cpu_count()} cpus, threads {args.threads}; torch {versions.get('torch', '-')}, "
          f"jax {versions.get('jax', '-')} ({args.python}); "
          f"{args.warmup} warm-up + {args.steps} timed steps x {args.rounds} round(s)")
    print(f"  einc: {args.einc}; data: {data}")
    try:  # the machine's ceilings, as einc calibrate measured them (every thread)
        with open(cpu_profile_path()) as f:
            cpu_prof = next(x for x in json.load(f)["profiles"] if x["name"] == "cpu")
        print(f"  ceilings (einc calibrate, every thread): sgemm "
              f"{cpu_prof['matmulFlops']['f32'] / 1e9:.1f} GFLOP/s, FMA loop "
              f"{cpu_prof['vectorFlops']['f32'] / 1e9:.1f} GFLOP/s, bandwidth "
              f"{cpu_prof['bandwidth'] / 1e9:.1f} GB/s")
    except (OSError, ValueError, KeyError, StopIteration):
        pass

    results = {}
    for model in models:
        e_runs, p_runs = [], {p: [] for p in peers}
        for r in range(args.rounds):
            e_runs.append(run_einc(args, model, data, work, r))
            for p in peers:
                p_runs[p].append(PEERS[p](args, model, data, work, r))
        pred, report = predicted(args, model)
        tok = tokens_per_step(model)
        e_med = statistics.median([t for run in e_runs for t in run["times"]])
        results[model] = {
            "tokens_per_step": tok,
            "einc_median_s": e_med, "einc_tokens_per_s": tok / e_med,
            "einc_peak_mib": max(r["peak_mib"] for r in e_runs),
            "predicted_s": pred,
            "einc_compile_s": e_runs[0]["compile_s"],
            "einc_loss_first_last": [e_runs[0]["losses"][0], e_runs[0]["losses"][-1]],
            "einc_times_s": [t for run in e_runs for t in run["times"]],
            "peers": {},
        }
        for p, runs in p_runs.items():
            med = statistics.median([t for run in runs for t in run["times"]])
            results[model]["peers"][p] = {
                "median_s": med, "ratio": med / e_med, "tokens_per_s": tok / med,
                "peak_mib": max(r["peak_mib"] for r in runs),
                "loss_first_last": [runs[0]["losses"][0], runs[0]["losses"][-1]],
                "times_s": [t for run in runs for t in run["times"]]}
        results[model]["_report"] = report

    print()
    head = f"{'model':8s} {'einc ms':>9s} {'einc tok/s':>11s} {'einc MiB':>9s} {'pred ms':>8s}"
    for p in peers:
        head += f" {p + ' ms':>11s} {'ratio':>6s} {p + ' MiB':>10s}"
    print(head)
    print("-" * len(head))
    for model, r in results.items():
        pred = f"{r['predicted_s'] * 1e3:8.2f}" if r["predicted_s"] is not None else f"{'-':>8s}"
        line = (f"{model:8s} {r['einc_median_s'] * 1e3:9.2f} {r['einc_tokens_per_s']:11.0f} "
                f"{r['einc_peak_mib']:9.0f} {pred}")
        for p in peers:
            q = r["peers"][p]
            line += f" {q['median_s'] * 1e3:11.2f} {q['ratio']:6.2f} {q['peak_mib']:10.0f}"
        print(line)
    print("ratio = peer / einc median step time (> 1: einc faster); pred = einc report --device cpu")
    print("peers: eager = PyTorch eager, compile = torch.compile (Inductor), jax = jax.jit of the step")
    for model, r in results.items():
        el = r["einc_loss_first_last"]
        comp = f"; einc kernel compile {r['einc_compile_s']:.2f} s (not in step time)" \
            if r["einc_compile_s"] is not None else ""
        losses = ", ".join(f"{p} {q['loss_first_last'][0]:.3f}/{q['loss_first_last'][1]:.3f}"
                           for p, q in r["peers"].items())
        print(f"  {model}: loss first/last einc {el[0]:.3f}/{el[1]:.3f}, {losses}{comp}")
    if args.breakdown:
        for model, r in results.items():
            if r["_report"]:
                print(f"\n{model}: predicted {r['predicted_s'] * 1e3:.2f} ms")
                print(breakdown(r["_report"]))
    for p in peers:
        verdict = all(r["peers"][p]["ratio"] >= 1 for r in results.values())
        print(f"\nbar (einc not slower than {p} on every model): {'met' if verdict else 'NOT met'}", end="")
    print()
    if args.keep:
        print(f"kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({m: {k: v for k, v in r.items() if k != "_report"} for m, r in results.items()},
                      f, indent=1)


if __name__ == "__main__":
    main()
