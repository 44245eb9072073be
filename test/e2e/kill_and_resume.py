"""Kills `einc train` mid-run and checks what survives (standard library only).

  kill_and_resume.py kill LOG CK_DIR -- EINC ARGS...
      runs EINC ARGS, waits until LOG shows a step past the first checkpoint
      in CK_DIR, sends SIGKILL, then prints
        "killed at step S, checkpoint at step C, lost S - C steps"
  kill_and_resume.py fsize BYTES -- EINC ARGS...
      runs EINC ARGS with RLIMIT_FSIZE = BYTES and SIGXFSZ ignored (a full
      disk: writes past BYTES fail with EFBIG); passes its output and exit
      status through
  kill_and_resume.py step FILE.safetensors
      prints "step N" (the checkpoint's `step` metadata)
"""
import json
import os
import resource
import signal
import struct
import subprocess
import sys
import time


def checkpoint_step(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    return int(header["__metadata__"]["step"])


def last_logged_step(log):
    try:
        with open(log) as f:
            lines = [l for l in f.read().split("\n") if l.startswith("{")]
    except FileNotFoundError:
        return 0
    return json.loads(lines[-1])["step"] if lines else 0


def kill(log, ck, cmd):
    last = os.path.join(ck, "last.safetensors")
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    deadline = time.time() + 120
    first = None
    while time.time() < deadline and p.poll() is None:
        if first is None and os.path.exists(last):
            first = checkpoint_step(last)
        # A few steps past the first checkpoint, not on one.
        if first is not None and last_logged_step(log) >= first + 3:
            break
        time.sleep(0.002)
    if p.poll() is not None:
        print("einc exited (status %d) before it could be killed" % p.returncode)
        return 1
    p.send_signal(signal.SIGKILL)
    p.wait()
    killed = last_logged_step(log)
    saved = checkpoint_step(last)
    print("killed at step %d, checkpoint at step %d, lost %d steps"
          % (killed, saved, killed - saved))
    return 0


def fsize(limit, cmd):
    def limit_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return subprocess.call(cmd, preexec_fn=limit_files)


def main():
    args = sys.argv[1:]
    if args[0] == "step":
        print("step %d" % checkpoint_step(args[1]))
        return 0
    cmd = args[args.index("--") + 1:]
    if args[0] == "kill":
        return kill(args[1], args[2], cmd)
    if args[0] == "fsize":
        return fsize(int(args[1]), cmd)
    print("unknown command " + args[0])
    return 2


if __name__ == "__main__":
    sys.exit(main())
