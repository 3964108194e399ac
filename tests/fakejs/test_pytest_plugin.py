"""The pytest plugin, run on small suites the way a user would write them."""

from __future__ import annotations

import pytest

from tests.harness.targets import REAL_BINARY

SUITE = """
import json
import pytest
import nats

async def test_publish_and_consume(fakejs_client):
    js = fakejs_client.jetstream()
    await js.add_stream(name="S", subjects=["s.>"], storage="memory")
    ack = await js.publish("s.a", b"hello")
    assert ack.seq == 1
    sub = await js.pull_subscribe("s.a", durable="C", stream="S")
    msgs = await sub.fetch(1)
    assert msgs[0].data == b"hello"

@pytest.mark.fakejs(clock="manual")
async def test_ack_wait_on_virtual_time(fakejs_server):
    nc = await nats.connect(fakejs_server.url)
    js = nc.jetstream()
    await js.add_stream(name="S", subjects=["s.>"], storage="memory")
    await js.publish("s.a", b"job")
    sub = await js.pull_subscribe("s.a", durable="C", stream="S", config=nats.js.api.ConsumerConfig(ack_wait=600))
    assert (await sub.fetch(1))[0].metadata.num_delivered == 1
    fakejs_server.advance(601)
    assert (await sub.fetch(1))[0].metadata.num_delivered == 2
    await nc.close()

@pytest.mark.fakejs(scenario="leadership-change")
async def test_scenario_marker(fakejs_server):
    nc = await nats.connect(fakejs_server.url)
    msg = await nc.request("$JS.API.CONSUMER.MSG.NEXT.ORDERS.worker", b'{"batch":1,"no_wait":true}')
    assert msg.headers["Description"] == "Leadership Change"
    await nc.close()

async def test_introspection(fakejs_server):
    nc = await nats.connect(fakejs_server.url)
    await nc.jetstream().add_stream(name="S", subjects=["s.>"], storage="memory")
    assert [s["name"] for s in fakejs_server.state()["streams"]] == ["S"]
    await nc.close()

def test_sync_test_gets_a_url(fakejs_url):
    assert fakejs_url.startswith("nats://127.0.0.1:")
"""

SHARED = """
import nats

async def test_first(fakejs_shared_server):
    nc = await nats.connect(fakejs_shared_server.url)
    await nc.jetstream().add_stream(name="LEFTOVER", subjects=["x"])
    await nc.close()

async def test_second_starts_empty(fakejs_shared_server):
    nc = await nats.connect(fakejs_shared_server.url)
    assert (await nc.jetstream().account_info()).streams == 0
    await nc.close()
"""

INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"


def test_fixtures_marker_and_clock(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=5)


def test_session_server_is_reset_between_tests(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_shared=SHARED)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


@pytest.mark.skipif(REAL_BINARY is None, reason="nats-server not installed")
def test_real_target_runs_plain_tests_and_skips_fake_only_ones(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "-rs", "--fakejs-target=real")
    result.assert_outcomes(passed=2, skipped=3)
    result.stdout.fnmatch_lines(
        ["*fakejs only: clock*", "*fakejs only: scenario*", "*fakejs only: state is a fakejs feature*"]
    )
