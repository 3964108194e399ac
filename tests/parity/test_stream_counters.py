"""Message counters, ``compression: s2`` and ``persist_mode: async`` on both targets.

Every expectation was read off nats-server 2.15.1.  Facts pinned here:

* A counter stream (``allow_msg_counter``) stores ``{"val":"<total>"}`` for each
  ``Nats-Incr: <signed decimal>`` publish with an empty payload, keeping the
  publisher's headers as sent; the PubAck is ``{"stream":"S","seq":N,"val":"<total>"}``.
  Totals are per subject (the subject's last stored value), arbitrary precision.
* Publish checks: an unparsable ``Nats-Incr`` is 10171 on any stream; a valid
  one on a plain stream is 10168; with a payload 10170; together with a roll-up,
  expected stream, expected last sequence / subject sequence / msg id 10171;
  with ``Nats-TTL`` (TTLs are off on counter streams) 10166; a message without
  an increment (or with an empty one) is 10169 -- after the duplicate and
  roll-up checks.  ``max_msg_size`` is checked on the message as sent and again
  on the stored ``{"val"}`` body.  An empty ``Nats-Incr`` on a plain stream is
  just a header.
* Config: counters refuse discard new, message TTLs, schedules and non-limits
  retention (10052), mirrors (10173); the flag never changes on update.
  ``persist_mode: async`` needs file storage and one replica, never changes on
  update, and ``default`` is not echoed.  ``compression`` may change on update;
  ``s2`` is accepted on memory streams too.  Both counters and async persist
  require API level 2.
* ``compression: s2`` changes no byte count a client sees (``state.bytes``, ``/jsz``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import urllib.request
from typing import Any

import nats
import pytest
from nats.js.api import StorageType, StoreCompression, StreamConfig

from tests.harness.js import api, connect
from tests.harness.publish import Raw, err, hdr_block
from tests.harness.targets import Settings, Target
from tests.harness.wait import WAIT

SEC = 1_000_000_000


async def make(nc: nats.NATS, name: str = "C", **cfg: Any) -> dict:
    body = {"name": name, "subjects": [name.lower() + ".>"], "storage": "memory", "allow_msg_counter": True, **cfg}
    return await api(nc, f"$JS.API.STREAM.CREATE.{name}", body)


async def must_make(nc: nats.NATS, name: str = "C", **cfg: Any) -> dict:
    reply = await make(nc, name, **cfg)
    assert "error" not in reply, reply
    return reply


def val_ack(stream: str, seq: int, total: str) -> bytes:
    return b'{"stream":"%s","seq":%d,"val":"%s"}' % (stream.encode(), seq, total.encode())


def incr_invalid(stream: str = "C") -> bytes:
    return err(stream, 400, 10171, "message counter increment is invalid")


def incr_missing(stream: str = "C") -> bytes:
    return err(stream, 400, 10169, "message counter increment is missing")


async def pub(nc: nats.NATS, subject: str, payload: bytes = b"", headers: dict[str, str] | None = None) -> bytes:
    return (await nc.request(subject, payload, headers=headers, timeout=WAIT)).data


async def last(nc: nats.NATS, stream: str, subject: str) -> tuple[int, bytes, bytes]:
    reply = await api(nc, f"$JS.API.STREAM.MSG.GET.{stream}", {"last_by_subj": subject})
    assert "error" not in reply, reply
    msg = reply["message"]
    return msg["seq"], base64.b64decode(msg.get("hdrs", "")), base64.b64decode(msg.get("data", ""))


def error(code: int, err_code: int, description: str) -> dict:
    return {"code": code, "err_code": err_code, "description": description}


def invalid(description: str) -> dict:
    return error(500, 10052, description)


# --------------------------------------------------------------------------- publishing


async def test_increments_store_totals_and_ack_val(target: Target) -> None:
    nc = await connect(target)
    await must_make(nc)
    raw = await Raw.open(target)
    assert (
        await raw.request("c.a", b"", hdr_block("Nats-Incr: 1"))
        == b'MSG R.1 1 32\r\n{"stream":"C","seq":1,"val":"1"}\r\n'
    )
    assert (
        await raw.request("c.a", b"", hdr_block("Nats-Incr: +5"))
        == b'MSG R.1 1 32\r\n{"stream":"C","seq":2,"val":"6"}\r\n'
    )
    assert await raw.request("c.a", b"", hdr_block("Nats-Incr: -0010", "X: y")) == (
        b'MSG R.1 1 33\r\n{"stream":"C","seq":3,"val":"-4"}\r\n'
    )
    assert (
        await raw.request("c.b", b"", hdr_block("Nats-Incr: -3"))
        == b'MSG R.1 1 33\r\n{"stream":"C","seq":4,"val":"-3"}\r\n'
    )
    assert (
        await raw.request("c.a", b"", hdr_block("Nats-Incr: 0"))
        == b'MSG R.1 1 33\r\n{"stream":"C","seq":5,"val":"-4"}\r\n'
    )
    await raw.close()
    assert await last(nc, "C", "c.a") == (5, hdr_block("Nats-Incr: 0"), b'{"val":"-4"}')
    reply = await api(nc, "$JS.API.STREAM.MSG.GET.C", {"seq": 3})
    assert base64.b64decode(reply["message"]["hdrs"]) == hdr_block("Nats-Incr: -0010", "X: y")
    info = await api(nc, "$JS.API.STREAM.INFO.C")
    state = info["state"]
    assert (state["messages"], state["bytes"], state["num_subjects"]) == (5, 295, 2)
    await nc.close()


async def test_big_integers(target: Target) -> None:
    nc = await connect(target)
    await must_make(nc)
    big = "9" * 30
    assert await pub(nc, "c.a", headers={"Nats-Incr": big}) == val_ack("C", 1, big)
    assert await pub(nc, "c.a", headers={"Nats-Incr": "1"}) == val_ack("C", 2, "1" + "0" * 30)
    huge = "1" + "0" * 5000  # beyond Python's default int/str conversion limit
    assert await pub(nc, "c.b", headers={"Nats-Incr": huge}) == val_ack("C", 3, huge)
    assert await pub(nc, "c.b", headers={"Nats-Incr": "-" + huge}) == val_ack("C", 4, "0")
    assert await pub(nc, "c.b", headers={"Nats-Incr": "-" + "7" * 4500}) == val_ack("C", 5, "-" + "7" * 4500)
    assert (await last(nc, "C", "c.b"))[2] == b'{"val":"-' + b"7" * 4500 + b'"}'
    await nc.close()


COUNTER_REFUSALS = [
    ({"Nats-Incr": "abc"}, b"", incr_invalid()),
    ({"Nats-Incr": "1_0"}, b"", incr_invalid()),
    ({"Nats-Incr": "0x10"}, b"", incr_invalid()),
    ({"Nats-Incr": "\u0661"}, b"", incr_invalid()),
    ({"Nats-Incr": "+"}, b"", incr_invalid()),
    ({"Nats-Incr": ""}, b"", incr_missing()),
    ({"Nats-Incr": "1"}, b"x", err("C", 400, 10170, "message counter has payload")),
    (None, b"x", incr_missing()),
    ({"X": "y"}, b"", incr_missing()),
    ({"Nats-Incr": "1", "Nats-Rollup": "sub"}, b"", incr_invalid()),
    ({"Nats-Incr": "1", "Nats-Expected-Last-Sequence": "5"}, b"", incr_invalid()),
    ({"Nats-Incr": "1", "Nats-Expected-Stream": "C"}, b"", incr_invalid()),
    ({"Nats-Incr": "1", "Nats-Expected-Last-Msg-Id": "a"}, b"", incr_invalid()),
    ({"Nats-Incr": "1", "Nats-Expected-Last-Subject-Sequence": "0"}, b"", incr_invalid()),
    ({"Nats-Incr": "1", "Nats-Expected-Last-Subject-Sequence-Subject": "c.x"}, b"", incr_invalid()),
    ({"Nats-Incr": "1", "Nats-TTL": "5s"}, b"", err("C", 400, 10166, "per-message TTL is disabled")),
    (
        {"Nats-Incr": "1", "Nats-Schedule": "@at 2020-01-01T00:00:00Z"},
        b"",
        err("C", 400, 10188, "message schedules is disabled"),
    ),
    ({"Nats-Rollup": "sub"}, b"", err("C", 500, 10111, "rollup not permitted")),
    ({"Nats-TTL": "5s"}, b"", err("C", 400, 10166, "per-message TTL is disabled")),
]


async def test_counter_stream_refusals(target: Target) -> None:
    nc = await connect(target)
    await must_make(nc)
    got = [await pub(nc, "c.a", payload, headers) for headers, payload, _ in COUNTER_REFUSALS]
    assert got == [want for _, _, want in COUNTER_REFUSALS]
    assert await pub(nc, "c.a", headers={"Nats-Incr": "2"}) == val_ack("C", 1, "2")
    await nc.close()


async def test_raw_increment_text_is_taken_verbatim(target: Target) -> None:
    """Spaces after the colon are skipped, trailing ones are part of the (then invalid) number."""
    nc = await connect(target)
    await must_make(nc)
    raw = await Raw.open(target)
    assert (
        await raw.request("c.a", b"", hdr_block("Nats-Incr:    7"))
        == b'MSG R.1 1 32\r\n{"stream":"C","seq":1,"val":"7"}\r\n'
    )
    body = incr_invalid()
    assert await raw.request("c.a", b"", hdr_block("Nats-Incr: 7 ")) == b"MSG R.1 1 %d\r\n%s\r\n" % (len(body), body)
    body = incr_missing()
    assert await raw.request("c.a", b"", hdr_block("nats-incr: 7")) == b"MSG R.1 1 %d\r\n%s\r\n" % (len(body), body)
    await raw.close()
    await nc.close()


async def test_msg_id_dedup_and_rollups_on_counters(target: Target) -> None:
    nc = await connect(target)
    await must_make(nc, max_msgs_per_subject=1, allow_rollup_hdrs=True)
    assert await pub(nc, "c.a", headers={"Nats-Incr": "2", "Nats-Msg-Id": "m"}) == val_ack("C", 1, "2")
    assert (
        await pub(nc, "c.a", headers={"Nats-Incr": "2", "Nats-Msg-Id": "m"})
        == b'{"stream":"C","seq":1,"duplicate": true}'
    )
    assert await pub(nc, "c.a", headers={"Nats-Msg-Id": "m"}) == b'{"stream":"C","seq":1,"duplicate": true}'
    assert await pub(nc, "c.a", headers={"Nats-Rollup": "sub"}) == incr_missing()
    assert await pub(nc, "c.a", headers={"Nats-Incr": "2"}) == val_ack("C", 2, "4")
    assert await pub(nc, "c.a", headers={"Nats-Incr": "2"}) == val_ack("C", 3, "6")
    state = (await api(nc, "$JS.API.STREAM.INFO.C"))["state"]
    assert (state["messages"], state["first_seq"]) == (1, 3)
    assert (await api(nc, "$JS.API.STREAM.PURGE.C", {"filter": "c.a"}))["purged"] == 1
    assert await pub(nc, "c.a", headers={"Nats-Incr": "2"}) == val_ack("C", 4, "2")
    await nc.close()


async def test_total_follows_the_subjects_last_stored_message(target: Target) -> None:
    nc = await connect(target)
    await must_make(nc, storage="file")
    for seq, total in ((1, "7"), (2, "14"), (3, "21")):
        assert await pub(nc, "c.x", headers={"Nats-Incr": "7"}) == val_ack("C", seq, total)
    assert (await api(nc, "$JS.API.STREAM.MSG.DELETE.C", {"seq": 3}))["success"] is True
    assert await pub(nc, "c.x", headers={"Nats-Incr": "1"}) == val_ack("C", 4, "15")
    state = (await api(nc, "$JS.API.STREAM.INFO.C"))["state"]
    assert (state["messages"], state["bytes"], state["num_deleted"]) == (3, 224, 1)
    await nc.close()


async def test_max_msg_size_checks_sent_and_stored_message(target: Target) -> None:
    nc = await connect(target)
    await must_make(nc, "A", max_msg_size=30)
    await must_make(nc, "B", max_msg_size=40)
    await api(
        nc, "$JS.API.STREAM.CREATE.D", {"name": "D", "subjects": ["d.>"], "storage": "memory", "max_msg_size": 10}
    )
    too_big = "message size exceeds maximum allowed"
    assert await pub(nc, "a.x", headers={"Nats-Incr": "1"}) == err("A", 400, 10054, too_big)
    assert await pub(nc, "b.x", headers={"Nats-Incr": "1"}) == val_ack("B", 1, "1")
    assert await pub(nc, "b.x", b"x" * 50, {"Nats-Incr": "1"}) == err("B", 400, 10054, too_big)
    assert await pub(nc, "b.x", b"x" * 50, {"Nats-Incr": "abc"}) == err("B", 400, 10054, too_big)
    assert await pub(nc, "b.x", headers={"Nats-Incr": "1" * 20}) == err("B", 400, 10054, too_big)
    assert await pub(nc, "d.x", b"x" * 50, {"Nats-Incr": "abc"}) == err("D", 400, 10054, too_big)
    await nc.close()


async def test_sealed_counter_stream(target: Target) -> None:
    nc = await connect(target)
    cfg = (await must_make(nc))["config"]
    assert await pub(nc, "c.x", headers={"Nats-Incr": "1"}) == val_ack("C", 1, "1")
    reply = await api(nc, "$JS.API.STREAM.UPDATE.C", {**cfg, "sealed": True})
    assert (reply["config"]["discard"], reply["config"]["sealed"]) == ("new", True)
    sealed = err("C", 400, 10109, "invalid operation on sealed stream")
    assert await pub(nc, "c.x", headers={"Nats-Incr": "1"}) == sealed
    assert await pub(nc, "c.x", headers={"Nats-Incr": "a"}) == sealed
    await nc.close()


async def test_plain_stream_and_nats_incr(target: Target) -> None:
    nc = await connect(target)
    await api(nc, "$JS.API.STREAM.CREATE.N", {"name": "N", "subjects": ["n.>"], "storage": "memory"})
    disabled = err("N", 400, 10168, "message counters is disabled")
    cases = [
        ({"Nats-Incr": "abc"}, b"", incr_invalid("N")),
        ({"Nats-Incr": "1"}, b"", disabled),
        ({"Nats-Incr": "1", "Nats-Rollup": "sub"}, b"", disabled),
        ({"Nats-Incr": "1", "Nats-Expected-Last-Sequence": "9"}, b"", disabled),
        ({"Nats-Incr": "1", "Nats-TTL": "5s"}, b"", disabled),
        ({"Nats-Incr": "x", "Nats-TTL": "5s"}, b"x", incr_invalid("N")),
        ({"Nats-Incr": ""}, b"x", b'{"stream":"N","seq":1}'),
    ]
    assert [await pub(nc, "n.a", p, h) for h, p, _ in cases] == [want for _, _, want in cases]
    await nc.close()


async def test_direct_get_of_a_counter(target: Target) -> None:
    nc = await connect(target)
    await must_make(nc, allow_direct=True)
    await pub(nc, "c.a", headers={"Nats-Incr": "40"})
    await pub(nc, "c.a", headers={"Nats-Incr": "2"})
    msg = await nc.request("$JS.API.DIRECT.GET.C", json.dumps({"last_by_subj": "c.a"}).encode(), timeout=WAIT)
    assert msg.data == b'{"val":"42"}'
    headers = dict(msg.headers or {})
    assert {k: headers.get(k) for k in ("Nats-Incr", "Nats-Stream", "Nats-Subject", "Nats-Sequence")} == {
        "Nats-Incr": "2",
        "Nats-Stream": "C",
        "Nats-Subject": "c.a",
        "Nats-Sequence": "2",
    }
    await nc.close()


async def test_nats_py_client_view(target: Target) -> None:
    nc = await connect(target)
    js = nc.jetstream()
    info = await js.add_stream(
        StreamConfig(name="K", subjects=["k.>"], storage=StorageType.MEMORY, allow_msg_counter=True)
    )
    assert info.config.allow_msg_counter is True
    assert info.config.metadata is not None and info.config.metadata["_nats.req.level"] == "2"
    ack = await js.publish("k.hits", b"", headers={"Nats-Incr": "3"})
    assert (ack.stream, ack.seq, ack.val) == ("K", 1, "3")
    ack = await js.publish("k.hits", b"", headers={"Nats-Incr": "-1"})
    assert (ack.seq, ack.val) == (2, "2")
    got = await js.get_last_msg("K", "k.hits")
    assert json.loads(got.data) == {"val": "2"}
    with pytest.raises(nats.js.errors.BadRequestError) as refused:
        await js.publish("k.hits", b"nope")
    assert refused.value.err_code == 10169
    await nc.close()


async def test_counter_with_delete_markers_keeps_its_last_value(target: Target) -> None:
    """Delete markers are refused on a counter stream (no increment): the subject's last message stays."""
    nc = await connect(target)
    created = await must_make(nc, "M", max_age=SEC, subject_delete_marker_ttl=SEC)
    cfg = created["config"]
    assert (cfg["allow_msg_ttl"], cfg["allow_rollup_hdrs"], cfg["metadata"]["_nats.req.level"]) == (True, True, "2")
    await must_make(nc, "O", max_age=SEC)
    assert await pub(nc, "m.a", headers={"Nats-Incr": "5"}) == val_ack("M", 1, "5")
    assert await pub(nc, "o.a", headers={"Nats-Incr": "5"}) == val_ack("O", 1, "5")

    async def aged_out() -> bool:
        return (await api(nc, "$JS.API.STREAM.INFO.O"))["state"]["messages"] == 0

    assert await target.elapse_until(aged_out, 5)
    await target.elapse(1.5)
    assert (await api(nc, "$JS.API.STREAM.INFO.M"))["state"]["messages"] == 1
    assert await last(nc, "M", "m.a") == (1, hdr_block("Nats-Incr: 5"), b'{"val":"5"}')
    assert await pub(nc, "m.a", headers={"Nats-Incr": "5"}) == val_ack("M", 2, "10")
    assert await pub(nc, "o.a", headers={"Nats-Incr": "5"}) == val_ack("O", 2, "5")
    await nc.close()


# --------------------------------------------------------------------------- configuration


CREATE_ERRORS = [
    ({"discard": "new"}, invalid("counter stream cannot use discard new")),
    ({"allow_msg_ttl": True}, invalid("counter stream cannot use message TTLs")),
    ({"retention": "interest"}, invalid("counter stream can only use limits retention")),
    ({"retention": "workqueue"}, invalid("counter stream can only use limits retention")),
    ({"allow_msg_schedules": True}, invalid("counter stream cannot use message schedules")),
    (
        {"discard": "new", "discard_new_per_subject": True, "max_msgs_per_subject": 1},
        invalid("counter stream cannot use discard new"),
    ),
    ({"num_replicas": 3}, error(500, 10074, "replicas > 1 not supported in non-clustered mode")),
    ({"deny_purge": True, "allow_rollup_hdrs": True}, invalid("roll-ups require the purge permission")),
    ({"subjects": [], "mirror": {"name": "X"}}, error(400, 10173, "stream mirrors can not also calculate counters")),
    (
        {"allow_msg_counter": False, "persist_mode": "async", "storage": "memory"},
        invalid("async persist mode is only supported on file storage"),
    ),
    (
        {"allow_msg_counter": False, "persist_mode": "async", "storage": "file", "num_replicas": 3},
        invalid("async persist mode is not supported on replicated streams"),
    ),
    (
        {"allow_msg_counter": False, "persist_mode": "async", "num_replicas": 3},
        invalid("async persist mode is only supported on file storage"),
    ),
    (
        {"allow_msg_counter": False, "persist_mode": "async", "storage": "file", "allow_atomic": True},
        invalid("async persist mode is not supported with atomic batch publish"),
    ),
    ({"persist_mode": "async", "discard": "new"}, invalid("counter stream cannot use discard new")),
    ({"persist_mode": "ASYNC"}, error(400, 10025, 'invalid JSON: can not unmarshal "\\"ASYNC\\""')),
    ({"persist_mode": None}, error(400, 10025, 'invalid JSON: can not unmarshal "null"')),
    ({"compression": "S2"}, error(400, 10025, "invalid JSON: unknown compression algorithm")),
    ({"compression": ""}, error(400, 10025, "invalid JSON: unknown compression algorithm")),
    ({"compression": None}, error(400, 10025, "invalid JSON: unknown compression algorithm")),
]


async def test_create_errors(target: Target) -> None:
    nc = await connect(target)
    got = [(await make(nc, f"E{i}", **cfg)).get("error") for i, (cfg, _) in enumerate(CREATE_ERRORS)]
    assert got == [want for _, want in CREATE_ERRORS]
    await nc.close()


def features(config: dict) -> dict:
    keys = ("storage", "compression", "persist_mode", "allow_msg_counter", "allow_msg_ttl", "discard")
    return {key: config.get(key) for key in keys} | {"level": config["metadata"]["_nats.req.level"]}


ECHOES = [
    ({"storage": "file"}, ("file", "none", None, True, False, "old", "2")),
    ({"persist_mode": "default", "allow_msg_counter": False}, ("memory", "none", None, None, False, "old", "0")),
    ({"persist_mode": "", "allow_msg_counter": False}, ("memory", "none", None, None, False, "old", "0")),
    ({"storage": "file", "persist_mode": "async"}, ("file", "none", "async", True, False, "old", "2")),
    (
        {"storage": "file", "persist_mode": "async", "allow_msg_counter": False},
        ("file", "none", "async", None, False, "old", "2"),
    ),
    ({"compression": "s2", "allow_msg_counter": False}, ("memory", "s2", None, None, False, "old", "0")),
    ({"compression": "s2", "storage": "file"}, ("file", "s2", None, True, False, "old", "2")),
    ({"compression": "none"}, ("memory", "none", None, True, False, "old", "2")),
]


async def test_create_echoes(target: Target) -> None:
    nc = await connect(target)
    keys = ("storage", "compression", "persist_mode", "allow_msg_counter", "allow_msg_ttl", "discard", "level")
    got = [features((await must_make(nc, f"F{i}", **cfg))["config"]) for i, (cfg, _) in enumerate(ECHOES)]
    assert got == [dict(zip(keys, want, strict=True)) for _, want in ECHOES]
    await nc.close()


async def test_update_rules(target: Target) -> None:
    nc = await connect(target)

    async def update(name: str, **cfg: Any) -> dict:
        body = {"name": name, "subjects": [name.lower() + ".>"], **cfg}
        reply = await api(nc, f"$JS.API.STREAM.UPDATE.{name}", body)
        return reply.get("error") or features(reply["config"])

    await must_make(nc, "Z", storage="file", compression="s2", allow_msg_counter=False)
    await must_make(nc, "ZM", compression="s2", allow_msg_counter=False)
    await must_make(nc, "P", storage="file", persist_mode="async", allow_msg_counter=False)
    await must_make(nc, "Q", storage="file", allow_msg_counter=False)
    await must_make(nc, "PC", storage="file", persist_mode="async")
    counter_flag = invalid("stream configuration update can not change message counter setting")
    persist = invalid("stream configuration update can not change persist mode")
    assert await update("Z", compression="none") == {
        "storage": "file",
        "compression": "none",
        "persist_mode": None,
        "allow_msg_counter": None,
        "allow_msg_ttl": False,
        "discard": "old",
        "level": "0",
    }
    assert (await update("Z", compression="s2"))["compression"] == "s2"
    assert (await update("ZM", storage="memory", compression="none"))["compression"] == "none"
    assert await update("P") == persist
    assert await update("Q", persist_mode="async") == persist
    assert await update("PC", persist_mode="async") == counter_flag
    assert await update("PC", persist_mode="async", allow_msg_counter=False) == counter_flag
    assert await update("Q", allow_msg_counter=True) == counter_flag
    assert await update("PC", persist_mode="async", allow_msg_counter=True, discard="new") == invalid(
        "counter stream cannot use discard new"
    )
    assert await update("PC", persist_mode="async", allow_msg_counter=True, allow_msg_ttl=True) == invalid(
        "counter stream cannot use message TTLs"
    )
    assert await update("P", persist_mode="async", storage="memory") == invalid(
        "async persist mode is only supported on file storage"
    )
    # An update records the level its features need.
    assert (await update("Q", allow_msg_ttl=True))["level"] == "1"
    # Creating again: the same config is fine, another persist mode or compression is not.
    again = await api(
        nc,
        "$JS.API.STREAM.CREATE.PC",
        {"name": "PC", "subjects": ["pc.>"], "storage": "file", "persist_mode": "async", "allow_msg_counter": True},
    )
    assert "error" not in again, again
    exists = error(400, 10058, "stream name already in use with a different configuration")
    for cfg in ({"allow_msg_counter": True}, {"persist_mode": "async"}, {"compression": "s2"}):
        body = {"name": "PC", "subjects": ["pc.>"], "storage": "file", **cfg}
        assert (await api(nc, "$JS.API.STREAM.CREATE.PC", body))["error"] == exists
    await nc.close()


async def test_nats_py_config_fields(target: Target) -> None:
    nc = await connect(target)
    js = nc.jetstream()
    info = await js.add_stream(StreamConfig(name="S2", subjects=["s2.>"], compression=StoreCompression.S2))
    assert info.config.compression == StoreCompression.S2
    await nc.close()


# --------------------------------------------------------------------------- compression accounting


async def monitor(target: Target, path: str) -> dict:
    def fetch() -> dict:
        with urllib.request.urlopen(f"http://{target.host}:{target.http_port}{path}", timeout=5) as reply:
            doc: dict = json.loads(reply.read())
            return doc

    return await asyncio.to_thread(fetch)  # fakejs may serve from this very event loop


async def stored(nc: nats.NATS, stream: str, last_seq: int, deadline: float = 5.0) -> None:
    """Wait until the stream's last sequence is ``last_seq``."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while (await api(nc, f"$JS.API.STREAM.INFO.{stream}"))["state"]["last_seq"] < last_seq:
        assert loop.time() < end, f"{stream} did not reach sequence {last_seq}"
        await asyncio.sleep(0.02)


async def test_s2_changes_no_byte_count(make_target: Any) -> None:
    target = await make_target(Settings(monitor=True))
    nc = await connect(target)
    for name, compression in (("Z", "s2"), ("P", "none")):
        cfg = {"name": name, "subjects": [name.lower() + ".>"], "compression": compression}
        if name == "Z":
            cfg["persist_mode"] = "async"
        reply = await api(nc, f"$JS.API.STREAM.CREATE.{name}", cfg)
        assert reply["config"]["compression"] == compression, reply
        for i in range(300):
            await nc.publish(
                f"{name.lower()}.{i % 7}", b"a" * (1000 + i), headers={"K": "v" * i} if i % 3 == 0 else None
            )
        await nc.flush()
        await stored(nc, name, 300)  # plain publishes: nats-server stores them after the flush's PONG
        await api(nc, f"$JS.API.STREAM.MSG.DELETE.{name}", {"seq": 5})
        await api(nc, f"$JS.API.STREAM.PURGE.{name}", {"filter": name.lower() + ".3"})
        state = (await api(nc, f"$JS.API.STREAM.INFO.{name}"))["state"]
        assert (state["messages"], state["bytes"], state["num_deleted"]) == (256, 317229, 44)
    jsz = await monitor(target, "/jsz")
    assert (jsz["storage"], jsz["bytes"], jsz["messages"]) == (634458, 634458, 512)
    assert (await api(nc, "$JS.API.INFO"))["storage"] == 634458
    await nc.close()


async def test_features_survive_a_restart(target: Target) -> None:
    nc = await connect(target)
    await must_make(nc, "R", storage="file", persist_mode="async", compression="s2")
    assert await pub(nc, "r.a", headers={"Nats-Incr": "12345678901234567890"}) == val_ack(
        "R", 1, "12345678901234567890"
    )
    before = (await api(nc, "$JS.API.STREAM.INFO.R"))["config"]
    await nc.close()
    await target.restart()
    nc = await connect(target)
    assert (await api(nc, "$JS.API.STREAM.INFO.R"))["config"] == before
    assert await pub(nc, "r.a", headers={"Nats-Incr": "1"}) == val_ack("R", 2, "12345678901234567891")
    await nc.close()
