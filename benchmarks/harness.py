"""Run the same nats-py workload against fakejs and nats-server, side by side.

Both servers run as subprocesses started the same way (``-a 127.0.0.1 -p
-1 -js -sd DIR``, by fakejs's launcher :class:`fakejs.targets.ServerProcess`), so the client process and the server never share a
core's event loop.  Each workload runs on each server ``--repeat`` times;
the best run counts, and the ratio fakejs / nats-server is reported.
:func:`timed_ms` and :func:`async_timed_ms` time one action over rounds for
the other benchmarks; :func:`child_environment`, :data:`LISTENING` and
:func:`percentile` serve the benchmarks that spawn servers themselves.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fakejs.targets.real import NatsServerNotFound, ServerProcess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

LISTENING = re.compile(rb"Listening for client connections on [\d.]+:(\d+)")
"""The log line both servers print once clients may connect; group 1 is the port."""


@dataclass(frozen=True)
class FakejsRun:
    """How fakejs is started: from ``tree`` (this checkout, or a copy with the compiled build's modules
    beside its sources), with ``arguments`` added to its command line (``--timeline FILE``)."""

    tree: str = ROOT
    arguments: tuple[str, ...] = ()


PLAIN = FakejsRun()


def start_server(kind: str, fakejs: FakejsRun = PLAIN) -> ServerProcess:
    """``nats-server`` or fakejs's command line, both with ``-a 127.0.0.1 -p -1 -js -sd DIR``."""
    if kind == "nats-server":
        try:
            return ServerProcess().start()
        except NatsServerNotFound as missing:
            raise SystemExit(str(missing)) from None
    return ServerProcess(command=[sys.executable, "-m", "fakejs", *fakejs.arguments], cwd=fakejs.tree).start()


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


def run_workloads(workloads: dict[str, tuple[str, Workload]], repeat: int, fakejs: FakejsRun = PLAIN) -> list[Result]:
    results: list[Result] = []
    servers = {kind: start_server(kind, fakejs) for kind in ("fakejs", "nats-server")}
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


# ---------------------------------------------------------------- timing


def timed_ms(action: Callable[[], object], rounds: int) -> list[float]:
    """Milliseconds of ``rounds`` calls of ``action``, after one warm-up call."""
    action()
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def async_timed_ms(action: Callable[[], Awaitable[object]], rounds: int) -> list[float]:
    """:func:`timed_ms` for a coroutine function, every call on one event loop."""

    async def run() -> list[float]:
        await action()
        samples = []
        for _ in range(rounds):
            started = time.perf_counter()
            await action()
            samples.append((time.perf_counter() - started) * 1000)
        return samples

    return asyncio.run(run())


def percentile(samples: list[float], fraction: float) -> float:
    """The sample at ``fraction`` (0.9 for p90) of the sorted ``samples``."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


# ---------------------------------------------------------------- child processes


def child_environment(pycache: str | None) -> dict[str, str]:
    """This interpreter's environment, with this checkout first on the child's import path.

    With ``pycache`` the child reads and writes bytecode there; without, it writes none.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if pycache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    return env
