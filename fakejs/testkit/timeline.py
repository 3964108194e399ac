"""A server's timeline: the events its recording points reported, in a ring of bounded size.

:class:`Timeline` is the :class:`~fakejs.core.recorder.Recorder` a server
gives its layers when ``timeline`` (the ring's size) is above zero.  It
keeps the newest ``size`` events; each is the kind, the server clock's time
in ns and the fields :data:`~fakejs.core.recorder.EVENT_KINDS` declares for
the kind.  :meth:`Timeline.events` gives them as JSON-able dicts, oldest
first, filtered by stream, consumer, client, kind (an exact kind, or a
family such as ``pull`` for every ``pull.*`` event) and time.  A message's
headers are kept as the header block's bytes and decoded there, when the
events are read (``{name: [values]}``, None when the message had none).
The servers of a cluster in one process number their events from one
count (:meth:`Timeline.number_with`): their indexes then order the events
of every node together.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterator
from typing import Any

from fakejs.core.clock import Clock
from fakejs.core.recorder import EVENT_KINDS
from fakejs.protocol import headers

__all__ = ["DEFAULT_SIZE", "Timeline", "TimelineFilter"]

DEFAULT_SIZE = 10_000  # events kept by default: a few MB at most

# One recorded event: (index, kind, time_ns, fields), the fields by name or (record_values) their values in
# the order EVENT_KINDS declares them.
Event = tuple[int, str, int, dict[str, Any] | tuple[Any, ...]]


class TimelineFilter:
    """Which events a query keeps: every given criterion must hold (None: any)."""

    def __init__(
        self,
        stream: str | None = None,
        consumer: str | None = None,
        client: int | None = None,
        kind: str | None = None,
        since: int | None = None,
    ) -> None:
        if kind is not None and kind not in EVENT_KINDS and not any(k.startswith(kind + ".") for k in EVENT_KINDS):
            raise ValueError(f"unknown event kind {kind!r} (known: {', '.join(EVENT_KINDS)})")
        self.stream = stream
        self.consumer = consumer
        self.client = client
        self.kind = kind
        self.since = since

    def keeps(self, event: Event) -> bool:
        _, kind, time_ns, _ = event
        fields = fields_of(event)
        if self.kind is not None and kind != self.kind and not kind.startswith(self.kind + "."):
            return False
        if self.since is not None and time_ns < self.since:
            return False
        if self.stream is not None and fields.get("stream") != self.stream:
            return False
        if self.consumer is not None and fields.get("consumer") != self.consumer:
            return False
        return self.client is None or fields.get("client") == self.client


class Timeline:
    """The newest ``size`` events of one server (``size`` 0: nothing is recorded, and the timeline is falsy)."""

    def __init__(self, clock: Clock, size: int = DEFAULT_SIZE) -> None:
        if size < 0:
            raise ValueError("a timeline's size is 0 (off) or more")
        self._clock = clock
        self.size = size
        self._events: deque[Event] = deque(maxlen=size)
        self._index: Iterator[int] = itertools.count()
        self._dropped = 0

    def __bool__(self) -> bool:
        return self.size > 0

    def __len__(self) -> int:
        return len(self._events)

    def number_with(self, numbering: Iterator[int]) -> None:
        """Number the events from ``numbering`` (shared by the servers of a cluster, so that their indexes order
        the events of every server together) rather than from the server's own count."""
        self._index = numbering

    def record(self, kind: str, **fields: Any) -> None:
        """Keep an event (the oldest goes once the ring is full)."""
        if self.size:
            events = self._events
            if len(events) == self.size:
                self._dropped += 1
            events.append((next(self._index), kind, self._clock.time_ns(), fields))

    def record_values(self, kind: str, values: tuple[Any, ...]) -> None:
        """Keep an event whose fields are given by position (named when the timeline is read)."""
        if self.size:
            events = self._events
            if len(events) == self.size:
                self._dropped += 1
            events.append((next(self._index), kind, self._clock.time_ns(), values))

    @property
    def dropped(self) -> int:
        """How many events the ring has let go of since it was last cleared (a cleared event is not dropped)."""
        return self._dropped

    def clear(self) -> None:
        """Forget every event kept; indexes go on from where they were."""
        self._events.clear()
        self._dropped = 0

    def events(self, where: TimelineFilter | None = None, /, **criteria: Any) -> list[dict[str, Any]]:
        """The kept events as JSON-able dicts, oldest first, that ``where`` (or the criteria) keeps."""
        chosen = where if where is not None else TimelineFilter(**criteria)
        return [as_dict(event) for event in self._events if chosen.keeps(event)]

    def document(self, where: TimelineFilter) -> dict[str, Any]:
        """The control API's reply: the events, the ring's size and how many it dropped."""
        return {"size": self.size, "dropped": self.dropped, "events": self.events(where)}


def as_dict(event: Event) -> dict[str, Any]:
    """One event as JSON: ``index``, ``kind``, ``time_ns``, then its fields (a header block decoded)."""
    index, kind, time_ns, _ = event
    fields = fields_of(event)
    out = {"index": index, "kind": kind, "time_ns": time_ns, **fields}
    block = fields.get("headers")
    if block is not None:
        out["headers"] = decode_headers(block)
    return out


def fields_of(event: Event) -> dict[str, Any]:
    """An event's fields by name."""
    kind, fields = event[1], event[3]
    if isinstance(fields, dict):
        return fields
    return dict(zip(EVENT_KINDS[kind][1], fields))


def decode_headers(block: bytes) -> dict[str, list[str]] | None:
    """A header block as ``{name: [values]}`` in the order the block has them (None: not one header)."""
    decoded: dict[str, list[str]] = {}
    for name, value in headers.pairs(block):
        decoded.setdefault(name, []).append(value)
    return decoded or None
