"""Reading what crosses the wire: pull requests, ack subjects, statuses; and writing evidence.

Everything here is pure: subjects and bodies in, small records out.  A
pull request the server would refuse (bad JSON) is still a pull for the
rules; its fields are read leniently, as the client meant them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fakejs.gocompat.gotime import NS
from fakejs.protocol import headers as hdr

PIN_ID = "Nats-Pin-Id"
PENDING_MESSAGES = "Nats-Pending-Messages"
PENDING_BYTES = "Nats-Pending-Bytes"


@dataclass(frozen=True)
class PullRequest:
    """One ``CONSUMER.MSG.NEXT`` request as the client sent it (times in seconds, 0: absent)."""

    stream: str
    consumer: str
    batch: int
    max_bytes: int
    expires: float
    heartbeat: float
    no_wait: bool
    group: str
    pin_id: str


@dataclass(frozen=True)
class AckSubject:
    """The parts of a ``$JS.ACK`` reply subject the rules use."""

    stream: str
    consumer: str
    stream_seq: int
    consumer_seq: int


@dataclass(frozen=True)
class Status:
    """A status message (``NATS/1.0 <code> <description>``) and the pending counts it carries."""

    code: int
    description: str
    pending_messages: int | None
    pending_bytes: int


def _api_tail(subject: str, operation: tuple[str, ...]) -> list[str] | None:
    """The tokens after ``$JS[.<domain>].API.<operation>``, or None for any other subject."""
    if not subject.startswith("$JS."):
        return None  # most subjects a client publishes stop here
    tokens = subject.split(".")
    rest = tokens[2:] if tokens[1] == "API" else tokens[3:] if len(tokens) > 3 and tokens[2] == "API" else []
    size = len(operation)
    return rest[size:] if tuple(rest[:size]) == operation else None


def _consumer_target(subject: str, operation: tuple[str, ...]) -> tuple[str, str] | None:
    tail = _api_tail(subject, operation)
    return (tail[0], tail[1]) if tail is not None and len(tail) == 2 else None


def pull_target(subject: str) -> tuple[str, str] | None:
    """``(stream, consumer)`` of a ``$JS[.<domain>].API.CONSUMER.MSG.NEXT`` subject, else None."""
    return _consumer_target(subject, ("CONSUMER", "MSG", "NEXT"))


def deleted_target(subject: str) -> tuple[str, str] | None:
    """``(stream, consumer)`` of a ``$JS[.<domain>].API.CONSUMER.DELETE`` subject, else None."""
    return _consumer_target(subject, ("CONSUMER", "DELETE"))


def created_stream(subject: str) -> str | None:
    """The stream of a ``$JS[.<domain>].API.CONSUMER.CREATE.<stream>[...]`` subject, else None."""
    tail = _api_tail(subject, ("CONSUMER", "CREATE"))
    return tail[0] if tail else None


def _number(doc: dict[str, Any], key: str) -> int:
    value = doc.get(key, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def pull_request(stream: str, consumer: str, payload: bytes) -> PullRequest:
    """The pull a body asks for: an empty body is a batch of one that waits (ADR-13)."""
    try:
        doc = json.loads(payload) if payload.strip() else {}
    except ValueError:
        doc = {}
    if not isinstance(doc, dict):
        doc = {}
    group = doc.get("group", "")
    pin_id = doc.get("id", "")
    return PullRequest(
        stream=stream,
        consumer=consumer,
        batch=max(_number(doc, "batch"), 1),
        max_bytes=max(_number(doc, "max_bytes"), 0),
        expires=max(_number(doc, "expires"), 0) / NS,
        heartbeat=max(_number(doc, "idle_heartbeat"), 0) / NS,
        no_wait=doc.get("no_wait") is True,
        group=group if isinstance(group, str) else "",
        pin_id=pin_id if isinstance(pin_id, str) else "",
    )


def ack_subject(subject: str) -> AckSubject | None:
    """An ack reply subject (both the 9-token and the 12-token form), else None."""
    if not subject.startswith("$JS.ACK."):
        return None
    tokens = subject.split(".")
    if len(tokens) == 9:
        stream, consumer, sseq, dseq = tokens[2], tokens[3], tokens[5], tokens[6]
    elif len(tokens) >= 11:
        stream, consumer, sseq, dseq = tokens[4], tokens[5], tokens[7], tokens[8]
    else:
        return None
    if not (sseq.isdigit() and dseq.isdigit()):
        return None
    return AckSubject(stream, consumer, int(sseq), int(dseq))


def ack_kind(payload: bytes) -> str:
    """``+ACK`` (also an empty body), ``-NAK``, ``+WPI``, ``+NXT`` or ``+TERM``."""
    word = payload.strip().split(b" ", 1)[0]
    if word in (b"", b"+ACK"):
        return "+ACK"
    return word.decode("utf-8", "replace")


def status(headers: bytes | None) -> Status | None:
    """The status a header block carries, else None (a user message)."""
    code, description = hdr.status(headers)
    if code == 0:
        return None
    messages = hdr.get(headers, PENDING_MESSAGES)
    size = hdr.get(headers, PENDING_BYTES)
    return Status(
        code=code,
        description=description,
        pending_messages=int(messages) if messages is not None and messages.isdigit() else None,
        pending_bytes=int(size) if size is not None and size.isdigit() else 0,
    )


def pin_id(headers: bytes | None) -> str:
    value = hdr.get(headers, PIN_ID)
    return value.decode("utf-8", "replace") if value else ""


def frame(verb: str, subject: str, reply: str, headers: bytes | None, payload: bytes) -> bytes:
    """A ``PUB`` a client sent or a ``MSG`` it was sent (``H`` added with headers), rebuilt as evidence.

    Rebuilt from what the server parsed, so spacing is normalised and a
    ``MSG`` leaves out the subscription id.
    """
    head = subject + (" " + reply if reply else "")
    if headers is None:
        return f"{verb} {head} {len(payload)}\r\n".encode("utf-8", "surrogateescape") + payload + b"\r\n"
    sizes = f"{len(headers)} {len(headers) + len(payload)}"
    return f"H{verb} {head} {sizes}\r\n".encode("utf-8", "surrogateescape") + headers + payload + b"\r\n"


def message_size(subject: str, reply: str, headers: bytes | None, payload: bytes) -> int:
    """A message's size as the server counts it against max_bytes (ADR-37 Message Size Calculation)."""
    return len(subject) + len(reply) + (len(headers) if headers else 0) + len(payload)
