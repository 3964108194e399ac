"""The numbers the documentation shows: harness cycles and throughput beside nats-server, against their targets.

    python benchmarks/bench_summary.py [--quick] [--docs] [--compiled] [--timeline]

One run of each, on this machine, in this order: the harness cycle of
``bench_harness_cycle.py`` (shapes A-D), the nats-py workloads of
``bench_core.py`` and ``bench_jetstream.py`` (each the best of
``WORKLOAD_ROUNDS`` rounds, the two servers taking turns, as those scripts
measure by default: a round trip's rate moves with what else the machine
runs, and a stall of one round would otherwise be the row), the raw pipelined publish of
``bench_publish_raw.py``, the wildcard pull over 20,000 subjects and the KV
watch over 5,000 keys of ``bench_scale.py``, and the memory stream of
1,000,000 x 100 B of ``bench_memory.py``.  Prints a Markdown page: the date,
the machine, a table per part with each target and whether it is met.
``--docs`` also writes it to ``docs/contributing/benchmark-results.md`` with
its plot (matplotlib, the ``bench`` extra) beside it.  ``--compiled`` also
runs the throughput measures on the compiled build (``FAKEJS_MYPYC=1``, see
setup.py), built into a copy of this checkout under ``benchmarks/results/``.
``--timeline`` runs them again on fakejs recording its timeline (``--timeline
FILE``, the in-process default ring of 10,000 events), beside the rows of a
fakejs that records nothing, the command line's default.
``--quick`` runs everything small, to try the script, not to publish.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_core
import bench_harness_cycle
import bench_jetstream
import bench_memory
import bench_publish_raw
import bench_scale
from harness import PLAIN, ROOT, FakejsRun, run_workloads, start_server

from fakejs._version import __version__
from fakejs.targets.real import find_nats_server

DOCS_PAGE = os.path.join(ROOT, "docs", "contributing", "benchmark-results.md")
DOCS_PLOT = os.path.join(ROOT, "docs", "contributing", "benchmark-results.png")
KINDS = ("fakejs", "nats-server")


@dataclass
class Scale:
    """How big each part runs."""

    cycles: int = 10
    raw_publishes: int = 200_000
    pull_subjects: int = 20_000
    watch_keys: int = 5_000
    memory_messages: int = 1_000_000


QUICK = Scale(cycles=2, raw_publishes=5_000, pull_subjects=500, watch_keys=200, memory_messages=5_000)


@dataclass
class Row:
    """One measured line: fakejs's and nats-server's values, the target and whether it is met."""

    name: str
    fake: float
    real: float
    unit: str
    target: str
    met: bool

    @property
    def ratio(self) -> float:
        return self.fake / self.real if self.real else float("inf")


def machine() -> str:
    """The CPU model and count, the system and the interpreter."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as info:
            model = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (
        f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, Python {platform.python_version()}"
    )


def nats_server_version() -> str:
    binary = find_nats_server()
    if binary is None:
        return "nats-server not found"
    return subprocess.run([binary, "--version"], capture_output=True, text=True, check=False).stdout.strip()


# ---------------------------------------------------------------- the parts


WORKLOAD_ROUNDS = 3  # the nats-py workloads' rounds per server (the best is the row)
Cycle = dict[str, dict[str, float]]  # shape A's medians: server -> column -> milliseconds, and the floor


def cycle_rows(runs: int) -> tuple[list[str], list[Row], Cycle]:
    """Shape A to D: a table of medians per server, the targets as rows, and shape A's medians."""
    pycache = tempfile.mkdtemp(prefix="fakejs-pycache-")
    try:
        measured, floor = bench_harness_cycle.measure(list(bench_harness_cycle.SHAPES), runs, pycache)
    finally:
        shutil.rmtree(pycache, ignore_errors=True)
    base = statistics.median(floor)
    table = [
        "| shape | server | ready | use | stop | cycle |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    rows: list[Row] = []
    for shape, results in measured.items():
        for name, samples in results.items():
            cells = [statistics.median(samples.columns[column]) for column in ("ready", "use", "stop", "cycle")]
            table.append(f"| {shape} | {name} | " + " | ".join(f"{cell:.1f}" for cell in cells) + " |")
        table.append(f'| {shape} | floor (`python -c "import asyncio"`) | | | | {base:.1f} |')
        rows += target_rows(shape, results, base)
    shape_a = {
        name: {column: statistics.median(values) for column, values in samples.columns.items()}
        for name, samples in measured["A"].items()
    }
    shape_a["floor"] = {"cycle": base}
    return table, rows, shape_a


def target_rows(shape: str, results: dict[str, bench_harness_cycle.Samples], floor: float) -> list[Row]:
    """One shape's targets, met or not by the ``fakejs`` script (or ``python -m fakejs``)."""
    fake = results.get("fakejs (console script)") or results["python -m fakejs"]
    real = results.get("nats-server")

    def medians(column: str) -> tuple[float, float]:
        return statistics.median(fake.columns[column]), statistics.median(real.columns[column]) if real else 0.0

    ready, cycle, stop = medians("ready"), medians("cycle"), medians("stop")
    margin, factor, most = (
        bench_harness_cycle.READY_MARGIN_MS,
        bench_harness_cycle.CYCLE_FACTOR,
        bench_harness_cycle.SIGTERM_EXIT_MS,
    )
    rows = [
        Row(f"{shape}: ready", *ready, "ms", f"<= floor + {margin:.0f} ms", ready[0] <= floor + margin),
        Row(f"{shape}: cycle", *cycle, "ms", f"<= {factor}x floor", cycle[0] <= floor * factor),
    ]
    if shape != "D":
        rows.append(Row(f"{shape}: SIGTERM to exit", *stop, "ms", f"<= {most:.0f} ms", stop[0] <= most))
    return rows


def workload_rows(quick: bool, fakejs: FakejsRun = PLAIN) -> list[Row]:
    """The nats-py workloads, the best of ``WORKLOAD_ROUNDS`` each, ratio at least 0.9 (fakejs started as
    ``fakejs`` says)."""
    workloads = {**bench_core.WORKLOADS, **bench_jetstream.WORKLOADS}
    if quick:
        workloads = dict(list(workloads.items())[:2])
    return [
        Row(result.name, result.fake, result.real, result.unit, ">= 0.9x", result.ratio >= 0.9)
        for result in run_workloads(workloads, repeat=1 if quick else WORKLOAD_ROUNDS, fakejs=fakejs)
    ]


def on_both(measure: object, fakejs: FakejsRun = PLAIN) -> dict[str, float]:
    """``measure(url)`` on a fresh server of each kind (fakejs started as ``fakejs`` says)."""
    values = {}
    for kind in KINDS:
        server = start_server(kind, fakejs)
        try:
            values[kind] = measure(server.url)  # type: ignore[operator]
        finally:
            server.stop()
    return values


def scale_rows(scale: Scale, fakejs: FakejsRun = PLAIN) -> list[Row]:
    """Raw pipelined publish, the wildcard pull over many subjects, the KV watch's create reply."""
    raw = on_both(lambda url: bench_publish_raw.publish(url, scale.raw_publishes, 100), fakejs)
    pull = on_both(
        lambda url: asyncio.run(bench_scale.wildcard_pull(url, scale.pull_subjects))["wildcard pull"], fakejs
    )
    watch = on_both(
        lambda url: asyncio.run(bench_scale.kv_watch(url, scale.watch_keys))["kv watch create"] * 1000, fakejs
    )
    pull_rate = {kind: scale.pull_subjects / seconds for kind, seconds in pull.items()}
    return [
        Row(
            "raw pipelined publish with acks",
            raw["fakejs"],
            raw["nats-server"],
            "msgs/s",
            ">= 0.4x",
            raw["fakejs"] >= 0.4 * raw["nats-server"],
        ),
        Row(
            f"wildcard pull over {scale.pull_subjects:,} subjects",
            pull_rate["fakejs"],
            pull_rate["nats-server"],
            "msgs/s",
            ">= 0.5x",
            pull_rate["fakejs"] >= 0.5 * pull_rate["nats-server"],
        ),
        Row(
            f"KV watch create reply, {scale.watch_keys:,} keys",
            watch["fakejs"],
            watch["nats-server"],
            "ms",
            "<= 3 ms",
            watch["fakejs"] <= 3,
        ),
    ]


def memory_row(messages: int) -> Row:
    """RSS with a memory stream of ``messages`` x 100 B; fakejs below nats-server."""
    previous = os.environ.get("FAKEJS_FORKSERVER")
    os.environ["FAKEJS_FORKSERVER"] = "0"  # the RSS read must be the server's own process
    after = {}
    try:
        for kind in KINDS:
            server = start_server(kind)
            try:
                after[kind] = asyncio.run(bench_memory.fill(server, messages, 100))[1]
            finally:
                server.stop()
    finally:  # the measures after this one start fakejs as the others did
        if previous is None:
            del os.environ["FAKEJS_FORKSERVER"]
        else:
            os.environ["FAKEJS_FORKSERVER"] = previous
    name = f"RSS, memory stream of {messages:,} x 100 B"
    return Row(
        name, after["fakejs"], after["nats-server"], "MB", "< nats-server", after["fakejs"] < after["nats-server"]
    )


def compiled_tree() -> str:
    """A copy of this checkout with the compiled build's modules beside its sources, built there."""
    tree = os.path.join(ROOT, "benchmarks", "results", "compiled")
    shutil.rmtree(tree, ignore_errors=True)
    skipped = (".git", "venv", "node_modules", "__pycache__", "*.so", "build", "results", "site", "*.egg-info")
    shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns(*skipped))
    command = [sys.executable, "setup.py", "--quiet", "build_ext", "--inplace"]
    subprocess.run(command, cwd=tree, env={**os.environ, "FAKEJS_MYPYC": "1"}, check=True, capture_output=True)
    return tree


def compiled_rows(scale: Scale, quick: bool) -> list[Row]:
    """The throughput measures again, fakejs compiled."""
    compiled = FakejsRun(tree=compiled_tree())
    rows = workload_rows(quick, compiled) + scale_rows(scale, compiled)
    return [replace(row, name=f"{row.name} (compiled)") for row in rows if row.unit.endswith("/s")]


def timeline_rows(scale: Scale, quick: bool) -> list[Row]:
    """The throughput measures again, fakejs recording its timeline (``--timeline FILE``: the 10,000-event ring)."""
    with tempfile.TemporaryDirectory() as directory:
        recording = FakejsRun(arguments=("--timeline", os.path.join(directory, "timeline.html")))
        rows = workload_rows(quick, recording) + scale_rows(scale, recording)
    return [replace(row, name=f"{row.name} (timeline on)") for row in rows if row.unit.endswith("/s")]


# ---------------------------------------------------------------- the page


def page(cycle_table: list[str], rows: list[Row], plot_name: str, compiled: bool = False) -> str:
    """The results as a Markdown page."""
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    command = "python benchmarks/bench_summary.py --docs" + (" --compiled" if compiled else "")
    lines = [
        "# Benchmark results",
        "",
        f"Measured {when} with fakejs {__version__} and {nats_server_version()}, one run each (the nats-py"
        f" workloads the best of {WORKLOAD_ROUNDS} rounds, the servers taking turns), on {machine()}.",
        f"Written by `{command}`; see [Benchmarks](benchmarks.md) for each script. fakejs ran as its command",
        "line starts it: on uvloop, its loop polling for 250 µs after each client read before it sleeps (see",
        "[polling before sleeping](../guide/command-line.md#polling-before-sleeping)).",
        "",
        "## A test harness's cycle per test",
        "",
        "Milliseconds, median of the runs: a server spawned as a client library's harness spawns it, ready,",
        "used once (connect nats-py, create a stream, publish with its ack, close), stopped (SIGTERM; shape D",
        "SIGKILL). fakejs rows: the `fakejs` script and `python -m fakejs` served by the forkserver, and",
        "`python -m fakejs` with `FAKEJS_FORKSERVER=0`.",
        "",
        *cycle_table,
        "",
        "## Against the targets",
        "",
        *(
            [
                "Rows marked (compiled) ran fakejs built with `FAKEJS_MYPYC=1` (see [a compiled",
                "build](../guide/command-line.md#a-compiled-build)); the others, as `pip install .` installs it.",
                "A raw pipelined publish is bound by CPython's cost per call (parse, route, store, ack: about",
                "8.5 µs of the server's CPU per message as installed, 5 µs compiled, nats-server's 3 µs): its",
                "target is the compiled build's.",
                "",
            ]
            if compiled
            else []
        ),
        "| measure | fakejs | nats-server | ratio | target | met |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    for row in rows:
        met = "yes" if row.met else "**no**"
        lines.append(
            f"| {row.name} | {row.fake:,.1f} {row.unit} | {row.real:,.1f} {row.unit} | {row.ratio:.2f} | {row.target} | {met} |"
        )
    lines += ["", f"![fakejs / nats-server for each measure]({plot_name})", ""]
    return "\n".join(lines)


def plot(rows: list[Row], cycle: Cycle, path: str) -> None:
    """Left, shape A's cycle per server (ready, use, stop) against the floor; right, each throughput's ratio."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    throughputs = [row for row in rows if row.unit.endswith("/s")]
    figure, (left, right) = plt.subplots(
        1, 2, figsize=(13, 0.35 * len(throughputs) + 1.6), gridspec_kw={"width_ratios": [2, 3]}
    )
    servers = [name for name in cycle if name != "floor"]
    start = [0.0] * len(servers)
    for column, color in (("ready", "tab:blue"), ("use", "tab:gray"), ("stop", "tab:red")):
        widths = [cycle[name][column] for name in servers]
        left.barh(servers, widths, left=start, color=color, label=column)
        start = [a + b for a, b in zip(start, widths, strict=True)]
    floor = cycle["floor"]["cycle"]
    left.axvline(floor, color="black", linewidth=0.8, label=f"floor {floor:.0f} ms")
    left.axvline(floor * bench_harness_cycle.CYCLE_FACTOR, color="black", linestyle="--", linewidth=0.8)
    left.invert_yaxis()
    left.set_xlabel("harness cycle, shape A, ms (dashed: 1.5x floor)")
    left.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.12 - 1.2 / (len(throughputs) + 4)), ncol=4, fontsize="small"
    )
    right.barh(
        [row.name for row in throughputs],
        [row.ratio for row in throughputs],
        color=["tab:green" if row.met else "tab:orange" for row in throughputs],
    )
    right.axvline(1.0, color="black", linewidth=0.8)
    right.axvline(0.9, color="gray", linestyle="--", linewidth=0.8)
    right.invert_yaxis()
    right.set_xlabel("throughput, fakejs / nats-server (dashed: 0.9)")
    figure.suptitle(f"fakejs {__version__} beside {nats_server_version()}, {datetime.date.today()}")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="everything small: to try the script")
    parser.add_argument("--docs", action="store_true", help=f"write {os.path.relpath(DOCS_PAGE, ROOT)} and its plot")
    parser.add_argument("--compiled", action="store_true", help="the throughput measures on the compiled build too")
    parser.add_argument(
        "--timeline", action="store_true", help="the throughput measures with the timeline recorded too"
    )
    args = parser.parse_args(argv)
    scale = QUICK if args.quick else Scale()
    cycle_table, rows, cycle = cycle_rows(scale.cycles)
    rows += workload_rows(args.quick)
    rows += scale_rows(scale)
    rows.append(memory_row(scale.memory_messages))
    if args.compiled:
        rows += compiled_rows(scale, args.quick)
    if args.timeline:
        rows += timeline_rows(scale, args.quick)
    text = page(cycle_table, rows, os.path.basename(DOCS_PLOT), args.compiled)
    print(text)
    if args.docs:
        with open(DOCS_PAGE, "w") as handle:
            handle.write(text)
        plot(rows, cycle, DOCS_PLOT)


if __name__ == "__main__":
    main()
