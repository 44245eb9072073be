"""gpu-check's parts, in the order they run, each with its time budget (docs/cuda-backend.md,
"Checking on a GPU", states them) and what it needs; and what each part does. A part is a
function (check, timeout) -> {"status", "note", ...}; check is check.Check, which runs the
commands (under their timeout, output kept) and notices a missing library. Standard library
only.
"""
import filecmp
import json
import os
import shutil
import sys
import time

import common
import diagnose
import report

# What einc's cuda backend opens (a part that runs it needs all of them) and a GPU to open.
CUDA = ("GPU", "CUDA driver", "cuBLASLt", "NVRTC")
# The 3-step runs: warm-up, CUDA graph capture, replay; the schedule as long as the
# reference's, so that their losses are its first three.
OPEN_STEPS = 3
OPEN_SCHEDULE = ["--set", f"steps={common.TRAIN_STEPS}"]

# (part, seconds at most, what it needs): 430 s in all, so that the whole check (with unpacking
# and the report) fits one 600 s call on the GPU machine. The synchronised rerun of `open`
# runs only when `open` went wrong.
PARTS = [
    ("open", 20, CUDA),
    ("open, synchronised", 15, CUDA),
    ("memcheck", 45, CUDA),
    ("racecheck", 35, CUDA),
    ("check mlp_lm", 25, CUDA),
    ("check gpt", 40, CUDA),
    ("train mlp_lm", 15, CUDA),
    ("train gpt", 20, CUDA),
    ("nccl", 30, CUDA + ("NCCL",)),
    ("elementwise", 15, CUDA),
    ("softmax", 15, CUDA),
    ("gemm", 15, CUDA),
    ("launch latency", 10, CUDA),
    ("gpt2 step", 40, CUDA),
    ("gpt2 train", 20, CUDA),
    ("peers", 70, ()),
]
BUDGET = dict((name, seconds) for name, seconds, _ in PARTS)
NEEDS = dict((name, needs) for name, _, needs in PARTS)


def plan(ck):
    """[(part, function)] for what gpu-prepare made; the parts it did not make are reported
    as not prepared."""
    models = ck.manifest["models"]
    out = []
    if "mlp_lm" in models:
        out += [("open", part_open), ("open, synchronised", part_open_synchronised),
                ("memcheck", part_memcheck), ("racecheck", part_racecheck)]
    for name in ("mlp_lm", "gpt"):
        if name in models:
            out.append((f"check {name}", part_check(name)))
    for name in ("mlp_lm", "gpt"):
        if name in models and "reference" in models[name]:
            out.append((f"train {name}", part_train(name)))
    if "mlp_dp" in models:
        out.append(("nccl", part_nccl))
    copy_mib = "16" if ck.cpu else "1024"
    if "elementwise" in models:
        out.append(("elementwise", part_speed("elementwise", "elementwise", [
            "--functions", "forward", "--copy-mib", copy_mib])))
    if "softmax" in models:
        out.append(("softmax", part_speed("softmax", "softmax", ["--functions", "forward"])))
    if "matmul" in models:
        out.append(("gemm", part_speed("matmul", "gemm", ["--functions", "forward"])))
    if "latency" in models:
        out.append(("launch latency", part_latency))
    if ck.gpt2:
        out += [("gpt2 step", part_gpt2_step), ("gpt2 train", part_gpt2_train)]
    out.append(("peers", part_peers))
    return out


# --- correctness -------------------------------------------------------------------------------

def train(ck, label, exe, steps, timeout, env=None, extra=()):
    """`EXE train` for `steps` steps on the backend under test: (code, text, losses)."""
    ckdir = os.path.join(ck.bin, label.replace(" ", "-").replace(",", "") + "-ck")
    logfile = os.path.join(ck.raw, label.replace(" ", "-").replace(",", "") + ".jsonl")
    shutil.rmtree(ckdir, ignore_errors=True)
    if os.path.exists(logfile):
        os.remove(logfile)
    code, text = ck.run(label, ck.launcher + [
        ck.exes[exe], "train", "--backend", ck.backend, "--data", ck.tokens, "--steps",
        str(steps), "--checkpoint-dir", ckdir, "--log", logfile] + list(extra), timeout, env=env)
    losses = []
    if os.path.exists(logfile):
        losses = [r["loss"] for r in common.read_json_lines(logfile) if "loss" in r]
    return code, text, losses


def device_line(text):
    """What the trainer's first line says runs: "cuda backend; NVIDIA H100 ... (sm_90, ...)"."""
    for line in text.splitlines():
        if " train: " in line and " backend" in line and "(" in line:
            return line[line.index("(") + 1:].rstrip(")").strip()
    return None


def part_open(ck, timeout):
    """The device opened (driver, cuBLASLt, the cubins) and mlp_lm's first steps: warm-up,
    graph capture, replay; the losses against the CPU reference's first steps."""
    code, text, losses = train(ck, "open", "mlp_lm", OPEN_STEPS, timeout, extra=OPEN_SCHEDULE)
    r = {"device": device_line(text)}
    ck.card_from(r["device"])
    if code is None:
        return {**r, "status": "timeout", "note": f"over {timeout:.0f} s; {diagnose.last_line(text)}"}
    if code != 0:
        return {**r, "status": "error", "note": diagnose.last_line(text)}
    ref = ck.manifest["models"]["mlp_lm"]["reference"][:OPEN_STEPS]
    curve = report.compare_curves(ref, losses, common.LOSS_RELATIVE_BOUND)
    return {**r, "status": curve["status"], "note": f"{OPEN_STEPS} steps: {curve['note']}",
            "losses": losses}


def part_open_synchronised(ck, timeout):
    """When `open` went wrong: once more with every step synchronised and checked and no CUDA
    graphs, so that a fault inside a graph replay is named by its step."""
    first = ck.results["parts"].get("open", {})
    if first.get("status") in ("passed", None):
        return {"status": "skipped", "note": "not needed: open " + (first.get("status") or "did not run")}
    env = dict(os.environ, EINC_CUDA_SYNC="1", EINC_CUDA_GRAPHS="0")
    code, text, losses = train(ck, "open, synchronised", "mlp_lm", OPEN_STEPS, timeout, env=env,
                               extra=OPEN_SCHEDULE)
    if code is None:
        return {"status": "timeout", "note": f"over {timeout:.0f} s; {diagnose.last_line(text)}"}
    if code != 0:
        return {"status": "error", "note": "located: " + diagnose.last_line(text)}
    ref = ck.manifest["models"]["mlp_lm"]["reference"][:OPEN_STEPS]
    curve = report.compare_curves(ref, losses, common.LOSS_RELATIVE_BOUND)
    return {"status": curve["status"], "losses": losses,
            "note": f"without graphs, each step synchronised: {curve['note']}"}


def sanitized(ck, label, tool, cmd, timeout):
    """cmd under `compute-sanitizer --tool TOOL`: its verdict."""
    if not ck.sanitizer:
        return {"status": "skipped", "note": f"compute-sanitizer not available ({ck.sanitizer_why})"}
    code, text = ck.run(label, [ck.sanitizer, "--tool", tool] + cmd, timeout)
    if code is None:
        return {"status": "timeout", "note": f"over {timeout:.0f} s; {diagnose.last_line(text)}"}
    return diagnose.sanitizer_verdict(text, code)


def part_memcheck(ck, timeout):
    ckdir = os.path.join(ck.bin, "memcheck-ck")
    shutil.rmtree(ckdir, ignore_errors=True)
    return sanitized(ck, "memcheck", "memcheck", ck.launcher + [
        ck.exes["mlp_lm"], "train", "--backend", ck.backend, "--data", ck.tokens, "--steps",
        str(OPEN_STEPS), "--checkpoint-dir", ckdir] + OPEN_SCHEDULE, timeout)


def part_racecheck(ck, timeout):
    """One `check` (every distinct kernel once, no timing) under racecheck: the row kernels'
    shared memory."""
    return sanitized(ck, "racecheck", "racecheck", ck.launcher + [
        ck.exes["mlp_lm"], "check", "--backend", ck.backend, "--repeat", "0"], timeout)


def check_json(ck, label, name, args, timeout):
    """`NAME check ARGS --json`: (status, the JSON or None, note)."""
    path = os.path.join(ck.raw, label.replace(" ", "-") + ".json")
    if os.path.exists(path):
        os.remove(path)
    code, text = ck.run(label, ck.launcher + [ck.exes[name], "check", "--backend", ck.backend,
                                              "--json", path] + args, timeout)
    data = None
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    if code is None:
        return "timeout", data, f"over {timeout:.0f} s"
    if data is None:
        return "error", None, diagnose.last_line(text)
    return ("passed" if code == 0 else "failed"), data, "" if code == 0 else first_problem(data, text)


def first_problem(data, text):
    for s in data.get("steps", []):
        if not s.get("passed", True):
            return f"@{s['function']} step {s['index']} {s['what']}: {s['error'] or s['problem']}"[:300]
    for f in data.get("functions", []):
        if f.get("error"):
            return f"@{f['name']}: {f['error']}"[:300]
    return diagnose.last_line(text)


def part_check(name):
    def fn(ck, timeout):
        status, data, note = check_json(ck, f"check {name}", name, ["--repeat", "3"], timeout)
        r = {"status": status, "note": note}
        if data:
            r.update(report.summarise_check(data))
        return r
    return fn


def part_train(name):
    def fn(ck, timeout):
        ref = ck.manifest["models"][name]["reference"]
        code, text, got = train(ck, f"train {name}", name, len(ref), timeout)
        if code is None:
            return {"status": "timeout", "note": f"over {timeout:.0f} s"}
        if code != 0:
            return {"status": "error", "note": diagnose.last_line(text)}
        return report.compare_curves(ref, got, common.LOSS_RELATIVE_BOUND)
    return fn


def part_nccl(ck, timeout):
    """One rank through NCCL (no mpirun): the ordered sum (all-to-all, the ordered add,
    all-gather) and the all-reduce, each against the run without NCCL, whose sum is
    compiled code: the checkpoints must be the same bytes."""
    if ck.cpu:
        return {"status": "skipped", "note": "cpu mode: --distributed nccl needs the cuda backend"}
    started = time.time()
    env = dict(os.environ)
    lib = common.nccl_library()
    if lib and not env.get("EINC_NCCL_LIBRARY"):
        env["EINC_NCCL_LIBRARY"] = lib
    runs = [("plain", []), ("ordered", ["--distributed", "nccl"]),
            ("fast", ["--distributed", "nccl", "--allreduce", "fast"])]
    files, ranks = {}, ""
    for name, extra in runs:
        left = timeout - (time.time() - started)
        if left < 5:
            return {"status": "timeout", "note": f"over {timeout:.0f} s before the {name} run"}
        ckdir = os.path.join(ck.bin, "nccl-" + name)
        shutil.rmtree(ckdir, ignore_errors=True)
        code, text = ck.run(f"nccl {name}", ck.launcher + [
            ck.exes["mlp_dp"], "train", "--backend", "cuda", "--data", ck.tokens,
            "--steps", str(common.TRAIN_STEPS), "--checkpoint-dir", ckdir] + extra, left, env=env)
        if code is None:
            return {"status": "timeout", "note": f"the {name} run: over {left:.0f} s"}
        if code != 0:
            return {"status": "error", "note": f"the {name} run: {diagnose.last_line(text)}"}
        files[name] = os.path.join(ckdir, "last.safetensors")
        for line in text.splitlines():
            if line.strip().startswith("ranks") and name == "ordered":
                ranks = line.strip()
    same = {n: filecmp.cmp(files["plain"], files[n], shallow=False) for n in ("ordered", "fast")}
    differ = [n for n, ok in same.items() if not ok]
    note = (f"{common.TRAIN_STEPS} steps: the checkpoints of "
            + ("ordered and fast equal the run without NCCL byte for byte" if not differ
               else f"{', '.join(differ)} differ from the run without NCCL")
            + (f" ({ranks})" if ranks else ""))
    return {"status": "failed" if differ else "passed", "note": note, "same": same}


# --- speed -------------------------------------------------------------------------------------

def part_speed(name, kind, args):
    def fn(ck, timeout):
        status, data, note = check_json(ck, kind, name, args, timeout)
        r = {"status": status, "note": note}
        if data:
            r.update(report.speed_row(data, kind))
        return r
    return fn


def part_latency(ck, timeout):
    """The tiny gpt's @train_step replayed whole: seconds per kernel, beside the profile's
    kernelLatencySeconds (the report's estimate)."""
    status, data, note = check_json(ck, "launch latency", "latency", [
        "--no-compare", "--functions", "train_step", "--repeat", "50"], timeout)
    profile = ck.manifest["models"]["latency"]["profile"]
    r = {"status": "measured" if status == "passed" else status, "note": note,
         "profile": profile}
    if data:
        r.update(report.latency_row(data, profile))
    return r


def part_gpt2_step(ck, timeout):
    status, data, note = check_json(ck, "gpt2 step", ck.gpt2, [
        "--no-compare", "--functions", "train_step", "--repeat", "5"], timeout)
    r = {"status": "measured" if status == "passed" else status, "note": note,
         "profile": ck.manifest["models"][ck.gpt2]["profile"]}
    if data:
        r.update(report.step_row(data, r["profile"]))
    return r


def part_gpt2_train(ck, timeout):
    code, text, _ = train(ck, "gpt2 train", ck.gpt2, 4 if ck.cpu else 8, timeout)
    if code is None:
        return {"status": "timeout", "note": f"over {timeout:.0f} s"}
    path = os.path.join(ck.raw, "gpt2-train.jsonl")
    if code != 0 or not os.path.exists(path):
        return {"status": "error", "note": diagnose.last_line(text)}
    rows = [row for row in common.read_json_lines(path) if "loss" in row]
    return report.train_speed(rows)


def part_peers(ck, timeout):
    """bench/gpu_peers.py on GPT-2 small: the machine's ceilings, PyTorch eager, then
    torch.compile (its compilation is the longest wait: the JSON is written after each, so a
    timeout keeps what was measured)."""
    if not ck.results["environment"].get("torch"):
        return {"status": "skipped", "note": "no torch on this machine"}
    models = ck.manifest["models"]
    dims = models[ck.gpt2]["dims"] if ck.gpt2 else common.GPT2
    gemm = models.get("matmul", {}).get("dims", {})
    shape = f"{gemm.get('m', 8192)}x{gemm.get('n', 8192)}x{gemm.get('k', 8192)}"
    path = os.path.join(ck.raw, "peers.json")
    cmd = [sys.executable, os.path.join(common.ROOT, "bench", "gpu_peers.py"), "--out", path,
           "--gemm", shape]
    for k in ("batch", "ctx", "d", "layers", "heads", "vocab"):
        cmd += [f"--{k}", str(dims.get(k, common.GPT2[k]))]
    if ck.cpu:
        cmd += ["--device", "cpu", "--modes", "eager", "--steps", "2", "--warmup", "1",
                "--copy-mib", "16"]
    else:
        cmd += ["--modes", "eager,compile", "--steps", "8", "--warmup", "3"]
    code, text = ck.run("peers", cmd, timeout, einc=False)
    peers = None
    if os.path.exists(path):
        with open(path) as f:
            peers = json.load(f)
    if code is None:
        return {"status": "timeout", "note": f"over {timeout:.0f} s (what it measured is kept)",
                **(report.peers_row(peers) if peers else {})}
    if code != 0 or not peers:
        return {"status": "error", "note": diagnose.last_line(text)}
    return {"status": "measured", "note": "", **report.peers_row(peers)}
