"""The pytest plugin in a new project: nothing configured, only what ``fakejs[pytest]`` installs.

Each test writes a project into an empty directory (no pytest.ini, no pyproject.toml, no
conftest: not this repository's ``asyncio_mode = auto``) and runs pytest on it in a new process.

Pinned: an ``async def`` test using fakejs fixtures runs green with no configuration and no
warning; a project that chose pytest-asyncio's strict mode keeps its other async tests to itself;
a missing dependency fails the test saying what to install, never "fixture not found".
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.fake_only

FIRST_TESTS = """
import pytest
from nats.js.api import ConsumerConfig


async def test_orders_are_stored(fakejs_client):
    js = fakejs_client.jetstream()
    await js.add_stream(name="ORDERS", subjects=["orders.>"])
    assert (await js.publish("orders.new", b"pizza")).seq == 1


@pytest.mark.fakejs(clock="manual")
async def test_an_unacked_order_comes_back(fakejs_server, fakejs_client):
    js = fakejs_client.jetstream()
    await js.add_stream(name="ORDERS", subjects=["orders.>"])
    await js.publish("orders.new", b"pizza")
    worker = await js.pull_subscribe("orders.>", "worker", config=ConsumerConfig(ack_wait=30))
    await worker.fetch(1)
    fakejs_server.advance_to_next()
    (again,) = await worker.fetch(1)
    assert again.metadata.num_delivered == 2


async def test_streams_show_in_the_state(fakejs_server, fakejs_client):
    await fakejs_client.jetstream().add_stream(name="ORDERS", subjects=["orders.>"])
    await fakejs_server.wait_for(lambda: fakejs_server.state()["streams"], timeout=2)


def test_a_sync_test_gets_a_url(fakejs_url):
    assert fakejs_url.startswith("nats://")
"""


def _run(pytester: pytest.Pytester, *arguments: str) -> pytest.RunResult:
    assert not list(pytester.path.glob("*.ini")) and not list(pytester.path.glob("*.toml"))
    return pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", *arguments)


def test_async_tests_with_fakejs_fixtures_pass_with_nothing_configured(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_orders=FIRST_TESTS)
    result = _run(pytester)
    result.assert_outcomes(passed=4)
    output = "\n".join(result.outlines + result.errlines)
    assert "warning" not in output.lower(), output


def test_a_project_in_strict_mode_keeps_its_other_async_tests(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        test_mixed="""
async def test_with_fakejs(fakejs_client):
    await fakejs_client.flush()

async def test_without_fakejs():
    pass
"""
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "-rA")
    assert result.parseoutcomes().get("passed") == 1
    result.stdout.fnmatch_lines(["PASSED test_mixed.py::test_with_fakejs"])


def test_a_test_marked_for_asyncio_keeps_its_own_mark(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_marked="""
import asyncio
import pytest

@pytest.mark.asyncio(loop_scope="module")
async def test_first(fakejs_url):
    pytest.loop = asyncio.get_running_loop()

@pytest.mark.asyncio(loop_scope="module")
async def test_same_loop(fakejs_url):
    assert asyncio.get_running_loop() is pytest.loop
"""
    )
    _run(pytester).assert_outcomes(passed=2)


def test_without_nats_py_the_client_fixture_says_what_to_install(pytester: pytest.Pytester) -> None:
    pytester.mkpydir("nats").joinpath("__init__.py").write_text("raise ImportError(\"No module named 'nats'\")\n")
    pytester.makepyfile(test_client="async def test_client(fakejs_client):\n    pass\n")
    result = _run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(['*fakejs_client is a nats-py client*pip install "fakejs?pytest?"*'])
    result.stdout.no_fnmatch_line("*fixture 'fakejs_client' not found*")


def test_without_pytest_asyncio_an_async_test_says_what_to_install(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_client="async def test_client(fakejs_server):\n    pass\n")
    result = _run(pytester, "-p", "no:asyncio")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(['*test_client is an async test using fakejs fixtures*pip install "fakejs?pytest?"*'])
