"""Fixtures shared by every test: the dual-target harness.

Any test that asks for ``target`` (or ``make_target``) runs twice: once
against fakejs (``[fake]``) and once against the real nats-server
(``[real]``).  Markers narrow that: ``fake_only`` for what only fakejs has
(virtual clock, faults, introspection), ``real_only`` for probes of the
real server.  When the real binary is missing its variants are skipped with
the reason shown, never silently dropped.

A test marked ``manual_clock`` gets its fakejs targets on a
:class:`~fakejs.ManualClock`: time passes for their timers only through
``await target.elapse(seconds)`` and ``target.elapse_until(...)``, which
really wait on the real server; ``manual_clock(False)`` opts one test of a
marked module out (a client library that times the server on its own clock).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence

import pytest
from nats.aio.client import Client

from fakejs import ManualClock
from fakejs.targets.cluster import RealCluster
from fakejs.targets.fake_cluster import FakeCluster
from tests.harness.cluster import Cluster, start_cluster
from tests.harness.js import connected
from tests.harness.natspy import order_pings_after_queued_commands
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON, Settings, Target, start_target, stop_target

TARGET_KINDS = ("fake", "real")

# A test marked ``client_race`` drives a client-library path whose outcome
# depends on the order in which nats-server flushes two replies it sends from
# different goroutines (nats-py's KV/object-store watchers decide "no more
# entries" from a consumer-info reply that may overtake the deliveries it
# counts).  Its [real] variant is rerun this many times; the [fake] variant
# never is, so fakejs must get it right every time.
RACE_RERUNS = 2


def pytest_configure(config: pytest.Config) -> None:
    order_pings_after_queued_commands()  # a flush's PONG then means the server read what came before
    config.addinivalue_line(
        "markers",
        "manual_clock(on=True): the [fake] variant runs on a ManualClock; time passes only through "
        "target.elapse() and target.elapse_until() (manual_clock(False) opts a test of a marked module out)",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "target_kind" in metafunc.fixturenames:
        kinds = list(TARGET_KINDS)
        if metafunc.definition.get_closest_marker("fake_only"):
            kinds = ["fake"]
        elif metafunc.definition.get_closest_marker("real_only"):
            kinds = ["real"]
        race = metafunc.definition.get_closest_marker("client_race")
        params = [
            pytest.param(kind, marks=pytest.mark.flaky(reruns=RACE_RERUNS)) if race and kind == "real" else kind
            for kind in kinds
        ]
        metafunc.parametrize("target_kind", params)


@pytest.fixture(autouse=True)
def _fakejs_logger_kept() -> Iterator[None]:
    """The ``fakejs`` logger as each test found it.

    A test that runs the command line in-process installs its handler on
    the stream stderr was then (pytest's capture, closed after the test);
    later tests must not log into it.
    """
    logger = logging.getLogger("fakejs")
    handlers, propagate, level = logger.handlers[:], logger.propagate, logger.level
    yield
    logger.handlers[:] = handlers
    logger.propagate, logger.level = propagate, level


def _require(kind: str) -> None:
    if kind == "real" and REAL_BINARY is None:
        pytest.skip(REAL_MISSING_REASON)


MakeTarget = Callable[..., Awaitable[Target]]


@pytest.fixture
async def make_target(target_kind: str, request: pytest.FixtureRequest) -> AsyncIterator[MakeTarget]:
    """Start targets of this test's kind with given :class:`Settings` (fakejs on a manual clock if marked so)."""
    _require(target_kind)
    started: list[Target] = []
    marker = request.node.get_closest_marker("manual_clock")  # a test's own mark wins over its module's
    manual = target_kind == "fake" and marker is not None and (marker.args[0] if marker.args else True)

    async def make(settings: Settings | None = None, **kwargs) -> Target:
        if manual:
            kwargs.setdefault("clock", ManualClock())
        target = await start_target(target_kind, settings, **kwargs)
        started.append(target)
        return target

    yield make
    for target in started:
        await stop_target(target)


@pytest.fixture
async def target(make_target: MakeTarget) -> Target:
    """A fresh server with default settings, of this test's kind."""
    return await make_target()


@pytest.fixture
async def nc(target: Target) -> AsyncIterator[Client]:
    """A nats-py connection to ``target``, closed after the test."""
    async with connected(target) as client:
        yield client


@pytest.fixture
async def both() -> AsyncIterator[Callable[..., Awaitable[tuple[Target, Target]]]]:
    """Start a fakejs and a real server with the same settings, for byte-for-byte comparisons."""
    _require("real")
    started: list[Target] = []

    async def make(settings: Settings | None = None) -> tuple[Target, Target]:
        fake = await start_target("fake", settings)
        started.append(fake)
        real = await start_target("real", settings)
        started.append(real)
        return fake, real

    yield make
    for target in started:
        await stop_target(target)


@pytest.fixture(scope="module", params=TARGET_KINDS)
def cluster_kind(request: pytest.FixtureRequest) -> str:
    """The kind of every node of this test's clusters; module-scoped, so a module can share one cluster."""
    _require(request.param)
    return str(request.param)


@pytest.fixture(scope="module")
def cluster3(cluster_kind: str) -> Iterator[Cluster]:
    """Three nodes of one kind, connected (the second and third routed to the first), shared by a module."""
    with start_cluster([cluster_kind] * 3) as cluster:
        yield cluster


MakeCluster = Callable[..., Cluster]


@pytest.fixture
def make_cluster(cluster_kind: str) -> Iterator[MakeCluster]:
    """Start connected clusters of this test's kind (``size`` nodes, ``extra`` flags on each), for one test."""
    started: list[Cluster] = []

    def make(size: int = 3, extra: Sequence[str] = (), monitor: bool = False) -> Cluster:
        cluster = start_cluster([cluster_kind] * size, extra=extra, monitor=monitor)
        started.append(cluster)
        return cluster

    yield make
    for cluster in started:
        cluster.stop()


# -- JetStream in a three-node cluster ------------------------------------------------------------

# Why the [fake] variants of JetStream-cluster tests are expected to fail (fakejs refuses JetStream
# in a cluster until it serves it); ``None`` once it does, and they must pass.
JS_CLUSTER_FAKE_PENDING: str | None = None
JS_CLUSTER_TAGS = (("az:1",), ("az:2",), ("az:3",))  # node i's server_tags

JsCluster = FakeCluster | RealCluster


def _js_cluster_kinds() -> list[object]:
    pending = JS_CLUSTER_FAKE_PENDING
    fake_marks = [pytest.mark.xfail(strict=False, reason=pending)] if pending else []
    return [pytest.param("fake", marks=fake_marks), "real"]


@pytest.fixture(scope="module", params=_js_cluster_kinds())
def js_cluster_kind(request: pytest.FixtureRequest) -> str:
    """The kind of this test's JetStream clusters; module-scoped, so a module can share one cluster."""
    _require(request.param)
    return str(request.param)


def start_js_cluster(kind: str) -> JsCluster:
    """Three JetStream nodes ``n1``..``n3`` of cluster ``C``, tagged ``az:1``..``az:3``, with monitoring."""
    if kind == "fake":  # each node runs its share of the groups, as processes do
        return FakeCluster(size=3, jetstream=True, tags=JS_CLUSTER_TAGS, monitor=True).start()
    return RealCluster(3, jetstream=True, tags=JS_CLUSTER_TAGS, monitor=True).start()


@pytest.fixture(scope="module")
def js_cluster(js_cluster_kind: str) -> Iterator[JsCluster]:
    """A JetStream cluster of three nodes shared by a module (for tests that leave every node running)."""
    cluster = start_js_cluster(js_cluster_kind)
    try:
        yield cluster
    finally:
        cluster.stop()


MakeJsCluster = Callable[[], JsCluster]


@pytest.fixture
def make_js_cluster(js_cluster_kind: str) -> Iterator[MakeJsCluster]:
    """Start JetStream clusters of three nodes for one test (one that kills or restarts nodes)."""
    started: list[JsCluster] = []

    def make() -> JsCluster:
        cluster = start_js_cluster(js_cluster_kind)
        started.append(cluster)
        return cluster

    yield make
    for cluster in started:
        cluster.stop()
