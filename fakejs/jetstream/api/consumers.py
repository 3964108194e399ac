"""``$JS.API.CONSUMER.*``: thin handlers over streams and consumers.

Creation rules that depend on the stream (existing consumers, actions,
work-queue partitioning, limits) live in :meth:`Stream.add_consumer`; the
handlers here decode requests, check names against the subject and shape
the replies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakejs.gocompat import gotime
from fakejs.gocompat.gojson import Field, GoJSONError, Struct, loads
from fakejs.jetstream.api.dispatch import Request, encode, handler
from fakejs.jetstream.api.streams import is_empty_request
from fakejs.jetstream.apilevel import required_level
from fakejs.jetstream.config import consumer as consumerconfig
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.service import ASSET_HANDLERS
from fakejs.protocol import headers as hdrs

if TYPE_CHECKING:
    from fakejs.jetstream.consumer.consumer import Consumer
    from fakejs.jetstream.service import JetStream

NAMES_LIMIT = 1024
LIST_LIMIT = 256
PAGED_REQUEST = Struct("JSApiConsumersRequest", (Field("offset", "int"),))
PAUSE_REQUEST = Struct("JSApiConsumerPauseRequest", (Field("pause_until", "time.Time"),))
RESET_REQUEST = Struct("JSApiConsumerResetRequest", (Field("seq", "uint64"),))


def _lookup(js: JetStream, stream_name: str, consumer_name: str) -> Consumer:
    stream = js.lookup(stream_name)
    consumer = stream.consumers.get(consumer_name)
    if consumer is None:
        raise api_error("JSConsumerNotFoundErr")
    return consumer


# -- create --------------------------------------------------------------------------------


def _create(js: JetStream, request: Request) -> dict[str, Any]:
    body = request.decode(consumerconfig.CREATE_REQUEST)
    request.check_level()
    tokens = request.tokens
    filtered = ""
    if len(tokens) < 5:
        raise api_error("JSBadRequestErr")
    if len(tokens) == 5:
        kind = "ephemeral"
        stream_name = tokens[4]
        consumer_name = (body.get("config") or {}).get("name", "")
    elif tokens[3] == "DURABLE":
        kind = "durable"
        if len(tokens) != 7:
            raise api_error("JSConsumerDurableNameNotInSubjectErr")
        stream_name, consumer_name = tokens[5], tokens[6]
    else:
        kind = "named"
        stream_name, consumer_name = tokens[4], tokens[5]
        if len(tokens) > 6:
            filtered = ".".join(tokens[6:])
    config = consumerconfig.from_request(body.get("config") or {})
    action = body.get("action", "")
    pedantic = bool(body.get("pedantic", False))
    if stream_name != body.get("stream_name", ""):
        raise api_error("JSStreamMismatchErr")
    if consumer_name and ("\\" in consumer_name or "/" in consumer_name):
        raise api_error("JSConsumerNameContainsPathSeparatorsErr")
    if kind == "durable":
        if not config["durable_name"]:
            raise api_error("JSConsumerDurableNameNotSetErr")
        if consumer_name != config["durable_name"]:
            raise api_error("JSConsumerDurableNameNotMatchSubjectErr")
        config["name"] = consumer_name
    if kind == "named":
        if config["durable_name"] and consumer_name != config["durable_name"]:
            raise api_error("JSConsumerDurableNameNotMatchSubjectErr")
        config["name"] = consumer_name
    if kind == "ephemeral" and config["durable_name"]:
        raise api_error("JSConsumerEphemeralWithDurableNameErr")
    if filtered and config["filter_subjects"]:
        raise api_error("JSConsumerMultipleFiltersNotAllowed")
    if filtered and config["filter_subject"] != filtered:
        raise api_error("JSConsumerCreateFilterSubjectMismatchErr")
    if config["num_replicas"] > 1:
        raise api_error("JSStreamReplicasNotSupportedErr")
    stream = js.lookup(stream_name)
    existing = stream.consumers.get(consumer_name) if consumer_name else None
    if existing is not None:
        config["pause_until"] = existing.config["pause_until"]
    identity = ""
    if config["direct"] or config["sourcing"]:
        identity = stream.identity()
        asked = hdrs.get(request.hdr, "Nats-Stream-Identity")
        if asked and asked.decode("utf-8", "replace") != identity:
            raise api_error("JSConsumerStreamIdentityMismatchF", msg=identity)
    consumerconfig.set_static_metadata(config)
    consumer = stream.add_consumer(config, action, pedantic)
    if identity:
        request.reply_headers = hdrs.build([("Nats-Stream-Identity", identity)])
    return consumer.info()


for _pattern in ("$JS.API.CONSUMER.CREATE.*", "$JS.API.CONSUMER.CREATE.*.>", "$JS.API.CONSUMER.DURABLE.CREATE.*.*"):
    handler(_pattern, "consumer_create_response", level_first=False)(_create)


# -- info / delete / names / list -----------------------------------------------------------


@handler("$JS.API.CONSUMER.INFO.*.*", "consumer_info_response")
def consumer_info(js: JetStream, request: Request) -> dict[str, Any]:
    if not is_empty_request(request.payload):
        raise api_error("JSNotEmptyRequestErr")
    return _lookup(js, request.token(4), request.token(5)).info()


@handler("$JS.API.CONSUMER.DELETE.*.*", "consumer_delete_response")
def consumer_delete(js: JetStream, request: Request) -> dict[str, Any]:
    if not is_empty_request(request.payload):
        raise api_error("JSNotEmptyRequestErr")
    consumer = _lookup(js, request.token(4), request.token(5))
    consumer.stream.remove_consumer(consumer)
    return {"success": True}


def _page(js: JetStream, request: Request) -> tuple[list[Consumer], int, int]:
    body = request.decode_if_json(PAGED_REQUEST)
    offset = max(body.get("offset", 0), 0)
    stream = js.lookup(request.token(4))
    # Direct consumers are internal: never listed.
    consumers = sorted((c for c in stream.consumers.values() if not c.config["direct"]), key=lambda c: c.name)
    total = len(consumers)
    return consumers, total, min(offset, total)


@handler("$JS.API.CONSUMER.NAMES.*", "consumer_names_response")
def consumer_names(js: JetStream, request: Request) -> dict[str, Any]:
    consumers, total, offset = _page(js, request)
    names = [c.name for c in consumers[offset : offset + NAMES_LIMIT]]
    return {"total": total, "offset": offset, "limit": NAMES_LIMIT, "consumers": names}


@handler("$JS.API.CONSUMER.LIST.*", "consumer_list_response")
def consumer_list(js: JetStream, request: Request) -> dict[str, Any]:
    consumers, total, offset = _page(js, request)
    infos = [c.info(dynamic_metadata=False) for c in consumers[offset : offset + LIST_LIMIT]]
    return {"total": total, "offset": offset, "limit": LIST_LIMIT, "consumers": infos}


# -- pause / reset / cluster-only --------------------------------------------------------------


@handler("$JS.API.CONSUMER.PAUSE.*.*", "consumer_pause_response")
def consumer_pause(js: JetStream, request: Request) -> dict[str, Any]:
    body = request.decode_if_json(PAUSE_REQUEST)
    consumer = _lookup(js, request.token(4), request.token(5))
    until = body.get("pause_until")
    until = None if until is None or until.is_zero else until.utc()
    consumer.pause(until)
    now = js.clock.time_ns()
    paused = until is not None and until.ns > now
    out: dict[str, Any] = {"paused": paused, "pause_until": until.text() if until is not None else gotime.ZERO_TIME}
    if paused:
        assert until is not None
        out["pause_remaining"] = until.ns - now
    return out


def reset_request(consumer: Consumer, reply: str, hdr: bytes | None, payload: bytes) -> None:
    """``$JS.API.CONSUMER.RESET``: answered by the consumer itself, not counted as an API call."""
    if not reply:
        return
    js = consumer.js
    response_type = "io.nats.jetstream.api.v1.consumer_reset_response"
    try:
        if required_level(hdr):
            raise api_error("JSRequiredApiLevelErr")
        seq = 0
        if payload:
            try:
                fields = loads(payload)
                from fakejs.gocompat.gojson import decode

                seq = decode(RESET_REQUEST, fields).get("seq", 0)
            except GoJSONError as exc:
                raise api_error("JSInvalidJSONErr", err=str(exc)) from None
        reset_seq = consumer.reset_to(seq)
    except ApiError as error:
        js.reply(reply, encode({"type": response_type, "error": error.to_dict(), "reset_seq": 0}), empty_reply=True)
        return
    doc = {"type": response_type, **consumer.info(), "reset_seq": reset_seq}
    js.reply(reply, encode(doc), empty_reply=True)


UNPIN_REQUEST = Struct("JSApiConsumerUnpinRequest", (Field("group", "string"),))


@handler("$JS.API.CONSUMER.UNPIN.*.*", "consumer_unpin_response")
def consumer_unpin(js: JetStream, request: Request) -> dict[str, Any]:
    from fakejs.gocompat.gojson import decode

    try:
        body = decode(UNPIN_REQUEST, loads(request.payload))
    except GoJSONError as exc:
        raise api_error("JSInvalidJSONErr", err=str(exc)) from None
    group = body.get("group", "")
    if not group:
        raise api_error("JSInvalidJSONErr", err="consumer group not specified")
    if not consumerconfig.is_valid_group_name(group):
        raise api_error("JSConsumerInvalidGroupNameErr")
    consumer = _lookup(js, request.token(4), request.token(5))
    if group not in consumer.config["priority_groups"]:
        raise api_error("JSConsumerInvalidPriorityGroupErr")
    if consumer.priority is not None:
        consumer.priority.unpin(group)
    return {}


def _needs_cluster(js: JetStream, request: Request) -> dict[str, Any]:
    raise api_error("JSClusterRequiredErr")


for _pattern, _type in (
    ("$JS.API.CONSUMER.LEADER.STEPDOWN.*.*", "consumer_leader_stepdown_response"),
    ("$JS.API.CONSUMER.PEER.REMOVE.*.*", "consumer_remove_peer_response"),
    ("$JS.API.CONSUMER.PEER.EVACUATE.*.*", "consumer_evacuate_peer_response"),
):
    handler(_pattern, _type, level_first=False)(_needs_cluster)


ASSET_HANDLERS["consumer.reset"] = reset_request
