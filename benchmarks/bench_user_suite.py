"""A user's JetStream test suite, timed on fakejs and on nats-server.

    python benchmarks/bench_user_suite.py [--repeat 3]

Runs ``benchmarks/user_suite`` (110 nats-py tests, a fresh server per test
from the ``fakejs_server`` fixture) as a pytest subprocess, once as is
(fakejs in-process) and once with ``--fakejs-target=real`` (a nats-server
process per test), ``--repeat`` times each, alternating.  For every run it
prints the wall time and, from the ``suite_timer`` plugin, pytest's own
split: start-up (wall time before the session starts and after it ends),
collection, and the test run; ``waits`` is the time the tests spend on
purpose in time-outs and an ack wait (their ``waits`` marks), which both
servers pay in full.  The summary gives the medians and the ratio fakejs /
nats-server of the wall time (target 0.5 or less) and of the test run
without the waits (``run-waits``: the servers, with the client and fixture
work that goes with them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SUITE = os.path.join("benchmarks", "user_suite")
TARGET_RATIO = 0.5
FIELDS = ("wall", "startup", "collection", "run", "waits", "run-waits")


def run_suite(kind: str) -> dict[str, float]:
    """One pytest run of the suite on ``kind``; fails loudly if a test fails."""
    extra = ["--fakejs-target=real"] if kind == "nats-server" else []
    env = dict(os.environ)
    paths = [ROOT, HERE] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    with tempfile.TemporaryDirectory() as tmp:
        env["SUITE_TIMER_OUT"] = out = os.path.join(tmp, "times.json")
        command = [sys.executable, "-m", "pytest", SUITE, "-q", "-p", "no:cacheprovider", "-p", "suite_timer", *extra]
        started = time.perf_counter()
        done = subprocess.run(command, check=False, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            sys.stdout.write(done.stdout[-4000:])
            raise SystemExit(f"the suite failed on {kind}: exit status {done.returncode}")
        with open(out) as file:
            split: dict[str, float] = json.load(file)
    times = {
        "wall": wall,
        "startup": wall - split["collection"] - split["run"],
        "collection": split["collection"],
        "run": split["run"],
        "waits": split["waits"],
        "run-waits": split["run"] - split["waits"],
    }
    print(f"  {kind:12} " + "  ".join(f"{name} {times[name]:5.2f} s" for name in FIELDS), flush=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"fakejs": [], "nats-server": []}
    for _ in range(max(1, args.repeat)):
        for kind, found in runs.items():
            found.append(run_suite(kind))
    medians = {
        kind: {name: statistics.median(r[name] for r in found) for name in FIELDS} for kind, found in runs.items()
    }
    fake, real = medians["fakejs"], medians["nats-server"]
    print(f"\nmedians of {len(runs['fakejs'])} runs  {'fakejs':>8} {'nats-server':>12} {'ratio':>6}")
    for name in FIELDS:
        ratio = f"{fake[name] / real[name]:6.2f}" if name in ("wall", "run", "run-waits") else ""
        print(f"{name:22} {fake[name]:>8.2f} s {real[name]:>10.2f} s {ratio}")
    ratio = fake["wall"] / real["wall"]
    verdict = "ok" if ratio <= TARGET_RATIO else "OVER TARGET"
    print(f"fakejs / nats-server wall time = {ratio:.2f} (target <= {TARGET_RATIO}: {verdict})")
    print("startup: interpreter, imports, plugins; waits: time-outs and an ack wait both servers pay in full")


if __name__ == "__main__":
    main()
