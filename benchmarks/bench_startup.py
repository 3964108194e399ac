"""Start-up time: from process start to the first INFO byte on a client connection.

    python benchmarks/bench_startup.py [--runs 30]

A harness that starts a server per test (a subprocess, like ``nats-server``)
pays this every time.  Each run spawns ``python -m fakejs -a 127.0.0.1 -p -1
-js -sd DIR`` (and ``nats-server`` with the same flags), reads its log until
``Listening for client connections on HOST:PORT``, connects, and waits for
the first byte of INFO; the clock starts just before the spawn.  The median
and p90 over the runs are printed for both servers; fakejs's target is a
median under 80 ms.

fakejs runs twice: as installed (its bytecode compiled once, as ``pip
install`` does; kept under a temporary ``PYTHONPYCACHEPREFIX``, so nothing
is written into the checkout) and from source without bytecode
(``PYTHONDONTWRITEBYTECODE=1``, as in this repository's container image and
CI), where every start compiles every module it imports.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from harness import LISTENING, child_environment, percentile

from fakejs.targets.real import find_nats_server

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET_MS = 80.0
TIMEOUT = 15.0  # seconds a server may take before the run counts as failed


def first_info_ms(command: list[str], env: dict[str, str]) -> float:
    """Milliseconds from spawning ``command`` to the first byte a client connection receives."""
    store = tempfile.mkdtemp(prefix="fakejs-startup-")
    args = [*command, "-a", "127.0.0.1", "-p", "-1", "-js", "-sd", store]
    started = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    try:
        assert process.stderr is not None
        port = 0
        for line in process.stderr:
            found = LISTENING.search(line)
            if found:
                port = int(found.group(1))
                break
            if time.perf_counter() - started > TIMEOUT:
                break
        if not port:
            raise RuntimeError(f"{command[0]} never said where it listens")
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as client:
            if not client.recv(1):
                raise RuntimeError(f"{command[0]} closed the connection before INFO")
        return (time.perf_counter() - started) * 1000
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()
        shutil.rmtree(store, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    pycache = tempfile.mkdtemp(prefix="fakejs-pycache-")
    fakejs = [sys.executable, "-m", "fakejs"]
    runs: dict[str, tuple[list[str], dict[str, str]]] = {
        "fakejs": (fakejs, child_environment(pycache)),
        "fakejs (no bytecode)": (fakejs, child_environment(None)),
    }
    binary = find_nats_server()
    if binary is not None:
        runs["nats-server"] = ([binary], child_environment(None))
    results: dict[str, list[float]] = {}
    try:
        for name, (command, env) in runs.items():
            first_info_ms(command, env)  # warm the page cache (and fill the bytecode cache)
            results[name] = [first_info_ms(command, env) for _ in range(args.runs)]
    finally:
        shutil.rmtree(pycache, ignore_errors=True)
    print(f"start-up to first INFO byte, {args.runs} runs")
    print(f"{'server':22} {'median':>10} {'p90':>10}")
    for name, samples in results.items():
        print(f"{name:22} {statistics.median(samples):>7.1f} ms {percentile(samples, 0.9):>7.1f} ms")
    median = statistics.median(results["fakejs"])
    verdict = "ok" if median <= TARGET_MS else "OVER TARGET"
    print(f"fakejs median {median:.1f} ms (target <= {TARGET_MS:.0f} ms: {verdict})")


if __name__ == "__main__":
    main()
