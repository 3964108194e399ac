"""Parity campaigns: many seeds at once, on Spark or on local processes.

A campaign runs in two phases, both spread over an :class:`Engine`:

1. **Seeds.**  Seeds are cut into chunks, one chunk per task (a Spark
   partition or a local process).  A task starts one fakejs and one real
   nats-server, runs its seeds one after another on them -- deleting every
   stream between seeds, which costs a few requests instead of two server
   starts -- and reports, per seed, how many operations ran, per feature,
   and the first divergence.  After a divergent seed the task starts fresh
   servers, because the two no longer hold the same state.
2. **Confirmations and reproductions.**  Every divergent seed runs again on
   fresh servers: a divergence that does not come back depended on an
   earlier seed or on timing, and the report counts it apart.  Divergences
   are grouped by API subject, feature, status code and the first field the
   replies disagree on; one confirmed representative per group (or every
   divergence, with ``shrink="all"``) is shrunk to a short reproduction,
   again in parallel.

The Spark side only ever ships plain data (seed lists, JSON-able results)
and module-level functions, so the workers need fakejs, nats-py and a
``nats-server`` binary installed, and nothing else.
"""

from __future__ import annotations

import asyncio
import functools
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, TypeVar

from fakejs.parity.executor import Pair, run_fresh, signature
from fakejs.parity.families import accounts_of
from fakejs.parity.operations import generate
from fakejs.parity.reproduce import check

PREFIX = "[fakejs-parity]"
T = TypeVar("T")
Task = Callable[[int, list[Any]], list[dict[str, Any]]]


def log(message: str) -> None:
    print(f"{PREFIX} {message}", file=sys.stderr, flush=True)


@dataclass
class Settings:
    """What a campaign runs: plain data, shipped to every task."""

    seeds: int
    first_seed: int = 0
    ops_per_seed: int = 20
    inject: dict[str, Any] | None = None
    binary: str | None = None
    shrink: str = "group"  # "group": one reproduction per group; "all"; "none"
    shrink_budget: int = 250
    quiet: bool = False

    def seed_list(self) -> list[int]:
        return list(range(self.first_seed, self.first_seed + self.seeds))


# ---------------------------------------------------------------------------- tasks


# A seed may take this long (seconds): fakejs runs in the task's own event loop, and a fakejs that
# never yields (a busy loop) would hold the task forever, since no timeout of that loop can fire.
SEED_LIMIT = 90
ALARM_AGAIN = 0.25  # seconds until the watchdog raises again, until the seed's task is out


class SeedTimeout(KeyboardInterrupt):
    """A seed ran past :data:`SEED_LIMIT`, raised from SIGALRM so it gets out of a loop that never yields.

    A KeyboardInterrupt, because asyncio lets only those (and SystemExit) through its callbacks
    and transports; any other exception there is logged, or closes a connection, and the busy
    loop goes on.
    """


def _alarm(signum: int, frame: object) -> None:
    # Again soon: the exception may land where Python only reports it (a weakref callback, a
    # __del__) and the seed goes on, or the loop's clean-up may run into the same busy loop.
    signal.setitimer(signal.ITIMER_REAL, ALARM_AGAIN)
    raise SeedTimeout


async def _run_seeds(seeds: list[int], settings: Settings, results: list[dict[str, Any]], holder: list[Pair]) -> None:
    pair = await Pair(settings.inject, settings.binary).start()
    holder.append(pair)
    try:
        for seed in seeds:
            ops = generate(seed, settings.ops_per_seed)
            started = time.monotonic()
            doc: dict[str, Any] = {"seed": seed, "generated": len(ops)}
            _arm(SEED_LIMIT)
            try:
                await pair.configure(accounts_of(ops))
                holder[-1] = pair
                result = await pair.run(ops)
                doc.update(operations=result.executed, features=dict(result.features), divergence=result.divergence)
            except Exception as exc:  # noqa: BLE001 - a crashed server or a broken connection: record it, carry on
                doc.update(operations=0, features={}, divergence=None, error=f"{type(exc).__name__}: {exc}")
            doc["seconds"] = round(time.monotonic() - started, 3)
            if doc["divergence"] is not None or "error" in doc or pair.feeding or pair.reloaded:
                # Fed streams leave retries behind that count in the API totals
                # at their own pace: the next seed gets fresh servers.
                await pair.restart()
            else:
                try:
                    await pair.reset()
                except Exception:  # noqa: BLE001 - servers that cannot be reset are replaced by fresh ones
                    await pair.restart()
            _arm(0)  # the watchdog covers the clean-up too: what a seed left running may spin there
            results.append(doc)
    finally:
        _arm(0)
        await pair.stop()


def _arm(seconds: int) -> None:
    """Start (or, with 0, stop) the seed's SIGALRM watchdog; only the main thread can take signals."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(seconds)


def _run_guarded(seeds: list[int], settings: Settings) -> list[dict[str, Any]]:
    """:func:`_run_seeds` on fresh loops: a seed past the limit is recorded as an error, the rest go on."""
    results: list[dict[str, Any]] = []
    remaining = list(seeds)
    while remaining:
        holder: list[Pair] = []
        try:
            asyncio.run(_run_seeds(remaining, settings, results, holder))
            return results
        except SeedTimeout:
            _arm(0)
            seed = remaining[len([r for r in results if r["seed"] in remaining])]
            for pair in holder:
                if pair.real is not None:
                    pair.real.kill()
            results.append(
                {"seed": seed, "generated": settings.ops_per_seed, "operations": 0, "features": {},
                 "divergence": None, "error": f"SeedTimeout: the seed ran past {SEED_LIMIT} s (fakejs blocked its loop)",
                 "seconds": SEED_LIMIT}
            )  # fmt: skip
            remaining = remaining[remaining.index(seed) + 1 :]
    return results


def run_seed_chunk(index: int, seeds: list[int], settings: Settings) -> list[dict[str, Any]]:
    """One task of phase 1: its seeds on one pair of servers; a completion line on stderr."""
    started = time.monotonic()
    results = _run_guarded(list(seeds), settings)
    if not settings.quiet:
        ops = sum(r["operations"] for r in results)
        found = sum(1 for r in results if r["divergence"] is not None)
        log(
            f"task {index}: {len(results)} seeds, {ops} operations, {found} divergences ({time.monotonic() - started:.1f} s)"
        )
    return results


def confirm_chunk(index: int, items: list[dict[str, Any]], settings: Settings) -> list[dict[str, Any]]:
    """Phase 2a: run divergent seeds again on fresh servers; did the same divergence show?"""
    out = []
    for item in items:
        seed = item["seed"]
        fresh = asyncio.run(run_fresh(generate(seed, settings.ops_per_seed), settings.inject, settings.binary))
        same = fresh.divergence is not None and signature(fresh.divergence) == signature(item["divergence"])
        out.append({"seed": seed, "confirmed": same})
    return out


def shrink_chunk(index: int, items: list[dict[str, Any]], settings: Settings) -> list[dict[str, Any]]:
    """Phase 2b: confirm and shrink divergences (``{"seed", "divergence"}`` items) into reproductions."""
    out = []
    for item in items:
        seed = item["seed"]
        ops = generate(seed, settings.ops_per_seed)
        doc = asyncio.run(
            check(
                seed,
                ops,
                found=item["divergence"],
                inject=settings.inject,
                binary=settings.binary,
                budget=settings.shrink_budget,
            )
        )
        out.append({"seed": seed, "reproduction": doc})
    return out


# ---------------------------------------------------------------------------- engines


class Engine(Protocol):
    """Runs tasks (``task(index, chunk) -> results``) on chunks of work, in parallel."""

    description: str

    def parallelism(self) -> int: ...

    def run(self, task: Task, chunks: list[list[Any]], stage: str, quiet: bool = False) -> list[dict[str, Any]]: ...

    def close(self) -> None: ...


class LocalEngine:
    """Local processes (``workers > 1``) or this process: for machines without Java."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.description = f"local, {self.workers} process{'es' if self.workers > 1 else ''}"

    def parallelism(self) -> int:
        return self.workers

    def run(self, task: Task, chunks: list[list[Any]], stage: str, quiet: bool = False) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        progress = _Progress(stage, len(chunks), quiet)
        if self.workers == 1:
            for index, chunk in enumerate(chunks):
                done = task(index, chunk)
                results.extend(done)
                progress.task_done(done)
            return results
        with multiprocessing.get_context("spawn").Pool(self.workers) as pool:
            for done in pool.imap_unordered(_call, [(task, index, chunk) for index, chunk in enumerate(chunks)]):
                results.extend(done)
                progress.task_done(done)
        return results

    def close(self) -> None:
        pass


def _call(args: tuple[Task, int, list[Any]]) -> list[dict[str, Any]]:
    task, index, chunk = args
    return task(index, chunk)


class _Progress:
    """Progress lines for the driver: tasks done, seeds, operations, divergences."""

    def __init__(self, stage: str, tasks: int, quiet: bool = False) -> None:
        self.stage, self.tasks, self.done, self.quiet = stage, tasks, 0, quiet
        self.seeds = self.operations = self.divergences = 0
        self.started = time.monotonic()

    def task_done(self, results: list[dict[str, Any]]) -> None:
        self.done += 1
        self.seeds += sum(1 for r in results if "operations" in r)
        self.operations += sum(r.get("operations", 0) for r in results)
        self.divergences += sum(1 for r in results if r.get("divergence") is not None)
        self.show(self.done, self.seeds, self.operations, self.divergences)

    def show(self, done: int, seeds: int, operations: int, divergences: int) -> None:
        if self.quiet:
            return
        elapsed = time.monotonic() - self.started
        if self.stage == "seeds":
            log(
                f"{done}/{self.tasks} tasks, {seeds} seeds, {operations} operations, {divergences} divergences ({elapsed:.0f} s)"
            )
        else:
            log(f"{self.stage}: {done}/{self.tasks} tasks ({elapsed:.0f} s)")


class SparkEngine:
    """Spark (``local[*]`` or a cluster master); tasks are Spark partitions of one chunk each.

    Progress comes from accumulators (tasks, seeds, operations, divergences),
    which the driver sees as each task finishes; every task also prints a
    completion line on its stderr.  An already running SparkContext is used,
    and left running.
    """

    def __init__(self, master: str = "local[*]", conf: dict[str, str] | None = None) -> None:
        try:
            # The pyspark package is optional (the spark extra): only the Spark engine needs it
            from pyspark import SparkConf, SparkContext
        except ImportError as exc:  # pragma: no cover - depends on the machine
            raise RuntimeError("pyspark is not installed: pip install 'fakejs[spark]' (or use --local)") from exc
        local = master.startswith("local")
        if local:
            # Workers are started by the JVM: make them this interpreter, which has fakejs and nats-py.
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        active = SparkContext._active_spark_context
        self.owned = active is None
        self.shipped = ""
        if active is None:
            spark_conf = SparkConf().setMaster(master).setAppName("fakejs-parity")
            spark_conf.set("spark.ui.enabled", "false").set("spark.ui.showConsoleProgress", "false")
            if local:
                spark_conf.set("spark.driver.host", "127.0.0.1").set("spark.driver.bindAddress", "127.0.0.1")
            for key, value in (conf or {}).items():
                spark_conf.set(key, value)
            self.sc = SparkContext(conf=spark_conf)
            self.sc.setLogLevel("ERROR")
            if not local:
                self.shipped = _package_zip()
                self.sc.addPyFile(self.shipped)
        else:
            self.sc = active
        self.description = f"spark {self.sc.master}"

    def parallelism(self) -> int:
        return int(self.sc.defaultParallelism)

    def run(self, task: Task, chunks: list[list[Any]], stage: str, quiet: bool = False) -> list[dict[str, Any]]:
        sc = self.sc
        tasks, seeds, operations, divergences = (sc.accumulator(0) for _ in range(4))

        def partition(items: Iterable[tuple[int, list[Any]]]) -> Iterable[dict[str, Any]]:
            for index, chunk in items:
                results = task(index, chunk)
                tasks.add(1)
                seeds.add(sum(1 for r in results if "operations" in r))
                operations.add(sum(r.get("operations", 0) for r in results))
                divergences.add(sum(1 for r in results if r.get("divergence") is not None))
                yield from results

        progress = _Progress(stage, len(chunks), quiet)
        stop = threading.Event()

        def state() -> tuple[int, int, int, int]:
            return (tasks.value, seeds.value, operations.value, divergences.value)

        def watch() -> None:  # accumulators reach the driver as each task finishes
            shown = state()
            while not stop.wait(1.0):
                now = state()
                if now != shown:
                    shown = now
                    progress.show(*now)

        watcher = threading.Thread(target=watch, name="fakejs-parity-progress", daemon=True)
        watcher.start()
        try:
            rdd = sc.parallelize(list(enumerate(chunks)), max(1, len(chunks)))
            return rdd.mapPartitions(partition).collect()
        finally:
            stop.set()
            watcher.join(2)
            progress.show(*state())

    def close(self) -> None:
        if self.owned:
            self.sc.stop()
        if self.shipped:
            shutil.rmtree(os.path.dirname(self.shipped), ignore_errors=True)


def _package_zip() -> str:
    """The fakejs package as a zip, for cluster workers that import it from there."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the fakejs package
    path = os.path.join(tempfile.mkdtemp(prefix="fakejs-parity-"), "fakejs.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for folder, _, files in os.walk(root):
            for name in files:
                if name.endswith((".py", ".toml")):
                    full = os.path.join(folder, name)
                    archive.write(full, os.path.relpath(full, os.path.dirname(root)))
    return path


# ---------------------------------------------------------------------------- the campaign


def chunk(items: list[T], parallelism: int, size: int | None = None) -> list[list[T]]:
    """Work cut into tasks: a few per worker, so progress shows and stragglers even out."""
    if size is None:
        size = max(1, min(25, -(-len(items) // max(1, parallelism * 4))))
    return [items[i : i + size] for i in range(0, len(items), size)]


def group_key(div: dict[str, Any]) -> tuple[str, str, str, str]:
    """Divergences are grouped by API subject (names replaced), feature, status code, and where the replies differ."""
    return (div["api"], div["feature"], str(div["status_code"]), div.get("difference") or "")


@dataclass
class Outcome:
    """Everything a campaign found, ready for :func:`fakejs.parity.report.build`."""

    settings: Settings
    engine: str
    seeds: list[dict[str, Any]]
    confirmed: dict[int, bool] = field(default_factory=dict)
    reproductions: dict[int, dict[str, Any]] = field(default_factory=dict)
    elapsed: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)

    def settings_doc(self) -> dict[str, Any]:
        doc = asdict(self.settings)
        doc.pop("quiet", None)
        return doc


def run_campaign(settings: Settings, engine: Engine, partitions: int | None = None) -> Outcome:
    """Phase 1 (all seeds) and phase 2 (reproductions) on ``engine``."""
    started = time.monotonic()
    seeds = settings.seed_list()
    chunks = chunk(seeds, engine.parallelism(), None if partitions is None else max(1, -(-len(seeds) // partitions)))
    if not settings.quiet:
        log(f"{len(seeds)} seeds x {settings.ops_per_seed} operations in {len(chunks)} tasks on {engine.description}")
    results = engine.run(functools.partial(run_seed_chunk, settings=settings), chunks, "seeds", settings.quiet)
    results.sort(key=lambda r: r["seed"])
    phase1 = time.monotonic() - started
    outcome = Outcome(settings, engine.description, results, phases={"seeds": round(phase1, 3)})

    divergent = [r for r in results if r["divergence"] is not None]
    if divergent:
        items = [{"seed": r["seed"], "divergence": r["divergence"]} for r in divergent]
        if not settings.quiet:
            log(f"confirming {len(items)} divergences on fresh servers")
        confirmed = engine.run(
            functools.partial(confirm_chunk, settings=settings),
            chunk(items, engine.parallelism(), 10),
            "confirmations",
            settings.quiet,
        )
        outcome.confirmed = {d["seed"]: d["confirmed"] for d in confirmed}
        outcome.phases["confirmations"] = round(time.monotonic() - started - phase1, 3)
    if settings.shrink != "none" and divergent:
        if settings.shrink == "all":
            chosen = divergent
        else:  # per group, the first divergence fresh servers confirmed (or the first, if none was)
            firsts: dict[tuple[str, str, str, str], dict[str, Any]] = {}
            for r in sorted(divergent, key=lambda r: not outcome.confirmed.get(r["seed"])):
                firsts.setdefault(group_key(r["divergence"]), r)
            chosen = sorted(firsts.values(), key=lambda r: r["seed"])
        items = [{"seed": r["seed"], "divergence": r["divergence"]} for r in chosen]
        if not settings.quiet:
            log(f"shrinking {len(items)} divergences")
        began = time.monotonic()
        shrunk = engine.run(
            functools.partial(shrink_chunk, settings=settings),
            [[item] for item in items],
            "reproductions",
            settings.quiet,
        )
        outcome.reproductions = {d["seed"]: d["reproduction"] for d in shrunk if d["reproduction"] is not None}
        outcome.phases["reproductions"] = round(time.monotonic() - began, 3)
    outcome.elapsed = round(time.monotonic() - started, 3)
    return outcome


def feature_totals(seeds: list[dict[str, Any]]) -> Counter[str]:
    totals: Counter[str] = Counter()
    for r in seeds:
        totals.update(r.get("features") or {})
    return totals
