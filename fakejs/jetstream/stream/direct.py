"""Direct Get (ADR-31): reading stored messages without the JetStream API.

A stream with ``allow_direct`` answers on two subjects of its own, in the
``_sys_`` queue group as nats-server does:

* ``$JS.API.DIRECT.GET.<stream>`` -- a JSON request (``seq``,
  ``last_by_subj``, ``next_by_subj``, ``start_time``, ``batch``,
  ``max_bytes``, ``multi_last`` with ``up_to_seq``/``up_to_time``, ``no_hdr``);
* ``$JS.API.DIRECT.GET.<stream>.<subject>`` -- the last message on the
  subject that follows the stream name.

Replies are the stored message itself with ``Nats-Stream``,
``Nats-Subject``, ``Nats-Sequence`` and ``Nats-Time-Stamp`` headers appended
to its own header block (plus ``Nats-Num-Pending`` / ``Nats-Last-Sequence``
in batches, which end with a ``204 EOB`` status); problems are answered with
header-only status messages (``404``, ``408``, ``412``, ``413``).  With
``allow_direct`` off nobody listens, so a requester gets no-responders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from fakejs.core.router import Router, Subscription
from fakejs.gocompat import gojson, gotime
from fakejs.gocompat.gojson import Field, Struct
from fakejs.jetstream import status
from fakejs.jetstream.apilevel import required_level
from fakejs.jetstream.storage.store import MessageStore, StoredMessage
from fakejs.protocol import headers as hdrs

if TYPE_CHECKING:
    from fakejs.core.broker import Broker

QUEUE_GROUP = "_sys_"
MAX_MULTI_RESULTS = 1024  # distinct subjects one multi_last request may return

# ``JSApiMsgGetRequest``: the body of STREAM.MSG.GET and of Direct Get alike.
MSG_GET_REQUEST = Struct(
    "JSApiMsgGetRequest",
    (
        Field("seq", "uint64"),
        Field("last_by_subj", "string"),
        Field("next_by_subj", "string"),
        Field("batch", "int"),
        Field("max_bytes", "int"),
        Field("start_time", "time.Time"),
        Field("multi_last", "[]string"),
        Field("up_to_seq", "uint64"),
        Field("up_to_time", "time.Time"),
        Field("no_hdr", "bool"),
    ),
)

# Pairs of request fields that may not be combined (answered ``408 Bad Request``).
_CONFLICTS = (
    ("seq", "last_by_subj"),
    ("seq", "start_time"),
    ("start_time", "last_by_subj"),
    ("last_by_subj", "next_by_subj"),
    ("last_by_subj", "batch"),
    ("last_by_subj", "multi_last"),
    ("next_by_subj", "multi_last"),
    ("up_to_seq", "up_to_time"),
)


def _is_set(req: dict[str, Any], key: str) -> bool:
    value = req.get(key)
    if key == "batch":
        return isinstance(value, int) and value > 0
    if key in ("start_time", "up_to_time"):
        return value is not None
    return bool(value)


def decode(payload: bytes) -> dict[str, Any] | None:
    """``json.Unmarshal`` into the request struct; ``None`` when Go would fail."""
    try:
        return gojson.unmarshal(MSG_GET_REQUEST, payload)
    except ValueError:
        return None


class DirectHost(Protocol):
    """What Direct Get needs from the JetStream: subscriptions, replies, the server's limits."""

    @property
    def router(self) -> Router: ...

    @property
    def broker(self) -> Broker: ...

    def reply(self, subject: str, payload: bytes, hdr: bytes | None = None, empty_reply: bool = False) -> None: ...


class DirectGet:
    """The Direct Get responder of one stream, subscribed while the stream allows it."""

    def __init__(self, stream_name: str, store: MessageStore, host: DirectHost, serves: str = "") -> None:
        self.stream_name = stream_name
        # Every answer's headers start the same way (a stream's name never changes).
        self._stream_line = b"Nats-Stream: " + stream_name.encode("utf-8", "surrogateescape") + b"\r\n"
        self.serves = serves or stream_name  # a mirror answers for its origin
        self.store = store
        self.host = host
        self.subscriptions: list[Subscription] = []

    def sync(self, enabled: bool) -> None:
        """Listen or stop listening to follow the stream's ``allow_direct`` (off once it is closed)."""
        if enabled and not self.subscriptions:
            router = self.host.router
            base = f"$JS.API.DIRECT.GET.{self.serves}"
            self.subscriptions = [
                router.subscribe_internal(base, self._on_request, QUEUE_GROUP),
                router.subscribe_internal(base + ".>", self._on_last_by_subject, QUEUE_GROUP),
            ]
        elif not enabled and self.subscriptions:
            self.close()

    def close(self) -> None:
        router = self.host.router
        for sub in self.subscriptions:
            router.unsubscribe(sub)
        self.subscriptions = []

    # -- requests --------------------------------------------------------------------

    def _status(self, reply: str, block: bytes) -> None:
        self.host.reply(reply, b"", block)

    def _on_request(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> None:
        if not reply:
            return
        if hdr and required_level(hdr):  # most requests carry no headers: no call
            return self._status(reply, status.required_api_level())
        if not payload:
            return self._status(reply, status.empty_request())
        req = decode(payload)
        if req is None:
            return self._status(reply, status.malformed_request())
        if not (
            req.get("seq")
            or req.get("last_by_subj")
            or req.get("next_by_subj")
            or req.get("multi_last")
            or req.get("start_time") is not None
        ):
            return self._status(reply, status.empty_request())
        if any(_is_set(req, a) and _is_set(req, b) for a, b in _CONFLICTS):
            return self._status(reply, status.direct_bad_request())
        self.serve(req, reply)

    def _on_last_by_subject(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> None:
        if not reply:
            return
        if hdr and required_level(hdr):  # most requests carry no headers: no call
            return self._status(reply, status.required_api_level())
        tokens = subject.split(".", 5)  # $JS.API.DIRECT.GET.<stream>.<subject>
        key = tokens[5] if len(tokens) == 6 else ""
        if not payload and key:  # a KV get: the subject's last message, what serve() would find, straight
            msg = self.store.last_message(key)
            if msg is None:
                return self._status(reply, status.message_not_found())
            # host.reply(reply, msg.data, headers), without the call
            self.host.router.publish(reply, "", self._headers(msg), msg.data, None)
            return None
        req: dict[str, Any] = {}
        if payload:
            decoded = decode(payload)
            if decoded is None:
                return self._status(reply, status.malformed_request())
            req = decoded
        selectors = ("last_by_subj", "next_by_subj", "multi_last", "seq", "start_time", "up_to_seq", "up_to_time")
        if not key or (req and (req.get("batch") or any(_is_set(req, name) for name in selectors))):
            return self._status(reply, status.direct_bad_request())
        req["last_by_subj"] = key
        self.serve(req, reply)

    # -- answers ---------------------------------------------------------------------

    def _max_bytes(self, req: dict[str, Any]) -> int:
        asked: int = req.get("max_bytes") or 0
        return asked or self.host.broker.options.max_pending

    def _headers(self, msg: StoredMessage, *extra: tuple[str, int]) -> bytes:
        """The message's headers with ``Nats-Stream``, ``-Subject``, ``-Sequence``, ``-Time-Stamp`` and ``extra``
        appended (:func:`~fakejs.protocol.headers.extend`'s block, written in one formatting)."""
        hdr = msg.hdr
        block = b"%s%sNats-Subject: %s\r\nNats-Sequence: %d\r\nNats-Time-Stamp: %s\r\n" % (
            hdr[:-2] if hdr and len(hdr) > 2 else hdrs.HEADER_LINE,
            self._stream_line,
            msg.subject.encode("utf-8", "surrogateescape"),
            msg.seq,
            gotime.rfc3339(msg.ts).encode(),
        )
        for key, value in extra:
            block += b"%s: %d\r\n" % (key.encode(), value)
        return block + b"\r\n"

    def serve(self, req: dict[str, Any], reply: str) -> None:
        """``getDirectRequest``: one message, or a batch ending with EOB."""
        if req.get("multi_last"):
            return self._serve_multi(req, reply)
        store = self.store
        start_time = req.get("start_time")
        seq = store.seq_from_time(start_time.ns) if start_time is not None else req.get("seq", 0)
        next_for = req.get("next_by_subj", "")
        last_for = req.get("last_by_subj", "")
        no_hdr = bool(req.get("no_hdr"))
        batch = req.get("batch", 0)
        is_batch = batch != 0
        pending = store.filtered_count(seq, [next_for] if next_for else []) if is_batch else 0
        if not is_batch:
            batch = 1
        limit = req.get("max_bytes") or self.host.broker.options.max_pending  # _max_bytes(), without the call
        sent_bytes = 0
        last_seq = 0
        for i in range(batch):
            msg: StoredMessage | None
            if seq > 0 and not next_for:
                msg = store.get(seq) if i == 0 and not is_batch else store.next_message(seq)
            elif next_for:
                msg = store.next_message(seq, next_for)
            else:
                msg = store.last_message(last_for)
            if msg is None:
                if batch > 1 and i > 0:
                    break
                return self._status(reply, status.message_not_found())
            seq = msg.seq + 1
            block: bytes | None = None
            if not no_hdr:
                if is_batch:
                    pending = max(pending - 1, 0)
                    block = self._headers(msg, ("Nats-Num-Pending", pending), ("Nats-Last-Sequence", last_seq))
                else:
                    block = self._headers(msg)
            last_seq = msg.seq
            self.host.reply(reply, msg.data, block)
            sent_bytes += len(msg.subject) + (len(msg.hdr) if msg.hdr else 0) + len(msg.data)
            if sent_bytes >= limit:
                break
        if is_batch:
            self._status(reply, status.end_of_batch(pending, last_seq))

    def _serve_multi(self, req: dict[str, Any], reply: str) -> None:
        """``getDirectMulti``: the last message of each matching subject."""
        store = self.store
        up_to = req.get("up_to_seq", 0)
        up_to_time = req.get("up_to_time")
        if up_to_time is not None:
            up_to = store.seq_from_time(up_to_time.ns)
            if up_to <= store.first_seq:
                return self._status(reply, status.no_results())
            up_to -= 1
        if up_to == 0:
            up_to = store.last_seq
        found = self._multi_last(req["multi_last"], up_to)
        if found is None:
            return self._status(reply, status.too_many_results())
        if not found:
            return self._status(reply, status.no_results())
        min_seq = req.get("seq", 0)
        batch = req.get("batch", 0)
        limit = self._max_bytes(req)
        pending = len(found)
        sent = sent_bytes = last_seq = 0
        for msg in found:
            pending -= 1
            if msg.seq < min_seq:
                continue
            block = self._headers(msg, ("Nats-Num-Pending", pending), ("Nats-Last-Sequence", last_seq))
            last_seq = msg.seq
            self.host.reply(reply, msg.data, block)
            sent_bytes += len(msg.subject) + (len(msg.hdr) if msg.hdr else 0) + len(msg.data)
            if sent_bytes >= limit:
                break
            sent += 1
            if batch > 0 and sent >= batch:
                break
        self._status(reply, status.end_of_batch(pending, last_seq, up_to))

    def _multi_last(self, filters: list[str], up_to: int) -> list[StoredMessage] | None:
        """Last messages per subject at or below ``up_to``; ``None`` when there are too many."""
        store = self.store
        if store.msgs == 0:
            return []
        if store.storage == "file" and not store.first_seq <= up_to <= store.last_seq:
            # The file store finds no block holding such a ceiling.
            return []
        found = store.last_for_subjects(filters, up_to)
        if len(found) > MAX_MULTI_RESULTS:
            return None
        return found
