"""pytest plugin: a fakejs server per test, in-process, ready in milliseconds.

Installed with fakejs (entry point ``pytest11``), it provides:

* ``fakejs_server`` -- a fresh server for each test (:class:`fakejs.targets.handles.FakeJS`);
* ``fakejs_shared_server`` -- one server for the session, reset between tests;
* ``fakejs_url`` -- the URL of ``fakejs_server``;
* ``fakejs_client`` -- a connected nats-py client (async tests, with pytest-asyncio);
* async tests that use these fixtures run on pytest-asyncio with no configuration: the plugin
  marks them ``asyncio`` unless they carry a mark of their own (``asyncio``, ``anyio``, ``trio``),
  and leaves every other test to the project's own setup.  ``pip install "fakejs[pytest]"``
  brings pytest, pytest-asyncio and nats-py; without one of them a test that needs it fails
  saying what to install;
* marker ``@pytest.mark.fakejs(clock="manual", autojump=None, scenario=None, seed=None, config=None, tls=None, **options)``
  to configure ``fakejs_server`` (options are :class:`fakejs.ServerOptions` fields; ``config`` is the
  text of a nats-server configuration file, e.g. ``"port: -1\njetstream: {max_mem_store: 1MB}"``,
  which a real nats-server gets as ``-c FILE``; ``config_file`` names a file instead;
  ``tls=True`` serves TLS with certificates made for the test, ``tls="verify"`` mutual TLS --
  ``fakejs_server.client_ssl_context()`` connects, ``fakejs_server.certificates`` has the PEM files);
* ``@pytest.mark.fakejs(operator=True)``: ``fakejs_server`` in operator (JWT) mode, with credentials
  minted for the test (:class:`fakejs.testkit.jwt.demo.DemoCredentials`: an operator, its system
  account, an account ``APP`` with JetStream and its user ``demo``), laid before ``config`` if given;
  ``fakejs_credentials`` gives them (``creds_file``, the user's ``.creds``; ``account.user(...)``
  mints more users) and ``fakejs_client`` logs in as the user.  A real nats-server gets the same
  configuration;
* ``fakejs_cluster`` -- a fresh cluster of fakejs servers for each test
  (:class:`fakejs.targets.fake_cluster.FakeCluster`: ``urls``, ``url(i)``,
  ``kill(i)``, ``restart(i, down_for=0)``, ``partition(*groups)``, ``heal()``,
  ``drop_leafs(i=None, remote="*", until_restored=False)``, ``restore_leafs(i=None)``,
  ``advance(seconds)`` with a manual clock); nodes are indexes from 0 or
  names ``"n1"`` ... (fakejs only); ``shutdown(i)`` is an orderly stop, ``kill(i)`` a crash;
* marker ``@pytest.mark.fakejs_cluster(size=3, clock=None|"manual", autojump=None, seed=None, name="C",
  jetstream=False, tags=(), monitor=False, **options)`` to configure ``fakejs_cluster``
  (options are :class:`fakejs.ServerOptions` fields given to every node; ``jetstream=True`` a JetStream
  replicated across the nodes; ``tags`` node i's ``server_tags``; ``clock="manual"`` is one :class:`fakejs.ManualClock`
  shared by every node);
* ``--fakejs-conformance``: every ``fakejs_server`` (and ``fakejs_shared_server``) watches how its
  clients consume (:mod:`fakejs.testkit.conformance`: ADR-37's consume algorithm, ADR-13 pulls,
  ADR-42 pins, ADR-17 ordered consumers), and a test whose clients broke a rule fails at teardown
  with the report; ``fakejs_server.conformance()`` reads it (``@pytest.mark.fakejs(conformance=True)``
  watches without failing the test);
* ``--fakejs-timeline=DIR``: a failing test (setup, call or teardown) that used ``fakejs_server``,
  ``fakejs_shared_server`` (its events since the test began) or ``fakejs_cluster`` (once a cluster
  has a timeline page) gets its server's timeline page in ``DIR`` (a file named after the node id),
  named in the failure report and linked from a pytest-html report; ``--fakejs-timeline-all``
  writes every such test's page (:mod:`fakejs.pytest_timeline`);
* ``--fakejs-target=real``: the same fixtures start a real nats-server instead
  (``fakejs_cluster``: a cluster of ``size`` nats-server processes, ``kill``
  a SIGKILL), so a suite proves its own parity; tests that use fakejs-only
  features (clock, faults, introspection, partitions) are skipped, saying which feature.

Every ``fakejs_server`` (and every ``fakejs_cluster``, node ``i`` with ``seed + i``) is seeded: with the marker's ``seed``, or else with a
seed derived from the test's node id, so a test makes the same random
choices (server id, generated names, jitter) run after run; a failing test's
report shows the seed to replay it with.  An exception raised inside the
server while the test ran (an internal handler, a timer, a fault action, a
control request) fails the test at teardown, with its traceback.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import warnings
from collections.abc import AsyncIterator, Generator, Iterator
from typing import Any

import pytest

from fakejs import pytest_timeline as timeline_pages
from fakejs.core import failures
from fakejs.targets.cluster import RealCluster
from fakejs.targets.fake_cluster import FakeCluster
from fakejs.targets.handles import FakeJS, FakeOnly, RealNatsServer

# Marker settings that change nothing a real nats-server could be asked for.
HARMLESS_ON_REAL = frozenset({"seed", "config", "tls"})
# ``fakejs_cluster`` marker settings a real cluster takes as they are (or that change nothing there).
CLUSTER_ON_REAL = frozenset({"size", "name", "seed", "jetstream", "replicated", "tags", "monitor"})

_SEED = pytest.StashKey[int]()
_CREDENTIALS = pytest.StashKey[Any]()
# The fixtures this plugin provides: an async test using any of them is run on pytest-asyncio.
FIXTURES = frozenset(
    {"fakejs_server", "fakejs_shared_server", "fakejs_url", "fakejs_client", "fakejs_cluster", "fakejs_credentials"}
)
# Marks by which a test already says which loop runs it.
ASYNC_MARKS = ("asyncio", "anyio", "trio")
INSTALL = 'pip install "fakejs[pytest]"'
_NEEDS_ASYNCIO = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fakejs")
    group.addoption(
        "--fakejs-target",
        choices=("fake", "real"),
        default="fake",
        help="run fakejs fixtures against fakejs (default) or a real nats-server",
    )
    group.addoption(
        "--fakejs-conformance",
        action="store_true",
        default=False,
        help="fail tests whose clients break a client conformance rule (ADR-37 consume loops; fakejs target only)",
    )
    timeline_pages.add_options(group)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    _quiet_unset_loop_scope(config)
    timeline_pages.check_options(config)
    config.addinivalue_line(
        "markers",
        "fakejs(clock='real'|'manual', autojump=None, scenario=None, seed=None, config=None, tls=None, "
        "operator=False, **options): "
        "configure the fakejs_server fixture",
    )
    config.addinivalue_line(
        "markers",
        "fakejs_cluster(size=3, clock=None|'manual', autojump=None, seed=None, name='C', jetstream=False, "
        "tags=(), monitor=False, **options): "
        "configure the fakejs_cluster fixture",
    )


def _quiet_unset_loop_scope(config: pytest.Config) -> None:
    """Spare a project that configured nothing pytest-asyncio's note on its unset default fixture loop scope.

    The note (pytest-asyncio 0.24 to 1.5, at start-up) announces a change
    of default that no fakejs fixture depends on; a project that sets
    ``asyncio_default_fixture_loop_scope`` itself gets nothing silenced.
    Runs before pytest-asyncio's own ``pytest_configure`` (``tryfirst``),
    inside the warning filters pytest keeps for the session.
    """
    if config.pluginmanager.hasplugin("asyncio") and not config.getini("asyncio_default_fixture_loop_scope"):
        warnings.filterwarnings(
            "ignore",
            message='The configuration option "asyncio_default_fixture_loop_scope" is unset',
            category=pytest.PytestDeprecationWarning,
        )


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> Generator[None, Any, Any]:
    """Mark async tests that use fakejs fixtures for pytest-asyncio, which needs no configuration then.

    This wrapper runs inside pytest-asyncio's own (``trylast``): the mark is
    on the new items when pytest-asyncio turns marked coroutines into its
    test items.  A test that names its loop already (``asyncio``, ``anyio``,
    ``trio`` marks) is left alone, and so is every test without fakejs fixtures.
    """
    collected = yield
    items = collected if isinstance(collected, list) else [collected]
    for item in items:
        if isinstance(item, pytest.Function) and _async_fakejs_test(item):
            if item.config.pluginmanager.hasplugin("asyncio"):
                item.add_marker(pytest.mark.asyncio)
            else:
                item.stash[_NEEDS_ASYNCIO] = True
    return collected


def _async_fakejs_test(item: pytest.Function) -> bool:
    """An ``async def`` test using a fakejs fixture, with no mark naming its event loop."""
    if not (inspect.iscoroutinefunction(item.obj) and FIXTURES.intersection(item.fixturenames)):
        return False
    return not any(item.get_closest_marker(mark) is not None for mark in ASYNC_MARKS)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.stash.get(_NEEDS_ASYNCIO, False):
        pytest.fail(
            f"{item.name} is an async test using fakejs fixtures: it runs on pytest-asyncio, "
            f"which is not installed (or not enabled): {INSTALL}",
            pytrace=False,
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, None]:
    outcome = yield
    excinfo = outcome.excinfo
    if excinfo is not None and isinstance(excinfo[1], FakeOnly):
        outcome.force_exception(pytest.skip.Exception(f"fakejs only: {excinfo[1]}", _use_item_location=True))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    lines = []
    seed = item.stash.get(_SEED, None)
    if seed is not None and report.failed:
        marker = "fakejs_cluster" if item.get_closest_marker("fakejs_cluster") is not None else "fakejs"
        lines.append(f"server seed {seed}: replay with @pytest.mark.{marker}(seed={seed})")
    lines += timeline_pages.report_lines(item, report)
    if lines:
        report.sections.append(("fakejs", "\n".join(lines)))


def seed_for(nodeid: str) -> int:
    """The default seed of a test: stable across runs and machines, different for each test."""
    return int.from_bytes(hashlib.sha256(nodeid.encode()).digest()[:4], "big")


def _target(config: pytest.Config) -> str:
    return str(config.getoption("--fakejs-target"))


def _start(config: pytest.Config, settings: dict[str, Any]) -> Any:
    if _target(config) == "real":
        _fake_only(settings, HARMLESS_ON_REAL)
        try:
            return RealNatsServer(config=settings.get("config"), tls=settings.get("tls")).start()
        except FakeOnly as exc:
            pytest.skip(str(exc))
    if _judging(config):
        settings = {**settings, "conformance": True}
    return FakeJS(**settings).start()


def _judging(config: pytest.Config) -> bool:
    return bool(config.getoption("--fakejs-conformance")) and _target(config) == "fake"


def _fail_on_server_errors(server: Any, violations: str = "") -> None:
    """Fail the test if the fakejs server recorded exceptions of its own handlers meanwhile,
    or else if its clients broke conformance rules (``violations``, the report read before the server stopped)."""
    if server.kind != "fake":
        return
    errors = server.take_errors()
    if errors:
        pytest.fail(failures.report(errors), pytrace=False)
    if violations:
        pytest.fail(violations, pytrace=False)


def _violations(config: pytest.Config, server: Any) -> str:
    """Under ``--fakejs-conformance``, the report of the conformance rules the test's clients broke ("": none)."""
    if server.kind != "fake" or not _judging(config):
        return ""
    report = server.conformance()
    return report.text() if report else ""


def _seeded_settings(request: pytest.FixtureRequest, marker_name: str) -> dict[str, Any]:
    """The marker's settings, seeded from the test's node id unless the marker gives a seed (kept for the report)."""
    marker = request.node.get_closest_marker(marker_name)
    settings: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    if settings.get("seed") is None:
        settings["seed"] = seed_for(request.node.nodeid)
    request.node.stash[_SEED] = settings["seed"]
    return settings


def _operator_mode(request: pytest.FixtureRequest, settings: dict[str, Any]) -> dict[str, Any]:
    """``operator=True``: the configuration of operator mode with credentials minted for the test, before ``config``."""
    if not settings.pop("operator", False):
        return settings
    # Only operator mode mints credentials (the JWT kit is not loaded with the plugin)
    from fakejs.testkit.jwt.demo import DemoCredentials

    credentials = DemoCredentials.mint()
    directory = request.getfixturevalue("tmp_path_factory").mktemp("fakejs-operator")
    credentials.write(directory)
    request.node.stash[_CREDENTIALS] = credentials
    config = "port: -1\n" + credentials.server_config(directory / "jetstream") + (settings.get("config") or "")
    return {**settings, "config": config}


@pytest.fixture
def fakejs_server(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh server for this test (configured by ``@pytest.mark.fakejs(...)``)."""
    server = _start(request.config, _operator_mode(request, _seeded_settings(request, "fakejs")))
    try:
        timeline_pages.watch(request, server)
        yield server
        timeline_pages.capture(request, server)
        violations = _violations(request.config, server)
    finally:
        server.stop()
    _fail_on_server_errors(server, violations)


def _fake_only(settings: dict[str, Any], harmless: frozenset[str]) -> None:
    """Skip the test (against the real nats-server) if it asks for a fakejs-only setting."""
    fake_only = {k for k, v in settings.items() if v not in (None, "", "real", False) and k not in harmless}
    if fake_only:
        pytest.skip(f"fakejs only: {', '.join(sorted(fake_only))} (running against the real nats-server)")


def _start_cluster(config: pytest.Config, settings: dict[str, Any]) -> Any:
    if _target(config) == "real":
        _fake_only(settings, CLUSTER_ON_REAL)
        try:
            real = {key: settings[key] for key in ("jetstream", "tags", "monitor") if key in settings}
            return RealCluster(settings.get("size", 3), name=settings.get("name", "C"), **real).start()
        except FakeOnly as exc:
            pytest.skip(str(exc))
    return FakeCluster(**settings).start()


@pytest.fixture
def fakejs_cluster(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh cluster for this test (configured by ``@pytest.mark.fakejs_cluster(...)``)."""
    cluster = _start_cluster(request.config, _seeded_settings(request, "fakejs_cluster"))
    try:
        timeline_pages.watch(request, cluster)
        yield cluster
        timeline_pages.capture(request, cluster)
    finally:
        cluster.stop()
    _fail_on_server_errors(cluster)


@pytest.fixture(scope="session")
def _fakejs_session_server(request: pytest.FixtureRequest) -> Iterator[Any]:
    server = _start(request.config, {})
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fakejs_shared_server(request: pytest.FixtureRequest, _fakejs_session_server: Any) -> Iterator[Any]:
    """The session's server, emptied (streams, faults, clients) before this test."""
    if _fakejs_session_server.kind == "fake":
        _fakejs_session_server.reset()  # its timeline too: the test's page holds only its own events
    timeline_pages.watch(request, _fakejs_session_server)
    yield _fakejs_session_server
    timeline_pages.capture(request, _fakejs_session_server)
    violations = _violations(request.config, _fakejs_session_server)
    _fail_on_server_errors(_fakejs_session_server, violations)


@pytest.fixture
def fakejs_url(fakejs_server: Any) -> str:
    return str(fakejs_server.url)


@pytest.fixture
def fakejs_credentials(request: pytest.FixtureRequest, fakejs_server: Any) -> Any:
    """The credentials ``@pytest.mark.fakejs(operator=True)`` minted for ``fakejs_server`` (``creds_file``, ``user``)."""
    del fakejs_server
    credentials = request.node.stash.get(_CREDENTIALS, None)
    if credentials is None:
        pytest.fail("fakejs_credentials needs @pytest.mark.fakejs(operator=True)", pytrace=False)
    return credentials


def _nats_module() -> Any:
    try:
        # The nats-py client is optional: only the fakejs_client fixture needs it
        import nats
    except ImportError:
        pytest.fail(f"fakejs_client is a nats-py client, and nats-py is not installed: {INSTALL}", pytrace=False)
    return nats


if importlib.util.find_spec("pytest_asyncio") is None:

    @pytest.fixture(name="fakejs_client")
    def _client_without_pytest_asyncio() -> Any:
        """Needs pytest-asyncio: fails the test saying what to install."""
        pytest.fail(f"fakejs_client is an async fixture: it needs pytest-asyncio, which is not installed: {INSTALL}")

else:
    import pytest_asyncio

    @pytest_asyncio.fixture(name="fakejs_client")
    async def _client(request: pytest.FixtureRequest, fakejs_server: Any) -> AsyncIterator[Any]:
        """A nats-py client connected to ``fakejs_server`` (closed after the test), as the operator-mode user if any."""
        nats = _nats_module()
        tls = fakejs_server.client_ssl_context() if fakejs_server.tls is not None else None
        credentials = request.node.stash.get(_CREDENTIALS, None)
        creds = str(credentials.creds_file) if credentials is not None else None
        nc = await nats.connect(fakejs_server.url, tls=tls, user_credentials=creds)
        try:
            yield nc
        finally:
            await nc.close()
