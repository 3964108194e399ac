"""A traced message reaching a stream: the ``js`` event of nats-server's message trace.

The stream's capture subscription hands a traced message here instead of
to its own handler (see :mod:`fakejs.core.msgtrace`).  The event names
the stream, then the subject stored under (after the stream's subject
transform) and ``nointerest`` when interest retention keeps nothing, or
the error that refused the message.  A trace-only message goes through
the stream's checks but is not stored: its publisher is answered only
when a check refuses it (or it is a duplicate); a stored one has its ``Nats-Trace-Dest`` set to
``trace disabled``, so that its deliveries are not traced again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from fakejs.core.msgtrace import TRACE_DEST, TRACE_DISABLED, MessageTrace
from fakejs.protocol import headers as hdrs

__all__ = ["TracedStream", "traced_inbound"]


class TracedStream(Protocol):
    """What a traced message needs of the stream it reaches."""

    trace_error: str
    trace_error_late: bool

    @property
    def name(self) -> str: ...

    @property
    def config(self) -> Mapping[str, object]: ...

    def input_subject(self, subject: str) -> str: ...

    def has_interest(self, subject: str) -> bool: ...

    def inbound(
        self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object, trace_only: bool = False
    ) -> bool: ...


def traced_inbound(
    stream: TracedStream,
    trace: MessageTrace,
    subject: str,
    reply: str,
    hdr: bytes | None,
    payload: bytes,
    origin: object = None,
) -> bool:
    """Store (or, trace only, just look at) a traced message, recording the ``js`` event."""
    return _traced_inbound(stream, trace, trace, subject, reply, hdr, payload)


def _traced_inbound(
    stream: TracedStream,
    trace: MessageTrace,
    arrival: MessageTrace,
    subject: str,
    reply: str,
    hdr: bytes | None,
    payload: bytes,
) -> bool:
    """Record the ``js`` event in ``trace`` (``arrival``: the trace that holds the routers meanwhile)."""
    trace.jetstream(stream.name)
    stored_as = stream.input_subject(subject)
    no_interest = stream.config["retention"] == "interest" and not stream.has_interest(stored_as)
    stream.trace_error = ""
    if trace.trace_only:
        with arrival.suspended():  # its refusal goes to the publisher untraced
            delivered = stream.inbound(subject, reply, hdr, payload, None, trace_only=True)
    else:
        delivered = stream.inbound(subject, reply, hdrs.set_value(hdr, TRACE_DEST, TRACE_DISABLED), payload, None)
    if stream.trace_error:
        if stream.trace_error_late:
            trace.jetstream_stored(stored_as, bool(no_interest))
        trace.jetstream_error(stream.trace_error)
    else:
        trace.jetstream_stored(stored_as, bool(no_interest))
    return delivered
