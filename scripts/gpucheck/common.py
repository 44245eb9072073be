"""What scripts/gpu-prepare (here) and scripts/gpu-check (on the GPU machine) share: the
models the check runs, the token file, the manifest and its checksums.

Python 3 standard library only: the GPU machine has python3 but no einc, MLIR, LLVM or
OpenBLAS, so everything einc-made travels as executables of `einc compile`.
"""
import hashlib
import json
import os
import re
import sys

sys.dont_write_bytecode = True

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1
# The training-curve comparison: steps of both examples at fp32, and the bound per step.
TRAIN_STEPS = 20
LOSS_RELATIVE_BOUND = 1e-4
# The device profiles of the cards a GPU machine may have (passes/devices.json): gpu-prepare
# compiles GPT-2 small once per profile (the same sm_90 cubins, the report of each), gpu-check
# takes the one of the card it finds. The other models' reports are not read: DEVICE_PROFILE.
PROFILES = ("h100", "h200")
DEVICE_PROFILE = "h200"

# compute-sanitizer travels as gpu/compute-sanitizer.tar.xz: this wheel's tool folder (the
# 13.0 wheel lacks the TreeLauncherSubreaper its launcher runs). 4.5 MiB after xz -9e.
SANITIZER_WHEEL = "nvidia-cuda-sanitizer-api==13.4.92"
SANITIZER_ARCHIVE = "compute-sanitizer.tar.xz"

# GPT-2 small as issue 13 sizes it (d 768, 12 layers, 12 heads, ctx 1024, vocab 50304) and a
# batch of 8 sequences: bench/gpu_peers.py's defaults, so that both sides train the same model.
GPT2 = {"batch": 8, "ctx": 1024, "d": 768, "layers": 12, "heads": 12, "vocab": 50304}
GPT2_CPU = {"batch": 2, "ctx": 32, "d": 64, "layers": 2, "heads": 2, "vocab": 512}
# gpt shrunk until its kernels do almost no work (a few KiB each): its step, replayed as one
# CUDA graph, is then the kernels' launch latency, which the device profiles' kernelLatencySeconds
# estimates (passes/devices.json).
LATENCY = {"batch": 1, "ctx": 8, "d": 16, "layers": 2, "heads": 2, "vocab": 64}


class Model:
    """One executable: what it is compiled from and what gpu-check does with it.

    uses: "check" (every kernel and GEMM against the CPU), "train" (the loss curve against
    the CPU reference), "copy", "elementwise", "softmax", "gemm", "gpt2" (speed rows),
    "nccl" (one rank through NCCL against no NCCL, bit for bit), "latency" (the step of kernels
    that do almost no work: seconds per kernel). profile: the device profile
    its report is built on.
    """

    def __init__(self, name, source, precision, uses, gpu_dims=None, cpu_dims=None,
                 profile=DEVICE_PROFILE):
        self.name, self.source, self.precision, self.uses = name, source, precision, uses
        self.gpu_dims, self.cpu_dims = gpu_dims or {}, cpu_dims or {}
        self.profile = profile

    def dims(self, cpu):
        return self.cpu_dims if cpu else self.gpu_dims


MODELS = [
    Model("mlp_lm", "examples/mlp_lm.ein", "fp32", ["check", "train"],
          cpu_dims={"batch": 16, "hidden": 64}),
    Model("gpt", "examples/gpt.ein", "fp32", ["check", "train"],
          cpu_dims={"batch": 2, "ctx": 16, "d": 32, "heads": 2, "layers": 1}),
    Model("elementwise", "bench/gpu/elementwise.ein", "fp32", ["elementwise", "copy"],
          cpu_dims={"rows": 64, "cols": 256}),
    Model("softmax", "bench/gpu/softmax.ein", "fp32", ["softmax"],
          cpu_dims={"rows": 256, "cols": 64}),
    Model("matmul", "bench/gpu/matmul.ein", "bf16-mixed", ["gemm"],
          cpu_dims={"m": 128, "n": 128, "k": 128}),
    Model("latency", "examples/gpt.ein", "fp32", ["latency"], gpu_dims=LATENCY,
          cpu_dims=LATENCY),
] + [
    # GPT-2 small once per profile: its report's per-class predictions and MFU are the card's.
    Model(f"gpt2-{p}", "examples/gpt.ein", "bf16-mixed", ["gpt2"], gpu_dims=GPT2,
          cpu_dims=GPT2_CPU, profile=p) for p in PROFILES
] + [
    # Two micro-batches a step, so that the gradients are summed: with --distributed nccl
    # through NCCL and the ordered add on the GPU, without it in compiled code.
    Model("mlp_dp", "examples/mlp_lm.ein", "fp32", ["nccl"], gpu_dims={"accumulate": 2},
          cpu_dims={"batch": 16, "hidden": 64, "accumulate": 2}),
]


def model(name):
    for m in MODELS:
        if m.name == name:
            return m
    raise KeyError(name)


def profile_for(gpu_name):
    """The profile of PROFILES whose name is a word of the GPU's name ("NVIDIA H100 80GB HBM3"
    -> "h100"), as the trainer matches a report to its device; None for another card."""
    words = re.sub(r"[^a-z0-9]+", " ", (gpu_name or "").lower()).split()
    return next((p for p in PROFILES if p in words), None)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_tokens(path):
    """The training tokens: every byte of the bundled corpus as a little-endian uint16, the
    format `einc data` writes (without its validation split). Both sides make it from
    examples/data/kjv.txt, which travels with the tree; the manifest holds its checksum."""
    with open(os.path.join(ROOT, "examples", "data", "kjv.txt"), "rb") as f:
        data = f.read()
    out = bytearray(2 * len(data))
    out[0::2] = data  # the high bytes stay 0
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(out)
    os.replace(tmp, path)
    return len(data)


def read_json_lines(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    return rows


def mib(n):
    return n / 1048576.0


def nccl_library():
    """libnccl.so.2 of the nvidia-nccl wheel PyTorch brings (the GPU machine has no other),
    or None: einc then looks where the loader does."""
    for entry in sys.path:
        path = os.path.join(entry, "nvidia", "nccl", "lib", "libnccl.so.2")
        if entry and os.path.exists(path):
            return path
    return None
