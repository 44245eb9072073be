"""Runs one einc command on file names holding ESC [31m and a newline, and
prints what it printed (stdout then stderr), then how many raw control bytes
(below 0x20 but the newline, DEL, C1 as UTF-8) that was: a name must reach
the terminal as \\x1b and \\x0a, never as the bytes.

usage: terminal-safe-names.test.py EINC EXAMPLES WORKDIR CASE
"""
import os
import shutil
import subprocess
import sys

einc, examples, work, case = sys.argv[1:5]
ODD = "odd\x1b[31m\n"  # printed as odd\x1b[31m\x0a
os.makedirs(work, exist_ok=True)


def path(name):
    return os.path.join(work, ODD + name)


def model(name="model.ein"):
    shutil.copy(os.path.join(examples, "mlp_lm.ein"), path(name))
    return path(name)


def data():
    text = path("text.txt")
    with open(text, "w") as f:
        f.write("In the beginning God created the heaven and the earth.\n" * 40)
    subprocess.run([einc, "data", text, "--out", path("d")], check=True, capture_output=True)
    return path("d")


small = ["--set", "batch=4", "--set", "embed=8", "--set", "hidden=16", "--threads", "1"]
if case == "read":
    args = ["check", path("missing.ein")]
elif case == "check":
    with open(path("bad.ein"), "w") as f:
        f.write("dim d = 0\n")
    args = ["check", path("bad.ein")]
elif case == "report":
    args = ["report", model()]
elif case == "data":
    data()
    args = ["data", path("text.txt"), "--out", path("d")]
elif case == "sample":
    args = ["sample", model(), "--checkpoint", path("missing.safetensors"), "--tokens", "4"]
elif case == "compile":
    with open(path("exe"), "w") as f:
        f.write("not an executable of einc compile\n")
    args = ["compile", model(), "-o", path("exe")]
elif case == "train":
    d = data()
    args = ["train", model(), "--data", os.path.join(d, "train.bin"), "--val",
            os.path.join(d, "val.bin"), "--steps", "3", "--checkpoint-dir", path("ck"),
            "--set", "eval_every=3"] + small
else:
    sys.exit("unknown case " + case)

run = subprocess.run([einc] + args, capture_output=True)
out = run.stdout + run.stderr
sys.stdout.buffer.write(out)
text = out.decode("utf-8", "replace")
raw = sum(1 for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F)
print("exit status %d, raw control bytes: %d" % (run.returncode, raw))
