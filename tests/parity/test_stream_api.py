"""The JetStream stream API ($JS.API.INFO, STREAM.*) as nats-server 2.15.1 answers it.

Replies are compared as whole normalized documents: timestamps become
``"<ts>"`` (the zero time stays), server names ``"<server>"``.  Stored sizes
follow the server's formulas: a file-store message takes
``len(subject) + len(headers) + len(data) + 30`` bytes, plus 4 when it has
headers; a memory-store one ``len(subject) + len(headers) + len(data) + 16``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from nats.aio.client import Client
from nats.errors import TimeoutError as NatsTimeoutError

from tests.harness.js import ZERO_TIME, api, connected, create_stream, normalize, request, stored
from tests.harness.streams import EMPTY_STATE, meta
from tests.harness.streams import stream_config as config
from tests.harness.targets import Target

T = "io.nats.jetstream.api.v1."
TS = "<ts>"
LIMITS = {
    "max_memory": -1,
    "max_storage": -1,
    "max_streams": -1,
    "max_consumers": -1,
    "max_ack_pending": -1,
    "memory_max_stream_bytes": -1,
    "storage_max_stream_bytes": -1,
    "max_bytes_required": False,
}
NAME_RULES = "stream name is required and can not contain '.', '*', '>', '\\', '/'"


# -- helpers -----------------------------------------------------------------


def state(
    messages: int, nbytes: int, first_seq: int, last_seq: int, *, first_ts: str = TS, last_ts: str = TS, **extra: Any
) -> dict:
    st = {
        "messages": messages,
        "bytes": nbytes,
        "first_seq": first_seq,
        "first_ts": first_ts,
        "last_seq": last_seq,
        "last_ts": last_ts,
    }
    st.update(extra)
    st["consumer_count"] = 0
    return st


def info_reply(cfg: dict, st: dict, total: int = 0, offset: int = 0, limit: int = 0) -> dict:
    return {
        "type": T + "stream_info_response",
        "total": total,
        "offset": offset,
        "limit": limit,
        "config": cfg,
        "created": TS,
        "state": st,
        "cluster": {"leader": "<server>"},
        "ts": TS,
    }


def error(code: int, err_code: int, description: str) -> dict:
    return {"code": code, "err_code": err_code, "description": description}


def failure(kind: str, code: int, err_code: int, description: str, **extra: Any) -> dict:
    return {"type": T + kind, "error": error(code, err_code, description), **extra}


def invalid_json(kind: str, text: str, **extra: Any) -> dict:
    return failure(kind, 400, 10025, "invalid JSON: " + text, **extra)


INFO_EXTRA = {"total": 0, "offset": 0, "limit": 0}
NOT_FOUND = (404, 10059, "stream not found")
BAD_REQUEST = (400, 10003, "bad request")


async def account_info(nc: Client) -> dict:
    return normalize(await api(nc, "$JS.API.INFO"))


async def stream_info(nc: Client, name: str, body: Any = None) -> dict:
    return normalize(await api(nc, f"$JS.API.STREAM.INFO.{name}", body))


# -- $JS.API.INFO --------------------------------------------------------------


async def test_account_info_on_fresh_server(target: Target) -> None:
    async with connected(target) as nc:
        assert await account_info(nc) == {
            "type": T + "account_info_response",
            "memory": 0,
            "storage": 0,
            "reserved_memory": 0,
            "reserved_storage": 0,
            "streams": 0,
            "consumers": 0,
            "limits": LIMITS,
            "api": {"level": 5, "total": 0, "errors": 0},
        }


async def test_account_info_reports_usage_and_reservations(target: Target) -> None:
    async with connected(target) as nc:
        await create_stream(nc, {"name": "M", "subjects": ["m.>"], "storage": "memory", "max_bytes": 1000})
        await create_stream(nc, {"name": "F", "subjects": ["f.>"], "max_bytes": 5000})
        await create_stream(nc, {"name": "X"})
        for _ in range(2):
            await stored(nc, "m.x", b"v")  # 3 + 1 + 16
            await stored(nc, "f.x", b"vv")  # 3 + 2 + 30
        await api(nc, "$JS.API.STREAM.DELETE.X")
        # requests so far: 3 creates, 1 delete
        assert await account_info(nc) == {
            "type": T + "account_info_response",
            "memory": 40,
            "storage": 70,
            "reserved_memory": 1000,
            "reserved_storage": 5000,
            "streams": 2,
            "consumers": 0,
            "limits": LIMITS,
            "api": {"level": 5, "total": 4, "errors": 0},
        }


async def test_account_info_ignores_its_body(target: Target) -> None:
    async with connected(target) as nc:
        for count, body in enumerate((b"garbage", b'{"bogus": 1}', b"[1]", b"{")):
            assert normalize(await api(nc, "$JS.API.INFO", body)) == {
                "type": T + "account_info_response",
                "memory": 0,
                "storage": 0,
                "reserved_memory": 0,
                "reserved_storage": 0,
                "streams": 0,
                "consumers": 0,
                "limits": LIMITS,
                "api": {"level": 5, "total": count, "errors": 0},
            }


async def test_api_counters(target: Target) -> None:
    """INFO does not count itself; unanswered subjects and successful MSG.GETs are not counted at all."""
    async with connected(target) as nc:
        assert (await account_info(nc))["api"] == {"level": 5, "total": 0, "errors": 0}
        assert (await account_info(nc))["api"] == {"level": 5, "total": 1, "errors": 0}
        await create_stream(nc, {"name": "S"})  # +1
        await stored(nc, "S", b"x")  # publishes are not API requests
        await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "max_msgs": 5})  # +1 error
        await api(nc, "$JS.API.STREAM.INFO.NOPE")  # +1 error
        with pytest.raises(NatsTimeoutError):
            await request(nc, "$JS.API.NOPE", timeout=0.2)  # not counted
        await api(nc, "$JS.API.STREAM.MSG.GET.S", {"seq": 1})  # success: not counted
        await api(nc, "$JS.API.STREAM.MSG.GET.S", {"seq": 9})  # +1 error
        await api(nc, "$JS.API.STREAM.NAMES")  # +1
        assert (await account_info(nc))["api"] == {"level": 5, "total": 7, "errors": 3}


async def test_msg_delete_failures_count_as_successes(target: Target) -> None:
    """A MSG.DELETE that finds nothing replies with an error but is tracked as a successful request."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S"})
        reply = await api(nc, "$JS.API.STREAM.MSG.DELETE.S", {"seq": 1})
        assert "error" in reply
        assert (await account_info(nc))["api"] == {"level": 5, "total": 2, "errors": 0}


@pytest.mark.parametrize(
    "subject, kind, extra",
    [
        ("$JS.API.INFO", "account_info_response", {}),
        ("$JS.API.STREAM.INFO.S", "stream_info_response", INFO_EXTRA),
        ("$JS.API.STREAM.NAMES", "stream_names_response", {"total": 0, "offset": 0, "limit": 0, "streams": None}),
    ],
)
async def test_required_api_level_header(target: Target, subject: str, kind: str, extra: dict) -> None:
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S"})
        reply = await api(nc, subject, headers={"Nats-Required-Api-Level": "99"})
        assert reply == failure(kind, 412, 10185, "JetStream minimum api level required", **extra)
        reply = await api(nc, subject, headers={"Nats-Required-Api-Level": "5"})
        assert "error" not in reply


# -- unknown subjects ------------------------------------------------------------


@pytest.mark.parametrize(
    "subject",
    [
        "$JS.API.FOO",
        "$JS.API.STREAM.FOO",
        "$JS.API.STREAM.INFO",
        "$JS.API.STREAM.INFO.A.B",
        "$JS.API.STREAM.CREATE.A.B",
        "$JS.API.STREAM.MSG.GET",
    ],
)
async def test_unknown_api_subject_gets_no_reply(target: Target, subject: str) -> None:
    """No error reply and no 503: the request just times out."""
    async with connected(target) as nc:
        with pytest.raises(NatsTimeoutError):
            await request(nc, subject, b'{"name":"A"}', timeout=0.2)


# -- STREAM.CREATE -----------------------------------------------------------------


async def test_create_reply_with_default_config(target: Target) -> None:
    async with connected(target) as nc:
        reply = await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"]})
        assert normalize(reply) == {
            "type": T + "stream_create_response",
            "config": config("S", ["s.>"]),
            "created": TS,
            "state": EMPTY_STATE,
            "ts": TS,
            "did_create": True,
        }


async def test_create_reply_bytes(target: Target) -> None:
    """Go's encoder escapes '>' as \\u003e; field order follows the Go structs."""
    async with connected(target) as nc:
        msg = await request(nc, "$JS.API.STREAM.CREATE.S", b'{"name":"S","subjects":["s.>"]}')
        assert b'"subjects":["s.\\u003e"]' in msg.data
        assert msg.headers is None
        reply = json.loads(msg.data)
        assert list(reply) == ["type", "config", "created", "state", "ts", "did_create"]
        assert list(reply["config"]) == list(config("S"))
        assert list(reply["config"]["metadata"]) == ["_nats.level", "_nats.req.level", "_nats.ver"]
        assert list(reply["state"]) == list(EMPTY_STATE)
        assert reply["created"].endswith("Z") and reply["ts"].endswith("Z")


async def test_create_subjects_default_to_name(target: Target) -> None:
    async with connected(target) as nc:
        reply = await api(nc, "$JS.API.STREAM.CREATE.ORDERS", {"name": "ORDERS"})
        assert normalize(reply)["config"] == config("ORDERS")


async def test_create_echoes_explicit_settings(target: Target) -> None:
    """duplicate_window defaults to max_age when max_age is shorter than 2 minutes; metadata is merged."""
    async with connected(target) as nc:
        body = {
            "name": "O",
            "subjects": ["o"],
            "description": "hi",
            "max_age": 1_000_000_000,
            "max_msgs": 5,
            "discard": "new",
            "storage": "memory",
            "allow_direct": True,
            "allow_rollup_hdrs": True,
            "deny_delete": True,
            "metadata": {"k": "v"},
        }
        reply = await api(nc, "$JS.API.STREAM.CREATE.O", body)
        assert normalize(reply)["config"] == config(
            "O",
            ["o"],
            description="hi",
            max_age=1_000_000_000,
            max_msgs=5,
            discard="new",
            storage="memory",
            allow_direct=True,
            allow_rollup_hdrs=True,
            deny_delete=True,
            duplicate_window=1_000_000_000,
            metadata=meta(k="v"),
        )
        assert list(reply["config"])[:3] == ["name", "description", "subjects"]


async def test_create_again_with_same_config(target: Target) -> None:
    """Re-creating an identical stream succeeds and still says did_create: true."""
    async with connected(target) as nc:
        first = await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"]})
        await stored(nc, "s.1", b"hello")
        again = await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"]})
        assert again["created"] == first["created"]
        assert normalize(again) == {
            "type": T + "stream_create_response",
            "config": config("S", ["s.>"]),
            "created": TS,
            "state": state(1, 38, 1, 1, num_subjects=1),
            "ts": TS,
            "did_create": True,
        }


async def test_create_again_with_defaults_spelled_out(target: Target) -> None:
    """Explicit defaults (replicas 0, the default window) and a caller's _nats.* metadata compare equal."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S", "storage": "memory"})
        for extra in (
            {"num_replicas": 0},
            {"duplicate_window": 120_000_000_000},
            {"metadata": {"_nats.ver": "1"}},
            {"max_msgs": -1},
        ):
            reply = await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "storage": "memory", **extra})
            assert normalize(reply)["config"] == config("S", storage="memory"), extra


async def test_create_again_with_different_config(target: Target) -> None:
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S", "subjects": ["s.>"]})
        reply = await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["t.>"]})
        assert reply == failure(
            "stream_create_response", 400, 10058, "stream name already in use with a different configuration"
        )


@pytest.mark.parametrize("body", [b'{"name":"B"}', b"", b"{}", b"null", b'{"name":"a"}'])
async def test_create_name_mismatch(target: Target, body: bytes) -> None:
    """A missing body, {} and null all reach the subject/body name comparison."""
    async with connected(target) as nc:
        reply = await api(nc, "$JS.API.STREAM.CREATE.A", body)
        assert reply == failure("stream_create_response", 400, 10056, "stream name in subject does not match request")


@pytest.mark.parametrize(
    "body, text",
    [
        (b"hello", "invalid character 'h' looking for beginning of value at offset 1"),
        (b'{"name":"A",}', "invalid character '}' looking for beginning of object key string at offset 13"),
        (b'{"name":"A"', "unexpected EOF"),
        (b'{"name":"A"} x', "invalid character 'x' looking for beginning of value at offset 14"),
        (b'{"name":"A","bogus":1}', 'json: unknown field "bogus"'),
        (b'{"name":"A"} {"bogus":1}', 'json: unknown field "bogus"'),
        (
            b'{"name":"A","max_msgs":"x"}',
            "json: cannot unmarshal string into Go struct field StreamConfigRequest.max_msgs of type int64",
        ),
        (b'{"name":5}', "json: cannot unmarshal number into Go struct field StreamConfigRequest.name of type string"),
        (
            b'{"name":"A","subjects":"a"}',
            "json: cannot unmarshal string into Go struct field StreamConfigRequest.subjects of type []string",
        ),
        (
            b'{"name":"A","max_age":"1s"}',
            "json: cannot unmarshal string into Go struct field StreamConfigRequest.max_age of type time.Duration",
        ),
        (
            b'{"name":"A","max_msgs":1.5}',
            "json: cannot unmarshal number 1.5 into Go struct field StreamConfigRequest.max_msgs of type int64",
        ),
        (
            b'{"name":"A","max_msgs":99999999999999999999}',
            "json: cannot unmarshal number 99999999999999999999 into Go struct field StreamConfigRequest.max_msgs of type int64",
        ),
        (b"[1]", "json: cannot unmarshal array into Go value of type server.StreamConfigRequest"),
        (b'"x"', "json: cannot unmarshal string into Go value of type server.StreamConfigRequest"),
        (b'{"name":"A","storage":"disk"}', 'can not unmarshal "\\"disk\\""'),
        (b'{"name":"A","retention":"bogus"}', 'can not unmarshal "\\"bogus\\""'),
    ],
)
async def test_create_bad_json(target: Target, body: bytes, text: str) -> None:
    async with connected(target) as nc:
        reply = await api(nc, "$JS.API.STREAM.CREATE.A", body)
        assert reply == invalid_json("stream_create_response", text)


@pytest.mark.parametrize(
    "body", [b'{"name":"A"} {"name":"A"}', b'{"NAME":"A"}', b'{"name":"A","Name":"A"}', b' \n{"name":"A"}\n ']
)
async def test_create_json_decoder_leniency(target: Target, body: bytes) -> None:
    """Go's decoder: a stream of several values is read in full, and keys match case-insensitively."""
    async with connected(target) as nc:
        reply = await api(nc, "$JS.API.STREAM.CREATE.A", body)
        assert normalize(reply)["config"] == config("A")


@pytest.mark.parametrize(
    "name, err",
    [
        ("a/b", (400, 10128, "Stream name can not contain path separators")),
        ("a\\b", (400, 10128, "Stream name can not contain path separators")),
        ("a*", (500, 10052, NAME_RULES)),
        ("*", (500, 10052, NAME_RULES)),
        ("a>", (500, 10052, NAME_RULES)),
        ("x" * 256, (500, 10052, "stream name is too long, maximum allowed is 255")),
    ],
)
async def test_create_invalid_name(target: Target, name: str, err: tuple) -> None:
    async with connected(target) as nc:
        reply = await api(nc, f"$JS.API.STREAM.CREATE.{name}", {"name": name})
        assert reply == failure("stream_create_response", *err)


@pytest.mark.parametrize("name", ["x" * 255, "ä", "$X", "a-b_c"])
async def test_create_unusual_valid_names(target: Target, name: str) -> None:
    async with connected(target) as nc:
        reply = await api(nc, f"$JS.API.STREAM.CREATE.{name}", {"name": name})
        assert normalize(reply)["config"] == config(name)
        names = await api(nc, "$JS.API.STREAM.NAMES")
        assert names["streams"] == [name]


@pytest.mark.parametrize(
    "body, err",
    [
        ({"name": "O", "subjects": ["s.a"]}, (400, 10065, "subjects overlap with an existing stream")),
        ({"name": "O", "subjects": ["a..b"]}, (500, 10052, "invalid subject")),
        ({"name": "O", "sealed": True}, (500, 10052, "stream configuration for create can not be sealed")),
        ({"name": "O", "mirror_direct": True}, (500, 10052, "stream has no mirror but does have mirror direct")),
    ],
)
async def test_create_refused_config(target: Target, body: dict, err: tuple) -> None:
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S", "subjects": ["s.>"]})
        reply = await api(nc, "$JS.API.STREAM.CREATE.O", body)
        assert reply == failure("stream_create_response", *err)


# -- STREAM.UPDATE -----------------------------------------------------------------


async def test_update_reply(target: Target) -> None:
    """The update reply has no did_create and no cluster field; created is unchanged."""
    async with connected(target) as nc:
        created = await create_stream(nc, {"name": "U", "subjects": ["u.>"]})
        await stored(nc, "u.1", b"hello")
        reply = await api(nc, "$JS.API.STREAM.UPDATE.U", {"name": "U", "subjects": ["u.>", "v.>"], "max_msgs": 10})
        assert reply["created"] == created["created"]
        assert list(reply) == ["type", "config", "created", "state", "ts"]
        assert normalize(reply) == {
            "type": T + "stream_update_response",
            "config": config("U", ["u.>", "v.>"], max_msgs=10),
            "created": TS,
            "state": state(1, 38, 1, 1, num_subjects=1),
            "ts": TS,
        }
        assert (await stream_info(nc, "U"))["config"] == config("U", ["u.>", "v.>"], max_msgs=10)


async def test_update_unknown_stream(target: Target) -> None:
    async with connected(target) as nc:
        reply = await api(nc, "$JS.API.STREAM.UPDATE.NOPE", {"name": "NOPE"})
        assert reply == failure("stream_update_response", *NOT_FOUND)


@pytest.mark.parametrize(
    "body, err",
    [
        ({"name": "V", "subjects": ["u.>"]}, (400, 10056, "stream name in subject does not match request")),
        (b"", (500, 10052, NAME_RULES)),
        (b"{}", (500, 10052, NAME_RULES)),
        (
            {"name": "U", "subjects": ["u.>"], "storage": "memory"},
            (500, 10052, "stream configuration update can not change storage type"),
        ),
        (
            {"name": "U", "subjects": ["u.>"], "retention": "workqueue"},
            (500, 10052, "stream configuration update can not change retention policy to/from workqueue"),
        ),
        ({"name": "U", "bogus": 1}, (400, 10025, 'invalid JSON: json: unknown field "bogus"')),
    ],
)
async def test_update_errors(target: Target, body: Any, err: tuple) -> None:
    """Unlike create, update validates the config before comparing names: an empty body is a config error."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "U", "subjects": ["u.>"]})
        reply = await api(nc, "$JS.API.STREAM.UPDATE.U", body)
        assert reply == failure("stream_update_response", *err)


async def test_update_seals_stream(target: Target) -> None:
    """Sealing forces discard "new", deny_delete and deny_purge; sealed streams refuse purge and deletes."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S"})
        await stored(nc, "S", b"v")
        reply = await api(nc, "$JS.API.STREAM.UPDATE.S", {"name": "S", "sealed": True})
        assert normalize(reply)["config"] == config("S", sealed=True, discard="new", deny_delete=True, deny_purge=True)
        sealed = (400, 10109, "invalid operation on sealed stream")
        assert await api(nc, "$JS.API.STREAM.MSG.DELETE.S", {"seq": 1}) == failure(
            "stream_msg_delete_response", *sealed
        )
        assert await api(nc, "$JS.API.STREAM.PURGE.S") == failure("stream_purge_response", *sealed, purged=0)
        reply = await api(nc, "$JS.API.STREAM.UPDATE.S", {"name": "S"})
        assert reply == failure(
            "stream_update_response", 500, 10052, "stream configuration update can not unseal a sealed stream"
        )
        assert await api(nc, "$JS.API.STREAM.DELETE.S") == {"type": T + "stream_delete_response", "success": True}


# -- STREAM.DELETE -----------------------------------------------------------------


async def test_delete_stream(target: Target) -> None:
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S"})
        assert await api(nc, "$JS.API.STREAM.DELETE.S") == {"type": T + "stream_delete_response", "success": True}
        assert await api(nc, "$JS.API.STREAM.DELETE.S") == failure("stream_delete_response", *NOT_FOUND)
        assert await stream_info(nc, "S") == failure("stream_info_response", *NOT_FOUND, **INFO_EXTRA)
        assert (await account_info(nc))["streams"] == 0


@pytest.mark.parametrize("body", [b"{}", b" { } ", b"{\n}"])
async def test_delete_accepts_empty_object(target: Target, body: bytes) -> None:
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S"})
        assert await api(nc, "$JS.API.STREAM.DELETE.S", body) == {"type": T + "stream_delete_response", "success": True}


@pytest.mark.parametrize("body", [b'{"x":1}', b"hello", b"null", b"[]", b"{"])
async def test_delete_requires_empty_body(target: Target, body: bytes) -> None:
    """Checked before the stream is looked up: unknown streams get the same error."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S"})
        expected = failure("stream_delete_response", 400, 10038, "expected an empty request payload")
        assert await api(nc, "$JS.API.STREAM.DELETE.S", body) == expected
        assert await api(nc, "$JS.API.STREAM.DELETE.NOPE", body) == expected
        assert (await stream_info(nc, "S"))["config"]["name"] == "S"


# -- STREAM.INFO -------------------------------------------------------------------


async def test_info_of_empty_stream(target: Target) -> None:
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S", "subjects": ["s.>"]})
        reply = await api(nc, "$JS.API.STREAM.INFO.S")
        assert list(reply) == ["type", "total", "offset", "limit", "config", "created", "state", "cluster", "ts"]
        assert normalize(reply) == info_reply(config("S", ["s.>"]), EMPTY_STATE)


async def test_info_state_after_publishing(target: Target) -> None:
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S", "subjects": ["s.>"]})
        await stored(nc, "s.a", b"1")  # 3 + 1 + 30
        await stored(nc, "s.b", b"22", headers={"X-A": "1"})  # 3 + (4 + 20) + 2 + 30
        await stored(nc, "s.a", b"")  # 3 + 0 + 30
        assert await stream_info(nc, "S") == info_reply(
            config("S", ["s.>"]), state(3, 34 + 59 + 33, 1, 3, num_subjects=2)
        )


async def test_info_memory_stream_sizes(target: Target) -> None:
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S", "subjects": ["s.>"], "storage": "memory"})
        await stored(nc, "s.a", b"1")  # 3 + 1 + 16
        await stored(nc, "s.b", b"22", headers={"X-A": "1"})  # 3 + 20 + 2 + 16
        cfg = config("S", ["s.>"], storage="memory")
        assert await stream_info(nc, "S") == info_reply(cfg, state(2, 20 + 41, 1, 2, num_subjects=2))


async def _stream_with_gap(nc: Client) -> dict:
    """Stream I: i.a(1) i.b(2, deleted) i.a(3) i.c.d(4), in memory: 67 bytes left."""
    await create_stream(nc, {"name": "I", "subjects": ["i.>"], "storage": "memory"})
    for subject, data in (("i.a", b"1"), ("i.b", b"22"), ("i.a", b"333"), ("i.c.d", b"4444")):
        await stored(nc, subject, data)
    assert await api(nc, "$JS.API.STREAM.MSG.DELETE.I", {"seq": 2}) == {
        "type": T + "stream_msg_delete_response",
        "success": True,
    }
    return config("I", ["i.>"], storage="memory")


async def test_info_deleted_details(target: Target) -> None:
    """num_deleted is always there; the deleted list only on request."""
    async with connected(target) as nc:
        cfg = await _stream_with_gap(nc)
        plain = state(3, 67, 1, 4, num_subjects=2, num_deleted=1)
        assert await stream_info(nc, "I") == info_reply(cfg, plain)
        assert await stream_info(nc, "I", {"deleted_details": False}) == info_reply(cfg, plain)
        detailed = state(3, 67, 1, 4, num_subjects=2, num_deleted=1, deleted=[2])
        reply = await api(nc, "$JS.API.STREAM.INFO.I", {"deleted_details": True})
        assert normalize(reply) == info_reply(cfg, detailed)
        assert list(reply["state"]) == [
            "messages",
            "bytes",
            "first_seq",
            "first_ts",
            "last_seq",
            "last_ts",
            "num_subjects",
            "num_deleted",
            "deleted",
            "consumer_count",
        ]


@pytest.mark.parametrize(
    "subjects_filter, subjects",
    [
        (">", {"i.a": 2, "i.c.d": 1}),
        ("i.a", {"i.a": 2}),
        ("i.*", {"i.a": 2}),
        ("i.c.>", {"i.c.d": 1}),
        ("i.b", None),
        ("x", None),
    ],
)
async def test_info_subjects_filter(target: Target, subjects_filter: str, subjects: dict | None) -> None:
    """total/limit are set only when some subject matched (limit 100000); no match leaves them 0."""
    async with connected(target) as nc:
        cfg = await _stream_with_gap(nc)
        reply = await api(nc, "$JS.API.STREAM.INFO.I", {"subjects_filter": subjects_filter, "deleted_details": True})
        if subjects is None:
            expected = info_reply(cfg, state(3, 67, 1, 4, num_subjects=2, num_deleted=1, deleted=[2]))
        else:
            st = state(3, 67, 1, 4, num_subjects=2, subjects=subjects, num_deleted=1, deleted=[2])
            expected = info_reply(cfg, st, total=len(subjects), limit=100_000)
            assert list(reply["state"])[6:8] == ["num_subjects", "subjects"]
        assert normalize(reply) == expected


@pytest.mark.parametrize(
    "offset, reported, subjects",
    [
        (0, 0, {"s.a": 1, "s.b": 1, "s.c": 1}),
        (1, 1, {"s.b": 1, "s.c": 1}),
        (2, 2, {"s.c": 1}),
        (3, 3, None),
        (7, 7, None),
        (-4, 0, {"s.a": 1, "s.b": 1, "s.c": 1}),
    ],
)
async def test_info_subjects_paging(target: Target, offset: int, reported: int, subjects: dict | None) -> None:
    """Subjects are paged in sorted order; an offset past the end is echoed back as given, with no subjects."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S", "subjects": ["s.*"]})
        for subject in ("s.c", "s.a", "s.b"):
            await stored(nc, subject, b"")
        reply = await stream_info(nc, "S", {"subjects_filter": "s.*", "offset": offset})
        extra = {"subjects": subjects} if subjects else {}
        assert reply == info_reply(
            config("S", ["s.*"]), state(3, 99, 1, 3, num_subjects=3, **extra), total=3, offset=reported, limit=100_000
        )


@pytest.mark.parametrize("body", [{"offset": 5}, b"hello", b"null", b"5", {}])
async def test_info_body_without_effect(target: Target, body: Any) -> None:
    """Bodies that are not a JSON object or array are ignored; offset without a filter is not echoed."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S"})
        assert await stream_info(nc, "S", body) == info_reply(config("S"), EMPTY_STATE)


@pytest.mark.parametrize(
    "body, text",
    [
        (b'{"bogus":1}', 'json: unknown field "bogus"'),
        (
            b'{"deleted_details":"x"}',
            "json: cannot unmarshal string into Go struct field JSApiStreamInfoRequest.deleted_details of type bool",
        ),
        (
            b'{"offset":"1"}',
            "json: cannot unmarshal string into Go struct field JSApiStreamInfoRequest.offset of type int",
        ),
        (b"[1]", "json: cannot unmarshal array into Go value of type server.JSApiStreamInfoRequest"),
        (b' {"subjects_filter":', "unexpected EOF"),
    ],
)
async def test_info_bad_json(target: Target, body: bytes, text: str) -> None:
    """JSON errors win over stream lookup: the unknown stream gets the same reply."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S"})
        expected = invalid_json("stream_info_response", text, **INFO_EXTRA)
        assert await api(nc, "$JS.API.STREAM.INFO.S", body) == expected
        assert await api(nc, "$JS.API.STREAM.INFO.NOPE", body) == expected


async def test_info_unknown_stream(target: Target) -> None:
    async with connected(target) as nc:
        reply = await api(nc, "$JS.API.STREAM.INFO.NOPE")
        assert list(reply) == ["type", "error", "total", "offset", "limit"]
        assert reply == failure("stream_info_response", *NOT_FOUND, **INFO_EXTRA)


# -- STREAM.NAMES and STREAM.LIST ---------------------------------------------------


async def test_names_and_list_with_no_streams(target: Target) -> None:
    """NAMES says streams: null, LIST says streams: []."""
    async with connected(target) as nc:
        assert await api(nc, "$JS.API.STREAM.NAMES") == {
            "type": T + "stream_names_response",
            "total": 0,
            "offset": 0,
            "limit": 1024,
            "streams": None,
        }
        assert await api(nc, "$JS.API.STREAM.LIST") == {
            "type": T + "stream_list_response",
            "total": 0,
            "offset": 0,
            "limit": 256,
            "streams": [],
        }


async def _three_streams(nc: Client) -> None:
    await create_stream(nc, {"name": "B", "subjects": ["b.>"]})
    await create_stream(nc, {"name": "A", "subjects": ["a.*", "x"]})
    await create_stream(nc, {"name": "C"})


def names_reply(streams: list[str] | None, total: int = 3, offset: int = 0) -> dict:
    return {"type": T + "stream_names_response", "total": total, "offset": offset, "limit": 1024, "streams": streams}


@pytest.mark.parametrize(
    "body, expected",
    [
        (None, names_reply(["A", "B", "C"])),
        (b"{}", names_reply(["A", "B", "C"])),
        (b"hello", names_reply(["A", "B", "C"])),
        ({"offset": 1}, names_reply(["B", "C"], offset=1)),
        ({"offset": 3}, names_reply(None, offset=3)),
        ({"offset": 10}, names_reply(None, offset=3)),
        ({"offset": -5}, names_reply(["A", "B", "C"])),
        ({"subject": "a.1"}, names_reply(["A"], total=1)),
        ({"subject": "b.x.y"}, names_reply(["B"], total=1)),
        ({"subject": "C"}, names_reply(["C"], total=1)),
        ({"subject": "*"}, names_reply(["A", "C"], total=2)),
        ({"subject": ">"}, names_reply(["A", "B", "C"])),
        ({"subject": "nomatch"}, names_reply(None, total=0)),
        ({"subject": ">", "offset": 2}, names_reply(["C"], offset=2)),
        ({"subject": "", "offset": 0}, names_reply(["A", "B", "C"])),
    ],
)
async def test_names(target: Target, body: Any, expected: dict) -> None:
    """Sorted names; an offset past the end is clamped to the total."""
    async with connected(target) as nc:
        await _three_streams(nc)
        assert await api(nc, "$JS.API.STREAM.NAMES", body) == expected


@pytest.mark.parametrize("subject", ["$JS.API.STREAM.NAMES", "$JS.API.STREAM.LIST"])
@pytest.mark.parametrize(
    "body, text",
    [
        (b'{"bogus":1}', 'json: unknown field "bogus"'),
        (b'{"offset":"1"}', "json: cannot unmarshal string into Go struct field {req}.offset of type int"),
        (b"[1]", "json: cannot unmarshal array into Go value of type server.{req}"),
        (b'{"subject":', "unexpected EOF"),
    ],
)
async def test_names_and_list_bad_json(target: Target, subject: str, body: bytes, text: str) -> None:
    """Error replies carry total/offset/limit all 0 and the empty streams value (null for NAMES, [] for LIST)."""
    names = subject.endswith("NAMES")
    kind = "stream_names_response" if names else "stream_list_response"
    req = "JSApiStreamNamesRequest" if names else "JSApiStreamListRequest"
    async with connected(target) as nc:
        await _three_streams(nc)
        reply = await api(nc, subject, body)
        assert reply == invalid_json(
            kind, text.format(req=req), total=0, offset=0, limit=0, streams=None if names else []
        )
        assert list(reply) == ["type", "error", "total", "offset", "limit", "streams"]


async def test_list_reply(target: Target) -> None:
    """LIST reports the stored metadata: only _nats.req.level, without _nats.level/_nats.ver; no cluster field."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S", "subjects": ["s.>"]})
        await stored(nc, "s.1", b"hello")
        reply = await api(nc, "$JS.API.STREAM.LIST")
        assert list(reply) == ["type", "total", "offset", "limit", "streams"]
        assert list(reply["streams"][0]) == ["config", "created", "state", "ts"]
        assert normalize(reply) == {
            "type": T + "stream_list_response",
            "total": 1,
            "offset": 0,
            "limit": 256,
            "streams": [
                {
                    "config": config("S", ["s.>"], metadata={"_nats.req.level": "0"}),
                    "created": TS,
                    "state": state(1, 38, 1, 1, num_subjects=1),
                    "ts": TS,
                }
            ],
        }


@pytest.mark.parametrize(
    "body, names, total, offset",
    [
        (None, ["A", "B", "C"], 3, 0),
        ({"offset": 2}, ["C"], 3, 2),
        ({"offset": 9}, [], 3, 3),
        ({"subject": "*"}, ["A", "C"], 2, 0),
        ({"subject": "nomatch"}, [], 0, 0),
        (b"hello", ["A", "B", "C"], 3, 0),
    ],
)
async def test_list_paging_and_filter(target: Target, body: Any, names: list[str], total: int, offset: int) -> None:
    async with connected(target) as nc:
        await _three_streams(nc)
        reply = await api(nc, "$JS.API.STREAM.LIST", body)
        assert [s["config"]["name"] for s in reply["streams"]] == names
        assert {k: v for k, v in reply.items() if k != "streams"} == {
            "type": T + "stream_list_response",
            "total": total,
            "offset": offset,
            "limit": 256,
        }


# -- STREAM.PURGE ------------------------------------------------------------------


def purged(n: int) -> dict:
    return {"type": T + "stream_purge_response", "success": True, "purged": n}


async def test_purge_whole_stream(target: Target) -> None:
    """After a purge first_seq is last_seq + 1, first_ts is the zero time, last_ts is kept."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S", "subjects": ["s.>"]})
        for _ in range(3):
            await stored(nc, "s.x", b"v")
        reply = await api(nc, "$JS.API.STREAM.PURGE.S")
        assert list(reply) == ["type", "success", "purged"]
        assert reply == purged(3)
        assert await stream_info(nc, "S") == info_reply(config("S", ["s.>"]), state(0, 0, 4, 3, first_ts=ZERO_TIME))
        assert await api(nc, "$JS.API.STREAM.PURGE.S") == purged(0)
        assert await stored(nc, "s.x", b"v") == 4


async def test_purge_with_filter_keep_and_seq(target: Target) -> None:
    """seq purges below (not including) it; filter combines with seq and keep."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "P", "subjects": ["p.>"]})
        for subject in ("p.a", "p.b", "p.a", "p.b", "p.a", "p.c"):
            await stored(nc, subject, b"v")
        assert await api(nc, "$JS.API.STREAM.PURGE.P", {"filter": "p.a", "keep": 1}) == purged(2)  # 1, 3
        assert await api(nc, "$JS.API.STREAM.PURGE.P", {"seq": 3}) == purged(1)  # 2
        info = await stream_info(nc, "P", {"deleted_details": True})
        assert info["state"] == state(3, 102, 4, 6, num_subjects=3)
        assert await api(nc, "$JS.API.STREAM.PURGE.P", {"filter": "p.*", "seq": 5}) == purged(1)  # 4
        assert await api(nc, "$JS.API.STREAM.PURGE.P", {"filter": "p.zzz"}) == purged(0)
        assert await api(nc, "$JS.API.STREAM.PURGE.P", {"filter": "bad..subject"}) == purged(0)
        assert await api(nc, "$JS.API.STREAM.PURGE.P", {"keep": 10}) == purged(0)
        assert await api(nc, "$JS.API.STREAM.PURGE.P", {"keep": 1}) == purged(1)  # 5
        assert (await stream_info(nc, "P"))["state"] == state(1, 34, 6, 6, num_subjects=1)


async def test_purge_keep_with_filter_in_the_middle(target: Target) -> None:
    async with connected(target) as nc:
        await create_stream(nc, {"name": "P", "subjects": ["p.>"], "storage": "memory"})
        for subject in ("p.a", "p.b", "p.a", "p.b", "p.a"):
            await stored(nc, subject, b"v")
        assert await api(nc, "$JS.API.STREAM.PURGE.P", {"filter": "p.b", "keep": 1}) == purged(1)  # 2
        info = await stream_info(nc, "P", {"deleted_details": True, "subjects_filter": ">"})
        assert info["state"] == state(
            4, 80, 1, 5, num_subjects=2, subjects={"p.a": 3, "p.b": 1}, num_deleted=1, deleted=[2]
        )


@pytest.mark.parametrize("storage", ["file", "memory"])
async def test_purge_seq_past_the_end(target: Target, storage: str) -> None:
    """Purging up to seq 100 of 3 messages moves first_seq to 100 and last_seq to 99."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "Q", "storage": storage})
        for _ in range(3):
            await stored(nc, "Q", b"v")
        assert await api(nc, "$JS.API.STREAM.PURGE.Q", {"seq": 100}) == purged(3)
        assert (await stream_info(nc, "Q"))["state"] == state(0, 0, 100, 99, first_ts=ZERO_TIME)
        assert await stored(nc, "Q", b"v") == 100


async def test_purge_seq_and_keep_together(target: Target) -> None:
    """A bad request, checked before the stream lookup."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S"})
        await stored(nc, "S", b"v")
        expected = failure("stream_purge_response", *BAD_REQUEST, purged=0)
        assert list(await api(nc, "$JS.API.STREAM.PURGE.S", {"seq": 3, "keep": 1})) == ["type", "error", "purged"]
        assert await api(nc, "$JS.API.STREAM.PURGE.S", {"seq": 3, "keep": 1}) == expected
        assert await api(nc, "$JS.API.STREAM.PURGE.NOPE", {"seq": 3, "keep": 1}) == expected
        assert (await stream_info(nc, "S"))["state"]["messages"] == 1


@pytest.mark.parametrize("body", [b"hello", b"null", b"7", b"", b"{}", b'{"seq":0,"keep":0}'])
async def test_purge_bodies_meaning_everything(target: Target, body: bytes) -> None:
    """A body that is not a JSON object (even garbage) means a full purge."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S"})
        await stored(nc, "S", b"v")
        assert await api(nc, "$JS.API.STREAM.PURGE.S", body) == purged(1)


@pytest.mark.parametrize(
    "body, text",
    [
        (b'{"bogus":1}', 'json: unknown field "bogus"'),
        (
            b'{"seq":-1}',
            "json: cannot unmarshal number -1 into Go struct field JSApiStreamPurgeRequest.seq of type uint64",
        ),
        (
            b'{"filter":5}',
            "json: cannot unmarshal number into Go struct field JSApiStreamPurgeRequest.filter of type string",
        ),
        (b'{"keep":1,}', "invalid character '}' looking for beginning of object key string at offset 11"),
    ],
)
async def test_purge_bad_json(target: Target, body: bytes, text: str) -> None:
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S"})
        assert await api(nc, "$JS.API.STREAM.PURGE.S", body) == invalid_json("stream_purge_response", text, purged=0)


async def test_purge_unknown_stream(target: Target) -> None:
    async with connected(target) as nc:
        assert await api(nc, "$JS.API.STREAM.PURGE.NOPE") == failure("stream_purge_response", *NOT_FOUND, purged=0)
        assert await api(nc, "$JS.API.STREAM.PURGE.NOPE", {"keep": 1}) == failure(
            "stream_purge_response", *NOT_FOUND, purged=0
        )


async def test_purge_denied(target: Target) -> None:
    async with connected(target) as nc:
        await create_stream(nc, {"name": "S", "deny_purge": True})
        await stored(nc, "S", b"v")
        assert await api(nc, "$JS.API.STREAM.PURGE.S") == failure(
            "stream_purge_response", 500, 10110, "stream purge not permitted", purged=0
        )
        assert await api(nc, "$JS.API.STREAM.PURGE.S", {"seq": 1, "keep": 1}) == failure(
            "stream_purge_response", *BAD_REQUEST, purged=0
        )


# -- STREAM.MSG.GET ------------------------------------------------------------------


def got(subject: str, seq: int, data: bytes = b"", hdrs: bytes = b"") -> dict:
    message: dict[str, Any] = {"subject": subject, "seq": seq}
    if hdrs:
        message["hdrs"] = base64.b64encode(hdrs).decode()
    if data:
        message["data"] = base64.b64encode(data).decode()
    message["time"] = TS
    return {"type": T + "stream_msg_get_response", "message": message}


HDRS = b"NATS/1.0\r\nX-A: 1\r\n\r\n"


async def _get_stream(nc: Client, storage: str = "file") -> None:
    """G: g.a "one" (1), g.b headers only (2), g.a 00ff (3), g.c.d "x" (4)."""
    await create_stream(nc, {"name": "G", "subjects": ["g.>"], "storage": storage})
    await stored(nc, "g.a", b"one")
    await stored(nc, "g.b", b"", headers={"X-A": "1"})
    await stored(nc, "g.a", b"\x00\xff")
    await stored(nc, "g.c.d", b"x")


@pytest.mark.parametrize("storage", ["file", "memory"])
async def test_msg_get_by_seq(target: Target, storage: str) -> None:
    async with connected(target) as nc:
        await _get_stream(nc, storage)
        reply = await api(nc, "$JS.API.STREAM.MSG.GET.G", {"seq": 1})
        assert list(reply["message"]) == ["subject", "seq", "data", "time"]
        assert normalize(reply) == got("g.a", 1, b"one")
        assert reply["message"]["time"].endswith("Z")
        assert normalize(await api(nc, "$JS.API.STREAM.MSG.GET.G", {"seq": 3})) == got("g.a", 3, b"\x00\xff")


async def test_msg_get_headers(target: Target) -> None:
    """Headers come as base64 "hdrs" before "data"; empty data leaves "data" out; no_hdr drops the headers."""
    async with connected(target) as nc:
        await _get_stream(nc)
        reply = await api(nc, "$JS.API.STREAM.MSG.GET.G", {"seq": 2})
        assert normalize(reply) == got("g.b", 2, hdrs=HDRS)
        assert reply["message"]["hdrs"] == "TkFUUy8xLjANClgtQTogMQ0KDQo="
        assert normalize(await api(nc, "$JS.API.STREAM.MSG.GET.G", {"seq": 2, "no_hdr": True})) == got("g.b", 2)
        await stored(nc, "g.h", b"body", headers={"X-A": "1"})
        reply = await api(nc, "$JS.API.STREAM.MSG.GET.G", {"seq": 5})
        assert list(reply["message"]) == ["subject", "seq", "hdrs", "data", "time"]
        assert normalize(reply) == got("g.h", 5, b"body", HDRS)


@pytest.mark.parametrize(
    "body, subject, seq",
    [
        ({"last_by_subj": "g.a"}, "g.a", 3),
        ({"last_by_subj": "g.*"}, "g.a", 3),
        ({"last_by_subj": "g.>"}, "g.c.d", 4),
        ({"last_by_subj": "g.b"}, "g.b", 2),
        ({"next_by_subj": "g.a"}, "g.a", 1),
        ({"next_by_subj": "g.a", "seq": 2}, "g.a", 3),
        ({"next_by_subj": "g.>", "seq": 2}, "g.b", 2),
        ({"next_by_subj": "g.c.*"}, "g.c.d", 4),
        ({"start_time": "2020-01-01T00:00:00Z"}, "g.a", 1),
    ],
)
async def test_msg_get_by_subject(target: Target, body: dict, subject: str, seq: int) -> None:
    async with connected(target) as nc:
        await _get_stream(nc)
        reply = normalize(await api(nc, "$JS.API.STREAM.MSG.GET.G", body))
        assert reply["type"] == T + "stream_msg_get_response"
        assert (reply["message"]["subject"], reply["message"]["seq"]) == (subject, seq)


@pytest.mark.parametrize(
    "body",
    [
        {"seq": 99},
        {"seq": 5},
        {"last_by_subj": "zz"},
        {"next_by_subj": "g.b", "seq": 3},
        {"next_by_subj": "g.a", "seq": 4},
    ],
)
async def test_msg_get_not_found(target: Target, body: dict) -> None:
    async with connected(target) as nc:
        await _get_stream(nc)
        reply = await api(nc, "$JS.API.STREAM.MSG.GET.G", body)
        assert reply == failure("stream_msg_get_response", 404, 10037, "no message found")


async def test_msg_get_deleted_message(target: Target) -> None:
    async with connected(target) as nc:
        await _get_stream(nc)
        await api(nc, "$JS.API.STREAM.MSG.DELETE.G", {"seq": 1})
        assert await api(nc, "$JS.API.STREAM.MSG.GET.G", {"seq": 1}) == failure(
            "stream_msg_get_response", 404, 10037, "no message found"
        )
        assert normalize(await api(nc, "$JS.API.STREAM.MSG.GET.G", {"next_by_subj": "g.a"})) == got(
            "g.a", 3, b"\x00\xff"
        )


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{}",
        {"seq": 0},
        {"seq": 1, "batch": 2},
        {"seq": 1, "max_bytes": 2},
        {"next_by_subj": "g.a", "batch": 1},
        {"seq": 1, "last_by_subj": "g.a"},
        {"last_by_subj": "g.a", "next_by_subj": "g.a"},
        {"seq": 1, "start_time": "2020-01-01T00:00:00Z"},
        {"multi_last": ["g.a"]},
        {"no_hdr": True},
    ],
)
async def test_msg_get_bad_request(target: Target, body: Any) -> None:
    """Checked before the stream lookup: an unknown stream gets the same 10003."""
    async with connected(target) as nc:
        await _get_stream(nc)
        expected = failure("stream_msg_get_response", *BAD_REQUEST)
        assert await api(nc, "$JS.API.STREAM.MSG.GET.G", body) == expected
        assert await api(nc, "$JS.API.STREAM.MSG.GET.NOPE", body) == expected


@pytest.mark.parametrize(
    "body, text",
    [
        (b"hello", "invalid character 'h' looking for beginning of value at offset 1"),
        (b'{"bogus":1}', 'json: unknown field "bogus"'),
        (b'{"seq":"1"}', "json: cannot unmarshal string into Go struct field JSApiMsgGetRequest.seq of type uint64"),
        (b"5", "json: cannot unmarshal number into Go value of type server.JSApiMsgGetRequest"),
    ],
)
async def test_msg_get_bad_json(target: Target, body: bytes, text: str) -> None:
    async with connected(target) as nc:
        await _get_stream(nc)
        assert await api(nc, "$JS.API.STREAM.MSG.GET.G", body) == invalid_json("stream_msg_get_response", text)


async def test_msg_get_unknown_stream(target: Target) -> None:
    async with connected(target) as nc:
        assert await api(nc, "$JS.API.STREAM.MSG.GET.NOPE", {"seq": 1}) == failure(
            "stream_msg_get_response", *NOT_FOUND
        )


# -- STREAM.MSG.DELETE ---------------------------------------------------------------

DELETED = {"type": T + "stream_msg_delete_response", "success": True}


@pytest.mark.parametrize("storage", ["file", "memory"])
async def test_msg_delete_erase_and_no_erase(target: Target, storage: str) -> None:
    """Deleting the last message keeps last_seq; the deleted seq is listed."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "D", "storage": storage})
        for _ in range(4):
            await stored(nc, "D", b"v")
        reply = await api(nc, "$JS.API.STREAM.MSG.DELETE.D", {"seq": 2})
        assert list(reply) == ["type", "success"]
        assert reply == DELETED
        assert await api(nc, "$JS.API.STREAM.MSG.DELETE.D", {"seq": 4, "no_erase": True}) == DELETED
        size = 1 + 1 + (30 if storage == "file" else 16)
        info = await stream_info(nc, "D", {"deleted_details": True})
        assert info["state"] == state(2, 2 * size, 1, 4, num_subjects=1, num_deleted=2, deleted=[2, 4])
        assert await api(nc, "$JS.API.STREAM.MSG.DELETE.D", {"seq": 1}) == DELETED
        info = await stream_info(nc, "D", {"deleted_details": True})
        assert info["state"] == state(1, size, 3, 4, num_subjects=1, num_deleted=1, deleted=[4])


@pytest.mark.parametrize(
    "storage, seq, err",
    [
        ("file", 1, (500, 10057, "no message found")),
        ("file", 0, (500, 10057, "no message found")),
        ("file", 3, (400, 10043, "sequence 3 not found")),
        ("file", 99, (500, 10057, "stream store EOF")),
        ("memory", 1, (400, 10043, "sequence 1 not found")),
        ("memory", 0, (400, 10043, "sequence 0 not found")),
        ("memory", 3, (400, 10043, "sequence 3 not found")),
        ("memory", 99, (400, 10043, "sequence 99 not found")),
    ],
)
async def test_msg_delete_missing_message(target: Target, storage: str, seq: int, err: tuple) -> None:
    """File storage: below first_seq "no message found", an interior gap "sequence N not found", past the end "stream store EOF"."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "D", "storage": storage})
        for _ in range(4):
            await stored(nc, "D", b"v")
        assert await api(nc, "$JS.API.STREAM.MSG.DELETE.D", {"seq": 1}) == DELETED
        assert await api(nc, "$JS.API.STREAM.MSG.DELETE.D", {"seq": 3}) == DELETED
        assert await api(nc, "$JS.API.STREAM.MSG.DELETE.D", {"seq": seq}) == failure("stream_msg_delete_response", *err)
        assert await api(nc, "$JS.API.STREAM.MSG.DELETE.D", {"seq": seq, "no_erase": True}) == failure(
            "stream_msg_delete_response", *err
        )


async def test_msg_delete_without_seq(target: Target) -> None:
    """An empty body or {} is a bad request; any other object without seq means seq 0."""
    async with connected(target) as nc:
        await create_stream(nc, {"name": "D"})
        await stored(nc, "D", b"v")
        for body in (b"", b"{}", b" {} "):
            assert await api(nc, "$JS.API.STREAM.MSG.DELETE.D", body) == failure(
                "stream_msg_delete_response", *BAD_REQUEST
            )
            assert await api(nc, "$JS.API.STREAM.MSG.DELETE.NOPE", body) == failure(
                "stream_msg_delete_response", *BAD_REQUEST
            )
        reply = await api(nc, "$JS.API.STREAM.MSG.DELETE.D", {"no_erase": True})
        assert reply == failure("stream_msg_delete_response", 500, 10057, "no message found")


@pytest.mark.parametrize(
    "body, text",
    [
        (b"hello", "invalid character 'h' looking for beginning of value at offset 1"),
        (b"5", "json: cannot unmarshal number into Go value of type server.JSApiMsgDeleteRequest"),
        (b'{"bogus":1}', 'json: unknown field "bogus"'),
        (b'{"seq":"1"}', "json: cannot unmarshal string into Go struct field JSApiMsgDeleteRequest.seq of type uint64"),
        (b'{"seq":1', "unexpected EOF"),
    ],
)
async def test_msg_delete_bad_json(target: Target, body: bytes, text: str) -> None:
    async with connected(target) as nc:
        await create_stream(nc, {"name": "D"})
        await stored(nc, "D", b"v")
        expected = invalid_json("stream_msg_delete_response", text)
        assert await api(nc, "$JS.API.STREAM.MSG.DELETE.D", body) == expected
        assert await api(nc, "$JS.API.STREAM.MSG.DELETE.NOPE", body) == expected


async def test_msg_delete_unknown_stream(target: Target) -> None:
    async with connected(target) as nc:
        assert await api(nc, "$JS.API.STREAM.MSG.DELETE.NOPE", {"seq": 1}) == failure(
            "stream_msg_delete_response", *NOT_FOUND
        )


async def test_msg_delete_denied(target: Target) -> None:
    async with connected(target) as nc:
        await create_stream(nc, {"name": "D", "deny_delete": True})
        await stored(nc, "D", b"v")
        expected = failure("stream_msg_delete_response", 500, 10057, "message delete not permitted")
        assert await api(nc, "$JS.API.STREAM.MSG.DELETE.D", {"seq": 1}) == expected
        assert await api(nc, "$JS.API.STREAM.MSG.DELETE.D", {"seq": 99}) == expected


# -- error shapes ----------------------------------------------------------------------


BOGUS = error(400, 10025, 'invalid JSON: json: unknown field "bogus"')


@pytest.mark.parametrize(
    "subject, keys, err",
    [
        ("$JS.API.STREAM.CREATE.NOPE", ["type", "error"], BOGUS),
        ("$JS.API.STREAM.UPDATE.NOPE", ["type", "error"], BOGUS),
        ("$JS.API.STREAM.DELETE.NOPE", ["type", "error"], error(400, 10038, "expected an empty request payload")),
        ("$JS.API.STREAM.INFO.NOPE", ["type", "error", "total", "offset", "limit"], BOGUS),
        ("$JS.API.STREAM.NAMES", ["type", "error", "total", "offset", "limit", "streams"], BOGUS),
        ("$JS.API.STREAM.LIST", ["type", "error", "total", "offset", "limit", "streams"], BOGUS),
        ("$JS.API.STREAM.PURGE.NOPE", ["type", "error", "purged"], BOGUS),
        ("$JS.API.STREAM.MSG.GET.NOPE", ["type", "error"], BOGUS),
        ("$JS.API.STREAM.MSG.DELETE.NOPE", ["type", "error"], BOGUS),
    ],
)
async def test_error_reply_fields(target: Target, subject: str, keys: list[str], err: dict) -> None:
    """Which fields accompany "error", in order; the error itself is {code, err_code, description}."""
    async with connected(target) as nc:
        reply = await api(nc, subject, b'{"bogus":true}')
        assert list(reply) == keys
        assert list(reply["error"]) == ["code", "err_code", "description"]
        assert reply["error"] == err
