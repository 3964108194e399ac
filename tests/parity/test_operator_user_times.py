"""Operator (JWT) mode: a user JWT's connect ``times`` and ``times_location``, as nats-server checks them.

A user logs in only inside one of its daily time ranges (read in its
``times_location``), and its login ends with the range.  The ranges are
built around the test's own clock, in a named time zone.
"""

from __future__ import annotations

import asyncio
import datetime
from zoneinfo import ZoneInfo

import pytest

from fakejs.testkit.jwt import Operator, User
from tests.harness.operator import StartOperator, login_connect, login_reply, operator_start_fixture
from tests.harness.raw import RawClient
from tests.harness.targets import Target
from tests.harness.wait import WAIT

start = operator_start_fixture()
REFUSED = b"-ERR 'Authorization Violation'\r\n"


def around(zone: str, before: float, after: float) -> tuple[str, str]:
    """A range from ``before`` seconds ago to ``after`` seconds from now, as ``HH:MM:SS`` in ``zone``."""
    now = datetime.datetime.now(ZoneInfo(zone))
    start, end = now - datetime.timedelta(seconds=before), now + datetime.timedelta(seconds=after)
    return start.strftime("%H:%M:%S"), end.strftime("%H:%M:%S")


async def first_line(target: Target, user: User) -> tuple[RawClient, bytes]:
    """A raw client that sent ``user``'s login and a PING, and the first line it got back."""
    client = await RawClient.connect(target.host, target.port)
    await client.send(await login_connect(client, user) + b"PING\r\n")
    return client, await asyncio.wait_for(client.read_until(b"\r\n"), WAIT)


@pytest.mark.parametrize("zone", ["UTC", "Asia/Tokyo", "America/New_York"])
async def test_inside_its_times_a_user_logs_in(start: StartOperator, zone: str) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    user = app.user("day", times=[around(zone, 3600, 3600)], times_location=zone)
    assert await login_reply(target, user) == b"PONG\r\n"


async def test_outside_its_times_a_user_is_refused(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    later = around("UTC", -3600, 7200)  # from an hour from now, for an hour
    assert await login_reply(target, app.user("night", times=[later], times_location="UTC")) == REFUSED


async def test_one_range_of_several_is_enough(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    ranges = [around("UTC", -3600, 7200), around("UTC", 600, 600)]
    assert await login_reply(target, app.user("shifts", times=ranges, times_location="UTC")) == b"PONG\r\n"


async def test_an_unknown_time_zone_is_refused(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    user = app.user("lost", times=[around("UTC", 3600, 3600)], times_location="Mars/Olympus_Mons")
    assert await login_reply(target, user) == REFUSED


async def test_the_login_ends_with_its_range(start: StartOperator) -> None:
    operator = Operator("O")
    system, app = operator.account("SYS"), operator.account("APP")
    target = await start(operator, system, app)
    client, line = await first_line(target, app.user("brief", times=[around("UTC", 3600, 3)], times_location="UTC"))
    try:
        assert line == b"PONG\r\n"
        client.received.clear()
        await asyncio.wait_for(client.read_until(b"Expired'\r\n"), WAIT)
        # the server's own PING (its first round trip measure) may come before
        assert bytes(client.received).removeprefix(b"PING\r\n") == b"-ERR 'User Authentication Expired'\r\n"
    finally:
        await client.close()
