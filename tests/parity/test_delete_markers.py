"""Subject delete markers: which expiries leave one, and what it looks like.

Expectations read off nats-server 2.15.1, with memory and file storage alike.

* With ``subject_delete_marker_ttl`` set, a message that expires -- by ``max_age``
  or by its own ``Nats-TTL`` -- while it is the last of its subject is replaced by
  a marker published on that subject: headers exactly
  ``Nats-Marker-Reason: MaxAge``, ``Nats-TTL: <marker TTL>``, ``Nats-Rollup: sub``,
  no payload.  The TTL is the stream's marker TTL cut to whole seconds (1.5 s
  gives ``1s``).  The marker is republished like any stored message.
* No marker is left for a message that counts as one itself: a non-empty
  ``Nats-Marker-Reason`` (any reason, so markers expiring by their own TTL leave
  nothing) or a KV purge tombstone, ``KV-Operation: PURGE``.  Header names and the
  ``PURGE`` value are matched case for case: ``kv-operation: PURGE``,
  ``KV-Operation: purge`` and an empty ``Nats-Marker-Reason`` leave markers, and so
  does a ``KV-Operation: DEL`` tombstone.
* So in a KV bucket with ``limit_marker_ttl``, a purge made with a TTL simply goes
  when the TTL runs out: a get of the key then finds nothing.
"""

from __future__ import annotations

import nats
import nats.js.errors as jserrors
import pytest
from nats.aio.msg import Msg

from tests.harness.js import SEC, api, connect, create_stream, publish, stored
from tests.harness.targets import Target
from tests.harness.wait import WAIT

pytestmark = pytest.mark.manual_clock

STORAGES = ["memory", "file"]

MARKER_1S = [("Nats-Marker-Reason", "MaxAge"), ("Nats-TTL", "1s"), ("Nats-Rollup", "sub")]
MARKER_2S = [("Nats-Marker-Reason", "MaxAge"), ("Nats-TTL", "2s"), ("Nats-Rollup", "sub")]

# Headers of expiring messages (each also gets its Nats-TTL), and whether it leaves a marker.
EXPIRING: list[tuple[str, dict[str, str], bool]] = [
    ("plain", {}, True),
    ("purge", {"KV-Operation": "PURGE", "Nats-Rollup": "sub"}, False),
    ("purge_lower_value", {"KV-Operation": "purge"}, True),
    ("purge_lower_name", {"kv-operation": "PURGE"}, True),
    ("delete", {"KV-Operation": "DEL"}, True),
    ("reason_remove", {"Nats-Marker-Reason": "Remove"}, False),
    ("reason_max_age", {"Nats-Marker-Reason": "MaxAge"}, False),
    ("reason_empty", {"Nats-Marker-Reason": ""}, True),
    ("reason_lower_name", {"nats-marker-reason": "MaxAge"}, True),
]
MARKED = [name for name, _, marked in EXPIRING if marked]


async def state(nc: nats.NATS, stream: str) -> dict:
    reply = await api(nc, f"$JS.API.STREAM.INFO.{stream}")
    assert "error" not in reply, reply
    return reply["state"]


async def record(nc: nats.NATS, stream: str) -> list[Msg]:
    """Every message the stream stores from now on, as a push consumer delivers it (the moment it is stored).

    Markers live only for their TTL: what a consumer was given stays to be looked at.
    """
    delivered: list[Msg] = []

    async def keep(msg: Msg) -> None:
        delivered.append(msg)

    inbox = nc.new_inbox()
    await nc.subscribe(inbox, cb=keep)
    config = {"deliver_subject": inbox, "ack_policy": "none", "deliver_policy": "all"}
    reply = await api(nc, f"$JS.API.CONSUMER.CREATE.{stream}", {"stream_name": stream, "config": config})
    assert "error" not in reply, reply
    return delivered


def view(msg: Msg) -> tuple[str, list[tuple[str, str]], bytes]:
    """A delivery as (subject, headers in their order, payload)."""
    return msg.subject, list((msg.headers or {}).items()), msg.data


async def kv_shaped(nc: nats.NATS, storage: str, marker_ttl: int, **config: object) -> None:
    """Stream ``KV`` on ``kv.>``: one message per subject, TTLs, roll-ups and delete markers."""
    await create_stream(
        nc,
        {
            "name": "KV",
            "subjects": ["kv.>"],
            "storage": storage,
            "max_msgs_per_subject": 1,
            "allow_msg_ttl": True,
            "allow_rollup_hdrs": True,
            "subject_delete_marker_ttl": marker_ttl,
            **config,
        },
    )


async def arrived(target: Target, delivered: list[Msg], count: int) -> list[Msg]:
    """Wait (on the server's clock) for ``count`` deliveries; the deliveries."""

    async def enough() -> bool:
        return len(delivered) >= count

    await target.elapse_until(enough, 10)
    assert len(delivered) == count, [view(msg) for msg in delivered]
    return delivered


async def emptied(target: Target, nc: nats.NATS, stream: str) -> dict:
    """Wait (on the server's clock) until the stream holds no message; its state then."""

    async def empty() -> dict | None:
        st = await state(nc, stream)
        return st if st["messages"] == 0 else None

    st = await target.elapse_until(empty, 10)
    assert st is not None, await state(nc, stream)
    return st


@pytest.mark.parametrize("storage", STORAGES)
async def test_kv_purge_with_ttl_leaves_no_marker(target: Target, storage: str) -> None:
    """nats-py's ``purge(key, msg_ttl=...)`` in a bucket with ``limit_marker_ttl``: the tombstone just goes."""
    nc = await connect(target)
    js = nc.jetstream()
    kv = await js.create_key_value(bucket="B", limit_marker_ttl=1, storage=storage)
    delivered = await record(nc, "KV_B")
    assert await kv.put("k", b"v") == 1
    await arrived(target, delivered, 1)  # before the purge's roll-up takes the value away
    await kv.purge("k", msg_ttl=1)
    st = await emptied(target, nc, "KV_B")
    assert (st["first_seq"], st["last_seq"]) == (3, 2)  # no marker was stored after the tombstone
    with pytest.raises(jserrors.KeyNotFoundError):
        await kv.get("k")
    purge = [("KV-Operation", "PURGE"), ("Nats-Rollup", "sub"), ("Nats-TTL", "1")]
    assert [view(msg) for msg in delivered] == [("$KV.B.k", [], b"v"), ("$KV.B.k", purge, b"")]
    await nc.close()


@pytest.mark.parametrize("storage", STORAGES)
async def test_ttl_expiry_leaves_a_marker_unless_the_message_is_one(target: Target, storage: str) -> None:
    """Messages expiring by their own TTL; the markers (TTL 2 s) go in their turn and leave no marker."""
    nc = await connect(target)
    await kv_shaped(nc, storage, 2 * SEC)
    delivered = await record(nc, "KV")
    for name, headers, _ in EXPIRING:
        await stored(nc, f"kv.{name}", b"v", {**headers, "Nats-TTL": "1s"})
    await arrived(target, delivered, len(EXPIRING) + len(MARKED))
    markers = sorted(view(msg) for msg in delivered[len(EXPIRING) :])
    assert markers == sorted((f"kv.{name}", MARKER_2S, b"") for name in MARKED)
    st = await emptied(target, nc, "KV")
    last = len(EXPIRING) + len(MARKED)
    assert (st["first_seq"], st["last_seq"]) == (last + 1, last)
    await nc.close()


@pytest.mark.parametrize("storage", STORAGES)
async def test_max_age_expiry_leaves_a_marker_unless_the_message_is_one(target: Target, storage: str) -> None:
    """The same rule when ``max_age`` removes them; the markers then age out too and leave nothing."""
    nc = await connect(target)
    await kv_shaped(nc, storage, SEC, max_age=SEC)
    delivered = await record(nc, "KV")
    await stored(nc, "kv.plain", b"v")
    await stored(nc, "kv.purge", b"", {"KV-Operation": "PURGE", "Nats-Rollup": "sub"})
    await stored(nc, "kv.delete", b"", {"KV-Operation": "DEL"})
    await stored(nc, "kv.reason", b"v", {"Nats-Marker-Reason": "Remove"})
    await arrived(target, delivered, 6)
    markers = sorted(view(msg) for msg in delivered[4:])
    assert markers == [("kv.delete", MARKER_1S, b""), ("kv.plain", MARKER_1S, b"")]
    st = await emptied(target, nc, "KV")
    assert (st["first_seq"], st["last_seq"]) == (7, 6)
    await nc.close()


@pytest.mark.parametrize("storage", STORAGES)
async def test_marker_ttl_in_whole_seconds_and_republished(target: Target, storage: str) -> None:
    """A 1.5 s marker TTL writes ``Nats-TTL: 1s``; the marker is republished with the subject's last sequence."""
    nc = await connect(target)
    republished = await nc.subscribe("rp.>")
    await nc.flush()
    await create_stream(
        nc,
        {
            "name": "S",
            "subjects": ["s.>"],
            "storage": storage,
            "max_age": SEC,
            "subject_delete_marker_ttl": 3 * SEC // 2,
            "republish": {"src": ">", "dest": "rp.>"},
        },
    )
    delivered = await record(nc, "S")
    assert await publish(nc, "s.a", b"v") == b'{"stream":"S","seq":1}'
    await arrived(target, delivered, 2)
    assert view(delivered[1]) == ("s.a", MARKER_1S, b"")
    await republished.next_msg(WAIT)  # the message itself
    marker = await republished.next_msg(WAIT)
    assert (marker.subject, marker.data) == ("rp.s.a", b"")
    headers = dict(marker.headers or {})
    assert headers.pop("Nats-Time-Stamp")
    assert headers == {
        **dict(MARKER_1S),
        "Nats-Stream": "S",
        "Nats-Subject": "s.a",
        "Nats-Sequence": "2",
        "Nats-Last-Sequence": "1",
    }
    await nc.close()
