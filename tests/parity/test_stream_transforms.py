"""A stream's ``subject_transform`` and ``republish`` on both targets.

Every expectation is what nats-server 2.15.1 answers (checked against the
binary): the validation errors at create and update, the echoed config,
the subjects messages are stored under (partitions included: the hash is
nats-server's FNV-1a), and the republished copies with their ``Nats-*``
headers in order.  Timestamps differ between servers: their format is checked.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from nats.js.api import KeyValueConfig, RePublish

from tests.harness.js import api, create_stream, rfc3339_ns, stored
from tests.harness.streams import stream_config as config
from tests.harness.wait import WAIT

CREATE = "io.nats.jetstream.api.v1.stream_create_response"
UPDATE = "io.nats.jetstream.api.v1.stream_update_response"
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z")


def error(code: int, err_code: int, description: str) -> dict[str, Any]:
    return {"code": code, "err_code": err_code, "description": description}


def destination(text: str) -> dict[str, Any]:
    return error(400, 10156, f"stream transform: {text}")


def republish_invalid(text: str) -> dict[str, Any]:
    return error(500, 10052, text)


async def create(nc, body: dict[str, Any]) -> dict[str, Any]:
    return await api(nc, f"$JS.API.STREAM.CREATE.{body['name']}", body)


# (subjects, subject_transform, republish, pedantic) -> the error
CONFIG_ERRORS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "unknown_function": (
        {"subject_transform": {"src": "a.*", "dest": "b.{{foo(1)}}"}},
        destination("invalid mapping destination: unknown function in {{foo(1)}}"),
    ),
    "unknown_bare": (
        {"subject_transform": {"src": "a.*", "dest": "b.{{x}}"}},
        destination("invalid mapping destination: unknown function in {{x}}"),
    ),
    "wildcard_no_args": (
        {"subject_transform": {"src": "a.*", "dest": "b.{{wildcard()}}"}},
        destination("invalid mapping destination: not enough arguments passed to the function in {{wildcard()}}"),
    ),
    "wildcard_bad_arg": (
        {"subject_transform": {"src": "a.*", "dest": "b.{{wildcard(x)}}"}},
        destination(
            "invalid mapping destination: function argument is invalid or in the wrong format in {{wildcard(x)}}"
        ),
    ),
    "wildcard_two_args": (
        {"subject_transform": {"src": "a.*", "dest": "b.{{wildcard(1,2)}}"}},
        destination("invalid mapping destination: too many arguments passed to the function in {{wildcard(1,2)}}"),
    ),
    "wildcard_out_of_range": (
        {"subject_transform": {"src": "a.*", "dest": "b.$2"}},
        destination("invalid mapping destination: wildcard index out of range in $2: [2]"),
    ),
    "partition_out_of_range": (
        {"subject_transform": {"src": "a.*", "dest": "b.{{partition(3,1,2)}}"}},
        destination("invalid mapping destination: wildcard index out of range in {{partition(3,1,2)}}: [2]"),
    ),
    "literal_source_wildcard": (
        {"subjects": ["a"], "subject_transform": {"src": "a", "dest": "b.{{wildcard(1)}}"}},
        destination("invalid mapping destination: wildcard index out of range in {{wildcard(1)}}"),
    ),
    "empty_token": (
        {"subject_transform": {"src": "a.*", "dest": "b..c"}},
        destination("invalid mapping destination: invalid transform"),
    ),
    "blank": (
        {"subject_transform": {"src": "a.*", "dest": "b.a c"}},
        destination("invalid mapping destination: invalid transform"),
    ),
    "after_fwc": (
        {"subject_transform": {"src": "a.*", "dest": ">.b"}},
        destination("invalid mapping destination: invalid transform in b"),
    ),
    "dest_wildcard": ({"subject_transform": {"src": "a.*", "dest": "b.*"}}, destination("invalid subject")),
    "fwc_mismatch": ({"subject_transform": {"src": "a.*", "dest": "b.>"}}, destination("invalid subject")),
    "split_blank": (
        {"subject_transform": {"src": "a.*", "dest": "b.{{split(1,x y)}}"}},
        destination(
            "invalid mapping destination: function argument is invalid or in the wrong format in {{split(1,x y)}}"
        ),
    ),
    "split_too_many": (
        {"subject_transform": {"src": "a.*", "dest": "b.{{split(1,-,3)}}"}},
        destination("invalid mapping destination: too many arguments passed to the function in {{split(1,-,3)}}"),
    ),
    "split_from_left_args": (
        {"subject_transform": {"src": "a.*", "dest": "b.{{splitFromLeft(1)}}"}},
        destination("invalid mapping destination: not enough arguments passed to the function in {{splitFromLeft(1)}}"),
    ),
    "slice_bad_arg": (
        {"subject_transform": {"src": "a.*", "dest": "b.{{SliceFromRight(1,a)}}"}},
        destination(
            "invalid mapping destination: function argument is invalid or in the wrong format "
            "in {{SliceFromRight(1,a)}}"
        ),
    ),
    "partition_empty": (
        {"subject_transform": {"src": "a.*", "dest": "b.{{partition()}}"}},
        destination(
            "invalid mapping destination: function argument is invalid or in the wrong format in {{partition()}}"
        ),
    ),
    "partition_too_big": (
        {"subject_transform": {"src": "a.*", "dest": "b.{{partition(99999999999)}}"}},
        destination(
            "invalid mapping destination: function argument is invalid or in the wrong format "
            "in {{partition(99999999999)}}"
        ),
    ),
    "random_two_args": (
        {"subject_transform": {"src": "a.*", "dest": "b.{{random(1,2)}}"}},
        destination("invalid mapping destination: not enough arguments passed to the function in {{random(1,2)}}"),
    ),
    "invalid_source": (
        {"subject_transform": {"src": "a..b", "dest": "x"}, "republish": {"src": "a.*", "dest": "a.b"}},
        error(400, 10155, "stream transform source: invalid subject a..b"),
    ),
    "republish_cycle": (
        {"republish": {"src": "a.*", "dest": "a.x"}},
        republish_invalid("stream configuration for republish destination forms a cycle"),
    ),
    "republish_everything": (
        {"republish": {"src": ">", "dest": ">"}},
        republish_invalid("stream configuration for republish destination forms a cycle"),
    ),
    "republish_bad_dest": (
        {"republish": {"src": "a.*", "dest": "r.a..b"}},
        republish_invalid("stream configuration for republish with transform from 'a.*' to 'r.a..b' not valid"),
    ),
    "republish_bad_source": (
        {"republish": {"src": "a..b", "dest": "r.x"}},
        republish_invalid("stream configuration for republish with transform from 'a..b' to 'r.x' not valid"),
    ),
    "republish_unknown_function": (
        {"republish": {"src": "a.*", "dest": "r.{{foo(1)}}"}},
        republish_invalid("stream configuration for republish with transform from 'a.*' to 'r.{{foo(1)}}' not valid"),
    ),
    "republish_dest_wildcard": (
        {"republish": {"src": "a.*", "dest": "r.*"}},
        republish_invalid("stream configuration for republish with transform from 'a.*' to 'r.*' not valid"),
    ),
    "implicit_republish": (
        {"subject_transform": {"src": "a.*", "dest": "b.$1"}, "republish": {"src": ">", "dest": ">"}},
        republish_invalid("stream configuration for republish with transform from 'b.$1' to 'b.$1' not valid"),
    ),
    "implicit_republish_pedantic": (
        {
            "subject_transform": {"src": "a.*", "dest": "b.$1"},
            "republish": {"src": ">", "dest": ">"},
            "pedantic": True,
        },
        error(400, 10157, "pedantic mode: implicit republish based on subject transform"),
    ),
    "implicit_needs_one_subject": (
        {
            "subjects": ["a.*", "c"],
            "subject_transform": {"src": "a.*", "dest": "b.$1"},
            "republish": {"src": ">", "dest": ">"},
        },
        republish_invalid("stream configuration for republish destination forms a cycle"),
    ),
    "republish_pedantic_source": (
        {"republish": {"dest": "r.>"}, "pedantic": True},
        error(400, 10157, "pedantic mode: republish source can not be empty"),
    ),
}


async def test_config_errors(nc) -> None:
    got = {}
    for i, (key, (body, _)) in enumerate(CONFIG_ERRORS.items()):
        reply = await create(nc, {"name": f"E{i}", "subjects": ["a.*"], **body})
        got[key] = reply.get("error", reply)
    assert got == {key: want for key, (_, want) in CONFIG_ERRORS.items()}


# The request's subject_transform / republish -> what is echoed.
ECHOES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"subject_transform": {}}, {"subject_transform": {"src": "", "dest": ""}}),
    ({"subject_transform": {"src": "a.*"}}, {"subject_transform": {"src": "a.*", "dest": ""}}),
    ({"subject_transform": {"dest": "b.>"}}, {"subject_transform": {"src": "", "dest": "b.>"}}),
    ({"subject_transform": {"src": "x.*", "dest": "y.$1"}}, {"subject_transform": {"src": "x.*", "dest": "y.$1"}}),
    (
        {"subject_transform": {"src": "a.*", "dest": "b.{{ wildcard( 1 ) }}.{{left(1,2)}}.{{right(1,2)}}.$x.{{}}"}},
        {"subject_transform": {"src": "a.*", "dest": "b.{{ wildcard( 1 ) }}.{{left(1,2)}}.{{right(1,2)}}.$x.{{}}"}},
    ),
    ({"republish": {}}, {"republish": {"src": ">", "dest": ""}}),
    ({"republish": {"src": "a.*"}}, {"republish": {"src": "a.*", "dest": ""}}),
    (
        {"republish": {"src": "a.*", "dest": "r.{{wildcard(1)}}", "headers_only": False}},
        {"republish": {"src": "a.*", "dest": "r.{{wildcard(1)}}"}},
    ),
    (
        {"republish": {"dest": "r.>", "headers_only": True}},
        {"republish": {"src": ">", "dest": "r.>", "headers_only": True}},
    ),
]


async def test_config_echo(nc) -> None:
    got, wanted = [], []
    for i, (body, echoed) in enumerate(ECHOES):
        name = f"C{i}"
        subjects = [f"c{i}.a.*"]
        body = json.loads(json.dumps(body).replace('"a.*"', json.dumps(subjects[0])))
        echoed = json.loads(json.dumps(echoed).replace('"a.*"', json.dumps(subjects[0])))
        reply = await create(nc, {"name": name, "subjects": subjects, **body})
        got.append(reply.get("config", reply))
        wanted.append(config(name, subjects, **echoed))
        info = await api(nc, f"$JS.API.STREAM.INFO.{name}")
        got.append(info.get("config", info))
        wanted.append(config(name, subjects, **echoed))
    assert got == wanted


async def test_update_adds_and_changes_republish(nc) -> None:
    await create_stream(nc, {"name": "U", "subjects": ["u.*"]})
    reply = await api(nc, "$JS.API.STREAM.UPDATE.U", {"name": "U", "subjects": ["u.*"], "republish": {"src": "u.*"}})
    assert reply["error"] == error(500, 10069, "stream configuration for republish from 'u.*' to '>': invalid subject")
    assert "republish" not in (await api(nc, "$JS.API.STREAM.INFO.U"))["config"]
    await create_stream(nc, {"name": "V", "subjects": ["v.>"]})
    reply = await api(nc, "$JS.API.STREAM.UPDATE.V", {"name": "V", "subjects": ["v.>"], "republish": {"src": "v.>"}})
    assert reply["type"] == UPDATE and reply["config"]["republish"] == {"src": "v.>", "dest": ">"}
    sub = await nc.subscribe("1")
    await stored(nc, "v.1", b"hi")
    msg = await sub.next_msg(timeout=WAIT)
    assert msg.data == b"hi" and msg.headers is not None and msg.headers["Nats-Subject"] == "v.1"
    change = {"name": "V", "subjects": ["v.>"], "subject_transform": {"src": "v.*", "dest": "w.$1"}}
    reply = await api(nc, "$JS.API.STREAM.UPDATE.V", change)
    assert reply["config"]["subject_transform"] == {"src": "v.*", "dest": "w.$1"}
    assert "republish" not in reply["config"]
    seq = await stored(nc, "v.2")
    got = await api(nc, "$JS.API.STREAM.MSG.GET.V", {"seq": seq})
    assert got["message"]["subject"] == "w.2"


# (source, destination, published subjects, stored subjects): {p} is the case's own prefix.
APPLIED = [
    ("{p}.*.*", "{p}x.$2.$1", ["{p}.a.b"], ["{p}x.b.a"]),
    ("{p}.*", "{p}x.{{{{wildcard(1)}}}}", ["{p}.q"], ["{p}x.q"]),
    (
        "{p}.*",
        "{p}x.{{{{partition(7,1)}}}}.$1",
        ["{p}.k1", "{p}.k2", "{p}.hello", "{p}.ü"],
        ["{p}x.6.k1", "{p}x.5.k2", "{p}x.2.hello", "{p}x.0.ü"],
    ),
    ("{p}.>", "{p}x.{{{{partition(5)}}}}.>", ["{p}.a.b", "{p}.c"], ["{p}x.1.a.b", "{p}x.3.c"]),
    ("{p}.*.*", "{p}x.{{{{partition(1000,2,1)}}}}", ["{p}.ab.cd", "{p}.x.y"], ["{p}x.705", "{p}x.444"]),
    ("{p}", "{p}x.{{{{partition(9)}}}}", ["{p}"], ["{p}x.0"]),
    ("{p}.*", "{p}x.{{{{split(1,-)}}}}", ["{p}.-ab--cd-", "{p}.abc", "{p}.-"], ["{p}x.ab.cd", "{p}x.abc", "{p}x."]),
    (
        "{p}.*",
        "{p}x.{{{{splitFromLeft(1,2)}}}}",
        ["{p}.abcdef", "{p}.ab", "{p}.a"],
        ["{p}x.ab.cdef", "{p}x.ab", "{p}x.a"],
    ),
    ("{p}.*", "{p}x.{{{{splitFromRight(1,2)}}}}", ["{p}.abcdef", "{p}.ab"], ["{p}x.abcd.ef", "{p}x.ab"]),
    (
        "{p}.*",
        "{p}x.{{{{sliceFromLeft(1,3)}}}}",
        ["{p}.abcdefgh", "{p}.abcdef", "{p}.abc"],
        ["{p}x.abc.def.gh", "{p}x.abc.def", "{p}x.abc"],
    ),
    ("{p}.*", "{p}x.{{{{sliceFromRight(1,3)}}}}", ["{p}.abcdefgh", "{p}.abcdef"], ["{p}x.ab.cde.fgh", "{p}x.abc.def"]),
    ("{p}.*", "{p}x.{{{{left(1,2)}}}}.{{{{right(1,2)}}}}", ["{p}.abcdef", "{p}.a"], ["{p}x.ab.ef", "{p}x.a.a"]),
    ("{p}.*", "{p}x.{{{{wildcard(0)}}}}.$1", ["{p}.z"], ["{p}x.{p}.z"]),
    ("{p}.*", "{p}x.{{{{ Wildcard( 1 ) }}}}.$x", ["{p}.z"], ["{p}x.z.$x"]),
    ("{p}.*.>", "{p}x.$1.>", ["{p}.a.b.c"], ["{p}x.a.b.c"]),
    ("", "{p}x.>", ["{p}.a"], ["{p}x.{p}.a"]),
    ("{p}.a", "{p}x", ["{p}.a", "{p}.b"], ["{p}x", "{p}.b"]),
]


async def test_messages_stored_under_the_transformed_subject(nc) -> None:
    got, wanted = [], []
    for i, (src, dest, published, expected) in enumerate(APPLIED):
        p = f"t{i}"
        transform = {"src": src.format(p=p), "dest": dest.format(p=p)}
        await create_stream(nc, {"name": f"T{i}", "subjects": [p, f"{p}.>"], "subject_transform": transform})
        for subject in published:
            seq = await stored(nc, subject.format(p=p), b"x")
            reply = await api(nc, f"$JS.API.STREAM.MSG.GET.T{i}", {"seq": seq})
            got.append(reply["message"]["subject"])
        wanted.extend(s.format(p=p) for s in expected)
    assert got == wanted


async def test_transformed_subject_everywhere(nc) -> None:
    """Stream info, Direct Get, consumers and expected-last-subject-sequence all see the stored subject."""
    transform = {"src": "in.*", "dest": "out.$1"}
    await create_stream(nc, {"name": "S", "subjects": ["in.*"], "subject_transform": transform, "allow_direct": True})
    await stored(nc, "in.a", b"1")
    await stored(nc, "in.b", b"2")
    ack = json.loads((await nc.request("in.a", b"3", headers={"Nats-Expected-Last-Subject-Sequence": "1"})).data)
    assert ack == {"stream": "S", "seq": 3}
    info = await api(nc, "$JS.API.STREAM.INFO.S", {"subjects_filter": ">"})
    assert info["state"]["subjects"] == {"out.a": 2, "out.b": 1}
    direct = await nc.request("$JS.API.DIRECT.GET.S", json.dumps({"last_by_subj": "out.a"}).encode(), timeout=WAIT)
    assert direct.data == b"3" and direct.headers is not None and direct.headers["Nats-Subject"] == "out.a"
    assert (await api(nc, "$JS.API.STREAM.MSG.GET.S", {"last_by_subj": "in.a"}))["error"]["err_code"] == 10037
    js = nc.jetstream()
    sub = await js.pull_subscribe("out.b", durable="C", stream="S")
    (msg,) = await sub.fetch(1, timeout=WAIT)
    assert (msg.subject, msg.data) == ("out.b", b"2")


def republished(msg, stream: str, subject: str, seq: int, last: int) -> None:
    """The republish headers nats-server adds, in its order, after the stored ones."""
    assert msg.headers is not None
    added = [(k, v) for k, v in msg.headers.items() if k.startswith("Nats-") and k != "Nats-Msg-Id"]
    keys = [k for k, _ in added]
    assert keys[:5] == ["Nats-Stream", "Nats-Subject", "Nats-Sequence", "Nats-Time-Stamp", "Nats-Last-Sequence"]
    assert msg.headers["Nats-Stream"] == stream
    assert msg.headers["Nats-Subject"] == subject
    assert msg.headers["Nats-Sequence"] == str(seq)
    assert msg.headers["Nats-Last-Sequence"] == str(last)
    assert STAMP.fullmatch(msg.headers["Nats-Time-Stamp"])


async def test_republish_copies_with_headers(nc) -> None:
    await create_stream(nc, {"name": "R", "subjects": ["r.*"], "republish": {"src": "r.*", "dest": "rp.$1"}})
    sub = await nc.subscribe("rp.>")
    await stored(nc, "r.a", b"one")
    await stored(nc, "r.b", b"two")
    await stored(nc, "r.a", b"three", headers={"Nats-Msg-Id": "m3", "X-Mine": "v"})
    first, second, third = [await sub.next_msg(timeout=WAIT) for _ in range(3)]
    assert (first.subject, first.data) == ("rp.a", b"one")
    republished(first, "R", "r.a", 1, 0)
    republished(second, "R", "r.b", 2, 0)
    assert (third.subject, third.data) == ("rp.a", b"three")
    republished(third, "R", "r.a", 3, 1)
    assert list(third.headers or {})[:2] == ["Nats-Msg-Id", "X-Mine"]  # the stored headers come first
    stamp = rfc3339_ns((third.headers or {})["Nats-Time-Stamp"])
    got = await api(nc, "$JS.API.STREAM.MSG.GET.R", {"seq": 3})
    assert stamp == rfc3339_ns(got["message"]["time"])
    # A republished copy is core NATS: the stream stores only what was published.
    assert (await api(nc, "$JS.API.STREAM.INFO.R"))["state"]["messages"] == 3


async def test_republish_headers_only_and_source_filter(nc) -> None:
    republish = {"src": "h.x.*", "dest": "ho.>", "headers_only": True}
    await create_stream(nc, {"name": "H", "subjects": ["h.>"], "republish": {**republish, "dest": "ho.$1"}})
    sub = await nc.subscribe("ho.>")
    await stored(nc, "h.y.1", b"not republished")
    await stored(nc, "h.x.1", b"12345")
    msg = await sub.next_msg(timeout=WAIT)
    assert (msg.subject, msg.data) == ("ho.1", b"")
    republished(msg, "H", "h.x.1", 2, 0)
    assert list(msg.headers or {})[-1] == "Nats-Msg-Size" and (msg.headers or {})["Nats-Msg-Size"] == "5"
    with pytest.raises(asyncio.TimeoutError):
        await sub.next_msg(timeout=0.2)


async def test_republish_after_transform(nc) -> None:
    body = {
        "name": "TR",
        "subjects": ["a.*"],
        "subject_transform": {"src": "a.*", "dest": "b.$1"},
        "republish": {"src": "b.*", "dest": "c.$1"},
    }
    await create_stream(nc, body)
    sub = await nc.subscribe("c.*")
    await stored(nc, "a.z", b"v")
    msg = await sub.next_msg(timeout=WAIT)
    assert msg.subject == "c.z"
    republished(msg, "TR", "b.z", 1, 0)


async def test_republish_into_another_stream(nc) -> None:
    await create_stream(nc, {"name": "SRC", "subjects": ["s.*"], "republish": {"src": "s.*", "dest": "d.$1"}})
    await create_stream(nc, {"name": "DST", "subjects": ["d.*"]})
    await stored(nc, "s.k", b"v")
    for _ in range(50):
        if (await api(nc, "$JS.API.STREAM.INFO.DST"))["state"]["messages"] == 1:
            break
        await asyncio.sleep(0.02)
    got = await api(nc, "$JS.API.STREAM.MSG.GET.DST", {"seq": 1})
    assert got["message"]["subject"] == "d.k"


async def test_kv_republish(nc) -> None:
    js = nc.jetstream()
    kv = await js.create_key_value(KeyValueConfig(bucket="B", republish=RePublish(src="$KV.B.>", dest="watch.B.>")))
    sub = await nc.subscribe("watch.B.>")
    await kv.put("k1", b"v1")
    await kv.put("k1", b"v2")
    await kv.delete("k1")
    put1, put2, deleted = [await sub.next_msg(timeout=WAIT) for _ in range(3)]
    assert (put1.subject, put1.data) == ("watch.B.k1", b"v1")
    republished(put1, "KV_B", "$KV.B.k1", 1, 0)
    assert put2.data == b"v2"
    republished(put2, "KV_B", "$KV.B.k1", 2, 1)
    assert deleted.data == b""
    assert (deleted.headers or {})["KV-Operation"] == "DEL"
    republished(deleted, "KV_B", "$KV.B.k1", 3, 2)
    info = await js.stream_info("KV_B")
    assert info.config.republish is not None and info.config.republish.dest == "watch.B.>"
