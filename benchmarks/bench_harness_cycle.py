"""What a client library's test harness pays per test: start a server, use it once, stop it.

    python benchmarks/bench_harness_cycle.py [--runs 20] [--shapes A,B,C,D] [--importtime]

Each cycle spawns a server the way one client library's own test harness does,
waits until that harness would call it ready, connects nats-py, creates a
stream, publishes one message and awaits its ack, closes, and stops the
server.  The servers: ``python -m fakejs``, the installed ``fakejs`` console
script (both served, after the first cycle, by fakejs's forkserver: see
docs/guide/command-line.md), ``python -m fakejs`` with
``FAKEJS_FORKSERVER=0`` (every server imports fakejs itself) and ``nats-server``; beside them CPython's floor, ``python -c "import
asyncio"`` spawned and waited for, the least any Python server can cost.

The shapes (how a harness starts the server and decides it is ready):

- A (nats.py): ``-p -1 -js --store_dir D``, ready when stderr says
  ``Listening for client connections on HOST:PORT``; stopped by SIGTERM.
- B (nats.js): ``-c CONF`` whose ``ports_file_dir`` names a directory the
  harness polls, ready when the ports file appears in it; SIGTERM.
- C (nats.c): ``-a 127.0.0.1 -p -1 -js -sd D -l LOGFILE``, ready when the log
  file holds the listen line; SIGTERM.
- D: shape A stopped by SIGKILL, then started again on the same store
  directory (what the next test pays after a killed server).

The columns, each the median and p90 over ``--runs`` cycles in milliseconds:

- ready: from just before the spawn to the harness's readiness signal;
- use: connect, create a stream, publish one message with its ack, close;
- stop: from the signal (SIGTERM, or SIGKILL in shape D) to the process's exit;
- cycle: the whole cycle, spawn to exit;
- restart: shape D only, the next start's ready time on the killed server's store.

The floor row has only a cycle.  The targets are printed beside the numbers and
never asserted: a whole cycle at most 1.5x the floor, ready at most the floor
plus 20 ms, SIGTERM to exit at most 10 ms.

``--importtime`` runs ``python -X importtime -m fakejs -p -1 -js -sd D`` once
until it is ready and prints the 15 modules with the largest cumulative import
time and the total of all imports.

fakejs runs as installed: its bytecode compiled once (by a warm-up cycle) and
kept under a temporary ``PYTHONPYCACHEPREFIX``, so nothing is written into the
checkout.  The floor runs with the same bytecode cache.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import nats
from harness import LISTENING, ROOT, child_environment, percentile

from fakejs.targets.real import find_nats_server

TIMEOUT = 15.0  # seconds a server may take to be ready or to exit before the run fails
POLL = 0.001  # seconds between looks at a ports file or a log file, as a harness polls
CYCLE_FACTOR = 1.5
READY_MARGIN_MS = 20.0
SIGTERM_EXIT_MS = 10.0
COLUMNS = ("ready", "use", "stop", "cycle", "restart")


@dataclass
class Target:
    """A server command line and the environment it runs in."""

    name: str
    command: list[str]
    env: dict[str, str]


@dataclass
class Started:
    """A spawned server: its process, the client port and the milliseconds it took to be ready."""

    process: subprocess.Popen[bytes]
    port: int
    ready_ms: float


@dataclass
class Samples:
    """Milliseconds per column over the runs of one target in one shape."""

    columns: dict[str, list[float]] = field(default_factory=dict)

    def add(self, values: dict[str, float]) -> None:
        for column, value in values.items():
            self.columns.setdefault(column, []).append(value)


# ---------------------------------------------------------------- readiness


def _wait_for(find: Callable[[], int], process: subprocess.Popen[bytes], what: str) -> int:
    """Poll ``find`` every :data:`POLL` seconds until it returns a port."""
    deadline = time.perf_counter() + TIMEOUT
    while time.perf_counter() < deadline:
        port = find()
        if port:
            return port
        if process.poll() is not None:
            break
        time.sleep(POLL)
    raise RuntimeError(f"the server never {what}")


def _port_from_stderr(process: subprocess.Popen[bytes]) -> int:
    assert process.stderr is not None
    for line in process.stderr:
        found = LISTENING.search(line)
        if found:
            return int(found.group(1))
    raise RuntimeError("the server never said where it listens")


def _port_from_ports_file(directory: str) -> int:
    for path in glob.glob(os.path.join(directory, "*.ports")):
        try:
            with open(path) as ports_file:
                url = json.load(ports_file)["nats"][0]
        except (OSError, ValueError, KeyError, IndexError):
            return 0  # still being written
        return int(url.rsplit(":", 1)[1])
    return 0


def _port_from_log_file(path: str) -> int:
    try:
        with open(path, "rb") as log:
            found = LISTENING.search(log.read())
    except FileNotFoundError:
        return 0
    return int(found.group(1)) if found else 0


# ---------------------------------------------------------------- shapes


def start_shape_a(target: Target, workdir: str) -> Started:
    """nats.py: ``-p -1 -js --store_dir D``, ready at the listen line on stderr."""
    store = os.path.join(workdir, "store")
    args = [*target.command, "-p", "-1", "-js", "--store_dir", store]
    started = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=target.env, cwd=ROOT)
    port = _port_from_stderr(process)
    return Started(process, port, (time.perf_counter() - started) * 1000)


def start_shape_b(target: Target, workdir: str) -> Started:
    """nats.js: ``-c CONF`` with ``ports_file_dir``, ready when the ports file appears."""
    ports_dir = os.path.join(workdir, "ports")
    os.makedirs(ports_dir, exist_ok=True)
    conf = os.path.join(workdir, "server.conf")
    with open(conf, "w") as out:
        out.write(
            f'listen: "127.0.0.1:-1"\nports_file_dir: "{ports_dir}"\n'
            f'jetstream {{ store_dir: "{os.path.join(workdir, "store")}" }}\n'
        )
    started = time.perf_counter()
    process = subprocess.Popen(
        [*target.command, "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=target.env, cwd=ROOT
    )
    port = _wait_for(lambda: _port_from_ports_file(ports_dir), process, "wrote its ports file")
    return Started(process, port, (time.perf_counter() - started) * 1000)


def start_shape_c(target: Target, workdir: str) -> Started:
    """nats.c: ``-a 127.0.0.1 -l LOGFILE``, ready when the log file holds the listen line."""
    log = os.path.join(workdir, "server.log")
    store = os.path.join(workdir, "store")
    args = [*target.command, "-a", "127.0.0.1", "-p", "-1", "-js", "-sd", store, "-l", log]
    started = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=target.env, cwd=ROOT)
    port = _wait_for(lambda: _port_from_log_file(log), process, "logged where it listens")
    return Started(process, port, (time.perf_counter() - started) * 1000)


SHAPES: dict[str, Callable[[Target, str], Started]] = {
    "A": start_shape_a,
    "B": start_shape_b,
    "C": start_shape_c,
    "D": start_shape_a,
}
SHAPE_TITLES = {
    "A": "A  nats.py: -p -1 -js --store_dir D, ready at the stderr listen line, SIGTERM",
    "B": "B  nats.js: -c CONF with ports_file_dir, ready when the ports file appears, SIGTERM",
    "C": "C  nats.c: -a 127.0.0.1 -l LOGFILE, ready at the log file's listen line, SIGTERM",
    "D": "D  shape A stopped by SIGKILL; restart = the next start's ready on the same store",
}


# ---------------------------------------------------------------- one cycle


async def use_server(port: int) -> None:
    """Connect nats-py, create a stream, publish one message and await its ack, close."""
    client = await nats.connect(f"nats://127.0.0.1:{port}", allow_reconnect=False)
    try:
        jetstream = client.jetstream()
        await jetstream.add_stream(name="CYCLE", subjects=["cycle"])
        await jetstream.publish("cycle", b"one")
    finally:
        await client.close()


def stop_ms(process: subprocess.Popen[bytes], how: signal.Signals) -> float:
    """Milliseconds from sending ``how`` to the process's exit."""
    # A blocking wait, its time-out a timer: Popen.wait(timeout) polls with a doubling sleep
    # (0.5, 1, 2, 4 ms...), which would round every stop up to 3.5, 7.5, 15.5 or 31.5 ms.
    overdue = threading.Timer(TIMEOUT, process.kill)
    started = time.perf_counter()
    process.send_signal(how)
    overdue.start()
    try:
        process.wait()
    finally:
        overdue.cancel()
        if process.stderr is not None:
            process.stderr.close()
    elapsed = (time.perf_counter() - started) * 1000
    if elapsed >= TIMEOUT * 1000:
        raise RuntimeError(f"the server did not exit within {TIMEOUT:.0f} s of {how.name}")
    return elapsed


def run_cycle(target: Target, shape: str) -> dict[str, float]:
    """One harness cycle of ``target`` in ``shape``; its columns in milliseconds."""
    workdir = tempfile.mkdtemp(prefix="fakejs-cycle-")
    try:
        cycle_started = time.perf_counter()
        server = SHAPES[shape](target, workdir)
        try:
            use_started = time.perf_counter()
            asyncio.run(use_server(server.port))
            use = (time.perf_counter() - use_started) * 1000
        except BaseException:
            stop_ms(server.process, signal.SIGKILL)
            raise
        stop = stop_ms(server.process, signal.SIGKILL if shape == "D" else signal.SIGTERM)
        values = {
            "ready": server.ready_ms,
            "use": use,
            "stop": stop,
            "cycle": (time.perf_counter() - cycle_started) * 1000,
        }
        if shape == "D":
            restarted = start_shape_a(target, workdir)
            values["restart"] = restarted.ready_ms
            stop_ms(restarted.process, signal.SIGTERM)
        return values
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def floor_ms(env: dict[str, str]) -> float:
    """Milliseconds to spawn ``python -c "import asyncio"`` and see it exit."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import asyncio"], env=env, cwd=ROOT, check=True)
    return (time.perf_counter() - started) * 1000


# ---------------------------------------------------------------- report


def _cell(samples: list[float] | None) -> str:
    if not samples:
        return f"{'':>15}"
    return f"{statistics.median(samples):.1f}/{percentile(samples, 0.9):.1f}".rjust(15)


def report(shape: str, results: dict[str, Samples], floor: list[float]) -> list[str]:
    """The table of one shape: a row per target, median/p90 per column, and the targets."""
    columns = COLUMNS if shape == "D" else COLUMNS[:-1]
    lines = ["", SHAPE_TITLES[shape], f"{'server':24} " + " ".join(f"{c:>15}" for c in columns)]
    for name, samples in results.items():
        lines.append(f"{name:24} " + " ".join(_cell(samples.columns.get(c)) for c in columns))
    floor_cells = " ".join(_cell(floor if c == "cycle" else None) for c in columns)
    lines.append(f"{'floor (import asyncio)':24} {floor_cells}".rstrip())
    base = statistics.median(floor)
    stop_target = "" if shape == "D" else f", stop (SIGTERM to exit) <= {SIGTERM_EXIT_MS:.0f}"
    lines.append(
        f"{'targets (medians)':24} ready <= {base + READY_MARGIN_MS:.1f} (floor + {READY_MARGIN_MS:.0f}), "
        f"cycle <= {base * CYCLE_FACTOR:.1f} ({CYCLE_FACTOR}x floor){stop_target}"
    )
    return lines


# ---------------------------------------------------------------- import time


def import_times(env: dict[str, str]) -> list[str]:
    """``python -X importtime -m fakejs`` until ready: the top 15 cumulative imports and the total."""
    store = tempfile.mkdtemp(prefix="fakejs-importtime-")
    args = [sys.executable, "-X", "importtime", "-m", "fakejs", "-p", "-1", "-js", "-sd", store]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    imports: list[tuple[int, int, str]] = []
    try:
        assert process.stderr is not None
        for line in process.stderr:
            if LISTENING.search(line):
                break
            text = line.decode(errors="replace")
            if text.startswith("import time:") and "|" in text and "[us]" not in text:
                own_us, cumulative_us, name = text.split(":", 1)[1].split("|")
                imports.append((int(cumulative_us), int(own_us), name.rstrip()))
    finally:
        stop_ms(process, signal.SIGTERM)
        shutil.rmtree(store, ignore_errors=True)
    total_ms = sum(own for _, own, _ in imports) / 1000
    lines = ["", "python -X importtime -m fakejs -p -1 -js -sd D, until ready: top 15 by cumulative time"]
    lines.append(f"{'cumulative':>12} {'self':>10}  module")
    for cumulative, own, module in sorted(imports, reverse=True)[:15]:
        lines.append(f"{cumulative / 1000:>9.1f} ms {own / 1000:>7.1f} ms  {module}")
    lines.append(f"total of all {len(imports)} imports: {total_ms:.1f} ms")
    return lines


# ---------------------------------------------------------------- main


def targets(pycache: str) -> list[Target]:
    """``python -m fakejs``, the ``fakejs`` console script and nats-server (when found)."""
    env = child_environment(pycache)
    script = os.path.join(os.path.dirname(sys.executable), "fakejs")
    chosen = [Target("python -m fakejs", [sys.executable, "-m", "fakejs"], env)]
    if os.path.exists(script):
        chosen.append(Target("fakejs (console script)", [script], env))
    cold = {**env, "FAKEJS_FORKSERVER": "0"}
    chosen.append(Target("fakejs, no forkserver", [sys.executable, "-m", "fakejs"], cold))
    binary = find_nats_server()
    if binary is not None:
        chosen.append(Target("nats-server", [binary], child_environment(None)))
    return chosen


def wait_for_forkserver(limit: float = 30.0) -> None:
    """Until the forkserver this process's first ``fakejs`` started serves (its abstract socket is bound)."""
    name = f"@fakejs-forkserver-{os.getuid()}-{os.getpid()}-"
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        with open("/proc/net/unix") as table:
            if any(line.split()[-1].startswith(name) for line in table if len(line.split()) > 7):
                return
        time.sleep(0.05)
    print("fakejs's forkserver did not start: every fakejs row is a start without one", file=sys.stderr)


def measure(shapes: list[str], runs: int, pycache: str) -> tuple[dict[str, dict[str, Samples]], list[float]]:
    """Each shape's samples by server, ``runs`` cycles each (interleaved), and the floor's cycles."""
    env = child_environment(pycache)
    servers = targets(pycache)
    floor_ms(env)  # warm: fills the bytecode cache
    floor = [floor_ms(env) for _ in range(runs)]
    measured: dict[str, dict[str, Samples]] = {}
    for shape in shapes:
        results = measured[shape] = {server.name: Samples() for server in servers}
        for server in servers:
            run_cycle(server, shape)  # warm the page cache (and start fakejs's forkserver)
        wait_for_forkserver()
        for _ in range(runs):
            for server in servers:
                results[server.name].add(run_cycle(server, shape))
    return measured, floor


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--shapes", default="A,B,C,D", help="comma-separated shapes to run, of A, B, C, D")
    parser.add_argument("--importtime", action="store_true", help="also print fakejs's slowest imports")
    args = parser.parse_args(argv)
    shapes = [s.strip().upper() for s in args.shapes.split(",") if s.strip()]
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown:
        parser.error(f"unknown shapes {unknown}; choose from {sorted(SHAPES)}")
    pycache = tempfile.mkdtemp(prefix="fakejs-pycache-")
    try:
        measured, floor = measure(shapes, args.runs, pycache)
        lines = [
            f"harness cycle per test, {args.runs} runs, milliseconds as median/p90; fakejs as installed "
            "(bytecode compiled once, under a temporary PYTHONPYCACHEPREFIX)"
        ]
        for shape, results in measured.items():
            lines += report(shape, results, floor)
        if args.importtime:
            env = child_environment(pycache)
            import_times(env)  # fills the bytecode cache when no shape ran
            lines += import_times(env)
    finally:
        shutil.rmtree(pycache, ignore_errors=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
