"""scripts/gpu-prepare: everything scripts/gpu-check needs, made here (docs/cuda-backend.md,
"Checking on a GPU").

    scripts/gpu-prepare [--cpu] [--out gpu] [--build build] [--no-build] [--einc EINC]
                        [--models a,b] [--threads N] [--jobs N] [--no-sanitizer]

Builds einc (unless --no-build), compiles each model of common.MODELS with `einc compile
--target cuda` (where this einc has it) and the report on the model's device profile (GPT-2
small once for each of common.PROFILES), checks with ldd that each executable needs only the C
library, strips it and compresses it (xz -9e); trains the examples 20 steps on the CPU backend
for the reference loss curves; packs compute-sanitizer from its PyPI wheel (pip download:
common.SANITIZER_WHEEL; kept from the last preparation when it is that wheel's); and writes
OUT/ with the compressed files and manifest.json (sha256 of every file, sizes, the reference).
OUT must not be ignored by git, so that it travels with the working tree to the GPU machine
(64 MiB in all). --cpu: tiny dims, no CUDA target and no compute-sanitizer, for
scripts/gpu-check --cpu here.
"""
import argparse
import concurrent.futures
import io
import json
import lzma
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

# Libraries an executable may need (everything else is inside it or dlopen'ed).
ALLOWED_LIBS = ("linux-vdso.so", "libc.so", "libm.so", "libpthread.so", "libdl.so",
                "ld-linux-x86-64.so", "librt.so")
BUDGET_BYTES = 64 << 20


def log(message):
    print(f"gpu-prepare: {message}", flush=True)


def fail(message):
    print(f"gpu-prepare: error: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
    return r


def libraries(exe):
    """The shared libraries `ldd` lists for exe, by file name."""
    r = run(["ldd", exe])
    names = []
    for line in r.stdout.splitlines():
        word = line.strip().split(" ")[0]
        if word:
            names.append(os.path.basename(word))
    return names


def tracked_bytes():
    """What the rest of the working tree weighs when it travels (tracked files and the
    untracked ones git does not ignore, OUT excluded by the caller)."""
    r = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                       cwd=common.ROOT, capture_output=True)
    total = 0
    for name in r.stdout.split(b"\0"):
        if name:
            p = os.path.join(common.ROOT, name.decode())
            if os.path.isfile(p):
                total += os.path.getsize(p)
    return total


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cpu", action="store_true",
                   help="tiny dims, no CUDA target: for scripts/gpu-check --cpu here")
    p.add_argument("--out", default=os.path.join(common.ROOT, "gpu"))
    p.add_argument("--build", default=os.path.join(common.ROOT, "build"))
    p.add_argument("--no-build", action="store_true", help="use the einc in --build as it is")
    p.add_argument("--einc", default="", help="this einc (implies --no-build)")
    p.add_argument("--models", default="", help="only these (comma-separated)")
    p.add_argument("--threads", type=int, default=0, help="threads of the CPU reference runs")
    p.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1),
                   help="models prepared side by side (default: the cores, at most 4)")
    p.add_argument("--no-sanitizer", action="store_true",
                   help="no compute-sanitizer (gpu-check then uses one the GPU machine has)")
    a = p.parse_args()

    einc = os.path.abspath(a.einc or os.path.join(a.build, "bin", "einc"))
    if not a.no_build and not a.einc:
        log(f"building einc in {a.build}")
        run(["cmake", "--build", a.build, "-j2", "--target", "einc", "einc-exe-kit"])
    if not os.access(einc, os.X_OK):
        fail(f"no einc at {einc} (build it: cmake --build {a.build} --target einc)")
    version = run([einc, "--version"]).stdout.strip().splitlines()[0]
    help_text = run([einc, "compile", "--help"]).stdout
    target = "cuda" if ("--target" in help_text and not a.cpu) else "cpu"
    if not a.cpu and target != "cuda":
        log("this einc has no `compile --target cuda`: the executables carry no CUDA kernels")
    wanted = [m for m in common.MODELS if not a.models or m.name in a.models.split(",")]
    if a.models:
        unknown = set(a.models.split(",")) - {m.name for m in common.MODELS}
        if unknown:
            fail(f"unknown models {sorted(unknown)}; known: {[m.name for m in common.MODELS]}")

    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    kept_sanitizer = previous_sanitizer(out) if not a.cpu and not a.no_sanitizer else None
    for name in os.listdir(out):  # a previous preparation's files
        if (name.endswith(".xz") or name == common.MANIFEST) and not (
                kept_sanitizer and name == common.SANITIZER_ARCHIVE):
            os.remove(os.path.join(out, name))
    inside = os.path.commonpath([out, common.ROOT]) == common.ROOT
    ignored = inside and subprocess.run(["git", "check-ignore", "-q", out], cwd=common.ROOT,
                                        capture_output=True).returncode == 0
    if not inside or ignored:
        log(f"warning: {out} is {'ignored by git' if ignored else 'outside the working tree'}: "
            "it will not travel to the GPU machine")

    work = tempfile.mkdtemp(prefix="einc-gpu-prepare-")
    tokens = os.path.join(work, "tokens.bin")
    count = common.write_tokens(tokens)
    manifest = {
        "format": common.MANIFEST_FORMAT,
        "mode": "cpu" if a.cpu else "gpu",
        "target": target,
        "einc": version,
        "git": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=common.ROOT,
                              capture_output=True, text=True).stdout.strip(),
        "device_profile": common.DEVICE_PROFILE,
        "profiles": list(common.PROFILES),
        "created": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "tokens": {"count": count, "sha256": common.sha256(tokens)},
        "train_steps": common.TRAIN_STEPS,
        "models": {},
    }
    def prepare(m):
        """One model: compiled, checked, stripped, compressed, its reference trained."""
        exe = os.path.join(work, m.name)
        cmd = [einc, "compile", os.path.join(common.ROOT, m.source), "-o", exe,
               "--device", m.profile, "--precision", m.precision]
        for k, v in m.dims(a.cpu).items():
            cmd += ["--set", f"{k}={v}"]
        if target == "cuda":
            cmd += ["--target", "cuda"]
        start = time.time()
        run(cmd, cwd=work)
        seconds = time.time() - start
        raw = os.path.getsize(exe)
        libs = libraries(exe)
        extra = [lib for lib in libs if not lib.startswith(ALLOWED_LIBS)]
        if extra:
            fail(f"{m.name} needs {extra} beyond the C library: it would not run on the GPU "
                 f"machine")
        run(["strip", exe])
        info = run([exe, "info"]).stdout  # the stripped one still starts
        stripped = os.path.getsize(exe)
        # xz -9e: 28 MiB (OpenBLAS for every CPU it knows, mostly) to about 2.3 MiB in
        # about 18 s; --cpu's executables never travel, so there the fast preset.
        with open(exe, "rb") as f:
            packed = lzma.compress(f.read(), preset=1 if a.cpu else 9 | lzma.PRESET_EXTREME)
        with open(os.path.join(out, m.name + ".xz"), "wb") as f:
            f.write(packed)
        entry = {
            "file": m.name + ".xz", "source": m.source, "precision": m.precision,
            "profile": m.profile,
            "dims": m.dims(a.cpu), "uses": m.uses, "bytes": raw, "stripped_bytes": stripped,
            "xz_bytes": len(packed), "sha256": common.sha256(exe),
            "sha256_xz": common.sha256(os.path.join(out, m.name + ".xz")),
            "compile_seconds": round(seconds, 2), "libraries": libs,
            "cuda_kernels": "cuda " in info,
        }
        if "train" in m.uses:
            entry["reference"] = reference_curve(exe, tokens, work, a.threads)
        log(f"{m.name}: compiled in {seconds:.1f} s; {common.mib(raw):.1f} MiB, stripped "
            f"{common.mib(stripped):.1f} MiB, xz {common.mib(len(packed)):.1f} MiB"
            + (f"; reference loss {entry['reference'][0]:.4f} .. {entry['reference'][-1]:.4f}"
               if "reference" in entry else ""))
        return entry

    # Models side by side (--jobs): compiles, xz and the references are one thread each.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        entries = list(pool.map(prepare, wanted))
    for m, entry in zip(wanted, entries):
        manifest["models"][m.name] = entry
    manifest["sanitizer"] = None
    if not a.cpu and not a.no_sanitizer:
        manifest["sanitizer"] = kept_sanitizer or pack_sanitizer(out, work)
    total_xz = sum(e["xz_bytes"] for e in entries)
    if manifest["sanitizer"]:
        total_xz += manifest["sanitizer"]["xz_bytes"]
    with open(os.path.join(out, common.MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1)
    shutil.rmtree(work)

    rel = os.path.relpath(out, common.ROOT)
    rest = tracked_bytes()
    if inside:  # OUT's files are among the untracked ones
        rest -= sum(os.path.getsize(os.path.join(out, n)) for n in os.listdir(out))
    log(f"{rel}/: {len(wanted)} executables" + (", compute-sanitizer" if manifest["sanitizer"] else "")
        + f", {common.mib(total_xz):.1f} MiB compressed; the rest "
        f"of the working tree {common.mib(rest):.1f} MiB; {common.mib(total_xz + rest):.1f} of "
        f"{common.mib(BUDGET_BYTES):.0f} MiB")
    if total_xz + rest > BUDGET_BYTES:
        fail(f"the working tree with {rel}/ is over the {common.mib(BUDGET_BYTES):.0f} MiB that "
             "travel to the GPU machine")
    return 0


def previous_sanitizer(out):
    """The last preparation's compute-sanitizer entry, when its archive is still there, intact
    and of common.SANITIZER_WHEEL (packing it again costs a minute of xz)."""
    try:
        with open(os.path.join(out, common.MANIFEST)) as f:
            entry = json.load(f).get("sanitizer")
        path = os.path.join(out, common.SANITIZER_ARCHIVE)
        if entry and entry["wheel"] == common.SANITIZER_WHEEL and \
                common.sha256(path) == entry["sha256_xz"]:
            log(f"compute-sanitizer: kept ({entry['version']}, "
                f"{common.mib(entry['xz_bytes']):.1f} MiB)")
            return entry
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


# What compute-sanitizer needs of its wheel's tool folder (not its docs, headers, 32-bit
# copies or the API library for other tools).
SANITIZER_SKIP = ("docs/", "include/", "x86/", "libsanitizer-public.so")


def pack_sanitizer(out, work):
    """Downloads common.SANITIZER_WHEEL and packs its tool folder as OUT/compute-sanitizer.tar.xz
    (unpacked there: compute-sanitizer/compute-sanitizer). None, with a warning, when pip cannot
    get it: gpu-check then looks for one on the GPU machine."""
    wheels = os.path.join(work, "wheels")
    r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                        "--dest", wheels, common.SANITIZER_WHEEL], capture_output=True, text=True)
    found = [n for n in os.listdir(wheels) if n.endswith(".whl")] if os.path.isdir(wheels) else []
    if r.returncode != 0 or not found:
        log(f"warning: no compute-sanitizer (pip download {common.SANITIZER_WHEEL}: "
            f"{(r.stderr.strip().splitlines() or ['no wheel'])[-1]}); gpu-check will look for one "
            "on the GPU machine")
        return None
    start = time.time()
    tar = os.path.join(out, common.SANITIZER_ARCHIVE)
    raw = 0
    with zipfile.ZipFile(os.path.join(wheels, found[0])) as whl, \
            tarfile.open(tar, "w:xz", preset=9 | lzma.PRESET_EXTREME) as t:
        for info in whl.infolist():
            parts = info.filename.split("/compute-sanitizer/", 1)
            if len(parts) != 2 or info.is_dir() or parts[1].startswith(SANITIZER_SKIP) \
                    or parts[1] in SANITIZER_SKIP:
                continue
            data = whl.read(info)
            member = tarfile.TarInfo("compute-sanitizer/" + parts[1])
            member.size, member.mode, member.mtime = len(data), 0o755, 0
            t.addfile(member, io.BytesIO(data))
            raw += len(data)
    if raw == 0:
        os.remove(tar)
        log(f"warning: {found[0]} has no compute-sanitizer folder; gpu-check will look for one "
            "on the GPU machine")
        return None
    version = re.sub(r"^nvidia_cuda_sanitizer_api-([^-]+)-.*$", r"\1", found[0])
    entry = {"file": common.SANITIZER_ARCHIVE, "wheel": common.SANITIZER_WHEEL,
             "version": version, "bytes": raw, "xz_bytes": os.path.getsize(tar),
             "sha256_xz": common.sha256(tar)}
    log(f"compute-sanitizer {version}: {common.mib(raw):.1f} MiB, xz "
        f"{common.mib(entry['xz_bytes']):.1f} MiB in {time.time() - start:.0f} s")
    return entry


def reference_curve(exe, tokens, work, threads):
    """The loss of each of the first TRAIN_STEPS steps on the CPU backend."""
    ck = os.path.join(work, os.path.basename(exe) + "-ck")
    logfile = ck + ".jsonl"
    cmd = [exe, "train", "--data", tokens, "--steps", str(common.TRAIN_STEPS),
           "--checkpoint-dir", ck, "--log", logfile]
    if "--backend" in run([exe, "train", "--help"]).stdout:
        cmd += ["--backend", "cpu"]
    if threads:
        cmd += ["--threads", str(threads)]
    run(cmd)
    rows = [r for r in common.read_json_lines(logfile) if "loss" in r]
    losses = [r["loss"] for r in rows]
    if len(losses) != common.TRAIN_STEPS:
        fail(f"{exe} train logged {len(losses)} losses, not {common.TRAIN_STEPS}")
    return losses


if __name__ == "__main__":
    sys.exit(main())
