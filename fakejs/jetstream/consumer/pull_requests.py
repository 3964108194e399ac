"""Pull requests: what a ``MSG.NEXT`` body asks for, and the queue pulls wait in.

:func:`parse_request` reads a request body as nats-server's
``nextReqFromMsg`` does (a batch size, or JSON with Go's decoding errors).
:class:`WaitQueue` hands out messages the way nats-server's does: the
request at the head receives one message, then moves to the tail if it
still wants more, so several waiting requests share new messages round
robin; with the ``prioritized`` policy the lowest priority number is
served first (a heap), equal priorities round robin.  At most
``max_waiting`` requests wait.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypedDict, TypeVar

from fakejs.gocompat.gojson import Field, GoJSONError, Struct, unmarshal

T = TypeVar("T")

# nats-server decodes into a pooled pointer, so Go's errors name no struct (".batch").
NEXT_REQUEST = Struct(
    "",
    (
        Field("expires", "time.Duration"),
        Field("batch", "int"),
        Field("max_bytes", "int"),
        Field("no_wait", "bool"),
        Field("idle_heartbeat", "time.Duration"),
        Field("group", "string"),
        Field("min_pending", "int64"),
        Field("min_ack_pending", "int64"),
        Field("id", "string"),
        Field("priority", "int"),
    ),
)


class PullGroup(TypedDict):
    """A pull's priority-group fields (ADR-42): the group, overflow thresholds, pin id and priority."""

    group: str
    min_pending: int
    min_ack_pending: int
    id: str  # the pin id the client holds ("" before it is pinned)
    priority: int  # the ``prioritized`` policy's order, 0 first


@dataclass
class PullRequest:
    """What a client asked for in one pull (``nextReqFromMsg``)."""

    batch: int = 1
    expires: int = 0  # ns; 0 = no expiry
    max_bytes: int = 0
    no_wait: bool = False
    heartbeat: int = 0  # ns
    group: PullGroup | None = None  # priority group fields when a JSON body was sent


class BadPullRequest(Exception):
    """``400 Bad Request - <reason>``."""


def _atoi(text: str) -> int | None:
    """Go's ``strconv.Atoi``: optional sign, ASCII digits."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isdigit() or not body.isascii():
        return None
    value = int(text)
    if not -(2**63) <= value < 2**63:
        return None
    return value


def parse_request(payload: bytes) -> PullRequest:
    """``nextReqFromMsg``: raises :class:`BadPullRequest` for a body nats-server refuses."""
    body = payload.strip(b" \t\r\n\v\f")
    if not body:
        return PullRequest()
    if body[:1] == b"{":
        try:
            fields = unmarshal(NEXT_REQUEST, body)
        except GoJSONError as exc:
            raise BadPullRequest(str(exc)) from None
        heartbeat = fields.get("idle_heartbeat", 0)
        expires = fields.get("expires", 0)
        if heartbeat > 0 and heartbeat * 2 > expires:
            raise BadPullRequest("heartbeat value too large")
        group: PullGroup = {
            "group": fields.get("group", ""),
            "min_pending": fields.get("min_pending", 0),
            "min_ack_pending": fields.get("min_ack_pending", 0),
            "id": fields.get("id", ""),
            "priority": fields.get("priority", 0),
        }
        return PullRequest(
            batch=fields.get("batch", 0),
            expires=expires,  # negative: already expired
            max_bytes=fields.get("max_bytes", 0),
            no_wait=fields.get("no_wait", False),
            heartbeat=heartbeat,
            group=group,
        )
    number = _atoi(body.decode("latin-1"))
    if number is not None:
        return PullRequest(batch=number)
    return PullRequest()


@dataclass(eq=False)
class WaitingRequest:
    """A pull request waiting for messages (``waitingRequest``)."""

    reply: str
    batch_left: int  # messages still wanted (``n`` in nats-server)
    bytes_left: int  # bytes still allowed, 0: no limit (``b``)
    expires: float | None  # clock.monotonic() deadline
    heartbeat: float = 0.0  # seconds
    next_heartbeat: float | None = None
    no_wait: bool = False
    group: PullGroup | None = None
    delivered: int = 0  # messages delivered (``d``)
    # Whose interest keeps the request (``interest``), when not the reply's: a
    # request through a service import waits while the requester's subject has interest.
    interest: Callable[[], bool] | None = None

    @property
    def priority(self) -> int:
        """The ``prioritized`` policy's order (0 first); requests without a group come last."""
        if self.group is None:
            return 2**31 - 1
        return int(self.group.get("priority", 0))


class WaitQueue:
    """Waiting pull requests in the order they take messages (``waitQueue``).

    Round robin: the head takes one message and, still wanting more, goes
    to the tail.  With ``prioritized`` the requests sit in a heap keyed by
    (priority, arrival): the lowest priority number is served first, equal
    priorities in turn (a request wanting more goes behind its equals), so
    taking a message costs O(log n) however many requests wait.  Removed
    requests leave the heap lazily.

    ``on_waiting(reply, waiting)``, when set, hears each request that starts
    or stops waiting (a replicated consumer's leader tells its followers).
    """

    def __init__(self, max_waiting: int, prioritized: bool = False) -> None:
        self.max = max_waiting
        self._queue: deque[WaitingRequest] = deque()
        self._heap: list[_Ranked] = []
        self._ranked: dict[int, _Ranked] = {}  # id(request) -> its live heap entry
        self._arrivals = itertools.count()
        self._prioritized = prioritized
        self.on_waiting: Callable[[str, bool], None] | None = None
        # How many requests wait: len(self), read on every delivery without a call.
        self.waiting = 0

    @property
    def prioritized(self) -> bool:
        return self._prioritized

    @prioritized.setter
    def prioritized(self, value: bool) -> None:
        """Switching the policy keeps who waits, ordered as the new policy orders them."""
        if value == self._prioritized:
            return
        waiting = list(self)
        self._empty()
        self._prioritized = value
        for request in waiting:
            self._push(request)

    def __len__(self) -> int:
        return self.waiting

    def __iter__(self) -> Iterator[WaitingRequest]:
        """A snapshot in serving order: the queue may change while the caller walks it."""
        if self._prioritized:
            return iter([entry.request for entry in sorted(self._ranked.values())])
        return iter(list(self._queue))

    def unordered(self) -> list[WaitingRequest]:
        """A snapshot in no particular order (O(n), for walks that only count and check)."""
        if self._prioritized:
            return [entry.request for entry in self._ranked.values()]
        return list(self._queue)

    def in_order(self, items: list[tuple[WaitingRequest, T]]) -> list[tuple[WaitingRequest, T]]:
        """``items`` of waiting requests sorted into serving order (only the few a walk acts on get sorted)."""
        if not self._prioritized or len(items) < 2:
            return items
        ranked = self._ranked
        return sorted(items, key=lambda item: ranked[id(item[0])])

    def is_full(self) -> bool:
        return self.waiting == self.max

    def add(self, request: WaitingRequest) -> bool:
        if self.is_full():
            return False
        self._push(request)
        if self.on_waiting is not None:
            self.on_waiting(request.reply, True)
        return True

    def _push(self, request: WaitingRequest, rank: int | None = None) -> None:
        self.waiting += 1
        if not self._prioritized:
            self._queue.append(request)
            return
        entry = _Ranked(request.priority if rank is None else rank, next(self._arrivals), request)
        self._ranked[id(request)] = entry
        heapq.heappush(self._heap, entry)

    def peek(self) -> WaitingRequest | None:
        if not self._prioritized:
            return self._queue[0] if self._queue else None
        heap = self._heap
        while heap and heap[0].removed:
            heapq.heappop(heap)
        return heap[0].request if heap else None

    def remove(self, request: WaitingRequest) -> None:
        """The request stops waiting."""
        if self._take_out(request) and self.on_waiting is not None:
            self.on_waiting(request.reply, False)

    def _take_out(self, request: WaitingRequest) -> bool:
        """Take the request out of the queue; whether it was in it."""
        if not self._prioritized:
            try:
                self._queue.remove(request)
            except ValueError:
                return False
            self.waiting -= 1
            return True
        entry = self._ranked.pop(id(request), None)
        if entry is None:
            return False
        self.waiting -= 1
        entry.removed = True
        if len(self._heap) > 2 * len(self._ranked) + 16:
            self._heap = sorted(self._ranked.values())  # drop the removed entries (a sorted list is a heap)
        return True

    def cycle(self) -> None:
        """Move the head to the back (it cannot be served right now); with priorities, behind every priority."""
        if not self._prioritized:
            if self._queue:
                self._queue.rotate(-1)
            return
        request = self.peek()
        if request is not None and self.waiting > 1:
            self._take_out(request)
            self._push(request, CYCLED_RANK)

    def pop(self) -> WaitingRequest | None:
        """Take one delivery from the head request (round robin or by priority)."""
        if self._prioritized:
            request = self.peek()
            if request is None:
                return None
        elif self._queue:
            request = self._queue[0]  # peek(), without its call on every delivery
        else:
            return None
        request.delivered += 1
        request.batch_left -= 1
        if request.batch_left <= 0:
            self.remove(request)
        elif self.waiting > 1:
            self._take_out(request)
            self._push(request)
        return request

    def clear(self) -> list[WaitingRequest]:
        """Empty the queue; returns who was waiting (to be told why)."""
        out = self._empty()
        if self.on_waiting is not None:
            for request in out:
                self.on_waiting(request.reply, False)
        return out

    def _empty(self) -> list[WaitingRequest]:
        out = list(self)
        self._queue.clear()
        self._heap.clear()
        self._ranked.clear()
        self.waiting = 0
        return out


# A request the pull dispatch had to pass over goes behind every priority (nats-server appends it to the tail).
CYCLED_RANK = 2**32


@dataclass(eq=False)
class _Ranked:
    """A heap entry of a prioritized queue: lower ``rank`` first, then earlier ``arrival``."""

    rank: int
    arrival: int
    request: WaitingRequest
    removed: bool = False

    def __lt__(self, other: _Ranked) -> bool:
        return (self.rank, self.arrival) < (other.rank, other.arrival)
