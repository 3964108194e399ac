"""The pytest plugin, run on small suites the way a user would write them."""

from __future__ import annotations

import re

import pytest

# Loaded before pytester's in-process runs: they drop the modules a run imported, and the
# cryptography bindings do not survive being imported twice in one process.
import trustme  # noqa: F401

from fakejs.pytest_plugin import seed_for
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

SEEDED = """
import pytest
from fakejs.gocompat import ids

@pytest.mark.fakejs(seed=7)
def test_marker_seed(fakejs_server):
    assert fakejs_server.state()["server_name"] == "fakejs-" + ids.server_id(ids.new_random(7))[-8:]

def test_default_seed_one(fakejs_server):
    print("ID", fakejs_server.call(lambda: fakejs_server.server.broker.server_id))

def test_default_seed_two(fakejs_server):
    print("ID", fakejs_server.call(lambda: fakejs_server.server.broker.server_id))

def test_failure_shows_the_seed(fakejs_server):
    assert False, "on purpose"
"""

BROKEN = """
def boom():
    raise RuntimeError("broken handler")

def test_server_error_fails_the_test(fakejs_server):
    fakejs_server.call(lambda: fakejs_server.server.clock.call_later(0, boom))
    fakejs_server.wait_until(lambda: fakejs_server.server.errors)

def test_next_test_is_clean(fakejs_server):
    pass

def test_shared_server_error_fails_the_test(fakejs_shared_server):
    fakejs_shared_server.call(lambda: fakejs_shared_server.server.clock.call_later(0, boom))
    fakejs_shared_server.wait_until(lambda: fakejs_shared_server.server.errors)

def test_shared_next_test_is_clean(fakejs_shared_server):
    pass
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


def test_servers_are_seeded_by_the_marker_or_the_test_id(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_seeded=SEEDED)
    runs = [pytester.runpytest("-q", "-s", "-p", "no:cacheprovider") for _ in range(2)]
    for result in runs:
        result.assert_outcomes(passed=3, failed=1)
    ids = [re.findall(r"ID (N[A-Z0-9]{55})", result.stdout.str()) for result in runs]
    assert len(ids[0]) == 2 and ids[0][0] != ids[0][1]  # one seed per test
    assert ids[0] == ids[1]  # the same run after run
    seed = seed_for("test_seeded.py::test_failure_shows_the_seed")
    runs[0].stdout.fnmatch_lines([f"*server seed {seed}: replay with @pytest.mark.fakejs(seed={seed})*"])


def test_an_exception_inside_the_server_fails_the_test_with_its_traceback(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_broken=BROKEN)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_server_error_fails_the_test*",
            "*1 exception(s) inside the fakejs server:*",
            "*--- timer callback boom*",
            "*RuntimeError: broken handler*",
            "*ERROR at teardown of test_shared_server_error_fails_the_test*",
        ]
    )
    assert "test_next_test_is_clean" not in "\n".join(line for line in result.outlines if "ERROR" in line)


@pytest.mark.skipif(REAL_BINARY is None, reason="nats-server not installed")
def test_real_target_runs_plain_tests_and_skips_fake_only_ones(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "-rs", "--fakejs-target=real")
    result.assert_outcomes(passed=2, skipped=3)
    result.stdout.fnmatch_lines(
        ["*fakejs only: clock*", "*fakejs only: scenario*", "*fakejs only: state is a fakejs feature*"]
    )


@pytest.mark.skipif(REAL_BINARY is None, reason="nats-server not installed")
def test_a_seed_is_no_reason_to_skip_on_the_real_target(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(
        test_real_seed="""
import pytest

@pytest.mark.fakejs(seed=3)
def test_seeded(fakejs_url):
    assert fakejs_url.startswith("nats://127.0.0.1:")
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "--fakejs-target=real")
    result.assert_outcomes(passed=1)


TLS_SUITE = """
import ssl
import pytest
import nats

@pytest.mark.fakejs(tls=True)
async def test_tls_client(fakejs_server):
    nc = await nats.connect(fakejs_server.url, tls=fakejs_server.client_ssl_context())
    assert nc.connected_url.scheme in ("nats", "tls")
    await nc.publish("x", b"")
    await nc.flush()
    await nc.close()

@pytest.mark.fakejs(tls=True)
async def test_plain_client_is_refused(fakejs_server):
    with pytest.raises(Exception):
        await nats.connect(fakejs_server.url, allow_reconnect=False, connect_timeout=2)

@pytest.mark.fakejs(tls="verify")
async def test_mutual_tls(fakejs_server):
    certs = fakejs_server.certificates
    for path in (certs.ca_file, certs.client_cert_file, certs.client_key_file):
        assert open(path).read().startswith("-----BEGIN")
    nc = await nats.connect(fakejs_server.url, tls=fakejs_server.client_ssl_context())
    await nc.close()
    no_cert = fakejs_server.client_ssl_context(client=False)
    with pytest.raises(Exception):
        await nats.connect(fakejs_server.url, tls=no_cert, allow_reconnect=False, connect_timeout=2)

@pytest.mark.fakejs(tls=True)
async def test_client_fixture_speaks_tls(fakejs_client):
    assert await fakejs_client.request("$JS.API.INFO", b"", timeout=2)

@pytest.mark.fakejs(tls=True, config="port: -1\\nmax_payload: 2048")
async def test_tls_with_a_configuration(fakejs_server):
    nc = await nats.connect(fakejs_server.url, tls=fakejs_server.client_ssl_context())
    assert nc.max_payload == 2048
    await nc.close()
"""


@pytest.mark.parametrize("target", ["fake", "real"])
def test_the_tls_marker_makes_certificates_and_serves_them(pytester: pytest.Pytester, target: str) -> None:
    if target == "real" and REAL_BINARY is None:
        pytest.skip("nats-server not installed")
    pytester.makeini(INI)
    pytester.makepyfile(test_tls=TLS_SUITE)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", f"--fakejs-target={target}")
    result.assert_outcomes(passed=5)
