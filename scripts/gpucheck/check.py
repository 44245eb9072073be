"""scripts/gpu-check OUTDIR: the one command that checks einc's CUDA backend on a lent GPU
(issue 13, item 6; docs/cuda-backend.md, "Checking on a GPU").

    scripts/gpu-check OUTDIR [--cpu] [--gpu-dir gpu] [--budget SECONDS]

Runs what scripts/gpu-prepare compiled here (gpu/: compressed executables of `einc compile
--target cuda` and a manifest), in order, each part with a time budget (skipped with a note
rather than overrunning):
  (a) `NAME check` of both examples: every distinct kernel and GEMM on the GPU against the
      CPU device, within its bound;
  (b) 20 training steps of both examples on the GPU against the CPU reference curves made
      here (fp32: within 1e-4 relative per step); mlp_lm with two micro-batches a step
      trained with --distributed nccl (one rank; ordered and fast) and without: the
      checkpoints byte for byte equal (issue 15, item 5);
  (c) speed: copy bandwidth, a fused elementwise kernel's and a softmax's row kernels' GB/s,
      cuBLASLt bf16 8192³ TFLOP/s, GPT-2 small's bf16-mixed training step (tokens/s, MFU
      against the h200 profile's peak, predicted vs measured per kernel class), and
      bench/gpu_peers.py (PyTorch eager, torch.compile, SDPA) on the same model;
then the Goals of issue 13 as pass/fail. Writes OUTDIR/gpu-check.md and OUTDIR/gpu-check.json
(and each part's raw output beside them). --cpu (or EINC_GPU_CHECK_CPU=1): the same flow on the
CPU backend with what `gpu-prepare --cpu` made (tiny dims; the peers only where torch is).
Python 3 standard library only (torch only inside the peers' own process).
"""
import argparse
import filecmp
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import report  # noqa: E402

# Seconds each part may take at most on the GPU machine, in the order they run; the whole
# check stays under --budget (default 450 s: the issue allows 8 minutes).
PARTS = [
    ("check mlp_lm", 50), ("check gpt", 70), ("train mlp_lm", 30), ("train gpt", 40), ("nccl", 60),
    ("elementwise", 40), ("softmax", 40), ("gemm", 60), ("gpt2 step", 70), ("peers", 170),
    ("gpt2 train", 60),
]


class Check:
    def __init__(self, a):
        self.a = a
        self.cpu = a.cpu
        self.backend = "cpu" if a.cpu else "cuda"
        self.start = time.time()
        self.out = os.path.abspath(a.outdir)
        self.results = {"mode": "cpu" if a.cpu else "gpu", "backend": self.backend,
                        "parts": {}, "notes": [], "environment": {}}
        self.exes = {}
        self.no_gpu = None  # why cuda runs cannot start, once known

    def elapsed(self):
        return time.time() - self.start

    def progress(self, message):
        print(f"[gpu-check {self.elapsed():6.1f} s] {message}", flush=True)

    def note(self, message):
        self.results["notes"].append(message)
        self.progress(message)

    # --- setup -------------------------------------------------------------------------------

    def unpack(self):
        gpu_dir = os.path.abspath(self.a.gpu_dir)
        path = os.path.join(gpu_dir, common.MANIFEST)
        if not os.path.exists(path):
            raise SystemExit(f"gpu-check: no {path}: run scripts/gpu-prepare"
                             f"{' --cpu' if self.cpu else ''} first (on the development machine)")
        with open(path) as f:
            self.manifest = json.load(f)
        if self.manifest.get("format") != common.MANIFEST_FORMAT:
            raise SystemExit(f"gpu-check: {path} is of format {self.manifest.get('format')}, "
                             f"this script reads {common.MANIFEST_FORMAT}: run gpu-prepare again")
        want = "cpu" if self.cpu else "gpu"
        if self.manifest.get("mode") != want:
            raise SystemExit(f"gpu-check: {gpu_dir} was prepared for the {self.manifest.get('mode')} "
                             f"mode, not {want}: run scripts/gpu-prepare{' --cpu' if self.cpu else ''}")
        if not self.cpu and self.manifest.get("target") != "cuda":
            self.note("the executables were compiled without --target cuda: they carry no CUDA "
                      "kernels, so every cuda part fails")
        self.bin = tempfile.mkdtemp(prefix="einc-gpu-check-")
        for name, m in self.manifest["models"].items():
            packed = os.path.join(gpu_dir, m["file"])
            if not os.path.exists(packed):
                raise SystemExit(f"gpu-check: {packed} is missing (the manifest lists it)")
            if common.sha256(packed) != m["sha256_xz"]:
                raise SystemExit(f"gpu-check: {packed} does not match its sha256 in the manifest")
            exe = os.path.join(self.bin, name)
            with open(packed, "rb") as f, open(exe, "wb") as g:
                g.write(lzma.decompress(f.read()))
            if common.sha256(exe) != m["sha256"]:
                raise SystemExit(f"gpu-check: {name} unpacked does not match its sha256")
            os.chmod(exe, 0o755)
            self.exes[name] = exe
        self.tokens = os.path.join(self.bin, "tokens.bin")
        common.write_tokens(self.tokens)
        if common.sha256(self.tokens) != self.manifest["tokens"]["sha256"]:
            raise SystemExit("gpu-check: the token file made from examples/data/kjv.txt differs "
                             "from the one the references were trained on")
        self.progress(f"unpacked {len(self.exes)} executables (manifest of {self.manifest['einc']}, "
                      f"{self.manifest['created']})")

    def environment(self):
        env = self.results["environment"]
        env["python"] = sys.version.split()[0]
        env["cpus"] = os.cpu_count()
        smi = shutil.which("nvidia-smi")
        if smi:
            r = subprocess.run([smi, "--query-gpu=name,driver_version,memory.total",
                                "--format=csv,noheader"], capture_output=True, text=True)
            env["gpu"] = r.stdout.strip() or r.stderr.strip()
        else:
            env["gpu"] = None
        try:
            r = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__, "
                                "torch.cuda.is_available())"], capture_output=True, text=True,
                               timeout=60)
            env["torch"] = r.stdout.strip() if r.returncode == 0 else None
        except subprocess.TimeoutExpired:
            env["torch"] = None
        self.progress(f"GPU: {env['gpu'] or 'none (no nvidia-smi)'}; torch: {env['torch'] or 'none'}")
        if not self.cpu and not env["gpu"]:
            self.note("nvidia-smi is not on PATH: the first cuda run says whether there is a GPU")

    # --- running -----------------------------------------------------------------------------

    def budget_for(self, part):
        allowed = dict(PARTS)[part]
        left = self.a.budget - self.elapsed()
        return min(allowed, left - 5)

    def run(self, part, cmd, timeout, env=None):
        """Runs cmd; its output goes to OUTDIR/<part>.log. (returncode or None on timeout, text)."""
        logname = os.path.join(self.out, part.replace(" ", "-") + ".log")
        self.progress(f"{part}: {' '.join(os.path.basename(c) if i == 0 else c for i, c in enumerate(cmd))}")
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=self.bin,
                               env=env)
            code, text = r.returncode, r.stdout + r.stderr
        except subprocess.TimeoutExpired as e:
            code = None
            text = ((e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes)
                    else (e.stdout or "")) + f"\n(timed out after {timeout:.0f} s)\n"
        with open(logname, "w") as f:
            f.write(text)
        if code not in (0, None) and not self.cpu and "--backend cuda" in text and (
                "no CUDA driver" in text or "no CUDA device" in text):
            self.no_gpu = "no GPU: " + text.strip().splitlines()[-1]
        return code, text

    def part(self, name, fn):
        timeout = self.budget_for(name)
        if timeout < 10:
            self.results["parts"][name] = {"status": "skipped",
                                           "note": f"skipped: {self.elapsed():.0f} s of the "
                                                   f"{self.a.budget:.0f} s budget gone"}
            self.note(f"{name}: skipped (budget)")
            return
        if self.no_gpu and name != "peers":
            self.results["parts"][name] = {"status": "skipped", "note": self.no_gpu}
            self.progress(f"{name}: skipped ({self.no_gpu})")
            return
        started = self.part_started = time.time()
        try:
            result = fn(timeout)
        except Exception as e:  # one part's surprise must not lose the others' results
            result = {"status": "error", "note": f"{type(e).__name__}: {e}"}
        result["seconds"] = round(time.time() - started, 1)
        self.results["parts"][name] = result
        self.progress(f"{name}: {result['status']}" + (f" ({result['note']})" if result.get("note") else ""))

    def check_json(self, name, args, timeout):
        """`NAME check ARGS --json`: (status, the JSON or None, note)."""
        path = os.path.join(self.out, f"check-{name}.json")
        if os.path.exists(path):
            os.remove(path)
        code, text = self.run(f"check {name}", [self.exes[name], "check", "--backend", self.backend,
                                                "--json", path] + args, timeout)
        data = None
        if os.path.exists(path):
            with open(path) as f:
                data = json.load(f)
        if code is None:
            return "timeout", data, f"over {timeout:.0f} s"
        if data is None:
            return "error", None, last_line(text)
        return ("passed" if code == 0 else "failed"), data, "" if code == 0 else first_problem(data, text)

    # --- the parts ---------------------------------------------------------------------------

    def part_check(self, name):
        def fn(timeout):
            status, data, note = self.check_json(name, ["--repeat", "3"], timeout)
            r = {"status": status, "note": note}
            if data:
                r.update(report.summarise_check(data))
            return r
        return fn

    def part_train(self, name):
        def fn(timeout):
            ref = self.manifest["models"][name]["reference"]
            ck = os.path.join(self.bin, name + "-ck")
            logfile = os.path.join(self.out, f"train-{name}.jsonl")
            shutil.rmtree(ck, ignore_errors=True)
            if os.path.exists(logfile):
                os.remove(logfile)
            code, text = self.run(f"train {name}", [
                self.exes[name], "train", "--backend", self.backend, "--data", self.tokens,
                "--steps", str(len(ref)), "--checkpoint-dir", ck, "--log", logfile], timeout)
            if code is None:
                return {"status": "timeout", "note": f"over {timeout:.0f} s"}
            if code != 0 or not os.path.exists(logfile):
                return {"status": "error", "note": last_line(text)}
            got = [row["loss"] for row in common.read_json_lines(logfile) if "loss" in row]
            return report.compare_curves(ref, got, common.LOSS_RELATIVE_BOUND)
        return fn

    def part_nccl(self, timeout):
        """One rank through NCCL (no mpirun): the ordered sum (all-to-all, the ordered add,
        all-gather) and the all-reduce, each against the run without NCCL, whose sum is
        compiled code: the checkpoints must be the same bytes."""
        if self.cpu:
            return {"status": "skipped", "note": "cpu mode: --distributed nccl needs the cuda backend"}
        env = dict(os.environ)
        lib = common.nccl_library()
        if lib and not env.get("EINC_NCCL_LIBRARY"):
            env["EINC_NCCL_LIBRARY"] = lib
        runs = [("plain", []), ("ordered", ["--distributed", "nccl"]),
                ("fast", ["--distributed", "nccl", "--allreduce", "fast"])]
        files, ranks = {}, ""
        for name, extra in runs:
            left = timeout - (time.time() - self.part_started)
            if left < 5:
                return {"status": "timeout", "note": f"over {timeout:.0f} s before the {name} run"}
            ck = os.path.join(self.bin, "nccl-" + name)
            shutil.rmtree(ck, ignore_errors=True)
            code, text = self.run(f"nccl {name}", [
                self.exes["mlp_dp"], "train", "--backend", "cuda", "--data", self.tokens,
                "--steps", str(common.TRAIN_STEPS), "--checkpoint-dir", ck] + extra, left, env=env)
            if code is None:
                return {"status": "timeout", "note": f"the {name} run: over {left:.0f} s"}
            if code != 0:
                return {"status": "error", "note": f"the {name} run: {last_line(text)}"}
            files[name] = os.path.join(ck, "last.safetensors")
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

    def part_speed(self, name, kind, args):
        def fn(timeout):
            status, data, note = self.check_json(name, args, timeout)
            r = {"status": status, "note": note}
            if data:
                r.update(report.speed_row(data, kind))
            return r
        return fn

    def part_gpt2_step(self, timeout):
        status, data, note = self.check_json("gpt2", ["--no-compare", "--functions", "train_step",
                                                      "--repeat", "5"], timeout)
        r = {"status": "measured" if status == "passed" else status, "note": note}
        if data:
            r.update(report.step_row(data))
        return r

    def part_gpt2_train(self, timeout):
        logfile = os.path.join(self.out, "train-gpt2.jsonl")
        ck = os.path.join(self.bin, "gpt2-ck")
        if os.path.exists(logfile):
            os.remove(logfile)
        steps = 4 if self.cpu else 10
        code, text = self.run("gpt2 train", [
            self.exes["gpt2"], "train", "--backend", self.backend, "--data", self.tokens,
            "--steps", str(steps), "--checkpoint-dir", ck, "--log", logfile], timeout)
        if code is None:
            return {"status": "timeout", "note": f"over {timeout:.0f} s"}
        if code != 0 or not os.path.exists(logfile):
            return {"status": "error", "note": last_line(text)}
        rows = [row for row in common.read_json_lines(logfile) if "loss" in row]
        return report.train_speed(rows)

    def part_peers(self, timeout):
        env = self.results["environment"]
        if not env.get("torch"):
            return {"status": "skipped", "note": "no torch on this machine"}
        dims = self.manifest["models"]["gpt2"]["dims"] if "gpt2" in self.manifest["models"] else common.GPT2
        gemm = self.manifest["models"].get("matmul", {}).get("dims", {})
        shape = f"{gemm.get('m', 8192)}x{gemm.get('n', 8192)}x{gemm.get('k', 8192)}"
        path = os.path.join(self.out, "peers.json")
        cmd = [sys.executable, os.path.join(common.ROOT, "bench", "gpu_peers.py"), "--out", path,
               "--gemm", shape]
        for k in ("batch", "ctx", "d", "layers", "heads", "vocab"):
            cmd += [f"--{k}", str(dims.get(k, common.GPT2[k]))]
        if self.cpu:
            cmd += ["--device", "cpu", "--modes", "eager", "--steps", "2", "--warmup", "1",
                    "--copy-mib", "16"]
        else:
            cmd += ["--steps", "10", "--warmup", "3"]
        code, text = self.run("peers", cmd, timeout)
        if code is None:
            return {"status": "timeout", "note": f"over {timeout:.0f} s"}
        if code != 0 or not os.path.exists(path):
            return {"status": "error", "note": last_line(text)}
        with open(path) as f:
            return {"status": "measured", "note": "", **report.peers_row(json.load(f))}

    def main(self):
        os.makedirs(self.out, exist_ok=True)
        self.unpack()
        self.environment()
        models = self.manifest["models"]
        copy_mib = "16" if self.cpu else "1024"
        plan = []
        for name in ("mlp_lm", "gpt"):
            if name in models:
                plan.append((f"check {name}", self.part_check(name)))
        for name in ("mlp_lm", "gpt"):
            if name in models and "reference" in models[name]:
                plan.append((f"train {name}", self.part_train(name)))
        if "mlp_dp" in models:
            plan.append(("nccl", self.part_nccl))
        if "elementwise" in models:
            plan.append(("elementwise", self.part_speed("elementwise", "elementwise", [
                "--functions", "forward", "--copy-mib", copy_mib])))
        if "softmax" in models:
            plan.append(("softmax", self.part_speed("softmax", "softmax", ["--functions", "forward"])))
        if "matmul" in models:
            plan.append(("gemm", self.part_speed("matmul", "gemm", ["--functions", "forward"])))
        if "gpt2" in models:
            plan.append(("gpt2 step", self.part_gpt2_step))
        plan.append(("peers", self.part_peers))
        if "gpt2" in models:
            plan.append(("gpt2 train", self.part_gpt2_train))
        for name, fn in plan:
            self.part(name, fn)
        missing = [n for n, _ in PARTS if n not in self.results["parts"]]
        for n in missing:
            self.results["parts"][n] = {"status": "skipped", "note": "not prepared (gpu-prepare --models)"}
        if self.no_gpu:
            self.results["notes"].append(self.no_gpu)
        self.results["goals"] = report.goals(self.results, self.manifest)
        self.results["seconds"] = round(self.elapsed(), 1)
        self.results["manifest"] = {k: self.manifest[k] for k in ("einc", "git", "created", "target",
                                                                  "device_profile")}
        with open(os.path.join(self.out, "gpu-check.json"), "w") as f:
            json.dump(self.results, f, indent=1)
        with open(os.path.join(self.out, "gpu-check.md"), "w") as f:
            f.write(report.markdown(self.results))
        shutil.rmtree(self.bin, ignore_errors=True)
        ok = report.correct(self.results)
        self.progress(f"wrote {self.out}/gpu-check.md and gpu-check.json: "
                      + ("every correctness part passed" if ok else "FAILED (see gpu-check.md)"))
        if self.no_gpu:
            print(f"gpu-check: {self.no_gpu}", file=sys.stderr)
            return 3
        return 0 if ok else 1


def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1][:300] if lines else "no output"


def first_problem(data, text):
    for s in data.get("steps", []):
        if not s.get("passed", True):
            return f"@{s['function']} step {s['index']} {s['what']}: {s['error'] or s['problem']}"[:300]
    for f in data.get("functions", []):
        if f.get("error"):
            return f"@{f['name']}: {f['error']}"[:300]
    return last_line(text)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("outdir")
    p.add_argument("--cpu", action="store_true", default=os.environ.get("EINC_GPU_CHECK_CPU") == "1",
                   help="the CPU backend with gpu-prepare --cpu's executables (also EINC_GPU_CHECK_CPU=1)")
    p.add_argument("--gpu-dir", default=os.path.join(common.ROOT, "gpu"))
    p.add_argument("--budget", type=float, default=450, help="seconds for the whole check")
    return Check(p.parse_args()).main()


if __name__ == "__main__":
    sys.exit(main())
