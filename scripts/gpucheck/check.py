"""scripts/gpu-check OUTDIR: the one command that checks einc's CUDA backend on a lent GPU
(issues 13 and 26; docs/cuda-backend.md, "Checking on a GPU").

    scripts/gpu-check OUTDIR [--cpu] [--gpu-dir gpu] [--budget SECONDS] [--sanitizer PATH]

Runs what scripts/gpu-prepare compiled here (gpu/: compressed executables of `einc compile
--target cuda`, compute-sanitizer and a manifest), in the order and within the budgets of
parts.PARTS, each under its timeout (its output kept): the device opened and 3 steps of
mlp_lm (warm-up, graph capture, replay; once more synchronised and without graphs if that
went wrong); memcheck on those steps and racecheck on one `check`; `check` of both examples
against the CPU; their 20-step curves against the references made here; NCCL on one GPU; the
speed rows (copy, fused elementwise, softmax, cuBLASLt GEMM, GPT-2 small's step on the card's
profile); then PyTorch eager and torch.compile on the same GPT-2 small. A library the runtime
could not open is named once ("library missing: cuBLASLt") and the parts that need it are
skipped. OUTDIR gets three files, rewritten after every part: gpu-check.md, gpu-check.json and
gpu-check.tar.xz (every part's raw output). --cpu (or EINC_GPU_CHECK_CPU=1): the same flow on
the CPU backend with what `gpu-prepare --cpu` made. EINC_GPU_CHECK_LAUNCHER: a command put
before every einc executable run (for the tests). Python 3 standard library only.
"""
import argparse
import importlib.metadata
import json
import lzma
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import diagnose  # noqa: E402
import parts  # noqa: E402
import report  # noqa: E402

# What OUTDIR holds afterwards (the device machine sends back at most 8 files).
OUTPUTS = ("gpu-check.md", "gpu-check.json", "gpu-check.tar.xz")


class Refused(Exception):
    """gpu/ is missing, damaged or of the other mode: nothing runs (exit status 2)."""


def slug(label):
    return label.replace(",", "").replace(" ", "-")


class Check:
    def __init__(self, a):
        self.a = a
        self.cpu = a.cpu
        self.backend = "cpu" if a.cpu else "cuda"
        self.start = time.time()
        self.out = os.path.abspath(a.outdir)
        self.results = {"mode": "cpu" if a.cpu else "gpu", "backend": self.backend,
                        "parts": {}, "notes": [], "missing": [], "environment": {},
                        "budgets": {name: seconds for name, seconds, _ in parts.PARTS}}
        self.exes = {}
        self.blocked = {}  # what a part needs -> the line saying it is missing
        self.launcher = shlex.split(os.environ.get("EINC_GPU_CHECK_LAUNCHER", ""))
        self.profile = common.DEVICE_PROFILE if a.cpu else None
        self.sanitizer, self.sanitizer_why = None, ""
        self.bin = tempfile.mkdtemp(prefix="einc-gpu-check-")
        self.raw = os.path.join(self.bin, "gpu-check")  # the archive's folder
        os.makedirs(self.raw)

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
            raise Refused(f"no {path}: run scripts/gpu-prepare"
                             f"{' --cpu' if self.cpu else ''} first (on the development machine)")
        with open(path) as f:
            self.manifest = json.load(f)
        if self.manifest.get("format") != common.MANIFEST_FORMAT:
            raise Refused(f"{path} is of format {self.manifest.get('format')}, "
                             f"this script reads {common.MANIFEST_FORMAT}: run gpu-prepare again")
        want = "cpu" if self.cpu else "gpu"
        if self.manifest.get("mode") != want:
            raise Refused(f"{gpu_dir} was prepared for the {self.manifest.get('mode')} "
                             f"mode, not {want}: run scripts/gpu-prepare{' --cpu' if self.cpu else ''}")
        if not self.cpu and self.manifest.get("target") != "cuda":
            self.note("the executables were compiled without --target cuda: they carry no CUDA "
                      "kernels, so every cuda part fails")
        for name, m in self.manifest["models"].items():
            exe = os.path.join(self.bin, name)
            with open(self.verified(gpu_dir, m["file"], m["sha256_xz"]), "rb") as f, \
                    open(exe, "wb") as g:
                g.write(lzma.decompress(f.read()))
            if common.sha256(exe) != m["sha256"]:
                raise Refused(f"{name} unpacked does not match its sha256")
            os.chmod(exe, 0o755)
            self.exes[name] = exe
        self.tokens = os.path.join(self.bin, "tokens.bin")
        common.write_tokens(self.tokens)
        if common.sha256(self.tokens) != self.manifest["tokens"]["sha256"]:
            raise Refused("the token file made from examples/data/kjv.txt differs "
                             "from the one the references were trained on")
        self.find_sanitizer(gpu_dir)
        self.progress(f"unpacked {len(self.exes)} executables (manifest of {self.manifest['einc']}, "
                      f"{self.manifest['created']}); compute-sanitizer: "
                      f"{self.sanitizer or 'none'} ({self.sanitizer_why})")

    @staticmethod
    def verified(gpu_dir, name, sha):
        path = os.path.join(gpu_dir, name)
        if not os.path.exists(path):
            raise Refused(f"{path} is missing (the manifest lists it)")
        if common.sha256(path) != sha:
            raise Refused(f"{path} does not match its sha256 in the manifest")
        return path

    def find_sanitizer(self, gpu_dir):
        """--sanitizer, else the one gpu-prepare packed, else one this machine has (PATH, the
        CUDA toolkit, a Python package's). --cpu looks only at --sanitizer."""
        given = self.a.sanitizer or os.environ.get("EINC_GPU_CHECK_SANITIZER", "")
        if given:
            self.sanitizer, self.sanitizer_why = os.path.abspath(given), "--sanitizer"
            return
        if self.cpu:
            self.sanitizer_why = "cpu mode: --sanitizer names one"
            return
        candidates = []
        packed = self.manifest.get("sanitizer")
        if packed:
            with tarfile.open(self.verified(gpu_dir, packed["file"], packed["sha256_xz"])) as t:
                if hasattr(tarfile, "data_filter"):  # Python 3.12 and the backports
                    t.extractall(self.bin, filter="data")
                else:
                    t.extractall(self.bin)
            candidates.append((os.path.join(self.bin, "compute-sanitizer", "compute-sanitizer"),
                               f"gpu-prepare's, {packed['version']}"))
        on_path = shutil.which("compute-sanitizer")
        if on_path:
            candidates.append((on_path, "PATH"))
        for d in ("/usr/local/cuda/bin", "/usr/local/cuda/compute-sanitizer"):
            candidates.append((os.path.join(d, "compute-sanitizer"), "the CUDA toolkit"))
        for entry in sys.path:
            for sub in ("cu13/compute-sanitizer", "cu13/bin", "cuda_sanitizer_api/compute-sanitizer"):
                candidates.append((os.path.join(entry or ".", "nvidia", sub, "compute-sanitizer"),
                                   "a Python package"))
        tried = []
        for path, where in candidates:
            if not os.access(path, os.X_OK) or path in tried:
                continue
            tried.append(path)
            try:
                r = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20)
            except (OSError, subprocess.TimeoutExpired) as e:
                self.note(f"compute-sanitizer {path} did not start: {e}")
                continue
            if r.returncode == 0:
                version = next((l for l in r.stdout.splitlines() if l.startswith("Version")), "")
                self.sanitizer, self.sanitizer_why = path, f"{where}; {version}".strip("; ")
                return
            self.note(f"compute-sanitizer {path} --version exited {r.returncode}")
        self.sanitizer_why = ("none of gpu-prepare, PATH, /usr/local/cuda or the Python packages "
                              "has one that starts")

    def environment(self):
        env = self.results["environment"]
        env["python"] = sys.version.split()[0]
        env["cpus"] = os.cpu_count()
        env["gpu"] = None
        smi = shutil.which("nvidia-smi")
        if smi:
            try:
                r = subprocess.run([smi, "--query-gpu=name,driver_version,memory.total",
                                    "--format=csv,noheader"], capture_output=True, text=True,
                                   timeout=30)
                env["gpu"] = r.stdout.strip() or r.stderr.strip()
            except subprocess.TimeoutExpired:
                env["gpu"] = "nvidia-smi did not answer in 30 s"
        try:  # its version without importing it (seconds)
            env["torch"] = importlib.metadata.version("torch")
        except importlib.metadata.PackageNotFoundError:
            env["torch"] = None
        if not self.cpu:
            self.card_from(env["gpu"])
        self.progress(f"GPU: {env['gpu'] or 'none (no nvidia-smi)'}; profile "
                      f"{self.profile or '(from the open part)'}; torch: {env['torch'] or 'none'}")

    def card_from(self, description):
        """The device profile of the card a description names (nvidia-smi's, or the device
        line of the first run), once."""
        if self.profile is None and description:
            self.profile = common.profile_for(description)
            if self.profile:
                self.results["environment"]["profile"] = self.profile

    @property
    def gpt2(self):
        """GPT-2 small's executable for the card's profile (else the default profile's)."""
        names = [n for n in self.manifest["models"] if n.startswith("gpt2-")]
        for p in (self.profile, common.DEVICE_PROFILE):
            if f"gpt2-{p}" in names:
                return f"gpt2-{p}"
        return names[0] if names else None

    # --- running -----------------------------------------------------------------------------

    def run(self, label, cmd, timeout, env=None, einc=True):
        """Runs cmd (its own process group, killed whole at the timeout); its output goes to
        the archive's <label>.log. (returncode or None on timeout, text)."""
        logname = os.path.join(self.raw, slug(label) + ".log")
        shown = " ".join(os.path.basename(c) if i == 0 or c.startswith(self.bin) else c
                         for i, c in enumerate(cmd))
        self.progress(f"{label}: {shown}")
        with open(logname, "w") as f:
            p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=self.bin, env=env,
                                 start_new_session=True)
            try:
                code = p.wait(timeout=max(1.0, timeout))
            except subprocess.TimeoutExpired:
                code = None
                for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, None)):
                    try:
                        os.killpg(p.pid, sig)
                        p.wait(timeout=wait)
                        break
                    except (ProcessLookupError, subprocess.TimeoutExpired):
                        continue
        with open(logname, errors="replace") as f:
            text = f.read()
        if code is None:  # said in the log; the caller says it in its note
            with open(logname, "a") as f:
                f.write(f"\n(timed out after {timeout:.0f} s)\n")
        if einc:
            self.notice(text)
        return code, text

    def notice(self, text):
        """A missing library or no GPU in a run's output: said once, and the parts that need
        it are skipped from then on."""
        found = diagnose.missing_library(text)
        if found and found[0] not in self.blocked:
            self.blocked[found[0]] = found[1]
            self.results["missing"].append({"library": found[0], "line": found[1]})
            self.progress(f"library missing: {found[0]} ({found[1]})")
        device = diagnose.no_device(text)
        if device and "GPU" not in self.blocked:
            self.blocked["GPU"] = device
            self.results["missing"].append({"library": "GPU", "line": device})
            self.progress(f"no GPU: {device}")

    def part(self, name, fn):
        needs = [n for n in parts.NEEDS[name] if n in self.blocked]
        if needs:
            what = needs[0]
            note = "no GPU" if what == "GPU" else f"library missing: {what}"
            self.results["parts"][name] = {"status": "skipped", "note": note}
            self.progress(f"{name}: skipped ({note})")
            return
        timeout = min(parts.BUDGET[name], self.a.budget - self.elapsed() - 5)
        if timeout < 5:
            self.results["parts"][name] = {"status": "skipped",
                                           "note": f"skipped: {self.elapsed():.0f} s of the "
                                                   f"{self.a.budget:.0f} s budget gone"}
            self.note(f"{name}: skipped (budget)")
            return
        started = time.time()
        try:
            result = fn(self, timeout)
        except Exception as e:  # one part's surprise must not lose the others' results
            result = {"status": "error", "note": f"{type(e).__name__}: {e}"}
        result["seconds"] = round(time.time() - started, 1)
        self.results["parts"][name] = result
        self.progress(f"{name}: {result['status']}" + (f" ({result['note']})" if result.get("note") else ""))

    # --- what comes back ---------------------------------------------------------------------

    def write(self):
        """OUTDIR's three files, each written whole and then renamed into place, so that a
        check stopped from outside still leaves the last part's."""
        r = self.results
        r["parts"] = {n: r["parts"][n] for n, _, _ in parts.PARTS if n in r["parts"]}
        r["goals"] = report.goals(r, self.manifest, self.profile or common.DEVICE_PROFILE)
        r["seconds"] = round(self.elapsed(), 1)
        r["manifest"] = {k: self.manifest.get(k) for k in ("einc", "git", "created", "target",
                                                           "device_profile")}
        r["profile"] = self.profile
        r["sanitizer"] = {"path": self.sanitizer, "why": self.sanitizer_why}

        def put(name, write):
            tmp = os.path.join(self.out, "." + name + ".tmp")
            write(tmp)
            os.replace(tmp, os.path.join(self.out, name))

        def text(content):
            return lambda path: open(path, "w").write(content)

        put("gpu-check.json", text(json.dumps(r, indent=1)))
        put("gpu-check.md", text(report.markdown(r)))

        def archive(path):
            with tarfile.open(path, "w:xz") as t:
                t.add(self.raw, arcname="gpu-check")
        put("gpu-check.tar.xz", archive)

    def main(self):
        os.makedirs(self.out, exist_ok=True)
        try:
            self.unpack()
            self.environment()
            planned = parts.plan(self)
            for name, _, _ in parts.PARTS:
                if name not in dict(planned):
                    self.results["parts"][name] = {"status": "skipped",
                                                   "note": "not prepared (gpu-prepare --models)"}
            for name, fn in planned:
                self.part(name, fn)
                self.write()
            self.write()
            ok = report.correct(self.results)
            print(report.console(self.results), flush=True)
            sizes = ", ".join(f"{n} {os.path.getsize(os.path.join(self.out, n)) / 1024:.0f} KiB"
                              for n in OUTPUTS)
            verdict = "every correctness part passed" if ok else "FAILED (see gpu-check.md)"
            if self.blocked:
                verdict = report.blocker(next(iter(self.blocked))) + ": the parts that need it skipped"
            self.progress(f"wrote {self.out}: {sizes}: {verdict}")
            if self.blocked:
                return 3
            return 0 if ok else 1
        except Refused as e:
            print(f"gpu-check: {e}", file=sys.stderr)
            return 2
        finally:
            shutil.rmtree(self.bin, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("outdir")
    p.add_argument("--cpu", action="store_true", default=os.environ.get("EINC_GPU_CHECK_CPU") == "1",
                   help="the CPU backend with gpu-prepare --cpu's executables (also EINC_GPU_CHECK_CPU=1)")
    p.add_argument("--gpu-dir", default=os.path.join(common.ROOT, "gpu"))
    p.add_argument("--budget", type=float, default=460,
                   help="seconds for the whole check (default 460: the parts' 430 and the rest)")
    p.add_argument("--sanitizer", default="",
                   help="this compute-sanitizer (also EINC_GPU_CHECK_SANITIZER; default: "
                        "gpu-prepare's, else the machine's)")
    return Check(p.parse_args()).main()


if __name__ == "__main__":
    sys.exit(main())
