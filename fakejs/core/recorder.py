"""The timeline's recording points: the kinds of event the server records, and what records them.

Domain code (sessions, streams, consumers, the test kit's clock and faults)
calls :meth:`Recorder.record` where something a test may want to see again
happens: a publish and its PubAck, a pull request and how it ended, a
delivery, an ack.  Each event has a kind from :data:`EVENT_KINDS`, the
server clock's time and the fields its kind declares.  The ring that keeps
them (:class:`fakejs.testkit.timeline.Timeline`) is the test kit's; a server
that records nothing runs with :class:`NoRecorder`, and every point costs
one truth test (``if recorder:``).  Core defines the kinds and the interface
so that it never imports the test kit.

A message's headers (``headers`` of ``publish`` and ``deliver``) are
recorded as the header block's bytes, a reference the message holds anyway;
the timeline decodes them (to ``{name: [values]}``, or None) only when its
events are read.
"""

from __future__ import annotations

from typing import Any, Protocol

_CONSUMER = ("stream", "consumer")
_ACK = (*_CONSUMER, "stream_seq", "consumer_seq", "delivery_count")
_BATCH = ("client", "stream", "batch", "mode")

# Event kind -> (what happened, its fields besides ``kind`` and ``time_ns``).
EVENT_KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "client.connect": ("a client's CONNECT was accepted", ("client", "name", "account", "lang", "version")),
    "client.disconnect": ("a client's connection closed", ("client", "name", "reason")),
    "publish": (
        "a message published to a stream, and its PubAck",
        ("client", "stream", "subject", "size", "seq", "duplicate", "headers"),
    ),
    "publish.error": (
        "a message a stream refused, and the error its PubAck carried",
        ("client", "stream", "subject", "size", "code", "err_code", "description"),
    ),
    "stream.create": ("a stream was created", ("stream",)),
    "stream.restore": ("a stream came back from the store as JetStream started", ("stream",)),
    "stream.update": ("a stream's configuration was updated", ("stream",)),
    "stream.purge": ("a stream was purged on request", ("stream", "filter", "seq", "keep", "purged")),
    "stream.delete": ("a stream was deleted (cause: api, control, account_purge)", ("stream", "cause")),
    "consumer.create": ("a consumer was created", _CONSUMER),
    "consumer.restore": ("a consumer came back from the store with its stream", _CONSUMER),
    "consumer.update": ("a consumer's configuration was updated", _CONSUMER),
    "consumer.delete": (
        "a consumer was deleted (cause: api, control, inactive, stream_delete)",
        (*_CONSUMER, "cause"),
    ),
    "consumer.pause": ("a consumer was paused (until) or resumed (until null)", (*_CONSUMER, "until")),
    "pin": ("a priority group's pin went to a pull request (pinned_client)", (*_CONSUMER, "group", "pin_id", "reply")),
    "unpin": (
        "a priority group's pin was dropped (reason: timeout, admin, refused)",
        (*_CONSUMER, "group", "pin_id", "reason"),
    ),
    "pull.request": (
        "a pull request reached a consumer (client: who sent it; null for an ack's +NXT)",
        (
            *_CONSUMER,
            "client",
            "reply",
            "batch",
            "max_bytes",
            "expires",
            "no_wait",
            "heartbeat",
            "group",
            "priority",
            "pin_id",
        ),
    ),
    "pull.end": ("a pull request was answered with a status line", (*_CONSUMER, "reply", "code", "text")),
    "pull.filled": ("a pull request got its whole batch", (*_CONSUMER, "reply")),
    "pull.heartbeat": ("an idle heartbeat (100) went to a waiting pull", (*_CONSUMER, "reply")),
    "deliver": (
        "a message went to a pull's reply subject or the push subject",
        (*_CONSUMER, "stream_seq", "consumer_seq", "delivery_count", "subject", "size", "target", "headers"),
    ),
    "ack": ("a +ACK (or +NXT) arrived", _ACK),
    "nak": ("a -NAK arrived (delay in ns, null: at once)", (*_ACK, "delay")),
    "term": ("a +TERM arrived", (*_ACK, "reason")),
    "progress": ("a +WPI (in progress) arrived", _ACK),
    "redeliver": (
        "a delivery is due again: its ack wait (or backoff step) ran out, or a nak asked for it",
        (*_CONSUMER, "stream_seq", "cause"),
    ),
    "flow_control": ("a push consumer sent a flow control request", (*_CONSUMER, "subject")),
    "batch.message": (
        "a message of a batch publish arrived (mode: atomic or fast; seq: where it was stored, 0 while staged)",
        (*_BATCH, "batch_seq", "subject", "size", "seq"),
    ),
    "batch.commit": (
        "a batch publish ended, its messages stored (count: the batch sequence it ended at; seq: the last stored)",
        (*_BATCH, "count", "seq"),
    ),
    "batch.abandon": (
        "a batch publish was let go, nothing more stored (reason: timeout, incomplete, large, unsupported, refused)",
        (*_BATCH, "reason"),
    ),
    "fault": ("a fault fired", ("fault", "name", "point", "do")),
    "scenario.step": (
        "a scenario's step fired (step: its index in the file; fault: the fault it was installed as)",
        ("scenario", "step", "name", "do", "fault"),
    ),
    "clock.advance": ("the manual clock is about to move forward (timers due on the way follow)", ("seconds",)),
    "conformance.violation": (
        "the conformance watch found a client breaking a rule",
        ("client", "stream", "consumer", "rule", "detail"),
    ),
}


class Recorder(Protocol):
    """What a recording point calls."""

    def __bool__(self) -> bool:
        """False while nothing is recorded, so a recording point costs one truth test.

        A recorder's truth never changes: a hot path may read it once, when it takes the recorder."""
        ...

    def record(self, kind: str, **fields: Any) -> None:
        """Record an event of ``kind`` (a key of :data:`EVENT_KINDS`) with its fields, at the clock's time."""
        ...

    def record_values(self, kind: str, values: tuple[Any, ...]) -> None:
        """:meth:`record` with every field's value, in the order :data:`EVENT_KINDS` declares them
        (for a point on the path of every message: no keyword arguments to pass, no dict per event)."""
        ...


class NoRecorder:
    """The recorder of a server that keeps no timeline."""

    def __bool__(self) -> bool:
        return False

    def record(self, kind: str, **fields: Any) -> None:
        return None

    def record_values(self, kind: str, values: tuple[Any, ...]) -> None:
        return None


NO_RECORDER = NoRecorder()
