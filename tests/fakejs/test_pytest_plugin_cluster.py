"""The pytest plugin's ``fakejs_cluster`` fixture, run on small suites the way a user would write them.

Pinned: a client on the killed node reconnects to another node and keeps
its subscription; the marker sets the size, a shared manual clock
(``advance``) and the seed (node ``i`` gets ``seed + i``); ``partition`` and
``heal``; an exception inside any node fails the test at teardown; with
``--fakejs-target=real`` the same failover test runs on nats-server
processes and the fakejs-only ones are skipped naming the feature.
"""

from __future__ import annotations

import pytest

# Loaded before pytester's in-process runs (see test_pytest_plugin.py).
import trustme  # noqa: F401

from tests.harness.targets import REAL_BINARY

SUITE = """
import asyncio
import nats
import pytest

async def test_failover_keeps_the_subscription(fakejs_cluster):
    sub_nc = await nats.connect(fakejs_cluster.url(0), reconnect_time_wait=0.05)
    pub_nc = await nats.connect(fakejs_cluster.url(2))
    sub = await sub_nc.subscribe("orders")
    await sub_nc.flush()
    fakejs_cluster.kill(0)  # the node the subscriber is on
    for _ in range(200):
        await pub_nc.publish("orders", b"after")
        try:
            msg = await sub.next_msg(timeout=0.05)
            break
        except nats.errors.TimeoutError:
            pass
    else:
        raise AssertionError("no message after the failover")
    assert msg.data == b"after" and sub_nc.connected_url.port != int(fakejs_cluster.url(0).rsplit(":", 1)[1])
    await sub_nc.close()
    await pub_nc.close()

@pytest.mark.fakejs_cluster(size=2, clock="manual")
def test_a_manual_clock_is_shared(fakejs_cluster):
    before = fakejs_cluster.now()
    fakejs_cluster.advance(30)
    assert fakejs_cluster.now() == before + 30
    assert len(fakejs_cluster.urls) == 2

@pytest.mark.fakejs_cluster(seed=40)
def test_seeded_nodes(fakejs_cluster):
    seeds = [fakejs_cluster.call(lambda i=i: fakejs_cluster.server(i).options.seed) for i in range(3)]
    assert seeds == [40, 41, 42]

def test_partition_and_heal(fakejs_cluster):
    fakejs_cluster.partition(["n1"], ["n2", "n3"])
    fakejs_cluster.heal()
    fakejs_cluster.restart("n2")
"""

BROKEN = """
def boom():
    raise RuntimeError("broken handler")

def test_node_error_fails_the_test(fakejs_cluster):
    import time
    fakejs_cluster.call(lambda: fakejs_cluster.server(1).clock.call_later(0, boom))
    while not fakejs_cluster.call(lambda: fakejs_cluster.server(1).errors):
        time.sleep(0.01)

def test_next_test_is_clean(fakejs_cluster):
    pass
"""

INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"


def test_cluster_fixture_and_marker(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)


def test_an_exception_inside_a_node_fails_the_test(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_broken=BROKEN)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_node_error_fails_the_test*", "*broken handler*"])


@pytest.mark.skipif(REAL_BINARY is None, reason="nats-server not installed")
def test_real_target_runs_failover_and_skips_fake_only_ones(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "-rs", "--fakejs-target=real")
    result.assert_outcomes(passed=1, skipped=3)
    result.stdout.fnmatch_lines(
        ["*fakejs only: clock*", "*fakejs only: call is a fakejs feature*", "*fakejs only: partition()*"]
    )
