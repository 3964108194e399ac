"""``$JS.API.CONSUMER.*``: decode the request, call the consumer domain, shape the reply.

Creation checks that the body agrees with the subject it came on (stream
name, consumer name, filter); everything about the stream and its other
consumers is :meth:`JetStream.add_consumer`'s business.  ``CONSUMER.RESET``
is received by the consumer itself and handed over here.
"""

from __future__ import annotations

from typing import Any

from fakejs.gocompat import gotime
from fakejs.gocompat.gojson import Field, Struct
from fakejs.jetstream import advisories
from fakejs.jetstream.api.request import Request
from fakejs.jetstream.api.table import Reply
from fakejs.jetstream.config import consumer as consumerconfig
from fakejs.jetstream.config.consumer import ConsumerConfig
from fakejs.jetstream.consumer.consumer import Consumer
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.service import JetStream
from fakejs.protocol import headers as hdrs

NAMES_LIMIT = 1024
LIST_LIMIT = 256
STREAM_IDENTITY = "Nats-Stream-Identity"
PAGED_REQUEST = Struct("JSApiConsumersRequest", (Field("offset", "int"),))
PAUSE_REQUEST = Struct("JSApiConsumerPauseRequest", (Field("pause_until", "time.Time"),))
RESET_REQUEST = Struct("JSApiConsumerResetRequest", (Field("seq", "uint64"),))
UNPIN_REQUEST = Struct("JSApiConsumerUnpinRequest", (Field("group", "string"),))


# -- create --------------------------------------------------------------------------------


def _creation(request: Request, stream: str) -> tuple[dict[str, Any], ConsumerConfig]:
    """The decoded body and its config, checked against the subject's stream name."""
    body = request.decode(consumerconfig.CREATE_REQUEST)
    request.check_level()
    config = consumerconfig.from_request(body.get("config"))
    if stream != body.get("stream_name", ""):
        raise api_error("JSStreamMismatchErr")
    return body, config


def _check_name_token(consumer: str) -> None:
    if consumer and ("\\" in consumer or "/" in consumer):
        raise api_error("JSConsumerNameContainsPathSeparatorsErr")


def _create(js: JetStream, request: Request, stream: str, body: dict[str, Any], config: ConsumerConfig) -> Reply:
    asked = (hdrs.get(request.hdr, STREAM_IDENTITY) or b"").decode("utf-8", "replace")
    action, pedantic = body.get("action", ""), bool(body.get("pedantic", False))
    consumer, identity = js.add_consumer(stream, config, action, pedantic, asked)
    if identity:
        request.reply_headers = hdrs.build([(STREAM_IDENTITY, identity)])
    if consumer.is_paused():
        # nats-server repeats a paused consumer's pause advisory after every create or update reply.
        until = consumer.config["pause_until"]
        js.after_answer(lambda: advisories.pause(consumer, True, until))
    return consumer.info()


def ephemeral_request(request: Request, stream: str) -> tuple[dict[str, Any], ConsumerConfig]:
    """``CONSUMER.CREATE.<stream>``'s body and config, checked: the name, if any, from the body; no durable name."""
    body, config = _creation(request, stream)
    _check_name_token(config["name"])
    if config["durable_name"]:
        raise api_error("JSConsumerEphemeralWithDurableNameErr")
    return body, config


def named_request(
    request: Request, stream: str, consumer: str, filter: str = ""
) -> tuple[dict[str, Any], ConsumerConfig]:
    """``CONSUMER.CREATE.<stream>.<consumer>[.<filter>]``'s body and config: the subject names the consumer."""
    body, config = _creation(request, stream)
    _check_name_token(consumer)
    if config["durable_name"] and consumer != config["durable_name"]:
        raise api_error("JSConsumerDurableNameNotMatchSubjectErr")
    config["name"] = consumer
    if filter and config["filter_subjects"]:
        raise api_error("JSConsumerMultipleFiltersNotAllowed")
    if filter and config["filter_subject"] != filter:
        raise api_error("JSConsumerCreateFilterSubjectMismatchErr")
    return body, config


def durable_request(request: Request, stream: str, consumer: str) -> tuple[dict[str, Any], ConsumerConfig]:
    """``CONSUMER.DURABLE.CREATE.<stream>.<consumer>``'s body and config: the durable name must be the subject's."""
    body, config = _creation(request, stream)
    _check_name_token(consumer)
    if not config["durable_name"]:
        raise api_error("JSConsumerDurableNameNotSetErr")
    if consumer != config["durable_name"]:
        raise api_error("JSConsumerDurableNameNotMatchSubjectErr")
    config["name"] = consumer
    return body, config


def create_ephemeral(js: JetStream, request: Request, stream: str) -> Reply:
    """``CONSUMER.CREATE.<stream>``: the name, if any, comes from the body; no durable name."""
    return _create(js, request, stream, *ephemeral_request(request, stream))


def create_named(js: JetStream, request: Request, stream: str, consumer: str, filter: str = "") -> Reply:
    """``CONSUMER.CREATE.<stream>.<consumer>[.<filter>]``: the subject names the consumer (and its filter)."""
    return _create(js, request, stream, *named_request(request, stream, consumer, filter))


def create_durable(js: JetStream, request: Request, stream: str, consumer: str) -> Reply:
    """``CONSUMER.DURABLE.CREATE.<stream>.<consumer>``: the body's durable name must be the subject's."""
    return _create(js, request, stream, *durable_request(request, stream, consumer))


# -- info / delete / names / list -----------------------------------------------------------


def info(js: JetStream, request: Request, stream: str, consumer: str) -> Reply:
    if not request.is_empty():
        raise api_error("JSNotEmptyRequestErr")
    return js.lookup_consumer(stream, consumer).info()


def delete(js: JetStream, request: Request, stream: str, consumer: str) -> Reply:
    if not request.is_empty():
        raise api_error("JSNotEmptyRequestErr")
    target = js.lookup_consumer(stream, consumer)
    target.stream.remove_consumer(target)
    return {"success": True}


def _page(js: JetStream, request: Request, stream: str) -> tuple[list[Consumer], int, int]:
    body = request.decode_if_json(PAGED_REQUEST)
    offset = max(body.get("offset", 0), 0)
    consumers = js.consumer_admin.listed(js.lookup(stream))
    total = len(consumers)
    return consumers, total, min(offset, total)


def names(js: JetStream, request: Request, stream: str) -> Reply:
    consumers, total, offset = _page(js, request, stream)
    found = [c.name for c in consumers[offset : offset + NAMES_LIMIT]]
    return {"total": total, "offset": offset, "limit": NAMES_LIMIT, "consumers": found}


def listing(js: JetStream, request: Request, stream: str) -> Reply:
    consumers, total, offset = _page(js, request, stream)
    infos = [c.info(dynamic_metadata=False) for c in consumers[offset : offset + LIST_LIMIT]]
    return {"total": total, "offset": offset, "limit": LIST_LIMIT, "consumers": infos}


# -- pause / unpin / reset ---------------------------------------------------------------------


def pause(js: JetStream, request: Request, stream: str, consumer: str) -> Reply:
    body = request.decode_if_json(PAUSE_REQUEST)
    target = js.lookup_consumer(stream, consumer)
    asked: gotime.GoTime | None = body.get("pause_until")
    until = None if asked is None or asked.is_zero else asked.utc()
    js.consumer_admin.pause(target, until)
    return pause_answer(until, js.clock.time_ns())


def pause_answer(until: gotime.GoTime | None, now: int) -> dict[str, Any]:
    """A ``CONSUMER.PAUSE`` reply's fields: paused (and for how long) until ``until``, or resumed."""
    if until is None:
        return {"paused": False, "pause_until": gotime.ZERO_TIME}
    out: dict[str, Any] = {"paused": until.ns > now, "pause_until": until.text()}
    if until.ns > now:
        out["pause_remaining"] = until.ns - now
    return out


def unpin(js: JetStream, request: Request, stream: str, consumer: str) -> Reply:
    group = unpin_group(request)
    js.consumer_admin.unpin(js.lookup_consumer(stream, consumer), group)
    return {}


def unpin_group(request: Request) -> str:
    """The group a ``CONSUMER.UNPIN`` names, checked as nats-server checks it (10025, 10161)."""
    group = str(request.unmarshal(UNPIN_REQUEST).get("group", ""))
    if not group:
        raise api_error("JSInvalidJSONErr", err="consumer group not specified")
    if not consumerconfig.is_valid_group_name(group):
        raise api_error("JSConsumerInvalidGroupNameErr")
    return group


def reset(js: JetStream, request: Request, consumer: Consumer) -> Reply:
    """``CONSUMER.RESET``, handed over by the consumer: back to ``seq`` (0: the ack floor)."""
    seq = request.unmarshal(RESET_REQUEST).get("seq", 0) if request.payload else 0
    reset_seq = consumer.reset_to(seq)
    if request.hdr and hdrs.key_index(request.hdr, STREAM_IDENTITY) >= 0:
        # Asked for (even empty, as a durable sourcing stream does): the answer names the stream.
        request.reply_headers = hdrs.build([(STREAM_IDENTITY, consumer.stream.identity())])
    return {**consumer.info(), "reset_seq": reset_seq}
