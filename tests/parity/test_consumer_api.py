"""The JetStream consumer API ($JS.API.CONSUMER.*) as nats-server 2.15.1 answers it.

Replies are compared as whole normalized documents, key order included:
timestamps become ``"<ts>"`` (the zero time stays), server names
``"<server>"`` and a positive ``pause_remaining`` ``"<ns>"``.  Expected
documents are built in the field order of the server's Go structs
(``CONFIG_KEYS`` and ``INFO_KEYS``).

Facts an implementation needs and that the tests pin down:

* A single server has no ``cluster`` field in ConsumerInfo, an R1 consumer
  echoes ``"num_replicas":0``, and the reply config carries the metadata
  ``_nats.level``/``_nats.req.level``/``_nats.ver`` -- except in
  CONSUMER.LIST, which shows only the stored ``_nats.req.level``.
* The consumer name always comes from the subject when there is one; the
  body's ``name`` is overwritten (so 10132 "durable name mismatch" is
  unreachable through the API).
* Ephemeral consumers get ``inactive_threshold`` 5s stamped into their
  config; ``action:"create"`` then compares that stamped config with the
  request, so re-creating an ephemeral with an identical body fails (10148)
  unless the body sets ``inactive_threshold`` itself.
* CONSUMER.RESET is served by a per-consumer subscription: unknown
  consumers get no reply at all, and the reply is sent as
  ``MSG <reply> <sid>  <len>`` (two spaces: an empty reply-to field).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from nats.aio.client import Client
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError

from tests.harness.js import SEC, ZERO_TIME, add_stream, api, connected, fetch_no_wait, normalize, request, stored
from tests.harness.raw import RawClient
from tests.harness.targets import Target
from tests.harness.wait import WAIT, poll

T = "io.nats.jetstream.api.v1."
C = "$JS.API.CONSUMER."
TS = "<ts>"
NS = "<ns>"
META = {"_nats.level": "5", "_nats.req.level": "0", "_nats.ver": "2.15.1"}
T0 = "2020-01-01T00:00:00Z"
FUTURE = "2099-01-01T00:00:00Z"

CONFIG_KEYS = [
    "durable_name",
    "name",
    "description",
    "deliver_policy",
    "opt_start_seq",
    "opt_start_time",
    "ack_policy",
    "ack_wait",
    "max_deliver",
    "backoff",
    "filter_subject",
    "filter_subjects",
    "replay_policy",
    "rate_limit_bps",
    "sample_freq",
    "max_waiting",
    "max_ack_pending",
    "flow_control",
    "headers_only",
    "max_batch",
    "max_expires",
    "max_bytes",
    "deliver_subject",
    "deliver_group",
    "idle_heartbeat",
    "inactive_threshold",
    "num_replicas",
    "mem_storage",
    "direct",
    "sourcing",
    "metadata",
    "pause_until",
    "priority_groups",
    "priority_policy",
    "priority_timeout",
]
INFO_KEYS = [
    "type",
    "error",
    "stream_name",
    "name",
    "created",
    "config",
    "delivered",
    "ack_floor",
    "num_ack_pending",
    "num_redelivered",
    "num_waiting",
    "num_pending",
    "push_bound",
    "paused",
    "pause_remaining",
    "ts",
    "priority_groups",
    "reset_seq",
]


# -- helpers -----------------------------------------------------------------


def _ordered(doc: dict, keys: list[str]) -> dict:
    unknown = set(doc) - set(keys)
    assert not unknown, unknown
    return {key: doc[key] for key in keys if key in doc and doc[key] is not None}


def meta(level: int = 0, **user: str) -> dict:
    """Reply metadata: the server's keys plus the user's, sorted like a Go map."""
    return dict(sorted({**META, "_nats.req.level": str(level), **user}.items()))


def cfg(name: str | None = None, *, durable: bool = False, **fields: Any) -> dict:
    """A ConsumerConfig as the server reports it; a field set to None is left out."""
    doc: dict[str, Any] = {}
    if durable:
        doc["durable_name"] = name
    doc.update(name=name, deliver_policy="all", ack_policy="none", max_deliver=-1, replay_policy="instant")
    if "deliver_subject" not in fields:
        doc["max_waiting"] = 512
    if fields.get("ack_policy") in ("explicit", "all"):
        doc.update(ack_wait=30 * SEC, max_ack_pending=1000)
    if not durable:
        doc["inactive_threshold"] = 5 * SEC
    doc.update(num_replicas=0, metadata=dict(META))
    doc.update(fields)
    return _ordered(doc, CONFIG_KEYS)


def seqs(consumer: int = 0, stream: int = 0, active: bool = False) -> dict:
    doc: dict[str, Any] = {"consumer_seq": consumer, "stream_seq": stream}
    if active:
        doc["last_active"] = TS
    return doc


def info(
    kind: str,
    config: dict,
    *,
    stream: str = "S",
    name: str | None = None,
    delivered: dict | None = None,
    ack_floor: dict | None = None,
    num_pending: int = 0,
    num_ack_pending: int = 0,
    num_redelivered: int = 0,
    num_waiting: int = 0,
    **extra: Any,
) -> dict:
    """A ConsumerInfo reply ("consumer_create_response", "consumer_info_response"...)."""
    doc = {
        "type": T + kind,
        "stream_name": stream,
        "name": name if name is not None else config.get("name"),
        "created": TS,
        "config": config,
        "delivered": delivered or seqs(),
        "ack_floor": ack_floor or seqs(),
        "num_ack_pending": num_ack_pending,
        "num_redelivered": num_redelivered,
        "num_waiting": num_waiting,
        "num_pending": num_pending,
        "ts": TS,
        **extra,
    }
    return _ordered(doc, INFO_KEYS)


def created(config: dict, **kw: Any) -> dict:
    return info("consumer_create_response", config, **kw)


def error(code: int, err_code: int, description: str) -> dict:
    return {"code": code, "err_code": err_code, "description": description}


def failure(kind: str, code: int, err_code: int, description: str, **extra: Any) -> dict:
    return {"type": T + kind, "error": error(code, err_code, description), **extra}


def create_failure(code: int, err_code: int, description: str) -> dict:
    return failure("consumer_create_response", code, err_code, description)


def _shape(value: Any) -> Any:
    if isinstance(value, dict):
        return [(key, _shape(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return value


def norm(value: Any) -> Any:
    """normalize(), plus a positive pause_remaining (nanoseconds) becomes "<ns>"."""
    value = normalize(value)

    def walk(item: Any) -> Any:
        if isinstance(item, dict):
            out = {}
            for key, sub in item.items():
                if key == "pause_remaining" and isinstance(sub, int):
                    assert sub > 0, item
                    out[key] = NS
                else:
                    out[key] = walk(sub)
            return out
        if isinstance(item, list):
            return [walk(sub) for sub in item]
        return item

    return walk(value)


def same(reply: dict, expected: dict) -> None:
    """Whole-document equality after normalisation, key order included."""
    got = norm(reply)
    assert got == expected
    assert _shape(got) == _shape(expected)


async def put(nc: Client, subject: str, data: bytes = b"x") -> int:
    """Store ``data`` (``x`` unless given); returns the stream sequence."""
    return await stored(nc, subject, data)


async def create(
    nc: Client,
    stream_name: str,
    name: str | None = None,
    config: dict | None = None,
    *,
    subject: str | None = None,
    **body: Any,
) -> dict:
    """CONSUMER.CREATE.<stream>[.<name>] with {"stream_name", "config", **body}."""
    subject = subject or f"{C}CREATE.{stream_name}" + (f".{name}" if name else "")
    return await api(nc, subject, {"stream_name": stream_name, "config": config or {}, **body})


async def ok_create(
    nc: Client, stream_name: str, name: str | None = None, config: dict | None = None, **body: Any
) -> dict:
    reply = await create(nc, stream_name, name, config, **body)
    assert "error" not in reply, reply
    return reply


async def consumer_info(nc: Client, stream_name: str, name: str) -> dict:
    return await api(nc, f"{C}INFO.{stream_name}.{name}")


async def wait_for_info(nc: Client, stream_name: str, name: str, check: Any, timeout: float = WAIT) -> dict:
    """Poll CONSUMER.INFO until ``check(reply)`` holds (acks are processed asynchronously)."""
    return await poll(lambda: consumer_info(nc, stream_name, name), check, timeout=timeout)


# -- CONSUMER.CREATE: replies -----------------------------------------------------


async def test_create_named_ephemeral_reply(target: Target) -> None:
    """CREATE.<stream>.<name> without durable_name: an ephemeral with a 5s inactive_threshold; no cluster field."""
    async with connected(target) as nc:
        await add_stream(nc)
        for _ in range(3):
            await put(nc, "s.a")
        reply = await create(nc, "S", "C", {})
        same(reply, created(cfg("C"), num_pending=3))
        assert reply["created"].endswith("Z") and reply["ts"].endswith("Z")
        same(await consumer_info(nc, "S", "C"), info("consumer_info_response", cfg("C"), num_pending=3))


async def test_create_reply_bytes(target: Target) -> None:
    """Go escapes '>' as \\u003e; no headers on a normal create reply."""
    async with connected(target) as nc:
        await add_stream(nc)
        body = b'{"stream_name":"S","config":{"durable_name":"D","filter_subject":"s.>"}}'
        msg = await request(nc, f"{C}CREATE.S.D", body)
        assert msg.headers is None
        assert b'"filter_subject":"s.\\u003e"' in msg.data
        assert msg.data.startswith(
            b'{"type":"io.nats.jetstream.api.v1.consumer_create_response","stream_name":"S","name":"D","created":"'
        )
        assert (
            b',"config":{"durable_name":"D","name":"D","deliver_policy":"all","ack_policy":"none","max_deliver":-1,'
            in msg.data
        )


@pytest.mark.parametrize("ack_policy", ["none", "all", "explicit"])
async def test_create_durable_pull_defaults(target: Target, ack_policy: str) -> None:
    """all/explicit get ack_wait 30s and max_ack_pending 1000; durables have no inactive_threshold."""
    async with connected(target) as nc:
        await add_stream(nc)
        await put(nc, "s.a")
        await put(nc, "s.b")
        reply = await create(nc, "S", "D", {"durable_name": "D", "ack_policy": ack_policy})
        same(reply, created(cfg("D", durable=True, ack_policy=ack_policy), num_pending=2))


@pytest.mark.parametrize(
    "config, expected",
    [
        ({"deliver_subject": "dlv"}, cfg("P", deliver_subject="dlv")),
        (
            {"deliver_subject": "dlv", "ack_policy": "explicit"},
            cfg("P", deliver_subject="dlv", ack_policy="explicit"),
        ),
        (
            {
                "durable_name": "P",
                "deliver_subject": "dlv",
                "deliver_group": "g",
                "idle_heartbeat": SEC,
                "flow_control": True,
            },
            cfg("P", durable=True, deliver_subject="dlv", deliver_group="g", idle_heartbeat=SEC, flow_control=True),
        ),
    ],
)
async def test_create_push_consumer(target: Target, config: dict, expected: dict) -> None:
    """Push consumers have no max_waiting; without interest on deliver_subject there is no push_bound."""
    async with connected(target) as nc:
        await add_stream(nc)
        await put(nc, "s.a")
        same(await create(nc, "S", "P", config), created(expected, num_pending=1))


async def test_create_push_bound_when_deliver_subject_has_interest(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await nc.subscribe("dlv.x")
        await nc.flush()
        reply = await create(nc, "S", "P", {"durable_name": "P", "deliver_subject": "dlv.x"})
        same(reply, created(cfg("P", durable=True, deliver_subject="dlv.x"), push_bound=True))


@pytest.mark.parametrize(
    "extra",
    [{}, {"flow_control": True, "idle_heartbeat": SEC}, {"flow_control": False, "idle_heartbeat": 2 * SEC}],
)
async def test_create_flow_control_ack_policy_defaults(target: Target, extra: dict) -> None:
    """ack_policy flow_control forces flow_control true and a 1s heartbeat, needs api level 4, has no ack_wait."""
    async with connected(target) as nc:
        await add_stream(nc)
        reply = await create(nc, "S", "F", {"ack_policy": "flow_control", "deliver_subject": "d", **extra})
        expected = cfg(
            "F",
            ack_policy="flow_control",
            max_ack_pending=1000,
            flow_control=True,
            deliver_subject="d",
            idle_heartbeat=SEC,
            metadata=meta(4),
        )
        same(reply, created(expected))


MSG4 = "<time of message 4>"


@pytest.mark.parametrize(
    "config, start, pending",
    [
        ({"deliver_policy": "all"}, 0, 6),
        ({"deliver_policy": "last"}, 5, 1),
        ({"deliver_policy": "new"}, 6, 0),
        ({"deliver_policy": "by_start_sequence", "opt_start_seq": 3}, 2, 4),
        ({"deliver_policy": "by_start_sequence", "opt_start_seq": 100}, 99, 0),
        ({"deliver_policy": "by_start_time", "opt_start_time": MSG4}, 3, 3),
        ({"deliver_policy": "by_start_time", "opt_start_time": "2000-01-01T00:00:00Z"}, 0, 6),
        ({"deliver_policy": "by_start_time", "opt_start_time": "2999-01-01T00:00:00Z"}, 0, 6),
        ({"deliver_policy": "last_per_subject", "filter_subject": "s.*"}, 3, 3),
        ({"deliver_policy": "last_per_subject", "filter_subject": "s.a"}, 5, 1),
        ({"deliver_policy": "last_per_subject", "filter_subjects": ["s.a", "s.b"]}, 4, 2),
        ({"deliver_policy": "all", "filter_subject": "s.a"}, 0, 3),
        ({"deliver_policy": "all", "filter_subjects": ["s.a", "s.c"]}, 0, 4),
        ({"deliver_policy": "last", "filter_subject": "s.b"}, 4, 1),
        ({"deliver_policy": "last", "filter_subject": "s.zz"}, 0, 0),
        ({"deliver_policy": "new", "filter_subject": "s.a"}, 6, 0),
        ({"deliver_policy": "by_start_sequence", "opt_start_seq": 3, "filter_subject": "s.b"}, 2, 1),
    ],
)
async def test_create_start_position_and_num_pending(target: Target, config: dict, start: int, pending: int) -> None:
    """Stream: s.a s.b s.a s.c s.b s.a.  delivered/ack_floor stream_seq = first sequence to deliver - 1.

    A start time after the last message falls back to the first sequence (all 6 pending).
    """
    async with connected(target) as nc:
        await add_stream(nc)
        for subject in ("s.a", "s.b", "s.a", "s.c", "s.b", "s.a"):
            await put(nc, subject)
        config = dict(config)
        if config.get("opt_start_time") == MSG4:
            got = await api(nc, "$JS.API.STREAM.MSG.GET.S", {"seq": 4})
            config["opt_start_time"] = got["message"]["time"]
        reply = await create(nc, "S", "D", {"durable_name": "D", **config})
        expected_cfg = cfg(
            "D", durable=True, **{**config, "opt_start_time": TS if "opt_start_time" in config else None}
        )
        same(reply, created(expected_cfg, delivered=seqs(0, start), ack_floor=seqs(0, start), num_pending=pending))


async def test_create_by_start_sequence_on_empty_stream(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        reply = await create(
            nc, "S", "R", {"durable_name": "R", "deliver_policy": "by_start_sequence", "opt_start_seq": 3}
        )
        expected = cfg("R", durable=True, deliver_policy="by_start_sequence", opt_start_seq=3)
        same(reply, created(expected, delivered=seqs(0, 2), ack_floor=seqs(0, 2)))


# -- legacy subjects ---------------------------------------------------------------


async def test_legacy_ephemeral_generated_name(target: Target) -> None:
    """CREATE.<stream> without a name: an 8-character generated name that the reply config does not carry."""
    async with connected(target) as nc:
        await add_stream(nc)
        await put(nc, "s.a")
        reply = await create(nc, "S", None, {"inactive_threshold": 60 * SEC})
        name = reply["name"]
        assert re.fullmatch(r"[A-Za-z0-9]{8}", name), name
        same(reply, created(cfg(None, inactive_threshold=60 * SEC), name=name, num_pending=1))
        same(
            await consumer_info(nc, "S", name),
            info("consumer_info_response", cfg(None, inactive_threshold=60 * SEC), name=name, num_pending=1),
        )
        names = await api(nc, f"{C}NAMES.S")
        assert names["consumers"] == [name]
        again = await create(nc, "S", None, {"inactive_threshold": 60 * SEC})
        assert again["name"] != name


async def test_legacy_ephemeral_with_name_in_body(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        same(await create(nc, "S", None, {"name": "E1"}), created(cfg("E1")))


async def test_legacy_ephemeral_rejects_durable_name(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        reply = await create(nc, "S", None, {"durable_name": "X"})
        assert reply == create_failure(
            400, 10020, "consumer expected to be ephemeral but a durable name was set in request"
        )


async def test_legacy_durable_create(target: Target) -> None:
    """DURABLE.CREATE.<stream>.<durable>: the body's name is replaced by the durable name."""
    async with connected(target) as nc:
        await add_stream(nc)
        reply = await create(nc, "S", subject=f"{C}DURABLE.CREATE.S.D1", config={"durable_name": "D1", "name": "X"})
        same(reply, created(cfg("D1", durable=True)))


@pytest.mark.parametrize(
    "config, err",
    [
        ({}, (400, 10018, "consumer expected to be durable but a durable name was not set")),
        ({"name": "D1"}, (400, 10018, "consumer expected to be durable but a durable name was not set")),
        ({"durable_name": "D2"}, (400, 10017, "consumer name in subject does not match durable name in request")),
    ],
)
async def test_legacy_durable_create_errors(target: Target, config: dict, err: tuple) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        reply = await create(nc, "S", subject=f"{C}DURABLE.CREATE.S.D1", config=config)
        assert reply == create_failure(*err)


@pytest.mark.parametrize("subject", [f"{C}CREATE", f"{C}DURABLE.CREATE.S", f"{C}DURABLE.CREATE.S.D1.x"])
async def test_create_subjects_without_a_handler_get_no_reply(target: Target, subject: str) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        with pytest.raises(NatsTimeoutError):
            await request(nc, subject, b'{"stream_name":"S","config":{"durable_name":"D1"}}', timeout=0.3)


# -- names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config, expected",
    [
        ({"name": "B"}, cfg("A")),
        ({"durable_name": "A"}, cfg("A", durable=True)),
        ({"durable_name": "A", "name": "B"}, cfg("A", durable=True)),
    ],
)
async def test_create_name_comes_from_subject(target: Target, config: dict, expected: dict) -> None:
    """The subject's name overrides the body's name, so durable_name/name mismatch (10132) never fires."""
    async with connected(target) as nc:
        await add_stream(nc)
        same(await create(nc, "S", "A", config), created(expected))


@pytest.mark.parametrize("body", [{"stream_name": "T", "config": {}}, {"config": {}}, b"", b"{}", b"null"])
async def test_create_stream_name_mismatch(target: Target, body: Any) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        for subject in (f"{C}CREATE.S.A", f"{C}CREATE.S", f"{C}DURABLE.CREATE.S.A"):
            reply = await api(nc, subject, body)
            assert reply == create_failure(400, 10056, "stream name in subject does not match request"), subject


async def test_create_durable_name_must_match_subject(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        reply = await create(nc, "S", "A", {"durable_name": "B"})
        assert reply == create_failure(400, 10017, "consumer name in subject does not match durable name in request")


NAME_RULES = "consumer name can not contain '.', '*', '>', '\\', '/'"


@pytest.mark.parametrize(
    "subject, config, err",
    [
        (f"{C}CREATE.S.a/b", {}, (400, 10127, "Consumer name can not contain path separators")),
        (f"{C}CREATE.S.a\\b", {}, (400, 10127, "Consumer name can not contain path separators")),
        (f"{C}CREATE.S.*", {}, (500, 10052, NAME_RULES)),
        (f"{C}CREATE.S.>", {}, (500, 10052, NAME_RULES)),
        (f"{C}CREATE.S", {"name": "a.b"}, (500, 10052, NAME_RULES)),
        (f"{C}CREATE.S", {"name": "a b"}, (500, 10052, NAME_RULES)),
        (f"{C}CREATE.S", {"name": "a*"}, (500, 10052, NAME_RULES)),
        (f"{C}CREATE.S", {"name": "a/b"}, (400, 10127, "Consumer name can not contain path separators")),
        (
            f"{C}CREATE.S",
            {"name": "a/b", "durable_name": "X"},
            (400, 10127, "Consumer name can not contain path separators"),
        ),
    ],
)
async def test_create_invalid_consumer_name(target: Target, subject: str, config: dict, err: tuple) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        reply = await api(nc, subject, {"stream_name": "S", "config": config})
        assert reply == create_failure(*err)


async def test_create_name_length(target: Target) -> None:
    """255 is fine; a 256-character durable is refused; a 256-character ephemeral fails to get a file store."""
    async with connected(target) as nc:
        await add_stream(nc)
        await add_stream(nc, "M", storage="memory")
        same(await create(nc, "S", "y" * 255, {}), created(cfg("y" * 255)))
        reply = await create(nc, "S", "z" * 256, {"durable_name": "z" * 256})
        assert reply == create_failure(400, 10102, "consumer name is too long, maximum allowed is 255")
        reply = await create(nc, "S", "x" * 256, {})
        assert reply == create_failure(500, 10012, "error creating store for consumer")
        same(await create(nc, "M", "x" * 256, {}), created(cfg("x" * 256), stream="M"))


# -- filter subject in the create subject -------------------------------------------


@pytest.mark.parametrize(
    "config, err",
    [
        ({}, (400, 10131, "Consumer create request did not match filtered subject from create subject")),
        (
            {"filter_subject": "s.b"},
            (400, 10131, "Consumer create request did not match filtered subject from create subject"),
        ),
        (
            {"filter_subjects": ["s.a"]},
            (400, 10137, "consumer with multiple subject filters cannot use subject based API"),
        ),
        (
            {"filter_subjects": ["s.a"], "filter_subject": "s.a"},
            (400, 10137, "consumer with multiple subject filters cannot use subject based API"),
        ),
    ],
)
async def test_filter_in_create_subject_must_match(target: Target, config: dict, err: tuple) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        assert await create(nc, "S", subject=f"{C}CREATE.S.F.s.a", config=config) == create_failure(*err)


@pytest.mark.parametrize("filter_subject", ["s.a", "s.*", "s.a.>", "s.>"])
async def test_filter_in_create_subject(target: Target, filter_subject: str) -> None:
    """Every token after the name is the filter, wildcards included."""
    async with connected(target) as nc:
        await add_stream(nc)
        await put(nc, "s.a")
        reply = await create(
            nc, "S", subject=f"{C}CREATE.S.F.{filter_subject}", config={"filter_subject": filter_subject}
        )
        pending = 0 if filter_subject == "s.a.>" else 1
        same(reply, created(cfg("F", filter_subject=filter_subject), num_pending=pending))


# -- request decoding ----------------------------------------------------------------


@pytest.mark.parametrize(
    "body, text",
    [
        (b"hello", "invalid character 'h' looking for beginning of value at offset 1"),
        (b'{"stream_name":"S","config":{}', "unexpected EOF"),
        (b"[1]", "json: cannot unmarshal array into Go value of type server.CreateConsumerRequest"),
        (b'{"stream_name":"S","bogus":1}', 'json: unknown field "bogus"'),
        (b'{"stream_name":"S","config":{"bogus":1}}', 'json: unknown field "bogus"'),
        (b'{"stream_name":"S"} {"bogus":1}', 'json: unknown field "bogus"'),
        (
            b'{"stream_name":"S","config":[1]}',
            "json: cannot unmarshal array into Go struct field CreateConsumerRequest.config of type server.ConsumerConfig",
        ),
        (
            b'{"stream_name":"S","config":{"ack_wait":"1s"}}',
            "json: cannot unmarshal string into Go struct field CreateConsumerRequest.config.ack_wait of type time.Duration",
        ),
        (
            b'{"stream_name":"S","config":{"max_deliver":"1"}}',
            "json: cannot unmarshal string into Go struct field CreateConsumerRequest.config.max_deliver of type int",
        ),
        (
            b'{"stream_name":"S","config":{"opt_start_seq":-1}}',
            "json: cannot unmarshal number -1 into Go struct field CreateConsumerRequest.config.opt_start_seq of type uint64",
        ),
        (
            b'{"stream_name":"S","config":{"backoff":"1s"}}',
            "json: cannot unmarshal string into Go struct field CreateConsumerRequest.config.backoff of type []time.Duration",
        ),
        (
            b'{"stream_name":"S","config":{"filter_subjects":"s.a"}}',
            "json: cannot unmarshal string into Go struct field CreateConsumerRequest.config.filter_subjects of type []string",
        ),
        (
            b'{"stream_name":"S","config":{"metadata":{"a":1}}}',
            "json: cannot unmarshal number into Go struct field CreateConsumerRequest.config.metadata.a of type string",
        ),
        (
            b'{"stream_name":"S","pedantic":"yes"}',
            "json: cannot unmarshal string into Go struct field CreateConsumerRequest.pedantic of type bool",
        ),
        (
            b'{"stream_name":"S","config":{"opt_start_time":"bad"}}',
            'parsing time "bad" as "2006-01-02T15:04:05Z07:00": cannot parse "bad" as "2006"',
        ),
        (b'{"stream_name":"S","config":{"ack_policy":"bogus"}}', 'can not unmarshal "\\"bogus\\""'),
        (b'{"stream_name":"S","config":{"deliver_policy":"bogus"}}', 'can not unmarshal "\\"bogus\\""'),
        (b'{"stream_name":"S","config":{"replay_policy":"bogus"}}', 'can not unmarshal "\\"bogus\\""'),
        (
            b'{"stream_name":"S","config":{"priority_policy":"PINNED_CLIENT"}}',
            'unknown priority policy: "PINNED_CLIENT"',
        ),
        (b'{"stream_name":"S","action":"CREATE"}', 'unknown consumer action: "CREATE"'),
        (b'{"stream_name":"S","action":5}', "unknown consumer action: 5"),
    ],
)
async def test_create_bad_json(target: Target, body: bytes, text: str) -> None:
    """Decoded strictly before anything else: unknown stream, API-level header and all."""
    async with connected(target) as nc:
        await add_stream(nc)
        expected = create_failure(400, 10025, "invalid JSON: " + text)
        assert await api(nc, f"{C}CREATE.S.A", body) == expected
        assert await api(nc, f"{C}CREATE.NOPE.A", body, headers={"Nats-Required-Api-Level": "99"}) == expected


@pytest.mark.parametrize(
    "body",
    [
        b'{"stream_name":"S","config":null}',
        b'{"stream_name":"S"}',
        b'{"stream_name":"S","pedantic":true}',
        b'{"stream_name":"S","action":""}',
    ],
)
async def test_create_minimal_bodies(target: Target, body: bytes) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        same(await api(nc, f"{C}CREATE.S.A", body), created(cfg("A")))


async def test_create_keys_match_case_insensitively(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        reply = await api(nc, f"{C}CREATE.S.A", b'{"STREAM_NAME":"S","Config":{"Durable_Name":"A"}}')
        same(reply, created(cfg("A", durable=True)))


@pytest.mark.parametrize(
    "subject, config",
    [
        (f"{C}CREATE.NOPE.A", {"durable_name": "A"}),
        (f"{C}CREATE.NOPE", {"name": "A"}),
        (f"{C}DURABLE.CREATE.NOPE.A", {"durable_name": "A"}),
    ],
)
async def test_create_on_unknown_stream(target: Target, subject: str, config: dict) -> None:
    async with connected(target) as nc:
        reply = await api(nc, subject, {"stream_name": "NOPE", "config": config})
        assert reply == create_failure(404, 10059, "stream not found")


# -- action ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config",
    [
        {"durable_name": "A"},
        {"durable_name": "A", "ack_policy": "explicit", "max_deliver": 5, "filter_subject": "s.a"},
        {"name": "A", "inactive_threshold": 10 * SEC},
    ],
)
async def test_action_create_with_identical_config(target: Target, config: dict) -> None:
    """Same config again: success, same created time."""
    async with connected(target) as nc:
        await add_stream(nc)
        first = await ok_create(nc, "S", "A", config, action="create")
        again = await create(nc, "S", "A", config, action="create")
        assert again["created"] == first["created"]
        assert norm(again) == norm(first)


@pytest.mark.parametrize(
    "first, second",
    [
        ({"durable_name": "A"}, {"durable_name": "A", "ack_policy": "explicit"}),
        ({"durable_name": "A"}, {"durable_name": "A", "metadata": {"a": "b"}}),
        ({"durable_name": "A"}, {"durable_name": "A", "description": "x"}),
        # the stored ephemeral config carries the stamped inactive_threshold, the request does not
        ({}, {}),
        ({"name": "A"}, {"name": "A"}),
        ({"pause_until": FUTURE}, {"pause_until": FUTURE}),
    ],
)
async def test_action_create_on_existing_consumer(target: Target, first: dict, second: dict) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "A", first, action="create")
        assert await create(nc, "S", "A", second, action="create") == create_failure(
            400, 10148, "consumer already exists"
        )
        # the legacy subject reaches the same check
        if "durable_name" not in second:
            reply = await create(nc, "S", None, {**second, "name": "A"}, action="create")
            assert reply == create_failure(400, 10148, "consumer already exists")


@pytest.mark.parametrize(
    "subject, config",
    [
        (f"{C}CREATE.S.NEW", {}),
        (f"{C}CREATE.S.NEW", {"durable_name": "NEW"}),
        (f"{C}CREATE.S", {"name": "NEW"}),
        (f"{C}CREATE.S", {}),
        (f"{C}DURABLE.CREATE.S.NEW", {"durable_name": "NEW"}),
    ],
)
async def test_action_update_of_missing_consumer(target: Target, subject: str, config: dict) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        reply = await api(nc, subject, {"stream_name": "S", "config": config, "action": "update"})
        assert reply == create_failure(400, 10149, "consumer does not exist")
        assert (await api(nc, f"{C}NAMES.S"))["consumers"] == []


async def test_action_update_and_default_action(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        first = await ok_create(nc, "S", "A", {"durable_name": "A"})
        reply = await create(nc, "S", "A", {"durable_name": "A", "description": "x"}, action="update")
        assert reply["created"] == first["created"]
        same(reply, created(cfg("A", durable=True, description="x")))
        reply = await create(nc, "S", "A", {"durable_name": "A", "description": "y"}, action="")
        same(reply, created(cfg("A", durable=True, description="y")))
        same(await consumer_info(nc, "S", "A"), info("consumer_info_response", cfg("A", durable=True, description="y")))


# -- updates -----------------------------------------------------------------------

PULL = {"durable_name": "D", "ack_policy": "explicit", "filter_subject": "s.a"}
PUSH = {"durable_name": "D", "deliver_subject": "dl"}
PUSH_HB = {"durable_name": "D", "deliver_subject": "dl", "idle_heartbeat": SEC, "flow_control": True}
BY_TIME = {"durable_name": "D", "deliver_policy": "by_start_time", "opt_start_time": T0}
BY_SEQ = {"durable_name": "D", "deliver_policy": "by_start_sequence", "opt_start_seq": 3}
EPHEMERAL_PUSH = {"name": "D", "deliver_subject": "dl"}


def _forbidden(text: str) -> tuple:
    return (500, 10012, text)


@pytest.mark.parametrize(
    "base, change, err",
    [
        (PULL, {"deliver_policy": "new"}, _forbidden("deliver policy can not be updated")),
        (PULL, {"deliver_policy": "new", "ack_policy": "all"}, _forbidden("deliver policy can not be updated")),
        (PULL, {"mem_storage": True}, _forbidden("storage type can not be updated")),
        (PULL, {"sourcing": True}, _forbidden("sourcing can not be updated")),
        (EPHEMERAL_PUSH, {"direct": True}, _forbidden("direct can not be updated")),
        (PULL, {"ack_policy": "all"}, _forbidden("ack policy can not be updated")),
        (PULL, {"ack_policy": "none"}, _forbidden("ack policy can not be updated")),
        (PULL, {"replay_policy": "original"}, _forbidden("replay policy can not be updated")),
        (PULL, {"deliver_subject": "x"}, _forbidden("can not update pull consumer to push based")),
        (PUSH, {"deliver_subject": None}, _forbidden("can not update push consumer to pull based")),
        (PULL, {"max_waiting": 10}, _forbidden("max waiting can not be updated")),
        (PUSH_HB, {"idle_heartbeat": 2 * SEC}, _forbidden("heart beats can not be updated")),
        (PUSH_HB, {"flow_control": False}, _forbidden("flow control can not be updated")),
        (BY_SEQ, {"opt_start_seq": 4}, _forbidden("start sequence can not be updated")),
        (BY_TIME, {"opt_start_time": "2021-01-01T00:00:00Z"}, _forbidden("start time can not be updated")),
        (
            BY_SEQ,
            {"deliver_policy": "by_start_time", "opt_start_seq": None, "opt_start_time": T0},
            _forbidden("deliver policy can not be updated"),
        ),
        # the new config is validated first, as on create
        (
            PULL,
            {"opt_start_seq": 5},
            (400, 10094, "consumer delivery policy is deliver all, but optional start sequence is also set"),
        ),
        (PULL, {"direct": True}, (400, 10090, "consumer direct requires a push based consumer")),
        (
            PULL,
            {"backoff": [SEC, 2 * SEC], "max_deliver": 1},
            (400, 10116, "max deliver is required to be \u003e length of backoff values"),
        ),
        (PUSH_HB, {"deliver_subject": None}, (400, 10088, "consumer idle heartbeat requires a push based consumer")),
        (PUSH, {"max_ack_pending": 5}, (400, 10082, "consumer requires ack policy for max ack pending")),
    ],
)
async def test_update_refused(target: Target, base: dict, change: dict, err: tuple) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", base)
        config = {key: value for key, value in {**base, **change}.items() if value is not None}
        for action in ("update", ""):
            reply = await create(nc, "S", "D", config, action=action)
            assert reply == create_failure(*err), action


async def test_update_allowed_fields(target: Target) -> None:
    """A backoff sets ack_wait to its first value; metadata keys come sorted after the server's."""
    async with connected(target) as nc:
        await add_stream(nc)
        first = await ok_create(nc, "S", "D", PULL)
        change = {
            "description": "d",
            "ack_wait": 5 * SEC,
            "max_deliver": 3,
            "backoff": [SEC, 2 * SEC],
            "filter_subject": "s.b",
            "sample_freq": "10",
            "max_ack_pending": 7,
            "headers_only": True,
            "max_batch": 3,
            "max_expires": 5 * SEC,
            "max_bytes": 100,
            "inactive_threshold": 60 * SEC,
            "metadata": {"k": "v"},
            "num_replicas": 1,
        }
        reply = await create(nc, "S", "D", {**PULL, **change}, action="update")
        assert reply["created"] == first["created"]
        expected = cfg("D", durable=True, **{**PULL, **change, "ack_wait": SEC, "metadata": meta(0, k="v")})
        same(reply, created(expected))
        # back to the original: every one of these fields may change back
        same(await create(nc, "S", "D", PULL), created(cfg("D", durable=True, **PULL)))


async def test_update_filter_subject_to_filter_subjects(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        for subject in ("s.a", "s.c", "s.d", "s.c"):
            await put(nc, subject)
        await ok_create(nc, "S", "D", PULL)
        reply = await create(
            nc, "S", "D", {"durable_name": "D", "ack_policy": "explicit", "filter_subjects": ["s.c", "s.d"]}
        )
        same(
            reply, created(cfg("D", durable=True, ack_policy="explicit", filter_subjects=["s.c", "s.d"]), num_pending=3)
        )


async def test_update_push_deliver_subject(target: Target) -> None:
    """A push consumer may move to another deliver subject only while nobody listens on the old one."""
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", PUSH)
        same(
            await create(nc, "S", "D", {**PUSH, "deliver_subject": "dl2"}),
            created(cfg("D", durable=True, deliver_subject="dl2")),
        )
        await nc.subscribe("dl2")
        await nc.flush()
        reply = await create(nc, "S", "D", {**PUSH, "deliver_subject": "dl3"})
        assert reply == create_failure(400, 10013, "consumer name already in use")


async def test_update_ignores_pause_until(target: Target) -> None:
    """pause_until in a create request only counts for a new consumer; updates keep the current value."""
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", PULL)
        reply = await create(nc, "S", "D", {**PULL, "pause_until": FUTURE})
        same(reply, created(cfg("D", durable=True, **PULL)))
        await ok_create(nc, "S", "P", {"durable_name": "P", "pause_until": FUTURE})
        reply = await create(nc, "S", "P", {"durable_name": "P", "description": "x"})
        expected = cfg("P", durable=True, description="x", metadata=meta(1), pause_until=TS)
        same(reply, created(expected, paused=True, pause_remaining=NS))


async def test_update_ephemeral_to_durable(target: Target) -> None:
    """An ephemeral may become durable; the first such update still stamps the 5s threshold, the next drops it."""
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "E", {})
        same(
            await create(nc, "S", "E", {"durable_name": "E"}),
            created(cfg("E", durable=True, inactive_threshold=5 * SEC)),
        )
        same(await create(nc, "S", "E", {"durable_name": "E"}), created(cfg("E", durable=True)))


async def test_update_equivalent_start_time(target: Target) -> None:
    """Start times compare as instants; the config then keeps the new spelling, offset included."""
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", BY_TIME)
        reply = await create(nc, "S", "D", {**BY_TIME, "opt_start_time": "2020-01-01T01:00:00+01:00"})
        assert "error" not in reply, reply
        assert reply["config"]["opt_start_time"] == "2020-01-01T01:00:00+01:00"


# -- validation ----------------------------------------------------------------------

DP = "consumer delivery policy is deliver "
PRIORITY_NAME = "Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters"


@pytest.mark.parametrize(
    "config, err",
    [
        # deliver policies and start positions
        (
            {"deliver_policy": "by_start_sequence"},
            (400, 10094, DP + "by start sequence, but optional start sequence is not set"),
        ),
        (
            {"deliver_policy": "by_start_sequence", "opt_start_seq": 1, "opt_start_time": T0},
            (400, 10094, DP + "by start sequence, but optional start time is also set"),
        ),
        ({"deliver_policy": "by_start_time"}, (400, 10094, DP + "by start time, but optional start time is not set")),
        (
            {"deliver_policy": "by_start_time", "opt_start_seq": 1, "opt_start_time": T0},
            (400, 10094, DP + "by start time, but optional start start sequence is also set"),
        ),
        ({"opt_start_seq": 1}, (400, 10094, DP + "all, but optional start sequence is also set")),
        (
            {"deliver_policy": "all", "opt_start_time": T0},
            (400, 10094, DP + "all, but optional start time is also set"),
        ),
        (
            {"deliver_policy": "last", "opt_start_seq": 1},
            (400, 10094, DP + "last, but optional start sequence is also set"),
        ),
        (
            {"deliver_policy": "last", "opt_start_time": T0},
            (400, 10094, DP + "last, but optional start time is also set"),
        ),
        (
            {"deliver_policy": "new", "opt_start_seq": 1},
            (400, 10094, DP + "new, but optional start sequence is also set"),
        ),
        (
            {"deliver_policy": "new", "opt_start_time": T0},
            (400, 10094, DP + "new, but optional start time is also set"),
        ),
        (
            {"deliver_policy": "last_per_subject"},
            (400, 10094, DP + "last per subject, but optional filter subject is not set"),
        ),
        (
            {"deliver_policy": "last_per_subject", "opt_start_seq": 1},
            (400, 10094, DP + "last per subject, but optional start sequence is also set"),
        ),
        (
            {"deliver_policy": "last_per_subject", "opt_start_time": T0},
            (400, 10094, DP + "last per subject, but optional start time is also set"),
        ),
        # filters
        (
            {"filter_subject": "s.a", "filter_subjects": ["s.b"]},
            (400, 10136, "consumer cannot have both FilterSubject and FilterSubjects specified"),
        ),
        ({"filter_subjects": [""]}, (400, 10139, "consumer filter in FilterSubjects cannot be empty")),
        ({"filter_subjects": ["s.a", ""]}, (400, 10139, "consumer filter in FilterSubjects cannot be empty")),
        ({"filter_subjects": ["s.*", "s.a"]}, (400, 10138, "consumer subject filters cannot overlap")),
        ({"filter_subjects": ["s.a", "s.a"]}, (400, 10138, "consumer subject filters cannot overlap")),
        ({"filter_subjects": ["s.>", "s.a.b"]}, (400, 10138, "consumer subject filters cannot overlap")),
        ({"filter_subject": "s..a"}, (500, 10052, "invalid subject")),
        ({"filter_subjects": ["s..a"]}, (500, 10052, "invalid subject")),
        # acks
        ({"ack_wait": -1}, (400, 10183, "consumer ack wait needs to be positive")),
        ({"backoff": [-1]}, (400, 10184, "consumer backoff needs to be positive")),
        (
            {"ack_policy": "explicit", "backoff": [SEC, 2 * SEC], "max_deliver": 1},
            (400, 10116, "max deliver is required to be > length of backoff values"),
        ),
        # push-only and pull-only settings
        ({"deliver_subject": "d", "max_waiting": 5}, (400, 10080, "consumer in push mode can not set max waiting")),
        (
            {"deliver_subject": "d", "max_ack_pending": 5},
            (400, 10082, "consumer requires ack policy for max ack pending"),
        ),
        (
            {"deliver_subject": "d", "idle_heartbeat": 1000},
            (400, 10083, "consumer idle heartbeat needs to be >= 100ms"),
        ),
        (
            {"deliver_subject": "d", "flow_control": True},
            (400, 10108, "consumer with flow control also needs heartbeats"),
        ),
        ({"deliver_subject": "d.*"}, (400, 10079, "consumer deliver subject has wildcards")),
        ({"deliver_subject": "d.>"}, (400, 10079, "consumer deliver subject has wildcards")),
        ({"deliver_subject": "d..x"}, (400, 10112, "invalid push consumer deliver subject")),
        ({"deliver_subject": "s.x"}, (400, 10081, "consumer deliver subject forms a cycle")),
        ({"idle_heartbeat": SEC}, (400, 10088, "consumer idle heartbeat requires a push based consumer")),
        ({"flow_control": True}, (400, 10089, "consumer flow control requires a push based consumer")),
        ({"rate_limit_bps": 100}, (400, 10086, "consumer in pull mode can not have rate limit set")),
        ({"max_expires": 1000}, (400, 10115, "consumer max request expires needs to be >= 1ms")),
        # sizes and replicas
        ({"description": "x" * 4097}, (400, 10107, "consumer description is too long, maximum allowed is 4096")),
        ({"metadata": {"k": "v" * 131072}}, (400, 10135, "consumer metadata exceeds maximum size of 128KB")),
        ({"num_replicas": 3}, (500, 10074, "replicas > 1 not supported in non-clustered mode")),
        ({"num_replicas": -1}, (400, 10133, "replicas count cannot be negative")),
        (
            {"sample_freq": "x"},
            (400, 10095, 'failed to parse consumer sampling configuration: strconv.Atoi: parsing "x": invalid syntax'),
        ),
        ({"sample_freq": "-1"}, (400, 10095, "failed to parse consumer sampling configuration: <nil>")),
        # priority groups
        (
            {"priority_policy": "pinned_client"},
            (400, 10159, "Setting PriorityPolicy requires at least one PriorityGroup to be set"),
        ),
        (
            {"priority_policy": "overflow", "priority_groups": [""]},
            (400, 10161, "Group name cannot be an empty string"),
        ),
        ({"priority_policy": "pinned_client", "priority_groups": ["a.b"]}, (400, 10162, PRIORITY_NAME)),
        ({"priority_policy": "pinned_client", "priority_groups": ["x" * 17]}, (400, 10162, PRIORITY_NAME)),
        (
            {"priority_policy": "pinned_client", "priority_groups": ["A"], "deliver_subject": "d"},
            (400, 10178, "priority groups can not be used with push consumers"),
        ),
        ({"priority_groups": ["A"]}, (400, 10196, "consumer can not have priority groups when policy is none")),
        (
            {"priority_policy": "none", "priority_groups": ["A"]},
            (400, 10196, "consumer can not have priority groups when policy is none"),
        ),
        ({"priority_timeout": SEC}, (400, 10197, "PinnedTTL cannot be set when PriorityPolicy is none")),
        # ack policy flow_control
        ({"ack_policy": "flow_control"}, (400, 10218, "flow control ack policy requires a push based consumer")),
        (
            {"ack_policy": "flow_control", "deliver_subject": "d", "max_ack_pending": -1},
            (400, 10220, "flow control ack policy requires max ack pending"),
        ),
        (
            {"ack_policy": "flow_control", "deliver_subject": "d", "ack_wait": 5},
            (400, 10221, "flow control ack policy requires unset ack wait"),
        ),
        (
            {"ack_policy": "flow_control", "deliver_subject": "d", "backoff": [5]},
            (400, 10221, "flow control ack policy requires unset ack wait"),
        ),
        (
            {"ack_policy": "flow_control", "deliver_subject": "d", "max_deliver": 5},
            (400, 10222, "flow control ack policy requires unset max deliver"),
        ),
        # direct (internal) consumers
        ({"direct": True}, (400, 10090, "consumer direct requires a push based consumer")),
        (
            {"direct": True, "deliver_subject": "d", "durable_name": "C"},
            (400, 10091, "consumer direct requires an ephemeral consumer"),
        ),
    ],
)
async def test_config_validation(target: Target, config: dict, err: tuple) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        assert await create(nc, "S", "C", config) == create_failure(*err)
        assert (await api(nc, f"{C}NAMES.S"))["total"] == 0


@pytest.mark.parametrize(
    "config, err",
    [
        ({"backoff": [-1], "ack_wait": -1}, (400, 10184, "consumer backoff needs to be positive")),
        ({"ack_wait": -1, "ack_policy": "flow_control"}, (400, 10183, "consumer ack wait needs to be positive")),
        (
            {"ack_policy": "flow_control", "description": "x" * 4097},
            (400, 10218, "flow control ack policy requires a push based consumer"),
        ),
        ({"ack_wait": -1, "description": "x" * 4097}, (400, 10183, "consumer ack wait needs to be positive")),
        (
            {"description": "x" * 4097, "deliver_subject": "a.*"},
            (400, 10107, "consumer description is too long, maximum allowed is 4096"),
        ),
        ({"deliver_subject": "d.>", "max_waiting": 3}, (400, 10079, "consumer deliver subject has wildcards")),
        ({"deliver_subject": "s.x.y", "max_waiting": 3}, (400, 10081, "consumer deliver subject forms a cycle")),
        (
            {"deliver_subject": "d", "max_waiting": 3, "idle_heartbeat": 5},
            (400, 10080, "consumer in push mode can not set max waiting"),
        ),
        (
            {"deliver_subject": "d", "max_ack_pending": 5, "idle_heartbeat": 5},
            (400, 10082, "consumer requires ack policy for max ack pending"),
        ),
        ({"rate_limit_bps": 5, "idle_heartbeat": 5}, (400, 10086, "consumer in pull mode can not have rate limit set")),
        ({"max_expires": 5, "rate_limit_bps": 5}, (400, 10086, "consumer in pull mode can not have rate limit set")),
        (
            {"idle_heartbeat": 5, "flow_control": True},
            (400, 10088, "consumer idle heartbeat requires a push based consumer"),
        ),
        (
            {"direct": True, "filter_subject": "s.a", "filter_subjects": ["s.b"]},
            (400, 10090, "consumer direct requires a push based consumer"),
        ),
        (
            {"filter_subject": "s.a", "filter_subjects": ["s.b"], "deliver_policy": "by_start_sequence"},
            (400, 10136, "consumer cannot have both FilterSubject and FilterSubjects specified"),
        ),
        (
            {"deliver_policy": "by_start_sequence", "sample_freq": "x"},
            (400, 10094, DP + "by start sequence, but optional start sequence is not set"),
        ),
        (
            {"deliver_subject": "d", "sample_freq": "x", "flow_control": True},
            (400, 10095, 'failed to parse consumer sampling configuration: strconv.Atoi: parsing "x": invalid syntax'),
        ),
        (
            {"metadata": {"k": "v" * 131072}, "priority_groups": ["A"]},
            (400, 10135, "consumer metadata exceeds maximum size of 128KB"),
        ),
        ({"num_replicas": -1, "backoff": [-1]}, (400, 10133, "replicas count cannot be negative")),
    ],
)
async def test_config_validation_order(target: Target, config: dict, err: tuple) -> None:
    """With several problems the first check in the server's order wins."""
    async with connected(target) as nc:
        await add_stream(nc)
        assert await create(nc, "S", "C", config) == create_failure(*err)


@pytest.mark.parametrize(
    "subject, body, headers, err",
    [
        # subject/body checks come before the stream lookup and the config checks
        (f"{C}CREATE.S.a/b", {"stream_name": "T"}, None, (400, 10056, "stream name in subject does not match request")),
        (
            f"{C}CREATE.S.A.s.a",
            {"stream_name": "S", "config": {"durable_name": "B", "filter_subject": "s.b"}},
            None,
            (400, 10017, "consumer name in subject does not match durable name in request"),
        ),
        (
            f"{C}CREATE.S.A.s.a",
            {"stream_name": "S", "config": {"num_replicas": 3, "filter_subject": "s.b"}},
            None,
            (400, 10131, "Consumer create request did not match filtered subject from create subject"),
        ),
        (
            f"{C}CREATE.NOPE.A",
            {"stream_name": "NOPE", "config": {"num_replicas": 3}},
            None,
            (500, 10074, "replicas > 1 not supported in non-clustered mode"),
        ),
        (
            f"{C}CREATE.NOPE.A",
            {"stream_name": "NOPE", "config": {"deliver_subject": "d.*"}},
            None,
            (404, 10059, "stream not found"),
        ),
        (
            f"{C}CREATE.S.A",
            {"stream_name": "T"},
            {"Nats-Required-Api-Level": "99"},
            (412, 10185, "JetStream minimum api level required"),
        ),
        (
            f"{C}CREATE.NOPE.A",
            {"stream_name": "S"},
            {"Nats-Required-Api-Level": "99"},
            (412, 10185, "JetStream minimum api level required"),
        ),
        # pedantic default checks come before the config checks
        (
            f"{C}CREATE.S.A",
            {"stream_name": "S", "config": {"max_deliver": -5, "ack_wait": -1}, "pedantic": True},
            None,
            (400, 10157, "pedantic mode: max_deliver must be set to -1"),
        ),
    ],
)
async def test_request_check_order(target: Target, subject: str, body: dict, headers: dict | None, err: tuple) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        assert await api(nc, subject, body, headers=headers) == create_failure(*err)


@pytest.mark.parametrize(
    "config, expected",
    [
        (
            {"deliver_subject": "d", "max_batch": 1, "max_expires": SEC, "max_bytes": 1},
            {"deliver_subject": "d", "max_batch": 1, "max_expires": SEC, "max_bytes": 1},
        ),
        ({"headers_only": True, "replay_policy": "original"}, {"headers_only": True, "replay_policy": "original"}),
        ({"sample_freq": "50%", "description": "x" * 4096}, {"sample_freq": "50%", "description": "x" * 4096}),
        ({"mem_storage": True, "num_replicas": 1}, {"mem_storage": True, "num_replicas": 1}),
        ({"ack_wait": 5 * SEC}, {"ack_wait": 5 * SEC}),
        ({"backoff": [SEC]}, {"ack_wait": SEC, "backoff": [SEC]}),
        (
            {"ack_policy": "explicit", "backoff": [SEC, 2 * SEC], "max_deliver": 2},
            {
                "ack_policy": "explicit",
                "ack_wait": SEC,
                "max_deliver": 2,
                "backoff": [SEC, 2 * SEC],
                "max_ack_pending": 1000,
            },
        ),
        ({"ack_policy": "explicit", "max_ack_pending": 0}, {"ack_policy": "explicit"}),
        (
            {"deliver_subject": "d", "idle_heartbeat": 100_000_000},
            {"deliver_subject": "d", "idle_heartbeat": 100_000_000},
        ),
        (
            {"deliver_subject": "d", "deliver_group": "g", "ack_policy": "explicit"},
            {"deliver_subject": "d", "deliver_group": "g", "ack_policy": "explicit"},
        ),
        ({"filter_subject": "x.y"}, {"filter_subject": "x.y"}),
        ({"filter_subjects": ["x.y"]}, {"filter_subjects": ["x.y"]}),
        ({"metadata": {"_nats.req.level": "7", "_nats.ver": "x", "k": "v"}}, {"metadata": meta(0, k="v")}),
        ({"metadata": {"k": "v" * 131055}}, {"metadata": meta(0, k="v" * 131055)}),
    ],
)
async def test_config_accepted(target: Target, config: dict, expected: dict) -> None:
    """Pull-only limits on push consumers (and the reverse) are accepted and echoed.

    Metadata: user keys named like the server's are replaced; the 128 KiB limit counts
    the server's stored "_nats.req.level" (16 bytes), so the user may use 131056 bytes.
    """
    async with connected(target) as nc:
        await add_stream(nc)
        same(await create(nc, "S", "C", config), created(cfg("C", **expected)))


@pytest.mark.parametrize(
    "config, expected",
    [
        ({"max_deliver": -5}, {}),
        ({"max_deliver": 0}, {}),
        ({"max_waiting": -1}, {}),
        ({"deliver_subject": "d", "max_waiting": -1}, {"deliver_subject": "d"}),
        ({"max_ack_pending": -5}, {"max_ack_pending": -1}),
        ({"max_batch": -1, "max_expires": -1, "max_bytes": -1}, {}),
        ({"inactive_threshold": -1}, {}),
        ({"idle_heartbeat": -1}, {}),
        # the api level is decided before the value is cleared
        ({"priority_timeout": -1}, {"metadata": meta(1)}),
    ],
)
async def test_out_of_range_values_are_replaced(target: Target, config: dict, expected: dict) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        same(await create(nc, "S", "C", config), created(cfg("C", **expected)))


@pytest.mark.parametrize(
    "config, text",
    [
        ({"max_deliver": -2}, "max_deliver must be set to -1"),
        ({"max_waiting": -1}, "max_waiting must not be negative"),
        ({"max_ack_pending": -2}, "max_ack_pending must be set to -1"),
        ({"max_batch": -1}, "max_batch must not be negative"),
        ({"max_expires": -1}, "max_expires must not be negative"),
        ({"max_bytes": -1}, "max_bytes must not be negative"),
        ({"idle_heartbeat": -1}, "idle_heartbeat must not be negative"),
        ({"inactive_threshold": -5, "priority_timeout": -5}, "inactive_threshold must not be negative"),
        ({"priority_timeout": -1}, "priority_timeout must not be negative"),
        ({"ack_policy": "explicit", "backoff": [SEC]}, "first backoff value has to equal batch AckWait"),
    ],
)
async def test_pedantic_mode(target: Target, config: dict, text: str) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        reply = await create(nc, "S", "C", config, pedantic=True)
        assert reply == create_failure(400, 10157, "pedantic mode: " + text)


async def test_pedantic_mode_accepts_explicit_values(target: Target) -> None:
    """Pedantic mode does not fill in the flow_control ack policy's settings."""
    async with connected(target) as nc:
        await add_stream(nc)
        config = {"ack_policy": "explicit", "backoff": [SEC], "ack_wait": SEC}
        same(await create(nc, "S", "A", config, pedantic=True), created(cfg("A", **config, max_ack_pending=1000)))
        reply = await create(nc, "S", "B", {"ack_policy": "flow_control", "deliver_subject": "d"}, pedantic=True)
        assert reply == create_failure(400, 10219, "flow control ack policy requires flow control")
        reply = await create(
            nc, "S", "B", {"ack_policy": "flow_control", "deliver_subject": "d", "flow_control": True}, pedantic=True
        )
        assert reply == create_failure(500, 10052, "flow control ack policy heartbeat needs to be 1s")
        fc = {
            "ack_policy": "flow_control",
            "deliver_subject": "d",
            "flow_control": True,
            "idle_heartbeat": SEC,
            "max_ack_pending": 5,
        }
        same(await create(nc, "S", "B", fc, pedantic=True), created(cfg("B", **fc, metadata=meta(4))))


async def test_priority_policies(target: Target) -> None:
    """pinned_client gets priority_timeout 2m; the info lists the first group with a zero pinned_ts."""
    async with connected(target) as nc:
        await add_stream(nc)
        groups = [{"group": "A", "pinned_ts": ZERO_TIME}]
        for policy in ("pinned_client", "overflow", "prioritized"):
            reply = await create(nc, "S", policy, {"priority_policy": policy, "priority_groups": ["A", "b-2/=_"]})
            timeout = 120 * SEC if policy == "pinned_client" else None
            expected = cfg(
                policy,
                metadata=meta(1),
                priority_groups=["A", "b-2/=_"],
                priority_policy=policy,
                priority_timeout=timeout,
            )
            same(reply, created(expected, priority_groups=groups))


# -- stream limits -------------------------------------------------------------------


async def test_stream_consumer_limits(target: Target) -> None:
    """consumer_limits fill max_ack_pending (even for ack none) and inactive_threshold (even for durables)."""
    async with connected(target) as nc:
        await add_stream(nc, "L", consumer_limits={"max_ack_pending": 50, "inactive_threshold": 10 * SEC})
        limits = {"max_ack_pending": 50, "inactive_threshold": 10 * SEC}
        same(
            await create(nc, "L", "A", {"durable_name": "A", "ack_policy": "explicit"}),
            created(cfg("A", durable=True, ack_policy="explicit", **limits), stream="L"),
        )
        same(await create(nc, "L", "F", {"durable_name": "F"}), created(cfg("F", durable=True, **limits), stream="L"))
        same(await create(nc, "L", "B", {}), created(cfg("B", **limits), stream="L"))
        reply = await create(nc, "L", "E", {"ack_policy": "explicit", "max_ack_pending": -1})
        same(
            reply, created(cfg("E", ack_policy="explicit", max_ack_pending=-1, inactive_threshold=10 * SEC), stream="L")
        )
        reply = await create(nc, "L", "C", {"ack_policy": "explicit", "max_ack_pending": 51})
        assert reply == create_failure(400, 10121, "consumer max ack pending exceeds system limit of 50")
        reply = await create(nc, "L", "D", {"inactive_threshold": 20 * SEC})
        assert reply == create_failure(400, 10153, "consumer inactive threshold exceeds system limit of 10s")
        reply = await create(nc, "L", "G", {"ack_policy": "explicit"}, pedantic=True)
        assert reply == create_failure(
            400, 10157, "pedantic mode: max_ack_pending must be set if it's configured in stream limits"
        )
        reply = await create(nc, "L", "H", {"ack_policy": "explicit", "max_ack_pending": 50}, pedantic=True)
        assert reply == create_failure(
            400, 10157, "pedantic mode: inactive_threshold must be set if it's configured in stream limits"
        )


async def test_stream_max_consumers(target: Target) -> None:
    """Updates of existing consumers still work at the limit; direct consumers do not count."""
    async with connected(target) as nc:
        await add_stream(nc, max_consumers=2)
        await ok_create(nc, "S", "A", {"durable_name": "A"})
        await ok_create(nc, "S", "B", {"durable_name": "B"})
        limit = create_failure(400, 10026, "maximum consumers limit reached")
        assert await create(nc, "S", "C", {"durable_name": "C"}) == limit
        assert await create(nc, "S", None, {}) == limit
        assert await create(nc, "S", "C", {"num_replicas": 3}) == create_failure(
            500, 10074, "replicas > 1 not supported in non-clustered mode"
        )
        same(
            await create(nc, "S", "B", {"durable_name": "B", "description": "x"}),
            created(cfg("B", durable=True, description="x")),
        )
        reply = await create(nc, "S", None, {"deliver_subject": "zz", "direct": True})
        assert "error" not in reply, reply
        names = await api(nc, f"{C}NAMES.S")
        assert (names["total"], names["consumers"]) == (2, ["A", "B"])


@pytest.mark.parametrize(
    "existing, config, err",
    [
        (
            [],
            {"durable_name": "A"},
            (400, 10084, "consumer in pull mode requires explicit ack policy on workqueue stream"),
        ),
        ([], {"durable_name": "A", "ack_policy": "all"}, (400, 10098, "workqueue stream requires explicit ack")),
        (
            [],
            {"durable_name": "A", "ack_policy": "none", "deliver_subject": "x"},
            (400, 10098, "workqueue stream requires explicit ack"),
        ),
        (
            [],
            {"durable_name": "A", "ack_policy": "explicit", "deliver_policy": "new"},
            (400, 10101, "consumer must be deliver all on workqueue stream"),
        ),
        (
            [],
            {"durable_name": "A", "ack_policy": "explicit", "deliver_policy": "last", "deliver_subject": "x"},
            (400, 10101, "consumer must be deliver all on workqueue stream"),
        ),
        (
            ["w.a"],
            {"durable_name": "A", "ack_policy": "explicit"},
            (400, 10099, "multiple non-filtered consumers not allowed on workqueue stream"),
        ),
        (
            [None],
            {"durable_name": "A", "ack_policy": "explicit", "filter_subject": "w.b"},
            (400, 10100, "filtered consumer not unique on workqueue stream"),
        ),
        (
            ["w.a"],
            {"durable_name": "A", "ack_policy": "explicit", "filter_subject": "w.*"},
            (400, 10100, "filtered consumer not unique on workqueue stream"),
        ),
        (
            ["w.a"],
            {"durable_name": "A", "ack_policy": "explicit", "filter_subjects": ["w.b", "w.a"]},
            (400, 10100, "filtered consumer not unique on workqueue stream"),
        ),
        (
            ["w.>"],
            {"durable_name": "A", "ack_policy": "explicit", "filter_subject": "w.b.c"},
            (400, 10100, "filtered consumer not unique on workqueue stream"),
        ),
    ],
)
async def test_workqueue_stream_rules(target: Target, existing: list, config: dict, err: tuple) -> None:
    async with connected(target) as nc:
        await add_stream(nc, "W", retention="workqueue")
        for index, filter_subject in enumerate(existing):
            other = {"durable_name": f"E{index}", "ack_policy": "explicit"}
            if filter_subject:
                other["filter_subject"] = filter_subject
            await ok_create(nc, "W", f"E{index}", other)
        assert await create(nc, "W", "A", config) == create_failure(*err)


async def test_workqueue_stream_disjoint_filters(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc, "W", retention="workqueue")
        a = {"durable_name": "A", "ack_policy": "explicit", "filter_subject": "w.a"}
        await ok_create(nc, "W", "A", a)
        b = {"durable_name": "B", "ack_policy": "explicit", "filter_subjects": ["w.b", "w.c"]}
        same(
            await create(nc, "W", "B", b),
            created(cfg("B", durable=True, ack_policy="explicit", filter_subjects=["w.b", "w.c"]), stream="W"),
        )
        # an existing consumer may keep its own filter, but not move onto another's
        same(
            await create(nc, "W", "A", {**a, "description": "x"}),
            created(cfg("A", durable=True, description="x", ack_policy="explicit", filter_subject="w.a"), stream="W"),
        )
        reply = await create(nc, "W", "B", {"durable_name": "B", "ack_policy": "explicit", "filter_subject": "w.a"})
        assert reply == create_failure(400, 10100, "filtered consumer not unique on workqueue stream")


async def test_workqueue_stream_check_order(target: Target) -> None:
    """The pull ack rule (config check) comes before the consumer limit, which comes before the work-queue rules."""
    async with connected(target) as nc:
        await add_stream(nc, "W", retention="workqueue", max_consumers=1)
        await ok_create(nc, "W", "A", {"durable_name": "A", "ack_policy": "explicit", "filter_subject": "w.a"})
        limit = create_failure(400, 10026, "maximum consumers limit reached")
        assert await create(nc, "W", "B", {"ack_policy": "all", "filter_subject": "w.a"}) == limit
        assert await create(nc, "W", "B", {"ack_policy": "explicit", "deliver_policy": "new"}) == limit
        pull = create_failure(400, 10084, "consumer in pull mode requires explicit ack policy on workqueue stream")
        assert await create(nc, "W", "B", {"ack_policy": "none", "filter_subject": "w.b"}) == pull


async def test_interest_stream_allows_any_ack_policy(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc, "I", retention="interest")
        same(await create(nc, "I", "A", {"durable_name": "A"}), created(cfg("A", durable=True), stream="I"))
        same(
            await create(nc, "I", "B", {"durable_name": "B", "deliver_policy": "new"}),
            created(cfg("B", durable=True, deliver_policy="new"), stream="I"),
        )


async def test_direct_consumer(target: Target) -> None:
    """Direct (internal) consumers: push ephemerals, answered with a Nats-Stream-Identity header, hidden from NAMES/LIST."""
    async with connected(target) as nc:
        await add_stream(nc)
        msg = await request(nc, f"{C}CREATE.S", b'{"stream_name":"S","config":{"deliver_subject":"zz","direct":true}}')
        assert msg.headers is not None and re.fullmatch(r"[A-Za-z0-9]{8}", msg.headers["Nats-Stream-Identity"]), (
            msg.headers
        )
        reply = json.loads(msg.data)
        same(reply, created(cfg(None, deliver_subject="zz", direct=True), name=reply["name"]))
        assert await api(nc, f"{C}NAMES.S") == {
            "type": T + "consumer_names_response",
            "total": 0,
            "offset": 0,
            "limit": 1024,
            "consumers": [],
        }
        assert (await api(nc, f"{C}LIST.S"))["consumers"] == []


# -- CONSUMER.INFO -------------------------------------------------------------------


async def test_info_after_deliveries_and_acks(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc, storage="memory")
        for _ in range(5):
            await put(nc, "s.a")
        await ok_create(nc, "S", "D", {"durable_name": "D", "ack_policy": "explicit"})
        msgs = await fetch_no_wait(nc, "S", "D", 3)
        await msgs[0].ack()
        reply = await wait_for_info(nc, "S", "D", lambda r: r["ack_floor"]["stream_seq"] == 1)
        expected = info(
            "consumer_info_response",
            cfg("D", durable=True, ack_policy="explicit"),
            delivered=seqs(3, 3, active=True),
            ack_floor=seqs(1, 1, active=True),
            num_ack_pending=2,
            num_pending=2,
        )
        same(reply, expected)


async def test_info_num_waiting(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        inbox = nc.new_inbox()
        await nc.subscribe(inbox + ".*")
        for index in range(2):
            await nc.publish(f"{C}MSG.NEXT.S.D", b'{"batch":1,"expires":10000000000}', reply=f"{inbox}.{index}")
        await nc.flush()
        reply = await wait_for_info(nc, "S", "D", lambda r: r["num_waiting"] == 2)
        same(reply, info("consumer_info_response", cfg("D", durable=True), num_waiting=2))


@pytest.mark.parametrize("body", [b'{"x":1}', b"null", b"[]", b"hello", b"{"])
async def test_info_requires_empty_body(target: Target, body: bytes) -> None:
    """Checked before the lookup: unknown streams and consumers get the same error."""
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        expected = failure("consumer_info_response", 400, 10038, "expected an empty request payload")
        for subject in (f"{C}INFO.S.D", f"{C}INFO.S.NOPE", f"{C}INFO.NOPE.NOPE"):
            assert await api(nc, subject, body) == expected


@pytest.mark.parametrize("body", [b"", b"{}", b" { } ", b"{\n}"])
async def test_info_accepts_empty_object(target: Target, body: bytes) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        same(await api(nc, f"{C}INFO.S.D", body), info("consumer_info_response", cfg("D", durable=True)))


async def test_info_unknown(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        assert await consumer_info(nc, "S", "NOPE") == failure(
            "consumer_info_response", 404, 10014, "consumer not found"
        )
        assert await consumer_info(nc, "NOPE", "X") == failure("consumer_info_response", 404, 10059, "stream not found")


# -- CONSUMER.DELETE -----------------------------------------------------------------


async def test_delete(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        await ok_create(nc, "S", "E", {})
        reply = await api(nc, f"{C}DELETE.S.D")
        assert list(reply) == ["type", "success"]
        assert reply == {"type": T + "consumer_delete_response", "success": True}
        assert await consumer_info(nc, "S", "D") == failure("consumer_info_response", 404, 10014, "consumer not found")
        assert await api(nc, f"{C}DELETE.S.D") == failure("consumer_delete_response", 404, 10014, "consumer not found")
        assert await api(nc, f"{C}DELETE.S.E", b" {} ") == {"type": T + "consumer_delete_response", "success": True}
        state = (await api(nc, "$JS.API.STREAM.INFO.S"))["state"]
        assert state["consumer_count"] == 0
        assert (await api(nc, f"{C}NAMES.S"))["consumers"] == []


@pytest.mark.parametrize("body", [b'{"x":1}', b"hello", b"null", b"[]"])
async def test_delete_requires_empty_body(target: Target, body: bytes) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        expected = failure("consumer_delete_response", 400, 10038, "expected an empty request payload")
        for subject in (f"{C}DELETE.S.D", f"{C}DELETE.S.NOPE", f"{C}DELETE.NOPE.NOPE"):
            assert await api(nc, subject, body) == expected
        assert "error" not in await consumer_info(nc, "S", "D")


async def test_delete_unknown(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        assert await api(nc, f"{C}DELETE.S.NOPE") == failure(
            "consumer_delete_response", 404, 10014, "consumer not found"
        )
        assert await api(nc, f"{C}DELETE.NOPE.X") == failure("consumer_delete_response", 404, 10059, "stream not found")


async def test_stream_delete_removes_consumers(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        # another stream keeps the account's streams directory from being
        # emptied: nats-server removes an empty one in the background, and a
        # create racing that fails with 10049
        await add_stream(nc, "KEEP")
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        await api(nc, "$JS.API.STREAM.DELETE.S")
        await add_stream(nc)
        assert await consumer_info(nc, "S", "D") == failure("consumer_info_response", 404, 10014, "consumer not found")


# -- CONSUMER.NAMES / CONSUMER.LIST --------------------------------------------------


async def test_names_and_list_of_stream_without_consumers(target: Target) -> None:
    """Empty lists are [] (not null, unlike STREAM.NAMES); limits 1024 and 256."""
    async with connected(target) as nc:
        await add_stream(nc)
        names = await api(nc, f"{C}NAMES.S")
        assert list(names) == ["type", "total", "offset", "limit", "consumers"]
        assert names == {"type": T + "consumer_names_response", "total": 0, "offset": 0, "limit": 1024, "consumers": []}
        listed = await api(nc, f"{C}LIST.S")
        assert listed == {"type": T + "consumer_list_response", "total": 0, "offset": 0, "limit": 256, "consumers": []}


async def test_names_sorted_bytewise_with_offset(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        for name in ("b", "a", "B", "10", "9", "_x"):
            await ok_create(nc, "S", name, {"durable_name": name})
        names = await api(nc, f"{C}NAMES.S")
        assert names == {
            "type": T + "consumer_names_response",
            "total": 6,
            "offset": 0,
            "limit": 1024,
            "consumers": ["10", "9", "B", "_x", "a", "b"],
        }
        names = await api(nc, f"{C}NAMES.S", {"offset": 4})
        assert names == {
            "type": T + "consumer_names_response",
            "total": 6,
            "offset": 4,
            "limit": 1024,
            "consumers": ["a", "b"],
        }
        names = await api(nc, f"{C}NAMES.S", {"offset": 10})
        assert names == {"type": T + "consumer_names_response", "total": 6, "offset": 6, "limit": 1024, "consumers": []}
        names = await api(nc, f"{C}NAMES.S", {"offset": -5})
        assert names["offset"] == 0 and len(names["consumers"]) == 6


async def test_list_reply(target: Target) -> None:
    """LIST configs carry only the stored metadata key _nats.req.level (no _nats.ver/_nats.level)."""
    async with connected(target) as nc:
        await add_stream(nc)
        await put(nc, "s.a")
        await ok_create(nc, "S", "b", {"durable_name": "b", "metadata": {"z": "1", "a": "2"}})
        await ok_create(nc, "S", "a", {"durable_name": "a", "ack_policy": "explicit"})
        await ok_create(nc, "S", "c", {"priority_policy": "overflow", "priority_groups": ["G"]})
        reply = await api(nc, f"{C}LIST.S")
        stored = {"_nats.req.level": "0"}

        def item(config: dict, **kw: Any) -> dict:
            doc = info("consumer_list_response", config, num_pending=1, **kw)
            del doc["type"]
            return doc

        same(
            reply,
            {
                "type": T + "consumer_list_response",
                "total": 3,
                "offset": 0,
                "limit": 256,
                "consumers": [
                    item(cfg("a", durable=True, ack_policy="explicit", metadata=stored)),
                    item(cfg("b", durable=True, metadata={**stored, "a": "2", "z": "1"})),
                    item(
                        cfg("c", metadata={"_nats.req.level": "1"}, priority_groups=["G"], priority_policy="overflow"),
                        priority_groups=[{"group": "G", "pinned_ts": ZERO_TIME}],
                    ),
                ],
            },
        )
        reply = await api(nc, f"{C}LIST.S", {"offset": 2})
        assert (reply["total"], reply["offset"], reply["limit"], [c["name"] for c in reply["consumers"]]) == (
            3,
            2,
            256,
            ["c"],
        )
        reply = await api(nc, f"{C}LIST.S", {"offset": 9})
        assert reply == {"type": T + "consumer_list_response", "total": 3, "offset": 3, "limit": 256, "consumers": []}


@pytest.mark.parametrize("body", [b"hello", b"null", b"7", b"", b" ", b"{}"])
async def test_names_and_list_ignore_bodies_that_are_not_objects(target: Target, body: bytes) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        assert (await api(nc, f"{C}NAMES.S", body))["consumers"] == ["D"]
        assert [c["name"] for c in (await api(nc, f"{C}LIST.S", body))["consumers"]] == ["D"]


@pytest.mark.parametrize(
    "body, text",
    [
        (b'{"bogus":1}', 'json: unknown field "bogus"'),
        (b'{"subject":"x"}', 'json: unknown field "subject"'),
        (
            b'{"offset":"x"}',
            "json: cannot unmarshal string into Go struct field JSApiConsumersRequest.offset of type int",
        ),
        (b"[1]", "json: cannot unmarshal array into Go value of type server.JSApiConsumersRequest"),
        (b'{"offset":1', "unexpected EOF"),
    ],
)
async def test_names_and_list_bad_json(target: Target, body: bytes, text: str) -> None:
    """Errors keep total/offset/limit (zero) and an empty consumers list; decoded before the stream lookup."""
    async with connected(target) as nc:
        await add_stream(nc)
        for kind, subject in (("consumer_names_response", f"{C}NAMES.S"), ("consumer_list_response", f"{C}LIST.NOPE")):
            expected = failure(kind, 400, 10025, "invalid JSON: " + text, total=0, offset=0, limit=0, consumers=[])
            assert await api(nc, subject, body) == expected


async def test_names_and_list_unknown_stream(target: Target) -> None:
    async with connected(target) as nc:
        for kind, verb in (("consumer_names_response", "NAMES"), ("consumer_list_response", "LIST")):
            expected = failure(kind, 404, 10059, "stream not found", total=0, offset=0, limit=0, consumers=[])
            assert await api(nc, f"{C}{verb}.NOPE") == expected


@pytest.mark.slow
async def test_list_page_limit(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        for index in range(257):
            await ok_create(nc, "S", f"X{index:03d}", {"durable_name": f"X{index:03d}"})
        listed = await api(nc, f"{C}LIST.S", timeout=10)
        assert (listed["total"], listed["offset"], listed["limit"], len(listed["consumers"])) == (257, 0, 256, 256)
        assert listed["consumers"][-1]["name"] == "X255"
        listed = await api(nc, f"{C}LIST.S", {"offset": 256})
        assert [c["name"] for c in listed["consumers"]] == ["X256"]
        names = await api(nc, f"{C}NAMES.S")
        assert (names["total"], names["limit"], len(names["consumers"])) == (257, 1024, 257)


# -- CONSUMER.PAUSE ------------------------------------------------------------------


def paused_reply(until: str, remaining: bool) -> dict:
    doc: dict[str, Any] = {"type": T + "consumer_pause_response", "paused": remaining, "pause_until": until}
    if remaining:
        doc["pause_remaining"] = NS
    return doc


async def test_pause_until_future(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await put(nc, "s.a")
        await ok_create(nc, "S", "D", {"durable_name": "D", "ack_policy": "explicit"})
        reply = await api(nc, f"{C}PAUSE.S.D", {"pause_until": FUTURE})
        assert reply["pause_until"] == FUTURE
        assert 0 < reply["pause_remaining"] <= 2_300_000_000 * SEC
        same(reply, paused_reply(TS, True))
        expected_cfg = cfg("D", durable=True, ack_policy="explicit", metadata=meta(1), pause_until=TS)
        same(
            await consumer_info(nc, "S", "D"),
            info("consumer_info_response", expected_cfg, num_pending=1, paused=True, pause_remaining=NS),
        )
        assert (await consumer_info(nc, "S", "D"))["config"]["pause_until"] == FUTURE


async def test_pause_until_past(target: Target) -> None:
    """A past deadline is stored and reported, but the consumer is not paused."""
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        reply = await api(nc, f"{C}PAUSE.S.D", {"pause_until": "2000-01-01T00:00:00Z"})
        assert reply == {"type": T + "consumer_pause_response", "paused": False, "pause_until": "2000-01-01T00:00:00Z"}
        same(
            await consumer_info(nc, "S", "D"),
            info("consumer_info_response", cfg("D", durable=True, metadata=meta(1), pause_until=TS)),
        )


@pytest.mark.parametrize("body", [b"", b"{}", b"null", b"hello", b'{"pause_until":"0001-01-01T00:00:00Z"}'])
async def test_resume(target: Target, body: bytes) -> None:
    """An empty, zero or non-JSON body resumes: pause_until leaves the config, the api level drops back to 0."""
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        await api(nc, f"{C}PAUSE.S.D", {"pause_until": FUTURE})
        reply = await api(nc, f"{C}PAUSE.S.D", body)
        assert list(reply) == ["type", "paused", "pause_until"]
        assert reply == {"type": T + "consumer_pause_response", "paused": False, "pause_until": ZERO_TIME}
        same(await consumer_info(nc, "S", "D"), info("consumer_info_response", cfg("D", durable=True)))


async def test_pause_until_is_converted_to_utc(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        reply = await api(nc, f"{C}PAUSE.S.D", {"pause_until": "2099-01-01T00:00:00+02:00"})
        assert reply["pause_until"] == "2098-12-31T22:00:00Z"
        reply = await api(nc, f"{C}PAUSE.S.D", {"pause_until": "2099-01-01T00:00:00.123456789Z"})
        assert reply["pause_until"] == "2099-01-01T00:00:00.123456789Z"
        assert (await consumer_info(nc, "S", "D"))["config"]["pause_until"] == "2099-01-01T00:00:00.123456789Z"


@pytest.mark.parametrize(
    "body, text",
    [
        (b'{"bogus":1}', 'json: unknown field "bogus"'),
        (b'{"pause_until":"bad"}', 'parsing time "bad" as "2006-01-02T15:04:05Z07:00": cannot parse "bad" as "2006"'),
        (
            b'{"pause_until":5}',
            "json: cannot unmarshal number into Go struct field JSApiConsumerPauseRequest.pause_until of type time.Time",
        ),
        (b"[1]", "json: cannot unmarshal array into Go value of type server.JSApiConsumerPauseRequest"),
    ],
)
async def test_pause_bad_json(target: Target, body: bytes, text: str) -> None:
    """Decoded before the lookup; the error keeps paused false and the zero pause_until."""
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        expected = failure(
            "consumer_pause_response", 400, 10025, "invalid JSON: " + text, paused=False, pause_until=ZERO_TIME
        )
        assert await api(nc, f"{C}PAUSE.S.D", body) == expected
        assert await api(nc, f"{C}PAUSE.NOPE.D", body) == expected


async def test_pause_unknown(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        extra = {"paused": False, "pause_until": ZERO_TIME}
        reply = await api(nc, f"{C}PAUSE.S.NOPE", {"pause_until": FUTURE})
        assert list(reply) == ["type", "error", "paused", "pause_until"]
        assert reply == failure("consumer_pause_response", 404, 10014, "consumer not found", **extra)
        assert await api(nc, f"{C}PAUSE.NOPE.X") == failure(
            "consumer_pause_response", 404, 10059, "stream not found", **extra
        )


async def test_create_paused_consumer(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        reply = await create(nc, "S", "P", {"pause_until": FUTURE})
        same(reply, created(cfg("P", metadata=meta(1), pause_until=TS), paused=True, pause_remaining=NS))
        reply = await create(nc, "S", "Q", {"pause_until": "2000-01-01T00:00:00Z"})
        same(reply, created(cfg("Q", metadata=meta(1), pause_until=TS)))


# -- CONSUMER.RESET ------------------------------------------------------------------


def reset_reply(config: dict, reset_seq: int, **kw: Any) -> dict:
    return info("consumer_reset_response", config, reset_seq=reset_seq, **kw)


async def _acked_consumer(nc: Client) -> None:
    """Memory stream S with 5 messages; D (explicit) got 1-3 and acked 1."""
    await add_stream(nc, storage="memory")
    for _ in range(5):
        await put(nc, "s.a")
    await ok_create(nc, "S", "D", {"durable_name": "D", "ack_policy": "explicit"})
    msgs = await fetch_no_wait(nc, "S", "D", 3)
    await msgs[0].ack()
    await wait_for_info(nc, "S", "D", lambda r: r["ack_floor"]["stream_seq"] == 1)


EXPLICIT_D = cfg("D", durable=True, ack_policy="explicit")


@pytest.mark.parametrize("body", [b"", b"{}", b'{"seq":0}', b'{"bogus":1}'])
async def test_reset_to_ack_floor(target: Target, body: bytes) -> None:
    """No sequence: back to ack floor + 1.  Unknown fields are ignored here (not a strict decoder)."""
    async with connected(target) as nc:
        await _acked_consumer(nc)
        reply = await api(nc, f"{C}RESET.S.D", body)
        same(reply, reset_reply(EXPLICIT_D, 2, delivered=seqs(0, 1), ack_floor=seqs(0, 1), num_pending=4))
        same(
            await consumer_info(nc, "S", "D"),
            info("consumer_info_response", EXPLICIT_D, delivered=seqs(0, 1), ack_floor=seqs(0, 1), num_pending=4),
        )


@pytest.mark.parametrize("seq, pending", [(1, 5), (4, 2), (100, 0)])
async def test_reset_to_sequence(target: Target, seq: int, pending: int) -> None:
    async with connected(target) as nc:
        await _acked_consumer(nc)
        reply = await api(nc, f"{C}RESET.S.D", {"seq": seq})
        same(
            reply,
            reset_reply(EXPLICIT_D, seq, delivered=seqs(0, seq - 1), ack_floor=seqs(0, seq - 1), num_pending=pending),
        )


async def test_reset_reply_bytes(target: Target) -> None:
    """The reset reply goes out with an empty reply-to field: two spaces in the MSG line."""
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", {"durable_name": "D"})
    client = await RawClient.connect(target.host, target.port)
    try:
        await client.read_until(b"\r\n")
        client.received.clear()
        await client.send(b'CONNECT {"verbose":false,"headers":true}\r\nSUB r.> 1\r\n')
        await client.send(b"PUB $JS.API.CONSUMER.RESET.S.D r.1 0\r\n\r\n")
        await client.read_until(b'"reset_seq":1}\r\n')
        await client.send(b"PUB $JS.API.CONSUMER.RESET.S.D r.2 5\r\nhello\r\n")
        await client.read_until(b'"reset_seq":0}\r\n')
        await client.send(b"PUB $JS.API.CONSUMER.INFO.S.D r.3 0\r\n\r\n")
        await client.read_until(b'"ts":')
        data = await client.settle(0.1)
    finally:
        await client.close()
    replies = re.findall(rb"MSG (r\.\d) 1 ( ?)(\d+)\r\n", data)
    assert [(subject, space) for subject, space, _ in replies] == [(b"r.1", b" "), (b"r.2", b" "), (b"r.3", b"")]
    head = b"MSG r.2 1  194\r\n"
    body = b'{"type":"io.nats.jetstream.api.v1.consumer_reset_response","error":{"code":400,"err_code":10025,"description":"invalid JSON: invalid character \'h\' looking for beginning of value"},"reset_seq":0}\r\n'
    assert head + body in data
    for subject, _, size in replies:
        start = data.index(b"\r\n", data.index(b"MSG " + subject)) + 2
        assert data[start + int(size) : start + int(size) + 2] == b"\r\n"


@pytest.mark.parametrize(
    "config, seq, text, allowed, floor",
    [
        ({"deliver_policy": "new"}, 2, "not allowed", None, 6),
        ({"deliver_policy": "last"}, 1, "not allowed", None, 5),
        ({"deliver_policy": "last_per_subject", "filter_subject": "s.*"}, 1, "not allowed", None, 5),
        ({"deliver_policy": "by_start_sequence", "opt_start_seq": 3}, 2, "below start seq", 3, 3),
        ({"deliver_policy": "by_start_time", "opt_start_time": MSG4}, 3, "below start time", 4, 4),
    ],
)
async def test_reset_invalid(
    target: Target, config: dict, seq: int, text: str, allowed: int | None, floor: int
) -> None:
    """Only deliver all may go anywhere; start-sequence/time consumers not below their start; others only to the ack floor."""
    async with connected(target) as nc:
        await add_stream(nc)
        for _ in range(5):
            await put(nc, "s.a")
        config = dict(config)
        if config.get("opt_start_time") == MSG4:
            config["opt_start_time"] = (await api(nc, "$JS.API.STREAM.MSG.GET.S", {"seq": 4}))["message"]["time"]
        await ok_create(nc, "S", "D", {"durable_name": "D", **config})
        reply = await api(nc, f"{C}RESET.S.D", {"seq": seq})
        assert list(reply) == ["type", "error", "reset_seq"]
        assert reply == failure("consumer_reset_response", 400, 10204, "invalid reset: " + text, reset_seq=0)
        if allowed is not None:
            assert (await api(nc, f"{C}RESET.S.D", {"seq": allowed}))["reset_seq"] == allowed
        else:
            assert await api(nc, f"{C}RESET.S.D", {"seq": 7}) == reply
        assert (await api(nc, f"{C}RESET.S.D"))["reset_seq"] == floor


@pytest.mark.parametrize(
    "body, text",
    [
        (b"hello", "invalid character 'h' looking for beginning of value"),
        (
            b'{"seq":-1}',
            "json: cannot unmarshal number -1 into Go struct field JSApiConsumerResetRequest.seq of type uint64",
        ),
        (
            b'{"seq":"1"}',
            "json: cannot unmarshal string into Go struct field JSApiConsumerResetRequest.seq of type uint64",
        ),
        (b"[1]", "json: cannot unmarshal array into Go value of type server.JSApiConsumerResetRequest"),
        (b'{"seq":1', "unexpected end of JSON input"),
    ],
)
async def test_reset_bad_json(target: Target, body: bytes, text: str) -> None:
    """A plain json.Unmarshal: no "at offset" in syntax errors."""
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        reply = await api(nc, f"{C}RESET.S.D", body)
        assert reply == failure("consumer_reset_response", 400, 10025, "invalid JSON: " + text, reset_seq=0)


@pytest.mark.parametrize("subject", [f"{C}RESET.S.NOPE", f"{C}RESET.NOPE.D"])
async def test_reset_unknown_consumer_gets_no_reply(target: Target, subject: str) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        with pytest.raises(NatsTimeoutError):
            await request(nc, subject, b"", timeout=0.3)


# -- UNPIN, LEADER.STEPDOWN, MSG.NEXT ---------------------------------------------------


@pytest.mark.parametrize(
    "body, err",
    [
        (b'{"group":"B"}', (400, 10160, "Provided priority group does not exist for this consumer")),
        (b"", (400, 10025, "invalid JSON: unexpected end of JSON input")),
        (b"{}", (400, 10025, "invalid JSON: consumer group not specified")),
        (b"null", (400, 10025, "invalid JSON: consumer group not specified")),
        (b'{"group":""}', (400, 10025, "invalid JSON: consumer group not specified")),
        (b'{"bogus":1}', (400, 10025, "invalid JSON: consumer group not specified")),
        (b"hello", (400, 10025, "invalid JSON: invalid character 'h' looking for beginning of value")),
        (b'{"group":"x.y"}', (400, 10162, PRIORITY_NAME)),
    ],
)
async def test_unpin_errors(target: Target, body: bytes, err: tuple) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(
            nc, "S", "P", {"durable_name": "P", "priority_policy": "pinned_client", "priority_groups": ["A"]}
        )
        assert await api(nc, f"{C}UNPIN.S.P", body) == failure("consumer_unpin_response", *err)


async def test_unpin_consumer_without_pinned_client(target: Target) -> None:
    """Nothing pinned is no error; the success reply has only its type."""
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(
            nc, "S", "P", {"durable_name": "P", "priority_policy": "pinned_client", "priority_groups": ["A"]}
        )
        await ok_create(nc, "S", "O", {"durable_name": "O", "priority_policy": "overflow", "priority_groups": ["A"]})
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        assert await api(nc, f"{C}UNPIN.S.P", {"group": "A"}) == {"type": T + "consumer_unpin_response"}
        assert await api(nc, f"{C}UNPIN.S.O", {"group": "A"}) == {"type": T + "consumer_unpin_response"}
        reply = await api(nc, f"{C}UNPIN.S.D", {"group": "A"})
        assert reply == failure(
            "consumer_unpin_response", 400, 10160, "Provided priority group does not exist for this consumer"
        )


async def test_unpin_unknown(target: Target) -> None:
    """The body is checked before the lookup."""
    async with connected(target) as nc:
        await add_stream(nc)
        assert await api(nc, f"{C}UNPIN.S.NOPE", {"group": "A"}) == failure(
            "consumer_unpin_response", 404, 10014, "consumer not found"
        )
        assert await api(nc, f"{C}UNPIN.NOPE.X", {"group": "A"}) == failure(
            "consumer_unpin_response", 404, 10059, "stream not found"
        )
        assert await api(nc, f"{C}UNPIN.NOPE.X") == failure(
            "consumer_unpin_response", 400, 10025, "invalid JSON: unexpected end of JSON input"
        )


@pytest.mark.parametrize("consumer", ["D", "NOPE"])
async def test_leader_stepdown_needs_clustering(target: Target, consumer: str) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        expected = failure("consumer_leader_stepdown_response", 503, 10010, "JetStream clustering support required")
        assert await api(nc, f"{C}LEADER.STEPDOWN.S.{consumer}") == expected
        assert (
            await api(
                nc,
                f"{C}LEADER.STEPDOWN.NOPE.{consumer}",
                {"placement": {"cluster": "c"}},
                headers={"Nats-Required-Api-Level": "99"},
            )
            == expected
        )


async def test_msg_next_for_unknown_consumer_has_no_responders(target: Target) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        with pytest.raises(NoRespondersError):
            await request(nc, f"{C}MSG.NEXT.S.NOPE", b"", timeout=1)


# -- API level and error shapes ---------------------------------------------------------

LEVEL = error(412, 10185, "JetStream minimum api level required")


@pytest.mark.parametrize(
    "subject, body, kind, extra",
    [
        (f"{C}CREATE.S.X", b'{"stream_name":"S"}', "consumer_create_response", {}),
        (f"{C}INFO.S.D", b"", "consumer_info_response", {}),
        (f"{C}DELETE.S.D", b"", "consumer_delete_response", {}),
        (f"{C}NAMES.S", b"", "consumer_names_response", {"total": 0, "offset": 0, "limit": 0, "consumers": []}),
        (f"{C}LIST.S", b"", "consumer_list_response", {"total": 0, "offset": 0, "limit": 0, "consumers": []}),
        (f"{C}PAUSE.S.D", b"", "consumer_pause_response", {"paused": False, "pause_until": ZERO_TIME}),
        (f"{C}RESET.S.D", b"", "consumer_reset_response", {"reset_seq": 0}),
        (f"{C}UNPIN.S.D", b'{"group":"A"}', "consumer_unpin_response", {}),
    ],
)
async def test_required_api_level_header(target: Target, subject: str, body: bytes, kind: str, extra: dict) -> None:
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        reply = await api(nc, subject, body, headers={"Nats-Required-Api-Level": "6"})
        assert reply == {"type": T + kind, "error": LEVEL, **extra}
        assert "error" not in await consumer_info(nc, "S", "D")
        reply = await api(nc, subject, body, headers={"Nats-Required-Api-Level": "5"})
        assert reply.get("error", {}).get("err_code") != 10185


BOGUS = error(400, 10025, 'invalid JSON: json: unknown field "bogus"')
NOT_EMPTY = error(400, 10038, "expected an empty request payload")


@pytest.mark.parametrize(
    "subject, body, keys, err",
    [
        (f"{C}CREATE.S.D", b'{"bogus":true}', ["type", "error"], BOGUS),
        (f"{C}CREATE.S", b'{"bogus":true}', ["type", "error"], BOGUS),
        (f"{C}DURABLE.CREATE.S.D", b'{"bogus":true}', ["type", "error"], BOGUS),
        (f"{C}INFO.S.D", b'{"bogus":true}', ["type", "error"], NOT_EMPTY),
        (f"{C}DELETE.S.D", b'{"bogus":true}', ["type", "error"], NOT_EMPTY),
        (f"{C}NAMES.S", b'{"bogus":true}', ["type", "error", "total", "offset", "limit", "consumers"], BOGUS),
        (f"{C}LIST.S", b'{"bogus":true}', ["type", "error", "total", "offset", "limit", "consumers"], BOGUS),
        (f"{C}PAUSE.S.D", b'{"bogus":true}', ["type", "error", "paused", "pause_until"], BOGUS),
        (
            f"{C}RESET.S.D",
            b"[true]",
            ["type", "error", "reset_seq"],
            error(
                400,
                10025,
                "invalid JSON: json: cannot unmarshal array into Go value of type server.JSApiConsumerResetRequest",
            ),
        ),
        (
            f"{C}UNPIN.S.D",
            b'{"bogus":true}',
            ["type", "error"],
            error(400, 10025, "invalid JSON: consumer group not specified"),
        ),
        (
            f"{C}LEADER.STEPDOWN.S.D",
            b'{"bogus":true}',
            ["type", "error"],
            error(503, 10010, "JetStream clustering support required"),
        ),
    ],
)
async def test_error_reply_fields(target: Target, subject: str, body: bytes, keys: list[str], err: dict) -> None:
    """Which fields accompany "error", in order; the error itself is {code, err_code, description}."""
    async with connected(target) as nc:
        await add_stream(nc)
        await ok_create(nc, "S", "D", {"durable_name": "D"})
        reply = await api(nc, subject, body)
        assert list(reply) == keys
        assert list(reply["error"]) == ["code", "err_code", "description"]
        assert reply["error"] == err
