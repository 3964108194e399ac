"""nats-py 2.16's Key-Value and Object Store, run unchanged against fakejs and nats-server 2.15.1.

These tests use only nats-py's public KV / object store API plus raw
``$JS.API`` requests to look at what the server made of it.  Expectations were
read off the real 2.15.1 binary.

What nats-py sends (and so what a server has to serve):

* ``create_key_value(bucket=B, history=H, ...)`` -> ``$JS.API.STREAM.CREATE.KV_B`` with
  ``{"name": "KV_B", "subjects": ["$KV.B.>"], "max_consumers": -1, "max_msgs": -1,
  "discard": "new", "discard_new_per_subject": false, "max_msgs_per_subject": H,
  "num_replicas": 1, "no_ack": false, "duplicate_window": 120000000000 (or the ttl when
  smaller), "sealed": false, "deny_delete": true, "deny_purge": false,
  "allow_rollup_hdrs": true, "allow_msg_ttl": true, "max_age": <ttl ns or 0>}`` plus
  ``description``, ``max_bytes``, ``max_msg_size``, ``storage``, ``allow_direct``,
  ``subject_delete_marker_ttl`` when given.  ``allow_direct`` is only sent for
  ``direct=True``; the server leaves it false otherwise, and nats-py then reads with
  ``$JS.API.STREAM.MSG.GET`` (``{"last_by_subj": "$KV.B.k"}`` / ``{"seq": n}``);
  with it, ``$JS.API.DIRECT.GET.KV_B.$KV.B.<key>`` (empty payload) and
  ``$JS.API.DIRECT.GET.KV_B`` with ``{"seq": n}``.
* put = plain JetStream publish to ``$KV.B.<key>``; create/update add
  ``Nats-Expected-Last-Subject-Sequence`` (create uses 0 and, on 10071, re-reads
  the key and retries with the tombstone's revision); delete publishes an empty
  message with ``KV-Operation: DEL``; purge ``KV-Operation: PURGE`` +
  ``Nats-Rollup: sub``; ``create(msg_ttl=n)`` adds ``Nats-TTL: <int seconds>``.
* watch / keys / history subscribe with an ordered push consumer created through
  the legacy ``$JS.API.CONSUMER.CREATE.KV_B`` (no name in the subject; the server
  names it): ``{"deliver_policy": "last_per_subject" (or "all" with
  include_history), "ack_policy": "none", "ack_wait": 79200000000000,
  "max_deliver": 1, "filter_subject": "$KV.B.<pattern>", "replay_policy":
  "instant", "flow_control": true, "idle_heartbeat": 5000000000,
  "headers_only": <meta_only>, "deliver_subject": "_INBOX.<nuid>",
  "inactive_threshold": 300000000000, "num_replicas": 1, "mem_storage": true}``,
  then ``$JS.API.CONSUMER.INFO`` to read ``num_pending``.  The watcher yields an
  entry per delivered message (revision = stream sequence, delta = the
  num_pending of the ack reply, operation from ``KV-Operation``), and ``None``
  once num_pending reaches 0 (at once when nothing is pending).
* Object store: ``$JS.API.STREAM.CREATE.OBJ_B`` with ``{"name": "OBJ_B", "subjects":
  ["$O.B.C.>", "$O.B.M.>"], "max_consumers": 0, "discard": "new",
  "discard_new_per_subject": false, "max_msgs_per_subject": -1, "max_msg_size": -1,
  "num_replicas": 1, "no_ack": false, "duplicate_window": 0, "sealed": false,
  "deny_delete": false, "deny_purge": false, "allow_rollup_hdrs": true,
  "allow_direct": true, "max_age": 0}``.  put: MSG.GET ``last_by_subj``
  ``$O.B.M.<base64url(name)>``, chunks published to ``$O.B.C.<nuid>``, the meta
  JSON to ``$O.B.M.<base64url(name)>`` with ``Nats-Rollup: sub``, then
  ``STREAM.PURGE {"filter": "$O.B.C.<old nuid>"}``.  get: ``STREAM.NAMES
  {"subject": "$O.B.C.<nuid>"}`` then an ordered push consumer (deliver_policy
  all, ``inactive_threshold: 0``) and reads until the ack reply's pending is 0.
  watch/list: MSG.GET ``{"last_by_subj": "$O.B.M.>"}`` then an ordered consumer on
  ``$O.B.M.>`` (last_per_subject, or new with updates_only).

Watchers, keys, history and list are marked ``client_race``: nats-py puts its
``None`` marker when the ``CONSUMER.INFO`` reply says nothing is pending and no
delivery has reached the socket yet, and nats-server may flush that reply
ahead of deliveries it already counted (they leave through different internal
queues), so against the real server the marker can come first about once in a
hundred runs.  fakejs writes the deliveries first, every time.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
from typing import Any

import nats
import nats.js.api as jsapi
import nats.js.errors as jserrors
import pytest

from tests.harness.js import api, normalize
from tests.harness.targets import Target
from tests.harness.wait import WAIT

METADATA_LEVEL_1 = {"_nats.level": "5", "_nats.req.level": "1", "_nats.ver": "2.15.1"}
METADATA_LEVEL_0 = {"_nats.level": "5", "_nats.req.level": "0", "_nats.ver": "2.15.1"}


async def stream_info(nc: nats.NATS, stream: str) -> dict:
    reply = await api(nc, f"$JS.API.STREAM.INFO.{stream}")
    assert "error" not in reply, reply
    return reply


async def config_items(nc: nats.NATS, stream: str) -> list[tuple[str, Any]]:
    """The stream's config as ordered (key, value) pairs: field order is part of the wire format."""
    return list((await stream_info(nc, stream))["config"].items())


async def last_raw(nc: nats.NATS, stream: str, subject: str) -> dict:
    reply = await api(nc, f"$JS.API.STREAM.MSG.GET.{stream}", {"last_by_subj": subject})
    assert "message" in reply, reply
    return reply["message"]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def collect(watcher, count: int, timeout: float = WAIT) -> list:
    """The next ``count`` things a watcher yields (entries or the ``None`` marker)."""
    return [await watcher.updates(timeout) for _ in range(count)]


async def nothing_more(watcher, wait: float = 0.2) -> None:
    with pytest.raises(nats.errors.TimeoutError):
        await watcher.updates(wait)


def kv_view(entries: list) -> list:
    """Entries as (key, value, revision, delta, operation); ``None`` markers kept."""
    return [None if e is None else (e.key, e.value, e.revision, e.delta, e.operation) for e in entries]


# =========================================================================== KV buckets


async def test_kv_bucket_stream_config(nc: nats.NATS) -> None:
    js = nc.jetstream()
    kv = await js.create_key_value(bucket="B1", history=5)
    assert kv._direct is False
    assert await config_items(nc, "KV_B1") == [
        ("name", "KV_B1"),
        ("subjects", ["$KV.B1.>"]),
        ("retention", "limits"),
        ("max_consumers", -1),
        ("max_msgs", -1),
        ("max_bytes", -1),
        ("max_age", 0),
        ("max_msgs_per_subject", 5),
        ("max_msg_size", -1),
        ("discard", "new"),
        ("storage", "file"),
        ("num_replicas", 1),
        ("duplicate_window", 120000000000),
        ("compression", "none"),
        ("allow_direct", False),
        ("mirror_direct", False),
        ("sealed", False),
        ("deny_delete", True),
        ("deny_purge", False),
        ("allow_rollup_hdrs", True),
        ("consumer_limits", {}),
        ("allow_msg_ttl", True),
        ("metadata", METADATA_LEVEL_1),
    ]


async def test_kv_bucket_stream_config_with_options(nc: nats.NATS) -> None:
    js = nc.jetstream()
    kv = await js.create_key_value(
        bucket="B2", description="d", max_value_size=4, ttl=60, max_bytes=10000, storage="memory", direct=True
    )
    assert kv._direct is True
    assert await config_items(nc, "KV_B2") == [
        ("name", "KV_B2"),
        ("description", "d"),
        ("subjects", ["$KV.B2.>"]),
        ("retention", "limits"),
        ("max_consumers", -1),
        ("max_msgs", -1),
        ("max_bytes", 10000),
        ("max_age", 60000000000),
        ("max_msgs_per_subject", 1),
        ("max_msg_size", 4),
        ("discard", "new"),
        ("storage", "memory"),
        ("num_replicas", 1),
        ("duplicate_window", 60000000000),
        ("compression", "none"),
        ("allow_direct", True),
        ("mirror_direct", False),
        ("sealed", False),
        ("deny_delete", True),
        ("deny_purge", False),
        ("allow_rollup_hdrs", True),
        ("consumer_limits", {}),
        ("allow_msg_ttl", True),
        ("metadata", METADATA_LEVEL_1),
    ]


async def test_kv_limit_marker_ttl_sets_subject_delete_marker_ttl(nc: nats.NATS) -> None:
    js = nc.jetstream()
    await js.create_key_value(bucket="B3", limit_marker_ttl=5)
    config = dict(await config_items(nc, "KV_B3"))
    assert config["subject_delete_marker_ttl"] == 5_000_000_000
    assert (config["allow_msg_ttl"], config["max_msgs_per_subject"], config["metadata"]) == (True, 1, METADATA_LEVEL_1)
    assert list(config).index("subject_delete_marker_ttl") == list(config).index("allow_msg_ttl") + 1


async def test_kv_create_bucket_again(nc: nats.NATS) -> None:
    """The same config again is fine; a different one is error 10058."""
    js = nc.jetstream()
    await js.create_key_value(bucket="B", history=5)
    await js.create_key_value(bucket="B", history=5)
    with pytest.raises(jserrors.BadRequestError) as err:
        await js.create_key_value(bucket="B", history=2)
    assert (err.value.code, err.value.err_code, err.value.description) == (
        400,
        10058,
        "stream name already in use with a different configuration",
    )


async def test_kv_bind_and_delete_bucket(nc: nats.NATS) -> None:
    js = nc.jetstream()
    with pytest.raises(jserrors.BucketNotFoundError):
        await js.key_value("B")
    await js.create_key_value(bucket="B")
    kv = await js.key_value("B")
    assert (kv._stream, kv._pre, kv._direct) == ("KV_B", "$KV.B.", False)
    assert await js.delete_key_value("B") is True
    with pytest.raises(jserrors.BucketNotFoundError):
        await js.key_value("B")
    with pytest.raises(jserrors.NotFoundError):
        await js.delete_key_value("B")


async def test_kv_bind_refuses_a_stream_without_per_subject_limit(nc: nats.NATS) -> None:
    reply = await api(nc, "$JS.API.STREAM.CREATE.KV_P", {"name": "KV_P", "subjects": ["$KV.P.>"]})
    assert "error" not in reply, reply
    with pytest.raises(jserrors.BadBucketError):
        await nc.jetstream().key_value("P")


async def test_kv_put_and_get(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="B", history=5)
    assert [await kv.put("a", b"1"), await kv.put("b", b"2"), await kv.put("a", b"3")] == [1, 2, 3]
    entry = await kv.get("a")
    assert (entry.bucket, entry.key, entry.value, entry.revision, entry.delta, entry.created, entry.operation) == (
        "B",
        "a",
        b"3",
        3,
        None,
        None,
        None,
    )
    assert (await kv.get("b")).value == b"2"
    message = await last_raw(nc, "KV_B", "$KV.B.a")
    assert (message["seq"], message["data"], "hdrs" in message) == (3, b64(b"3"), False)


async def test_kv_get_by_revision(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="B", history=5)
    await kv.put("a", b"1")
    await kv.put("b", b"2")
    await kv.put("a", b"3")
    assert (await kv.get("a", revision=1)).value == b"1"
    assert (await kv.get("a", revision=3)).value == b"3"
    with pytest.raises(jserrors.KeyNotFoundError):
        await kv.get("a", revision=2)  # that revision belongs to another key
    with pytest.raises(jserrors.KeyNotFoundError):
        await kv.get("a", revision=99)
    with pytest.raises(jserrors.KeyNotFoundError):
        await kv.get("missing")


async def test_kv_create_only_when_absent(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="B", history=5)
    assert await kv.create("k", b"v1") == 1
    with pytest.raises(jserrors.KeyWrongLastSequenceError) as err:
        await kv.create("k", b"v2")
    assert err.value.description == "wrong last sequence: 1"
    await kv.delete("k")
    assert await kv.create("k", b"v3") == 3  # over the tombstone, with its revision
    assert (await kv.get("k")).value == b"v3"


async def test_kv_update_with_revision(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="B", history=5)
    await kv.put("k", b"v1")
    assert await kv.update("k", b"v2", last=1) == 2
    with pytest.raises(jserrors.KeyWrongLastSequenceError) as err:
        await kv.update("k", b"v3", last=1)
    assert err.value.description == "wrong last sequence: 2"
    reply = await nc.request("$KV.B.k", b"v4", headers={"Nats-Expected-Last-Subject-Sequence": "7"})
    assert reply.data == (
        b'{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 2"},"stream":"KV_B","seq":0}'
    )
    assert (await kv.get("k")).value == b"v2"


async def test_kv_delete_places_a_marker(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="B", history=5)
    await kv.put("k", b"v1")
    await kv.put("k", b"v2")
    assert await kv.delete("k") is True
    with pytest.raises(jserrors.KeyNotFoundError) as err:
        await kv.get("k")
    assert err.value.op == "DEL"
    assert (err.value.entry.revision, err.value.entry.value) == (3, None)  # MSG.GET reply has no "data"
    message = await last_raw(nc, "KV_B", "$KV.B.k")
    assert (message["seq"], message["hdrs"], "data" in message) == (
        3,
        b64(b"NATS/1.0\r\nKV-Operation: DEL\r\n\r\n"),
        False,
    )
    assert (await stream_info(nc, "KV_B"))["state"]["messages"] == 3  # history stays


async def test_kv_delete_with_wrong_last_revision(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="B", history=5)
    await kv.put("k", b"v1")
    with pytest.raises(jserrors.BadRequestError) as err:
        await kv.delete("k", last=5)
    assert (err.value.err_code, err.value.description) == (10071, "wrong last sequence: 1")
    assert await kv.delete("k", last=1) is True


async def test_kv_purge_rolls_up_the_key(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="B", history=5)
    await kv.put("k", b"v1")
    await kv.put("other", b"x")
    await kv.put("k", b"v2")
    assert await kv.purge("k") is True
    with pytest.raises(jserrors.KeyNotFoundError) as err:
        await kv.get("k")
    assert err.value.op == "PURGE"
    message = await last_raw(nc, "KV_B", "$KV.B.k")
    assert message["hdrs"] == b64(b"NATS/1.0\r\nKV-Operation: PURGE\r\nNats-Rollup: sub\r\n\r\n")
    state = (await stream_info(nc, "KV_B"))["state"]
    assert (state["messages"], state["first_seq"], state["last_seq"]) == (2, 2, 4)
    assert (await kv.get("other")).value == b"x"


async def test_kv_max_value_size_counts_headers(nc: nats.NATS) -> None:
    """max_msg_size covers header + payload: a delete marker can be too big."""
    kv = await nc.jetstream().create_key_value(bucket="B", max_value_size=16)
    assert await kv.put("k", b"x" * 16) == 1
    with pytest.raises(jserrors.BadRequestError) as err:
        await kv.put("k", b"x" * 17)
    assert (err.value.err_code, err.value.description) == (10054, "message size exceeds maximum allowed")
    with pytest.raises(jserrors.BadRequestError) as err:
        await kv.delete("k")  # NATS/1.0 + KV-Operation: DEL is 33 bytes
    assert err.value.err_code == 10054


@pytest.mark.client_race
async def test_kv_history(nc: nats.NATS) -> None:
    """Only the bucket's history (max_msgs_per_subject) is kept, oldest dropped."""
    kv = await nc.jetstream().create_key_value(bucket="B", history=3)
    for i in range(5):
        await kv.put("k", b"v%d" % i)
    await kv.put("other", b"x")
    assert kv_view(await kv.history("k")) == [
        ("k", b"v2", 3, 2, None),
        ("k", b"v3", 4, 1, None),
        ("k", b"v4", 5, 0, None),
    ]
    await kv.delete("k")
    assert [e.revision for e in await kv.history("k")] == [4, 5, 7]
    with pytest.raises(jserrors.NoKeysError):
        await kv.history("missing")


@pytest.mark.client_race
async def test_kv_keys(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="B", history=5)
    with pytest.raises(jserrors.NoKeysError):
        await kv.keys()
    for key in ("a", "b.x", "c", "b.y", "a"):
        await kv.put(key, b"v")
    await kv.delete("c")
    assert await kv.keys() == ["b.x", "b.y", "a"]  # in the order of their last revision
    assert await kv.keys(filters=["b."]) == ["b.x", "b.y"]
    await kv.purge("a")
    await kv.purge("b.x")
    await kv.delete("b.y")
    with pytest.raises(jserrors.NoKeysError):
        await kv.keys()


async def test_kv_status(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="B", history=4, ttl=30)
    await kv.put("a", b"1")
    await kv.put("a", b"2")
    await kv.delete("b")
    status = await kv.status()
    assert (status.bucket, status.values, status.history, status.ttl, status.marker_ttl) == ("B", 3, 4, 30.0, None)
    assert status.stream_info.config.name == "KV_B"
    assert status.stream_info.state.last_seq == 3


async def test_kv_direct_bucket_reads_with_direct_get(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="D", history=5, direct=True)
    await kv.put("k", b"v1")
    await kv.put("k", b"v2")
    entry = await kv.get("k")
    assert (entry.key, entry.value, entry.revision) == ("k", b"v2", 2)
    assert (await kv.get("k", revision=1)).value == b"v1"
    with pytest.raises(jserrors.KeyNotFoundError):
        await kv.get("missing")
    await kv.delete("k")
    with pytest.raises(jserrors.KeyNotFoundError) as err:
        await kv.get("k")
    assert (err.value.op, err.value.entry.revision) == ("DEL", 3)
    reply = await nc.request("$JS.API.DIRECT.GET.KV_D.$KV.D.k", b"")
    assert (reply.headers["KV-Operation"], reply.headers["Nats-Sequence"], reply.data) == ("DEL", "3", b"")


@pytest.mark.slow
@pytest.mark.manual_clock
async def test_kv_create_with_message_ttl(target: Target, nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="B", history=5)
    assert await kv.create("t", b"v", msg_ttl=1) == 1
    message = await last_raw(nc, "KV_B", "$KV.B.t")
    assert message["hdrs"] == b64(b"NATS/1.0\r\nNats-Expected-Last-Subject-Sequence: 0\r\nNats-TTL: 1\r\n\r\n")
    assert (await kv.get("t")).value == b"v"

    async def expired() -> bool:
        return (await stream_info(nc, "KV_B"))["state"]["messages"] == 0

    await target.elapse_until(expired, 4, interval=0.1)
    with pytest.raises(jserrors.KeyNotFoundError):
        await kv.get("t")


# =========================================================================== KV watchers


async def _populate(kv) -> None:
    await kv.put("a", b"1")  # 1
    await kv.put("b", b"2")  # 2
    await kv.put("a", b"3")  # 3
    await kv.delete("b")  # 4
    await kv.put("c.x", b"5")  # 5


@pytest.mark.client_race
async def test_kv_watch_initial_values_then_live_updates(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="W", history=5)
    await _populate(kv)
    watcher = await kv.watchall()
    assert kv_view(await collect(watcher, 4)) == [
        ("a", b"3", 3, 2, None),
        ("b", b"", 4, 1, "DEL"),
        ("c.x", b"5", 5, 0, None),
        None,
    ]
    # One change at a time: delta is the pending count when the server delivered it.
    await kv.put("d", b"6")
    assert kv_view(await collect(watcher, 1)) == [("d", b"6", 6, 0, None)]
    await kv.purge("a")
    assert kv_view(await collect(watcher, 1)) == [("a", b"", 7, 0, "PURGE")]
    await kv.delete("d")
    assert kv_view(await collect(watcher, 1)) == [("d", b"", 8, 0, "DEL")]
    await nothing_more(watcher)
    await watcher.stop()


@pytest.mark.client_race
async def test_kv_watch_entries_carry_the_stored_time(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="W")
    await kv.put("a", b"1")
    watcher = await kv.watchall()
    entry, marker = await collect(watcher, 2)
    assert marker is None
    message = await last_raw(nc, "KV_W", "$KV.W.a")
    # The ack reply carries the stored timestamp in nanoseconds; nats-py turns it into a
    # datetime through a float, so allow a microsecond of rounding.
    stored = datetime.datetime.fromisoformat(message["time"][:26].rstrip("Z")).replace(tzinfo=datetime.UTC)
    assert abs(entry.created - stored) <= datetime.timedelta(microseconds=1)
    await watcher.stop()


@pytest.mark.client_race
async def test_kv_watch_include_history(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="W", history=5)
    await _populate(kv)
    watcher = await kv.watchall(include_history=True)
    assert kv_view(await collect(watcher, 6)) == [
        ("a", b"1", 1, 4, None),
        ("b", b"2", 2, 3, None),
        ("a", b"3", 3, 2, None),
        ("b", b"", 4, 1, "DEL"),
        ("c.x", b"5", 5, 0, None),
        None,
    ]
    await nothing_more(watcher)
    await watcher.stop()


@pytest.mark.client_race
async def test_kv_watch_ignore_deletes(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="W", history=5)
    await _populate(kv)
    await kv.purge("a")  # 6
    watcher = await kv.watchall(ignore_deletes=True)
    assert kv_view(await collect(watcher, 2)) == [("c.x", b"5", 5, 1, None), None]
    await kv.delete("c.x")
    await kv.put("e", b"7")
    assert kv_view(await collect(watcher, 1)) == [("e", b"7", 8, 0, None)]
    await watcher.stop()


async def test_kv_watch_empty_bucket_starts_with_none(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="W")
    watcher = await kv.watchall()
    assert await collect(watcher, 1) == [None]
    await kv.put("k", b"v")
    assert kv_view(await collect(watcher, 1)) == [("k", b"v", 1, 0, None)]
    await watcher.stop()


@pytest.mark.client_race
async def test_kv_watch_a_key_pattern(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="W", history=5)
    await _populate(kv)
    watcher = await kv.watch("c.*")
    assert kv_view(await collect(watcher, 2)) == [("c.x", b"5", 5, 0, None), None]
    await kv.put("a", b"no")
    await kv.put("c.y", b"yes")
    assert kv_view(await collect(watcher, 1)) == [("c.y", b"yes", 7, 0, None)]
    await nothing_more(watcher)
    await watcher.stop()


@pytest.mark.client_race
async def test_kv_watch_meta_only_delivers_no_values(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="W", history=5)
    await _populate(kv)
    watcher = await kv.watchall(meta_only=True)
    assert kv_view(await collect(watcher, 4)) == [
        ("a", b"", 3, 2, None),
        ("b", b"", 4, 1, "DEL"),
        ("c.x", b"", 5, 0, None),
        None,
    ]
    await watcher.stop()


@pytest.mark.client_race
async def test_kv_watcher_consumer_as_the_server_sees_it(nc: nats.NATS) -> None:
    kv = await nc.jetstream().create_key_value(bucket="W", history=5)
    await _populate(kv)
    watcher = await kv.watch("c.>", meta_only=True)
    await collect(watcher, 2)
    names = await api(nc, "$JS.API.CONSUMER.NAMES.KV_W")
    assert len(names["consumers"]) == 1, names
    name = names["consumers"][0]
    assert len(name) == 8
    info = normalize(await api(nc, f"$JS.API.CONSUMER.INFO.KV_W.{name}"))
    deliver = info["config"]["deliver_subject"]
    assert deliver.startswith("_INBOX.")
    assert list(info["config"].items()) == [
        ("deliver_policy", "last_per_subject"),
        ("ack_policy", "none"),
        ("ack_wait", 79200000000000),
        ("max_deliver", 1),
        ("filter_subject", "$KV.W.c.>"),
        ("replay_policy", "instant"),
        ("flow_control", True),
        ("headers_only", True),
        ("deliver_subject", deliver),
        ("idle_heartbeat", 5000000000),
        ("inactive_threshold", 300000000000),
        ("num_replicas", 1),
        ("mem_storage", True),
        ("metadata", METADATA_LEVEL_0),
    ]
    assert (info["delivered"], info["ack_floor"]) == (
        {"consumer_seq": 1, "stream_seq": 5, "last_active": "<ts>"},
        {"consumer_seq": 1, "stream_seq": 5},  # ack none: the floor follows delivery, no last_active
    )
    assert (info["num_ack_pending"], info["num_redelivered"], info["num_waiting"], info["num_pending"]) == (0, 0, 0, 0)
    assert info["push_bound"] is True
    await watcher.stop()


# =========================================================================== object store


async def test_object_store_stream_config(nc: nats.NATS) -> None:
    await nc.jetstream().create_object_store("O")
    assert await config_items(nc, "OBJ_O") == [
        ("name", "OBJ_O"),
        ("subjects", ["$O.O.C.>", "$O.O.M.>"]),
        ("retention", "limits"),
        ("max_consumers", -1),
        ("max_msgs", -1),
        ("max_bytes", -1),
        ("max_age", 0),
        ("max_msgs_per_subject", -1),
        ("max_msg_size", -1),
        ("discard", "new"),
        ("storage", "file"),
        ("num_replicas", 1),
        ("duplicate_window", 120000000000),
        ("compression", "none"),
        ("allow_direct", True),
        ("mirror_direct", False),
        ("sealed", False),
        ("deny_delete", False),
        ("deny_purge", False),
        ("allow_rollup_hdrs", True),
        ("consumer_limits", {}),
        ("allow_msg_ttl", False),
        ("metadata", METADATA_LEVEL_0),
    ]


async def test_object_store_stream_config_with_options(nc: nats.NATS) -> None:
    config = jsapi.ObjectStoreConfig(description="dd", ttl=60, max_bytes=100000, storage="memory")
    await nc.jetstream().create_object_store("O", config=config)
    items = dict(await config_items(nc, "OBJ_O"))
    assert (
        items["description"],
        items["max_age"],
        items["max_bytes"],
        items["storage"],
        items["duplicate_window"],
    ) == (
        "dd",
        60000000000,
        100000,
        "memory",
        60000000000,
    )
    assert list(items)[:3] == ["name", "description", "subjects"]


async def test_object_put_and_get(nc: nats.NATS) -> None:
    obs = await nc.jetstream().create_object_store("O")
    data = b"hello world"
    info = await obs.put("greeting.txt", data)
    digest = "SHA-256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode()
    assert (info.name, info.bucket, info.size, info.chunks, info.digest, info.deleted) == (
        "greeting.txt",
        "O",
        11,
        1,
        digest,
        False,
    )
    result = await obs.get("greeting.txt")
    assert result.data == data
    assert (result.info.nuid, result.info.size, result.info.chunks, result.info.digest) == (info.nuid, 11, 1, digest)
    meta = await last_raw(nc, "OBJ_O", "$O.O.M." + base64.urlsafe_b64encode(b"greeting.txt").decode())
    assert meta["hdrs"] == b64(b"NATS/1.0\r\nNats-Rollup: sub\r\n\r\n")
    chunk = await last_raw(nc, "OBJ_O", f"$O.O.C.{info.nuid}")
    assert (chunk["seq"], chunk["data"]) == (1, b64(data))


async def test_object_multi_chunk(nc: nats.NATS) -> None:
    obs = await nc.jetstream().create_object_store("O")
    data = bytes(range(256)) * 1200  # 307,200 bytes
    meta = jsapi.ObjectMeta(name="big", options=jsapi.ObjectMetaOptions(max_chunk_size=32 * 1024))
    info = await obs.put("big", data, meta=meta)
    assert (info.size, info.chunks) == (307200, 10)
    result = await obs.get("big")
    assert result.data == data
    assert result.info.options.max_chunk_size == 32 * 1024
    state = (await stream_info(nc, "OBJ_O"))["state"]
    assert (state["messages"], state["last_seq"]) == (11, 11)
    subjects = await api(nc, "$JS.API.STREAM.INFO.OBJ_O", {"subjects_filter": ">"})
    assert subjects["state"]["subjects"] == {
        f"$O.O.C.{info.nuid}": 10,
        "$O.O.M." + base64.urlsafe_b64encode(b"big").decode(): 1,
    }


async def test_object_empty(nc: nats.NATS) -> None:
    obs = await nc.jetstream().create_object_store("O")
    info = await obs.put("empty", b"")
    assert (info.size, info.chunks) == (0, 0)
    result = await obs.get("empty")
    assert (result.data, result.info.size) == (b"", 0)
    assert (await stream_info(nc, "OBJ_O"))["state"]["messages"] == 1


async def test_object_missing(nc: nats.NATS) -> None:
    obs = await nc.jetstream().create_object_store("O")
    with pytest.raises(jserrors.ObjectNotFoundError):
        await obs.get_info("nope")
    with pytest.raises(jserrors.ObjectNotFoundError):
        await obs.get("nope")
    with pytest.raises(jserrors.BucketNotFoundError):
        await nc.jetstream().object_store("NOPE")


async def test_object_put_again_replaces_and_purges_old_chunks(nc: nats.NATS) -> None:
    obs = await nc.jetstream().create_object_store("O")
    meta = jsapi.ObjectMeta(name="f", options=jsapi.ObjectMetaOptions(max_chunk_size=4))
    first = await obs.put("f", b"0123456789", meta=meta)  # 3 chunks + meta = seq 1..4
    meta = jsapi.ObjectMeta(name="f", options=jsapi.ObjectMetaOptions(max_chunk_size=4))
    second = await obs.put("f", b"abcdef", meta=meta)
    assert first.nuid != second.nuid
    assert (await obs.get("f")).data == b"abcdef"
    state = (await stream_info(nc, "OBJ_O"))["state"]
    assert (state["messages"], state["first_seq"], state["last_seq"], state["num_subjects"]) == (3, 5, 7, 2)


async def test_object_delete(nc: nats.NATS) -> None:
    obs = await nc.jetstream().create_object_store("O")
    meta = jsapi.ObjectMeta(name="f", options=jsapi.ObjectMetaOptions(max_chunk_size=4))
    info = await obs.put("f", b"0123456789", meta=meta)
    await obs.delete("f")
    with pytest.raises(jserrors.ObjectNotFoundError):
        await obs.get_info("f")
    deleted = await obs.get_info("f", show_deleted=True)
    assert (deleted.deleted, deleted.size, deleted.chunks, deleted.digest, deleted.nuid) == (True, 0, 0, "", info.nuid)
    state = (await stream_info(nc, "OBJ_O"))["state"]
    assert (state["messages"], state["first_seq"], state["last_seq"]) == (1, 5, 5)
    with pytest.raises(jserrors.ObjectNotFoundError):
        await obs.delete("f")


@pytest.mark.client_race
async def test_object_list(nc: nats.NATS) -> None:
    obs = await nc.jetstream().create_object_store("O")
    with pytest.raises(jserrors.NotFoundError):
        await obs.list()
    for name in ("b", "a", "c"):
        await obs.put(name, name.encode() * 3)
    await obs.delete("a")
    assert [(i.name, i.deleted) for i in await obs.list()] == [("b", False), ("c", False), ("a", True)]
    assert [i.name for i in await obs.list(ignore_deletes=True)] == ["b", "c"]


@pytest.mark.client_race
async def test_object_watch(nc: nats.NATS) -> None:
    obs = await nc.jetstream().create_object_store("O")
    await obs.put("a", b"1")
    await obs.put("b", b"2")
    watcher = await obs.watch()
    first = await collect(watcher, 3)
    assert [None if i is None else (i.name, i.size) for i in first] == [("a", 1), ("b", 1), None]
    await obs.put("c", b"33")
    await obs.delete("a")
    live = await collect(watcher, 2)
    assert [(i.name, i.size, i.deleted) for i in live] == [("c", 2, False), ("a", 0, True)]
    await watcher.stop()


async def test_object_watch_empty_and_updates_only(nc: nats.NATS) -> None:
    obs = await nc.jetstream().create_object_store("O")
    watcher = await obs.watch()
    assert await collect(watcher, 1) == [None]
    await obs.put("a", b"1")
    assert [i.name for i in await collect(watcher, 1)] == ["a"]
    await watcher.stop()

    updates = await obs.watch(updates_only=True)
    await obs.put("b", b"2")
    assert [i.name for i in await collect(updates, 1)] == ["b"]
    await nothing_more(updates)
    await updates.stop()


async def test_object_status_and_seal(nc: nats.NATS) -> None:
    js = nc.jetstream()
    obs = await js.create_object_store("O", config=jsapi.ObjectStoreConfig(description="things"))
    await obs.put("a", b"xyz")
    status = await obs.status()
    info = await stream_info(nc, "OBJ_O")
    assert (status.bucket, status.description, status.ttl, status.storage_type, status.replicas, status.sealed) == (
        "O",
        "things",
        0.0,
        "file",
        1,
        False,
    )
    assert status.size == info["state"]["bytes"] > 0
    await obs.seal()
    config = (await stream_info(nc, "OBJ_O"))["config"]
    # Sealing also denies delete and purge and turns rollups off.
    flags = (config["sealed"], config["deny_delete"], config["deny_purge"], config["allow_rollup_hdrs"])
    assert flags == (True, True, True, False)
    assert (await obs.status()).sealed is True
    with pytest.raises(jserrors.BadRequestError) as err:
        await obs.put("b", b"x")
    assert (err.value.err_code, err.value.description) == (10109, "invalid operation on sealed stream")
    assert (await obs.get("a")).data == b"xyz"


async def test_object_links(nc: nats.NATS) -> None:
    js = nc.jetstream()
    target = await js.create_object_store("T")
    await target.put("real", b"payload")
    obs = await js.create_object_store("O")
    link = jsapi.ObjectMeta(
        name="to-object",
        options=jsapi.ObjectMetaOptions(link=jsapi.ObjectLink(bucket="T", name="real"), max_chunk_size=1024),
    )
    info = await obs.put("to-object", b"", meta=link)
    assert info.is_link() and (info.size, info.chunks) == (0, 0)
    result = await obs.get("to-object")
    assert (result.data, result.info.name, result.info.bucket) == (b"payload", "real", "T")
    bucket_link = jsapi.ObjectMeta(
        name="to-bucket", options=jsapi.ObjectMetaOptions(link=jsapi.ObjectLink(bucket="T"), max_chunk_size=1024)
    )
    await obs.put("to-bucket", b"", meta=bucket_link)
    with pytest.raises(jserrors.LinkIsABucketError):
        await obs.get("to-bucket")
    stored = json.loads(base64.b64decode((await last_raw(nc, "OBJ_O", "$O.O.M.>"))["data"]))
    assert stored["options"] == {"link": {"bucket": "T"}, "max_chunk_size": 1024}


async def test_object_update_meta(nc: nats.NATS) -> None:
    obs = await nc.jetstream().create_object_store("O")
    await obs.put("a", b"xyz")
    await obs.update_meta("a", jsapi.ObjectMeta(name="a", description="new words"))
    info = await obs.get_info("a")
    assert (info.description, info.size) == ("new words", 3)
    assert (await obs.get("a")).data == b"xyz"
    assert (await stream_info(nc, "OBJ_O"))["state"]["messages"] == 2  # rollup kept one meta message
    with pytest.raises(jserrors.ObjectDeletedError):
        await obs.update_meta("missing", jsapi.ObjectMeta(name="missing"))


async def test_object_store_delete_bucket(nc: nats.NATS) -> None:
    js = nc.jetstream()
    await js.create_object_store("O")
    assert await js.delete_object_store("O") is True
    with pytest.raises(jserrors.BucketNotFoundError):
        await js.object_store("O")
