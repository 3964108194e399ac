"""When a pull request's ``408 Request Timeout`` arrives, in real time, on both targets.

nats-server 2.15.1 starts a request's ``expires`` when it reads the request
and answers ``408`` within about a millisecond of that deadline (measured
over a loopback connection: 0.7 to 2 ms after the client sent the request
plus ``expires``).  fakejs arms the expiry on the clock's punctual timer, so
its ``408`` is as prompt.  Facts that hold on both targets:

* the ``408`` never arrives before the client's own deadline (request sent +
  ``expires``);
* a message published once the ``408`` is in is not delivered into the
  expired request: it stays pending for the next pull.

Only fakejs is held to a lateness bound (the best of a few requests: a timer
that fires late always is late in every round, while a busy machine stalls
some rounds, not all); the real server's timing is not raced.
"""

from __future__ import annotations

import time

from tests.harness.env import env_fixture
from tests.harness.js import MS
from tests.harness.pull import PullEnv, timeout_
from tests.harness.targets import Target

env = env_fixture(PullEnv)

EXPIRES = 0.1  # seconds
ROUNDS = 5
# fakejs's 408 comes this long after the client's deadline at most (the best round): request
# transit, timer and reply.  nats-server measures 0.7-2 ms here.
FAKE_LATENESS = 0.005


async def test_408_arrives_by_the_deadline(env: PullEnv, target: Target) -> None:
    wire = await env.start()
    lateness = []
    for _ in range(ROUNDS):
        inbox = await wire.inbox()
        await wire.ping()
        sent = time.monotonic()
        await wire.pull({"batch": 1, "expires": round(EXPIRES * 1000) * MS}, reply=inbox)
        status = await wire.wait_status(inbox, timeout=10)
        lateness.append(time.monotonic() - sent - EXPIRES)
        assert status.raw == wire.hmsg(inbox, timeout_(1))
    assert min(lateness) >= 0, lateness
    if target.is_fake:
        assert min(lateness) < FAKE_LATENESS, lateness


async def test_message_after_the_408_is_not_delivered_into_the_expired_request(env: PullEnv) -> None:
    wire = await env.start()
    expired = await wire.pull({"batch": 2, "expires": round(EXPIRES * 1000) * MS})
    status = await wire.wait_status(expired, timeout=10)
    assert status.raw == wire.hmsg(expired, timeout_(2))
    await env.publish("s.late", b"late")
    await wire.quiet(0.25)
    assert [f.raw for f in wire.on(expired)] == [status.raw]
    fresh = await wire.pull({"batch": 1, "expires": 10_000 * MS})
    (delivery,) = await wire.wait(fresh, timeout=10)
    assert (delivery.subject, delivery.payload) == ("s.late", b"late")
