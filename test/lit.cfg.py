# lit configuration for einc: runs every .mlir and .ein test under test/ against
# the tools in build/bin.
import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "einc"

# Snapshot tests (docs/testing.md, "Snapshots"): a file with a line starting
# "# SNAPSHOT:" (or "// SNAPSHOT:") holds output recorded from the current
# implementation, not a fact of the spec. EINC_LIT_SNAPSHOTS=skip runs the
# other tests only, =only these only (ctest's `lit` and `lit-snapshots`, the
# latter labelled `snapshot`); unset, all of them.
snapshots = os.environ.get("EINC_LIT_SNAPSHOTS", "")
if snapshots not in ("", "skip", "only"):
    lit_config.fatal("EINC_LIT_SNAPSHOTS=%s: expected skip or only" % snapshots)
# The format lives in a module so that lit's worker processes can unpickle it.
sys.path.insert(0, os.path.dirname(__file__))
from lit_snapshots import ShTestSplittingSnapshots

config.test_format = ShTestSplittingSnapshots(snapshots, not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".ein", ".test"]
config.excludes = ["Inputs", "reference", "unit", "fuzz", "fuzz-pipeline", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.einc_obj_root, "test")

config.substitutions.append(("%einc_src", config.einc_src_root))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%examples", os.path.join(config.einc_src_root, "examples")))
config.substitutions.append(("%einc_build", config.einc_obj_root))
# A command as on an AVX2-only CPU, on any machine (scripts/as-avx2).
config.substitutions.append(("%as_avx2", os.path.join(config.einc_src_root, "scripts", "as-avx2")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.einc_tools_dir, config.llvm_tools_dir]
tools = ["einc", "ein-opt"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# lit runs tests in a scrubbed environment; the settings the determinism
# matrix (scripts/test-matrix, docs/determinism.md) varies must reach the
# tools, or every cell would test the same thing. %{einc_threads} and
# %{openblas_coretype} are what the tests should see (a pattern when unset).
for var in ["EINC_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
            "OPENBLAS_CORETYPE", "OPENBLAS_VERBOSE", "EINC_JIT_CPU", "EINC_CPU_BF16", "EINC_GEMM",
            "DNNL_MAX_CPU_ISA"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.substitutions.append(
    ("%{einc_threads}", os.environ.get("EINC_NUM_THREADS") or "[0-9]+"))
config.substitutions.append(
    ("%{openblas_coretype}", os.environ.get("OPENBLAS_CORETYPE") or "unset"))
config.substitutions.append(
    ("%{einc_jit_cpu}", os.environ.get("EINC_JIT_CPU") or "unset"))

# The CPU runs AVX-512 BF16 (runtime/cpu/Bf16Gemm.h's kernel): the flags Linux
# reports only when the OS saves the zmm state, and no EINC_JIT_CPU below
# x86-64-v4 (scripts/as-avx2: then einc runs no AVX-512 code, as on an
# AVX2-only CPU, and the tests of that side run instead).
try:
    flags = next((l.split(":", 1)[1].split() for l in open("/proc/cpuinfo")
                  if l.startswith("flags")), [])
except OSError:
    flags = []
if all(f in flags for f in ["avx512f", "avx512bw", "avx512vl", "avx512_bf16"]) and \
        os.environ.get("EINC_JIT_CPU", "") in ("", "x86-64-v4"):
    config.available_features.add("cpu-avx512bf16")

# oneDNN (libdnnl.so.2, runtime/cpu/OneDnnMatmul.h) loads: `onednn`; on a CPU
# with AVX-512 BF16 (AMX CPUs have it too) its bf16 matmul is a bf16 ISA's
# brgemm, the CPU device's default bf16 path: `onednn-bf16` (not where
# DNNL_MAX_CPU_ISA caps oneDNN below a bf16 ISA, as scripts/as-avx2 does).
import ctypes
dnnl_cap = os.environ.get("DNNL_MAX_CPU_ISA", "").upper()
try:
    ctypes.CDLL("libdnnl.so.2")
    config.available_features.add("onednn")
    if "cpu-avx512bf16" in config.available_features and \
            (dnnl_cap in ("", "ALL") or "BF16" in dnnl_cap or "AMX" in dnnl_cap):
        config.available_features.add("onednn-bf16")
except OSError:
    pass

# The cuda device (docs/cuda-backend.md): `cuda-headers` where einc was built
# with the CUDA toolkit's headers, `cuda-driver` where this machine has a
# driver (libcuda.so.1), %cuda_stub_driver the toolkit's stub driver.
import ctypes
if config.einc_cuda_headers.upper() in ("TRUE", "ON", "YES", "1"):
    config.available_features.add("cuda-headers")
    stub = os.path.join(config.einc_cuda_library_dir, "stubs", "libcuda.so")
    if os.path.exists(stub):
        config.available_features.add("cuda-stub-driver")
        config.substitutions.append(("%cuda_stub_driver", stub))
try:
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass
# NVRTC loads (runtime/cuda/Nvrtc.h: libnvrtc.so.13, else libnvrtc.so).
for nvrtc in ("libnvrtc.so.13", "libnvrtc.so"):
    try:
        ctypes.CDLL(nvrtc)
        config.available_features.add("nvrtc")
        break
    except OSError:
        pass

# `einc compile` (test/compile) needs the kit built beside einc with a static
# OpenBLAS (its link.txt has no "!" line) and a C++ compiler driver.
import shutil
exe_kit = os.path.join(config.einc_obj_root, "lib", "einc-exe", "link.txt")
if os.path.exists(exe_kit) and shutil.which("c++") and \
        not any(line.startswith("!") for line in open(exe_kit)):
    config.available_features.add("einc-compile")

# Open MPI (train --distributed mpi, docs/distributed.md): mpirun and the
# libmpi einc loads. %mpirun runs as root where CI does, oversubscribes the
# cores (3 ranks on 2) and copies between ranks without ptrace (CMA is often
# denied in containers).
if shutil.which("mpirun"):
    try:
        ctypes.CDLL("libmpi.so.40", mode=ctypes.RTLD_GLOBAL)
        config.available_features.add("mpi")
        config.substitutions.append(("%mpirun", " ".join([
            "env", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
            "OMPI_MCA_btl_vader_single_copy_mechanism=none",
            "mpirun", "--oversubscribe", "--bind-to", "none"])))
    except OSError:
        pass

# Debian's headless Chromium (scripts/screenshots renders the HTML report with
# it); CI's fresh Debian does not install it, and the tests that need it skip.
if shutil.which("chromium") or shutil.which("chromium-browser"):
    config.available_features.add("chromium")
