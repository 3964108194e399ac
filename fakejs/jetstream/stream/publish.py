"""The rules a published message meets before it is stored, header by header.

Pure functions over the stream's config, its store and the message, in
the order nats-server's ``processJetStreamMsg`` applies them; each raises
the :class:`~fakejs.jetstream.errors.ApiError` the PubAck reports.  The
checks that need the stream's own memory (duplicate ids, the last message
id) stay with :class:`~fakejs.jetstream.stream.stream.Stream`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from fakejs.gocompat import gotime
from fakejs.gocompat.gotime import NS
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.storage.store import MessageStore
from fakejs.jetstream.stream import counter, schedules
from fakejs.protocol import headers as hdrs
from fakejs.protocol.writer import go_quote

MSG_ID = "Nats-Msg-Id"
EXPECTED_STREAM = "Nats-Expected-Stream"
EXPECTED_LAST_SEQ = "Nats-Expected-Last-Sequence"
EXPECTED_LAST_SUBJECT_SEQ = "Nats-Expected-Last-Subject-Sequence"
EXPECTED_LAST_SUBJECT_SEQ_SUBJECT = "Nats-Expected-Last-Subject-Sequence-Subject"
EXPECTED_LAST_MSG_ID = "Nats-Expected-Last-Msg-Id"
ROLLUP = "Nats-Rollup"
MSG_TTL = "Nats-TTL"
MARKER_REASON = "Nats-Marker-Reason"
KV_OPERATION = "KV-Operation"
INCR = "Nats-Incr"
STREAM_SOURCE = "Nats-Stream-Source"
CLIENT_INFO = "Nats-Request-Info"
MAX_HEADER_SIZE = 65535
MAX_FILE_MESSAGE = 512 * 1024 * 1024
# nats-server's own errors a message trace's ``js`` event shows (``ErrMaxPayload``, ``errMsgIdDuplicate``).
MAX_PAYLOAD_TRACE = "maximum payload exceeded"
DUPLICATE_TRACE = "msgid is duplicate"


class Outcome:
    """What a publish came to: the PubAck payload, the message's sequence, and whether it was a duplicate.

    A duplicate stores nothing: ``seq`` is that of the message it repeats.  A plain class, not a
    NamedTuple: one is made per publish, and the compiled build makes a plain class's natively.
    """

    __slots__ = ("ack", "duplicate", "seq")

    def __init__(self, ack: bytes, seq: int, duplicate: bool = False) -> None:
        self.ack = ack
        self.seq = seq
        self.duplicate = duplicate


class Checked(NamedTuple):
    """A message that passed the header checks: what to store (headers cleaned, a counter's new value as its
    payload), its ``Nats-Msg-Id``, its roll-up, and a counter's total for the PubAck."""

    subject: str
    hdr: bytes | None
    payload: bytes
    msg_id: str
    rollup: str
    total: str


def check(
    cfg: StreamConfig,
    store: MessageStore,
    subject: str,
    hdr: bytes | None,
    payload: bytes,
    now_ns: int,
    last_msg_id: str,
    seen: Callable[[str], int | None],
    sourced: bool = False,
) -> Checked | int:
    """A publish's checks in nats-server's order, up to what the stream stores; a duplicate's sequence instead.

    ``seen`` looks a ``Nats-Msg-Id`` up in the duplicate window; ``last_msg_id``
    is the stream's last.  Raises the :class:`~fakejs.jetstream.errors.ApiError`
    the PubAck reports.
    """
    check_message(cfg, store, subject, hdr, payload)
    message_id = rollup = ""
    incr: int | None = None
    if hdr:
        hdr = clean_headers(hdr)
    if hdr:
        incr = counter.increment(cfg, hdr, payload, sourced)
        hdr = check_expectations(cfg, cfg["name"], store, subject, hdr, now_ns, sourced)
        message_id = msg_id(hdr)
        if message_id and (duplicate := seen(message_id)) is not None:
            return duplicate
        check_last_msg_id(hdr, last_msg_id)
        rollup = rollup_of(cfg, hdr, sourced)
    total = ""
    if cfg["allow_msg_counter"]:
        total, hdr, payload = counter.next_value(cfg, store, subject, hdr, counter.require(incr), payload)
    return Checked(subject, hdr, payload, message_id, rollup, total)


def parse_ttl(value: bytes) -> int:
    """``Nats-TTL``: seconds (>= 1s), ``-1`` for "never"; raises ``ValueError`` when invalid."""
    text = value.decode("utf-8", "replace")
    if text.lower() == "never":
        return -1
    try:
        duration = gotime.parse_duration(text)
    except ValueError:
        if not text or not text.isdigit() or not text.isascii():
            raise
        return int(text)
    if duration < NS:
        raise ValueError("ttl below one second")
    return duration // NS


def _uint(value: bytes) -> int:
    """nats-server's ``parseInt64`` cast to uint64: garbage becomes 2^64-1."""
    if value and value.isdigit() and value.isascii():
        return int(value) & (2**64 - 1)
    return 2**64 - 1


def uint_value(value: bytes) -> int:
    """A header's unsigned number, as nats-server reads expected sequences."""
    return _uint(value)


def _text(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


def is_marker(hdr: bytes | None) -> bool:
    """Whether a stored message counts as a subject delete marker (``isSubjectDeleteMarker``).

    A non-empty ``Nats-Marker-Reason`` (whatever the reason), or a KV purge
    tombstone (``KV-Operation: PURGE``, exact case): when one of these expires
    it leaves no delete marker behind.
    """
    return bool(hdrs.get(hdr, MARKER_REASON)) or hdrs.get(hdr, KV_OPERATION) == b"PURGE"


def check_message(cfg: StreamConfig, store: MessageStore, subject: str, hdr: bytes | None, payload: bytes) -> None:
    """Size and state: too large for the store, sealed, over ``max_msg_size``, oversized headers."""
    if store.storage == "file" and store.message_size(subject, hdr, payload) > MAX_FILE_MESSAGE:
        raise api_error("JSStreamStoreFailedF", err="message too large").traced_as("message too large")
    if cfg["sealed"]:
        raise api_error("JSStreamSealedErr")
    max_size = cfg["max_msg_size"]
    header_length = len(hdr) if hdr else 0
    if max_size >= 0 and (header_length > max_size or len(payload) > max_size - header_length):
        raise api_error("JSStreamMessageExceedsMaximumErr").traced_as(MAX_PAYLOAD_TRACE)
    if header_length > MAX_HEADER_SIZE:
        raise api_error("JSStreamHeaderExceedsMaximumErr").traced_as(MAX_PAYLOAD_TRACE)


def clean_headers(hdr: bytes) -> bytes | None:
    """What is stored of the publisher's headers: no status line, no client info."""
    kept = hdrs.without_status(hdr) or None
    if kept:
        kept = hdrs.remove(kept, CLIENT_INFO) or None
    return kept


def check_expectations(
    cfg: StreamConfig, name: str, store: MessageStore, subject: str, hdr: bytes, now_ns: int, sourced: bool = False
) -> bytes:
    """The expected stream, TTLs allowed, expected last sequences, schedules, sources.

    Returns the headers to store (a schedule gains ``Nats-Rollup: sub``).  A
    message the stream produces itself (``sourced``: a fired schedule) skips
    the schedule and source checks, as nats-server's sourced messages do.

    ``Nats-Incr`` is checked just before, by :mod:`fakejs.jetstream.stream.counter`.
    """
    expected = hdrs.get(hdr, EXPECTED_STREAM)
    if expected and _text(expected) != name:
        raise api_error("JSStreamNotMatchErr").traced_as("expected stream does not match")
    ttl_value = hdrs.get(hdr, MSG_TTL)
    if ttl_value:
        try:
            ttl_check = parse_ttl(ttl_value)
        except ValueError:
            ttl_check = 0
        if ttl_check != 0 and not cfg["allow_msg_ttl"] and not sourced:
            raise api_error("JSMessageTTLDisabledErr").traced_as("message TTL disabled")
    last_subject_seq = hdrs.get(hdr, EXPECTED_LAST_SUBJECT_SEQ)
    seq_subject_override = hdrs.get(hdr, EXPECTED_LAST_SUBJECT_SEQ_SUBJECT)
    if last_subject_seq:
        check_subject = _text(seq_subject_override) if seq_subject_override else subject
        last = store.last_message(check_subject)
        actual = last.seq if last is not None else 0
        wanted = _uint(last_subject_seq)
        if actual != wanted:
            error = api_error("JSStreamWrongLastSequenceErrF", seq=actual)
            raise error.traced_as(f"last sequence by subject mismatch: {wanted} vs {actual}")
    elif seq_subject_override:
        raise api_error("JSStreamExpectedLastSeqPerSubjectInvalid")
    last_seq = hdrs.get(hdr, EXPECTED_LAST_SEQ)
    if last_seq and _uint(last_seq) != store.last_seq:
        error = api_error("JSStreamWrongLastSequenceErrF", seq=store.last_seq)
        raise error.traced_as(f"last sequence mismatch: {_uint(last_seq)} vs {store.last_seq}")
    if sourced:
        return hdr
    hdr = schedules.check_publish(cfg, store, subject, hdr, now_ns, parse_ttl)
    if hdrs.get(hdr, STREAM_SOURCE):
        raise api_error("JSMessageSourceHdrNotAllowedErr")
    return hdr


def msg_id(hdr: bytes | None) -> str:
    """The publisher's ``Nats-Msg-Id`` (empty when none)."""
    return (hdrs.get(hdr, MSG_ID) or b"").decode("utf-8", "surrogateescape")


def check_last_msg_id(hdr: bytes, last_msg_id: str) -> None:
    last_id = hdrs.get(hdr, EXPECTED_LAST_MSG_ID)
    if last_id and _text(last_id) != last_msg_id:
        error = api_error("JSStreamWrongLastMsgIDErrF", id=last_msg_id)
        raise error.traced_as(f"last msgid mismatch: {go_quote(_text(last_id))} vs {go_quote(last_msg_id)}")


def rollup_of(cfg: StreamConfig, hdr: bytes, sourced: bool = False) -> str:
    """``Nats-Rollup``: ``sub``, ``all`` or empty; refused when the stream does not allow it.

    A ``sourced`` message was allowed its roll-up by its origin: it rolls up here too.
    """
    rollup_value = hdrs.get(hdr, ROLLUP)
    if not rollup_value:
        return ""
    if (not cfg["allow_rollup_hdrs"] or cfg["deny_purge"]) and not sourced:
        raise api_error("JSStreamRollupFailedF", err="rollup not permitted").traced_as("rollup not permitted")
    rollup = _text(rollup_value).lower()
    if rollup not in ("sub", "all"):
        invalid = f"rollup value invalid: {go_quote(rollup)}"
        raise api_error("JSStreamRollupFailedF", err=invalid).traced_as(invalid)
    return rollup


def message_ttl(cfg: StreamConfig, hdr: bytes) -> tuple[int, bytes]:
    """The message's TTL in seconds, and its headers (a TTL below the delete-marker TTL is raised to it)."""
    ttl_value = hdrs.get(hdr, MSG_TTL)
    if not ttl_value:
        return 0, hdr
    try:
        ttl = parse_ttl(ttl_value)
    except ValueError:
        raise api_error("JSMessageTTLInvalidErr").traced_as(late=True) from None
    marker_ttl = cfg["subject_delete_marker_ttl"] // NS
    if ttl > 0 and marker_ttl > 0 and cfg["max_msgs_per_subject"] != 1 and ttl < marker_ttl:
        ttl = marker_ttl
        hdr = hdrs.add(hdrs.remove(hdr, MSG_TTL) or None, MSG_TTL, str(ttl))
    return ttl, hdr


def delete_marker(marker_ttl_ns: int) -> bytes:
    """The headers of the delete marker left when a subject's last message expires (by age or TTL).

    Its ``Nats-TTL`` is the stream's marker TTL cut to whole seconds (``1.5s`` gives ``1s``).
    """
    whole_seconds = marker_ttl_ns // NS * NS
    return hdrs.build([(MARKER_REASON, "MaxAge"), (MSG_TTL, gotime.format_duration(whole_seconds)), (ROLLUP, "sub")])
