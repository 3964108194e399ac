"""``--fakejs-conformance``: a suite's tests fail when their clients break a consume rule."""

from __future__ import annotations

import pytest

# Loaded before pytester's in-process runs (see test_pytest_plugin.py).
import trustme  # noqa: F401

INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"

SUITE = """
import json
import nats

async def _setup(url):
    nc = await nats.connect(url, name="app")
    js = nc.jetstream()
    await js.add_stream(name="S", subjects=["s.>"], storage="memory")
    await js.add_consumer("S", durable_name="C", ack_policy="explicit")
    return nc

async def test_a_pull_that_never_ends(fakejs_server):
    nc = await _setup(fakejs_server.url)
    inbox = nc.new_inbox()
    await nc.subscribe(inbox)
    await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.C", json.dumps({"batch": 1}).encode(), reply=inbox)
    await nc.flush()
    await nc.close()

async def test_a_pull_with_expires(fakejs_server):
    nc = await _setup(fakejs_server.url)
    inbox = nc.new_inbox()
    await nc.subscribe(inbox)
    body = {"batch": 1, "expires": 500_000_000}
    await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.C", json.dumps(body).encode(), reply=inbox)
    await nc.flush()
    await nc.close()

async def test_the_report_can_be_read(fakejs_server):
    nc = await _setup(fakejs_server.url)
    await nc.flush()
    assert not fakejs_server.conformance()
    assert fakejs_server.conformance().watched
    await nc.close()

async def test_shared_server_is_judged_too(fakejs_shared_server):
    nc = await _setup(fakejs_shared_server.url)
    inbox = nc.new_inbox()
    await nc.subscribe(inbox)
    await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.C", b"", reply=inbox)
    await nc.flush()
    await nc.close()
"""


def test_violations_fail_the_test_with_the_report(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "--fakejs-conformance")
    result.assert_outcomes(passed=4, errors=2)
    output = result.stdout.str()
    assert "[pull-expires] app S/C: a waiting pull without expires" in output
    assert "PUB $JS.API.CONSUMER.MSG.NEXT.S.C _INBOX." in output
    assert "ERROR at teardown of test_a_pull_that_never_ends" in output
    assert "ERROR at teardown of test_shared_server_is_judged_too" in output


def test_without_the_option_nothing_is_judged(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(
        test_suite=SUITE.replace(
            "assert fakejs_server.conformance().watched", "assert not fakejs_server.conformance().watched"
        )
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
