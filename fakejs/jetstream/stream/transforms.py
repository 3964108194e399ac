"""A stream's subject transforms at work: the input transform and the republish.

:func:`input_transform` builds what ``subject_transform`` does to every
message before anything else (a subject that does not match the source is
kept as published).  :class:`Republisher` is ``republish``: after a
message is stored, a core NATS copy (or only its headers) goes to the
transformed subject with nats-server's ``Nats-*`` headers, in its order.
A stream without either pays nothing: both are ``None``.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from fakejs.core.clock import Clock
from fakejs.core.router import Router
from fakejs.core.subject_transform import SubjectTransform
from fakejs.core.subjects import has_wildcard, is_valid_subject
from fakejs.gocompat import gotime
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.storage.message import StoredMessage
from fakejs.jetstream.storage.store import MessageStore

_HEAD = b"NATS/1.0\r\n"


def input_transform(cfg: StreamConfig, rng: random.Random) -> SubjectTransform | None:
    """The ``subject_transform`` of a checked config (``None`` without one, or with an empty destination)."""
    transform = cfg["subject_transform"]
    if transform is None:
        return None
    return SubjectTransform.parse(transform.get("src", ""), transform.get("dest", ""), rng=rng)


class Republisher:
    """Sends the republished copy of each stored message that matches ``republish.src``.

    ``prepare`` runs before the message is stored (``Nats-Last-Sequence`` is
    the subject's last sequence before it), ``send`` after.  A republish that
    reaches its own stream again (only an updated ``>`` to ``>`` republish can)
    is queued on the clock instead of recursing, so the loop nats-server runs
    into stays a loop, ended by the header size limit as there.
    """

    def __init__(
        self, stream: str, transform: SubjectTransform, headers_only: bool, router: Router, clock: Clock
    ) -> None:
        self._stream = stream.encode("utf-8", "surrogateescape")
        self._transform = transform
        self._headers_only = headers_only
        self._router = router
        self._clock = clock
        self._sending = False

    @classmethod
    def build(cls, cfg: StreamConfig, router: Router, clock: Clock, rng: random.Random) -> Republisher | None:
        republish = cfg["republish"]
        if republish is None:
            return None
        transform = SubjectTransform.parse(republish.get("src", ""), republish.get("dest", ""), rng=rng)
        if transform is None:
            return None
        return cls(cfg["name"], transform, bool(republish.get("headers_only")), router, clock)

    def prepare(self, subject: str, store: MessageStore) -> Callable[[StoredMessage], None] | None:
        """What to do once the message on ``subject`` is stored (``None``: it is not republished)."""
        target = self._transform.match(subject)
        if target is None or not is_valid_subject(target) or has_wildcard(target):
            return None
        last = store.last_message(subject)
        last_seq = last.seq if last is not None else 0
        return lambda msg: self._send(target, msg, last_seq)

    def headers(self, msg: StoredMessage, last_seq: int) -> bytes:
        """The stored headers (if any) followed by the republish headers."""
        fields = (
            b"Nats-Stream: %s\r\nNats-Subject: %s\r\nNats-Sequence: %d\r\nNats-Time-Stamp: %s\r\nNats-Last-Sequence: %d\r\n"
            % (
                self._stream,
                msg.subject.encode("utf-8", "surrogateescape"),
                msg.seq,
                gotime.rfc3339(msg.ts).encode(),
                last_seq,
            )
        )
        if self._headers_only:
            fields += b"Nats-Msg-Size: %d\r\n" % len(msg.data)
        hdr = msg.hdr
        return (hdr[:-2] if hdr else _HEAD) + fields + b"\r\n"

    def _send(self, target: str, msg: StoredMessage, last_seq: int) -> None:
        hdr = self.headers(msg, last_seq)
        payload = b"" if self._headers_only else msg.data
        if self._sending:
            self._clock.call_soon(self._router.publish, target, "", hdr, payload, None)
            return
        self._sending = True
        try:
            self._router.publish(target, "", hdr, payload, None)
        finally:
            self._sending = False
