"""Pull requests: what a ``MSG.NEXT`` body asks for, and the queue pulls wait in.

:func:`parse_request` reads a request body as nats-server's
``nextReqFromMsg`` does (a batch size, or JSON with Go's decoding errors).
:class:`WaitQueue` hands out messages the way nats-server's does: the
request at the head receives one message, then moves to the tail if it
still wants more, so several waiting requests share new messages round
robin; with the ``prioritized`` policy requests stay ordered by priority
instead.  At most ``max_waiting`` requests wait.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fakejs.gocompat.gojson import Field, GoJSONError, Struct, unmarshal

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


@dataclass
class PullRequest:
    """What a client asked for in one pull (``nextReqFromMsg``)."""

    batch: int = 1
    expires: int = 0  # ns; 0 = no expiry
    max_bytes: int = 0
    no_wait: bool = False
    heartbeat: int = 0  # ns
    group: dict[str, Any] | None = None  # priority group fields when a JSON body was sent


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
        group = {
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
    n: int  # messages still wanted
    b: int  # bytes still allowed (0 = no limit)
    expires: float | None  # clock.monotonic() deadline
    heartbeat: float = 0.0  # seconds
    next_heartbeat: float | None = None
    no_wait: bool = False
    group: dict[str, Any] | None = None
    d: int = 0  # messages delivered

    @property
    def priority(self) -> int:
        """The ``prioritized`` policy's order (0 first); requests without a group come last."""
        if self.group is None:
            return 2**31 - 1
        return int(self.group.get("priority", 0))


class WaitQueue:
    """Waiting pull requests in the order they take messages."""

    def __init__(self, max_waiting: int, prioritized: bool = False) -> None:
        self.max = max_waiting
        self.prioritized = prioritized
        self._queue: deque[WaitingRequest] = deque()

    def __len__(self) -> int:
        return len(self._queue)

    def __iter__(self) -> Iterator[WaitingRequest]:
        """A snapshot: the queue may change while the caller walks it."""
        return iter(list(self._queue))

    def is_full(self) -> bool:
        return len(self._queue) == self.max

    def add(self, request: WaitingRequest) -> bool:
        if self.is_full():
            return False
        if self.prioritized:
            self._insert_sorted(request)
        else:
            self._queue.append(request)
        return True

    def _insert_sorted(self, request: WaitingRequest) -> None:
        for i, current in enumerate(self._queue):
            if current.priority > request.priority:
                self._queue.insert(i, request)
                return
        self._queue.append(request)

    def peek(self) -> WaitingRequest | None:
        return self._queue[0] if self._queue else None

    def remove(self, request: WaitingRequest) -> None:
        try:
            self._queue.remove(request)
        except ValueError:
            pass

    def cycle(self) -> None:
        """Move the head to the back (it cannot be served right now)."""
        if self._queue:
            self._queue.rotate(-1)

    def pop(self) -> WaitingRequest | None:
        """Take one delivery from the head request (round robin or by priority)."""
        request = self.peek()
        if request is None:
            return None
        request.d += 1
        request.n -= 1
        if request.n <= 0:
            self._queue.popleft()
        elif len(self._queue) > 1:
            self._queue.popleft()
            if self.prioritized:
                self._insert_sorted(request)
            else:
                self._queue.append(request)
        return request

    def clear(self) -> list[WaitingRequest]:
        """Empty the queue; returns who was waiting (to be told why)."""
        out = list(self._queue)
        self._queue.clear()
        return out
