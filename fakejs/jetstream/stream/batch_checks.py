"""The consistency checks an atomic batch passes at its commit, message by message.

nats-server checks every staged message against the stream as it would be
once the earlier messages of the batch are stored (``checkMsgHeadersPre
ClusteredProposal``): expected sequences, duplicate ids, counters, roll-ups
and discard-new limits all see the batch so far.  :class:`StagedDiff` holds
what the batch has added; nothing touches the stream until every message
passed, so a failure leaves it as it was.

Schedule headers meet a single publish's rules (:func:`fakejs.jetstream.
stream.schedules.check_headers`); a purge may name a schedule written
earlier in the batch.  Stored, a batch's schedules are armed like any other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.storage.store import MessageStore
from fakejs.jetstream.stream import counter, publish, schedules
from fakejs.protocol import headers as hdrs
from fakejs.protocol.writer import go_quote


@dataclass
class StagedDiff:
    """What the messages of the batch checked so far add to the stream."""

    msg_ids: set[str] = field(default_factory=set)
    counters: dict[str, int] = field(default_factory=dict)
    ops: dict[str, int] = field(default_factory=dict)  # messages per subject
    expected: dict[str, int] = field(default_factory=dict)  # subject -> its checked last sequence
    schedules: dict[str, bool] = field(default_factory=dict)  # subject -> whether its last message is a schedule
    msgs: int = 0
    bytes: int = 0


@dataclass
class StreamView:
    """The stream state the checks read: config, store and duplicate lookup."""

    name: str
    config: StreamConfig
    store: MessageStore
    seen_id: Callable[[str], int | None]
    now_ns: int


def _text(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


def check(
    view: StreamView, diff: StagedDiff, index: int, subject: str, hdr: bytes | None, payload: bytes
) -> tuple[bytes | None, bytes]:
    """Check message ``index`` (0-based) of the batch; returns its headers and body as they are to be stored."""
    cfg, store = view.config, view.store
    if store.storage == "file" and store.message_size(subject, hdr, payload) > publish.MAX_FILE_MESSAGE:
        raise api_error("JSStreamStoreFailedF", err="message too large")
    incr: int | None = None
    if hdr:
        if len(hdr) > publish.MAX_HEADER_SIZE:
            raise api_error("JSStreamHeaderExceedsMaximumErr")
        incr = counter.increment(cfg, hdr, payload)
        _check_header_basics(view, diff, hdr)
    if cfg["allow_msg_counter"]:
        payload = _count(view, diff, subject, hdr, counter.require(incr))
    is_schedule = False
    if hdr:
        _check_expected(view, diff, index, subject, hdr)
        hdr, is_schedule = _check_schedule(view, diff, subject, hdr)
        _check_rollup(cfg, diff, index, subject, hdr)
    diff.schedules[subject] = is_schedule
    _track(view, diff, subject, hdr, payload)
    return hdr, payload


def _check_header_basics(view: StreamView, diff: StagedDiff, hdr: bytes) -> None:
    """Expected stream, TTLs, message ids (also within the batch), a forged source header."""
    cfg = view.config
    expected = hdrs.get(hdr, publish.EXPECTED_STREAM)
    if expected and _text(expected) != view.name:
        raise api_error("JSStreamNotMatchErr")
    ttl_value = hdrs.get(hdr, publish.MSG_TTL)
    if ttl_value:
        try:
            ttl, valid = publish.parse_ttl(ttl_value), True
        except ValueError:
            ttl, valid = 0, False
        if (ttl != 0 or not valid) and not cfg["allow_msg_ttl"]:
            raise api_error("JSMessageTTLDisabledErr")
        if not valid:
            raise api_error("JSMessageTTLInvalidErr")
    msg_id = publish.msg_id(hdr)
    if msg_id:
        seen = view.seen_id(msg_id)
        if msg_id in diff.msg_ids or seen is not None:
            raise api_error("JSAtomicPublishContainsDuplicateMessageErr")
        diff.msg_ids.add(msg_id)
    if hdrs.get(hdr, publish.STREAM_SOURCE):
        raise api_error("JSMessageSourceHdrNotAllowedErr")


def _count(view: StreamView, diff: StagedDiff, subject: str, hdr: bytes | None, incr: int) -> bytes:
    """A counter message: the running total (the batch's, else the stored one) plus the increment."""
    total = diff.counters.get(subject)
    if total is None:
        total = counter.current(view.store, subject)
    total += incr
    diff.counters[subject] = total
    body = b'{"val":"%s"}' % counter.big_int_text(total).encode()
    max_size = view.config["max_msg_size"]
    header_length = len(hdr) if hdr else 0
    if max_size >= 0 and (header_length > max_size or len(body) > max_size - header_length):
        raise api_error("JSStreamMessageExceedsMaximumErr")
    return body


def _check_expected(view: StreamView, diff: StagedDiff, index: int, subject: str, hdr: bytes) -> None:
    """Expected last sequence (first message only) and expected last sequence per subject."""
    last_seq = hdrs.get(hdr, publish.EXPECTED_LAST_SEQ)
    if last_seq:
        at = view.store.last_seq + index  # the stream's last sequence once the earlier messages are in
        if publish.uint_value(last_seq) != at:
            raise api_error("JSStreamWrongLastSequenceErrF", seq=at)
        if index > 0:
            raise api_error("JSStreamWrongLastSequenceConstantErr")
    subject_seq = hdrs.get(hdr, publish.EXPECTED_LAST_SUBJECT_SEQ)
    override = hdrs.get(hdr, publish.EXPECTED_LAST_SUBJECT_SEQ_SUBJECT)
    if subject_seq:
        check_subject = _text(override) if override else subject
        if check_subject in diff.ops:
            raise api_error("JSStreamWrongLastSequenceConstantErr")
        wanted = publish.uint_value(subject_seq)
        actual = diff.expected.get(check_subject)
        if actual is None:
            last = view.store.last_message(check_subject)
            actual = last.seq if last is not None else 0
        if actual != wanted:
            raise api_error("JSStreamWrongLastSequenceErrF", seq=actual)
        diff.expected[check_subject] = actual
    elif override:
        raise api_error("JSStreamExpectedLastSeqPerSubjectInvalid")


def _check_schedule(view: StreamView, diff: StagedDiff, subject: str, hdr: bytes) -> tuple[bytes, bool]:
    """A single publish's schedule rules; a purge's scheduler may be a schedule written earlier in the batch."""

    def holds_other(scheduler: str) -> bool:
        if scheduler in diff.schedules:
            return not diff.schedules[scheduler]
        return schedules.holds_other(view.store, scheduler)

    return schedules.check_headers(view.config, subject, hdr, view.now_ns, publish.parse_ttl, holds_other)


def _check_rollup(cfg: StreamConfig, diff: StagedDiff, index: int, subject: str, hdr: bytes) -> None:
    """A roll-up: of a subject not yet written by the batch, of everything only as the first message."""
    value = hdrs.get(hdr, publish.ROLLUP)
    if not value:
        return
    if not cfg["allow_rollup_hdrs"] or cfg["deny_purge"]:
        raise api_error("JSStreamRollupFailedF", err="rollup not permitted")
    rollup = _text(value)
    if rollup == "sub":
        if subject in diff.ops:
            raise api_error("JSStreamRollupFailedF", err="batch rollup sub invalid")
    elif rollup == "all":
        if index > 0:
            raise api_error("JSStreamRollupFailedF", err="batch rollup all invalid")
    else:
        raise api_error("JSStreamRollupFailedF", err=f"rollup value invalid: {go_quote(rollup)}")


def _track(view: StreamView, diff: StagedDiff, subject: str, hdr: bytes | None, payload: bytes) -> None:
    """Count the message in, then the discard-new limits on the stream with the batch so far."""
    cfg, store = view.config, view.store
    ops = diff.ops[subject] = diff.ops.get(subject, 0) + 1
    diff.msgs += 1
    diff.bytes += store.message_size(subject, hdr, payload)
    if cfg["discard"] != "new":
        return
    error: ApiError | None = None
    if cfg["max_msgs"] > 0 and store.msgs + diff.msgs > cfg["max_msgs"]:
        error = api_error("JSStreamStoreFailedF", err="maximum messages exceeded")
    elif cfg["max_bytes"] > 0 and store.bytes + diff.bytes > cfg["max_bytes"]:
        error = api_error("JSStreamStoreFailedF", err="maximum bytes exceeded")
    elif (
        cfg["discard_new_per_subject"]
        and cfg["max_msgs_per_subject"] > 0
        and not (hdr and hdrs.get(hdr, publish.ROLLUP) is not None)
        and store.count_for(subject) + ops > cfg["max_msgs_per_subject"]
    ):
        error = api_error("JSStreamStoreFailedF", err="maximum messages per subject exceeded")
    if error is not None:
        raise error
