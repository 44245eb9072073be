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
  kill_and_resume.py signal SIG LOG CK_DIR -- EINC ARGS...
      runs EINC ARGS, waits until LOG shows step 3, sends SIG (INT, TERM or USR1),
      waits for the end and prints its stderr, its exit ("exit status N" or
      "killed by SIGNAME"), then "logged step S, checkpoint at step C"
  kill_and_resume.py signal-twice LOG CK_DIR -- EINC ARGS...
      as `signal`, but SIGINT and then SIGTERM reach it together (sent while
      it is stopped by SIGSTOP, then SIGCONT): the second one is certain to
      arrive before the step ends
  kill_and_resume.py beside CK_DIR -- FIRST ARGS... ++ SECOND ARGS...
      starts FIRST, waits until CK_DIR/last.safetensors exists, runs SECOND
      to its end and prints "first pid P", SECOND's output and exit status;
      then stops FIRST with SIGINT and prints its exit status
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
    saved = checkpoint_step(last)
    # The trainer writes a step's checkpoint before its log line: killed
    # between the two, the log ends one step before the checkpoint, and the
    # run had completed the checkpoint's step.
    killed = max(last_logged_step(log), saved)
    print("killed at step %d, checkpoint at step %d, lost %d steps"
          % (killed, saved, killed - saved))
    return 0


def exit_text(code):
    if code < 0:
        return "killed by " + signal.Signals(-code).name
    return "exit status %d" % code


def wait_for_step(p, log, step):
    deadline = time.time() + 120
    while time.time() < deadline and p.poll() is None:
        if last_logged_step(log) >= step:
            return True
        time.sleep(0.002)
    return False


def stop_with_signals(log, ck, cmd, signals):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if not wait_for_step(p, log, 3):
        print("einc ended (%s) before step 3" % exit_text(p.wait()))
        print(p.stderr.read().decode(errors="replace"))
        return 1
    if len(signals) > 1:
        p.send_signal(signal.SIGSTOP)
    for s in signals:
        p.send_signal(s)
    if len(signals) > 1:
        p.send_signal(signal.SIGCONT)
    err = p.communicate(timeout=120)[1].decode(errors="replace")
    sys.stdout.write(err)
    print(exit_text(p.returncode))
    last = os.path.join(ck, "last.safetensors")
    saved = checkpoint_step(last) if os.path.exists(last) else "none"
    print("logged step %d, checkpoint at step %s" % (last_logged_step(log), saved))
    return 0


def beside(ck, first, second):
    p = subprocess.Popen(first, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    last = os.path.join(ck, "last.safetensors")
    while not os.path.exists(last) and time.time() < deadline and p.poll() is None:
        time.sleep(0.002)
    if p.poll() is not None or not os.path.exists(last):
        print("the first run ended (%s) before its first checkpoint" % exit_text(p.wait()))
        return 1
    print("first pid %d" % p.pid)
    q = subprocess.run(second, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    sys.stdout.write(q.stdout.decode(errors="replace"))
    print("second: " + exit_text(q.returncode))
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=120)
    print("first: " + exit_text(p.returncode))
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
    if args[0] == "signal":
        sig = {"INT": signal.SIGINT, "TERM": signal.SIGTERM, "USR1": signal.SIGUSR1}[args[1]]
        return stop_with_signals(args[2], args[3], cmd, [sig])
    if args[0] == "signal-twice":
        return stop_with_signals(args[1], args[2], cmd, [signal.SIGINT, signal.SIGTERM])
    if args[0] == "beside":
        split = cmd.index("++")
        return beside(args[1], cmd[:split], cmd[split + 1:])
    print("unknown command " + args[0])
    return 2


if __name__ == "__main__":
    sys.exit(main())
