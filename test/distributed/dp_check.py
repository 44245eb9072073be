"""Fault injection for `mpirun ... einc train --distributed mpi` (standard library only).

  dp_check.py kill-rank R CK_DIR -- MPIRUN ARGS...
      runs the command, waits until CK_DIR/last.safetensors exists, SIGKILLs
      the einc process of rank R (found by OMPI_COMM_WORLD_RANK in its
      environment), and prints whether mpirun exited with a failure status
      within 10 s, then mpirun's output.
  dp_check.py signal-rank R|mpirun SIG LOG CK_DIR -- MPIRUN ARGS...
      runs the command, waits until LOG shows step 3, sends SIG (INT, TERM or USR1)
      to the einc process of rank R alone (or to mpirun, which passes SIGUSR1
      on to every rank at once), and prints mpirun's output, its exit ("exit status
      N") and "logged step S, checkpoint at step C"
"""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from kill_and_resume import checkpoint_step, exit_text, last_logged_step, wait_for_step  # noqa: E402


def rank_pid(rank, parent_env_marker):
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if (f"OMPI_COMM_WORLD_RANK={rank}".encode() in env and parent_env_marker in env
                and cmd and cmd[0].endswith(b"einc")):
            return int(pid)
    return None


def kill_rank(rank, ck, cmd):
    marker = f"EINC_DP_CHECK={os.getpid()}"
    env = dict(os.environ, EINC_DP_CHECK=str(os.getpid()))
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    deadline = time.time() + 300
    while not os.path.exists(os.path.join(ck, "last.safetensors")):
        if p.poll() is not None or time.time() > deadline:
            print("no checkpoint appeared; mpirun status", p.poll())
            print(p.communicate()[0].decode(errors="replace"))
            return 1
        time.sleep(0.05)
    pid = rank_pid(rank, marker.encode())
    if pid is None:
        p.kill()
        print(f"no process of rank {rank}")
        return 1
    os.kill(pid, signal.SIGKILL)
    killed = time.time()
    try:
        out = p.communicate(timeout=10)[0]
    except subprocess.TimeoutExpired:
        p.kill()
        print(f"killed rank {rank}; mpirun still running after 10 s")
        return 1
    took = time.time() - killed
    if p.returncode != 0:
        print(f"killed rank {rank}; mpirun exited with a failure status within 10 s "
              f"({took:.1f} s, status {p.returncode})")
    else:
        print(f"killed rank {rank}; mpirun exited 0")
    print(out.decode(errors="replace"))
    return 0


def signal_rank(who, sig, log, ck, cmd):
    marker = f"EINC_DP_CHECK={os.getpid()}"
    env = dict(os.environ, EINC_DP_CHECK=str(os.getpid()))
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    if not wait_for_step(p, log, 3):
        p.kill()
        print("mpirun ended (%s) before step 3" % exit_text(p.wait()))
        print(p.communicate()[0].decode(errors="replace"))
        return 1
    pid = p.pid if who == "mpirun" else rank_pid(int(who), marker.encode())
    if pid is None:
        p.kill()
        print(f"no process of rank {who}")
        return 1
    os.kill(pid, sig)
    try:
        out = p.communicate(timeout=120)[0]
    except subprocess.TimeoutExpired:
        p.kill()
        print("mpirun still running 120 s after the signal")
        return 1
    sys.stdout.write(out.decode(errors="replace"))
    print(exit_text(p.returncode))
    last = os.path.join(ck, "last.safetensors")
    saved = checkpoint_step(last) if os.path.exists(last) else "none"
    print("logged step %d, checkpoint at step %s" % (last_logged_step(log), saved))
    return 0


def main():
    if len(sys.argv) > 5 and sys.argv[1] == "kill-rank" and sys.argv[4] == "--":
        return kill_rank(int(sys.argv[2]), sys.argv[3], sys.argv[5:])
    if len(sys.argv) > 7 and sys.argv[1] == "signal-rank" and sys.argv[6] == "--":
        sig = {"INT": signal.SIGINT, "TERM": signal.SIGTERM, "USR1": signal.SIGUSR1}[sys.argv[3]]
        return signal_rank(sys.argv[2], sig, sys.argv[4], sys.argv[5], sys.argv[7:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
