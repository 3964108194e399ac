"""A traced message reaching a stream: the ``js`` event of nats-server's message trace.

The stream's capture subscription hands a traced message here instead of
to its own handler (see :mod:`fakejs.core.msgtrace`).  The event names
the stream, then the subject stored under (after the stream's subject
transform) and ``nointerest`` when interest retention keeps nothing, or
the error that refused the message.  A trace-only message is neither
stored nor acknowledged; a stored one has its ``Nats-Trace-Dest`` set to
``trace disabled``, so that its deliveries are not traced again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

from fakejs.core.msgtrace import TRACE_DEST, TRACE_DISABLED, MessageTrace
from fakejs.jetstream.errors import ApiError
from fakejs.protocol import headers as hdrs

__all__ = ["TracedStream", "traced_inbound"]


class TracedStream(Protocol):
    """What a traced message needs of the stream it reaches."""

    refused: ApiError | None

    @property
    def name(self) -> str: ...

    @property
    def config(self) -> Mapping[str, object]: ...

    def input_subject(self, subject: str) -> str: ...

    def has_interest(self, subject: str) -> bool: ...

    def inbound(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: Any) -> bool: ...


def traced_inbound(
    stream: TracedStream, trace: MessageTrace, subject: str, reply: str, hdr: bytes | None, payload: bytes
) -> bool:
    """Store (or, trace only, just look at) a traced message, recording the ``js`` event."""
    trace.jetstream(stream.name)
    stored_as = stream.input_subject(subject)
    no_interest = stream.config["retention"] == "interest" and not stream.has_interest(stored_as)
    if trace.trace_only:
        trace.jetstream_stored(stored_as, bool(no_interest))
        return True
    stream.refused = None
    delivered = stream.inbound(subject, reply, hdrs.set_value(hdr, TRACE_DEST, TRACE_DISABLED), payload, None)
    if stream.refused is not None:
        trace.jetstream_error(refusal_text(stream.refused, hdr))
    else:
        trace.jetstream_stored(stored_as, bool(no_interest))
    return delivered


# Refusals nats-server's processJetStreamMsg returns as plain errors, with its own text (the reply
# carries the API error); every other refusal is an API error, shown as "<description> (<code>)".
_PLAIN_REFUSALS = {
    10060: "expected stream does not match",
    10166: "message TTL disabled",
    10054: "maximum payload exceeded",
}
_AS_DESCRIBED = frozenset({10077, 10111})  # store failures and roll-ups: the error is the description


def refusal_text(refused: ApiError, hdr: bytes | None) -> str:
    """The error text of a refused traced message, as nats-server's ``js`` event shows it."""
    code, description = refused.err_code, refused.description
    if code in _PLAIN_REFUSALS:
        return _PLAIN_REFUSALS[code]
    if code in _AS_DESCRIBED:
        return description
    if code == 10071:  # wrong last sequence: "<expected> vs <actual>"
        actual = description.rsplit(" ", 1)[-1]
        by_subject = hdrs.get(hdr, "Nats-Expected-Last-Subject-Sequence")
        if by_subject is not None:
            return f"last sequence by subject mismatch: {_number(by_subject)} vs {actual}"
        return f"last sequence mismatch: {_number(hdrs.get(hdr, 'Nats-Expected-Last-Sequence'))} vs {actual}"
    if code == 10070:  # wrong last msg id: Go's %q of both
        expected = (hdrs.get(hdr, "Nats-Expected-Last-Msg-Id") or b"").decode(errors="replace")
        last = description.split(": ", 1)[1] if ": " in description else ""
        return f"last msgid mismatch: {json.dumps(expected)} vs {json.dumps(last)}"
    return f"{description} ({code})"


def _number(value: bytes | None) -> int:
    try:
        return int(value or b"0")
    except ValueError:
        return 0
