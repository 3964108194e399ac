"""Message counters: streams with ``allow_msg_counter`` keep a running total per subject.

A publish to a counter stream carries ``Nats-Incr: <signed decimal>`` and an
empty payload; the stream stores ``{"val":"<total>"}`` (the subject's last
total plus the increment) with the publisher's headers unchanged, and the
PubAck carries ``"val"``.  Totals are arbitrary-precision integers, as
nats-server's ``big.Int``; Python's ``int`` prints the same decimal text.

nats-server checks the increment in ``processJetStreamMsg`` before any other
``Nats-*`` header (:func:`increment`), refuses a message without one after
the dedup and roll-up checks (:func:`require`), and computes the new total
just before storing (:func:`next_value`).  Streams without counters pay one
header lookup, only when the message has headers.
"""

from __future__ import annotations

import json
from typing import Any

from fakejs.gocompat import gojson
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.storage.store import MessageStore
from fakejs.protocol import headers as hdrs

INCR = "Nats-Incr"
COUNTER_SOURCES = "Nats-Counter-Sources"
STREAM_SOURCE = "Nats-Stream-Source"

# Headers an increment may not travel with (nats-server refuses them as an invalid increment).
_INCOMPATIBLE = (
    "Nats-Rollup",
    "Nats-Expected-Stream",
    "Nats-Expected-Last-Msg-Id",
    "Nats-Expected-Last-Subject-Sequence-Subject",
    "Nats-Expected-Last-Sequence",
    "Nats-Expected-Last-Subject-Sequence",
)
_DIGITS = frozenset(b"0123456789")
# Python limits int <-> str conversions to 4300 digits; big.Int has no limit,
# so longer numbers are converted in chunks below that limit.
_CHUNK = 4000
_CHUNK_BASE = 10**_CHUNK


def parse_big_int(text: bytes) -> int | None:
    """Go's ``big.Int.SetString(s, 10)``: an optional sign and ASCII digits, nothing else."""
    sign = text[:1]
    body = text[1:] if sign in (b"+", b"-") else text
    if not body or not _DIGITS.issuperset(body):
        return None
    head = len(body) % _CHUNK or _CHUNK
    value = int(body[:head])
    for start in range(head, len(body), _CHUNK):
        value = value * _CHUNK_BASE + int(body[start : start + _CHUNK])
    return -value if sign == b"-" else value


def big_int_text(value: int) -> str:
    """``big.Int.String()``: the decimal text, of any length."""
    if -_CHUNK_BASE < value < _CHUNK_BASE:
        return str(value)
    sign, value = ("-", -value) if value < 0 else ("", value)
    chunks: list[str] = []
    while value >= _CHUNK_BASE:
        value, low = divmod(value, _CHUNK_BASE)
        chunks.append(str(low).rjust(_CHUNK, "0"))
    chunks.append(str(value))
    return sign + "".join(reversed(chunks))


def increment(cfg: StreamConfig, hdr: bytes, payload: bytes, sourced: bool = False) -> int | None:
    """The message's ``Nats-Incr`` (``None`` without one, or with an empty one).

    Raises what nats-server answers first: an unparsable increment on any
    stream, an increment on a stream without counters, a payload next to
    the increment, or a header an increment may not be combined with.
    """
    value = hdrs.get(hdr, INCR)
    if not value:
        return None
    incr = parse_big_int(value)
    if incr is None:
        raise api_error("JSMessageIncrInvalidErr")
    if sourced:
        return incr  # stored as the origin wrote it (a counter target aggregates it in next_value)
    if not cfg["allow_msg_counter"]:
        raise api_error("JSMessageIncrDisabledErr")
    if payload:
        raise api_error("JSMessageIncrPayloadErr")
    for key in _INCOMPATIBLE:
        # nats-server tests presence (a non-empty value) of each of these.
        if hdrs.get(hdr, key):
            raise api_error("JSMessageIncrInvalidErr")
    return incr


def require(incr: int | None) -> int:
    """A counter stream stores nothing but increments."""
    if incr is None:
        raise api_error("JSMessageIncrMissingErr")
    return incr


def _value_of(data: bytes) -> str | None:
    """Go's ``json.Unmarshal`` into ``{Value string `json:"val"`}``: None when it fails."""
    try:
        body = json.loads(data)
    except ValueError:
        return None
    value = body.get("val") if isinstance(body, dict) else None
    if body is not None and (not isinstance(body, dict) or not isinstance(value, str | None)):
        return None
    return value or ""


def _last(store: MessageStore, subject: str) -> tuple[int, dict[str, Any]]:
    """The subject's total and the per-source totals (``Nats-Counter-Sources``) of its last message."""
    last = store.last_message(subject)
    if last is None:
        return 0, {}
    value = _value_of(last.data)
    if value is None:
        raise api_error("JSMessageCounterBrokenErr")
    sources: dict[str, Any] = {}
    text = hdrs.get(last.hdr, COUNTER_SOURCES) if last.hdr else None
    if text:
        try:
            sources = json.loads(text)
        except ValueError:
            raise api_error("JSMessageCounterBrokenErr") from None
        if not isinstance(sources, dict) or not all(isinstance(v, dict) for v in sources.values()):
            raise api_error("JSMessageCounterBrokenErr")
    return parse_big_int(value.encode()) or 0, sources


def current(store: MessageStore, subject: str) -> int:
    """The subject's total: the value in its last stored message, 0 when it has none."""
    return _last(store, subject)[0]


def _sourced_increment(sources: dict[str, Any], hdr: bytes, subject: str, payload: bytes) -> tuple[int, bytes]:
    """A sourced total: the change since this origin's subject was last seen, noted in ``sources``.

    The ``Nats-Incr`` header is rewritten to that change, so the stored
    messages still add up; the origin is the ``Nats-Stream-Source`` header's
    first field, its subject the fifth (the target's subject without one).
    """
    fields = (hdrs.get(hdr, STREAM_SOURCE) or b"").decode().split(" ")
    origin = fields[0]
    origin_subject = fields[4] if len(fields) >= 5 else subject
    value = _value_of(payload)
    if value is None:
        raise api_error("JSMessageCounterBrokenErr")
    sourced = parse_big_int(value.encode()) or 0
    seen = sources.setdefault(origin, {})
    previous = parse_big_int(str(seen.get(origin_subject, "")).encode()) or 0
    seen[origin_subject] = big_int_text(sourced)
    change = sourced - previous
    return change, hdrs.set_value(hdr, INCR, big_int_text(change))


def next_value(
    cfg: StreamConfig, store: MessageStore, subject: str, hdr: bytes | None, incr: int, payload: bytes = b""
) -> tuple[str, bytes | None, bytes]:
    """The new total's text, the headers and the body to store; refused when it no longer fits ``max_msg_size``.

    A message from a source (it has ``Nats-Stream-Source``) brings the
    origin's total: the target adds what changed since that origin's last
    one and keeps every origin's total in ``Nats-Counter-Sources``, carried
    from message to message of the subject.
    """
    initial, sources = _last(store, subject)
    if hdr and hdrs.get(hdr, STREAM_SOURCE):
        incr, hdr = _sourced_increment(sources, hdr, subject, payload)
    total = big_int_text(initial + incr)
    body = b'{"val":"%s"}' % total.encode()
    if sources:
        hdr = hdrs.set_value(hdr, COUNTER_SOURCES, gojson.dumps(dict(sorted(sources.items()))))
    max_size = cfg["max_msg_size"]
    header_length = len(hdr) if hdr else 0
    if max_size >= 0 and (header_length > max_size or len(body) > max_size - header_length):
        raise api_error("JSStreamMessageExceedsMaximumErr")
    return total, hdr, body


def ack(pub_ack: bytes, total: str) -> bytes:
    """The PubAck of a counter publish: the plain one with ``"val"`` appended."""
    return pub_ack[:-1] + b',"val":"%s"}' % total.encode()
