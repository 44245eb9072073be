"""Checks the report's data-parallel figures (docs/report.md) against the
profile file they were computed from and the report's own ledgers.

  check_comm.py REPORT.json PROFILES.json [ZERO1.json]
"""
import json
import sys


def main():
    r = json.load(open(sys.argv[1]))
    profile = next(p for p in json.load(open(sys.argv[2]))["profiles"] if p["name"] == (r["device"]["name"] if isinstance(r["device"], dict) else r["device"]))
    d = r["data_parallel"]
    n, m = d["gpus"], d["nodes"]
    link = profile["interNodeLink" if m > 1 else "intraNodeLink"]
    assert d["link"] == link["kind"], (d["link"], link)
    grads = r["memory"]["grads"]
    assert d["gradient_bytes"] == grads, (d["gradient_bytes"], grads)
    ring = 2 * (n - 1) / n * grads
    assert abs(d["ring_bytes"] - ring) <= 1e-9 * ring + 1e-9, (d["ring_bytes"], ring)
    comm = ring / link["bytesPerSecond"]
    assert abs(d["comm_seconds"] - comm) <= 1e-9 * comm + 1e-15, (d["comm_seconds"], comm)
    backward = sum(op["seconds"] for op in r["ops"] if op["phase"] == "backward")
    assert abs(d["backward_seconds"] - backward) <= 1e-9 * backward
    assert d["compute_seconds"] == r["predicted"]["step_seconds"]
    exposed = max(0.0, comm - backward)
    assert abs(d["exposed_seconds"] - exposed) <= 1e-9 * max(exposed, 1e-12)
    assert d["hidden"] == (comm <= backward)
    step = d["compute_seconds"] + exposed
    assert abs(d["step_seconds"] - step) <= 1e-9 * step
    state = r["memory"]["optimizer"]
    if d["shard_optimizer"]:
        assert d["optimizer_bytes_per_rank"] == -(-state // n)
    else:
        assert d["optimizer_bytes_per_rank"] == state
    print(f"data parallel: {n} on {m} node(s), {d['link']}, comm {comm:.3e} s, "
          f"{'hidden' if d['hidden'] else 'exposed'}")


if __name__ == "__main__":
    main()
