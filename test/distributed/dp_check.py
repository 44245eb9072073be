"""Fault injection for `mpirun ... einc train --distributed mpi` (standard library only).

  dp_check.py kill-rank R CK_DIR -- MPIRUN ARGS...
      runs the command, waits until CK_DIR/last.safetensors exists, SIGKILLs
      the einc process of rank R (found by OMPI_COMM_WORLD_RANK in its
      environment), and prints whether mpirun exited with a failure status
      within 10 s, then mpirun's output.
"""
import os
import signal
import subprocess
import sys
import time


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


def main():
    if len(sys.argv) > 5 and sys.argv[1] == "kill-rank" and sys.argv[4] == "--":
        return kill_rank(int(sys.argv[2]), sys.argv[3], sys.argv[5:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
