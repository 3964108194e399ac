"""How a session ends for input that broke the protocol, over TCP and over WebSocket.

nats-server's parser returns an error to its read loop.  A few errors were
handled where they happened (the client was told and closed: maximum
payload, maximum control line, a failed login); for the others the read
loop logs the error and closes the client as a ``Protocol Violation``.

A websocket client's read loop is another one (``wsReadAndParse``): every
error the parser returns is logged as ``read error: ...`` and closes the
client as a ``Read Error``, which nats-server closes without flushing what
was queued -- the ``-ERR`` and everything else answered in that read are
lost, and no close frame is sent.  Errors handled where they happened
still got their ``-ERR`` and close frame out first.
"""

from __future__ import annotations

import logging
from typing import Protocol

from fakejs.core.clientio import AUTH_VIOLATION, READ_ERROR
from fakejs.protocol.events import (
    CLOSED_MAX_PAYLOAD,
    CLOSED_PARSE_ERROR,
    CLOSED_PROTOCOL_VIOLATION,
    ERR_AUTHORIZATION,
    LOGGED_AFTER_CLOSE,
    LOGGED_AFTER_ERR,
    LOGGED_BEFORE_ERR,
    ProtocolViolation,
)

AUTHENTICATION_ERROR = "authentication error"  # nats-server's ErrAuthentication
MAX_PAYLOAD_ERROR = "maximum payload exceeded"  # nats-server's ErrMaxPayload


class ViolatingClient(Protocol):
    """What :func:`end_for_violation` needs of a session."""

    @property
    def websocket(self) -> bool: ...

    def send_err(self, text: str) -> None: ...

    def close(self, reason: str = ..., abort: bool = False) -> None: ...


def read_error(text: str) -> str:
    """nats-server's websocket read loop's error line for a parser error."""
    return f"read error: {text}"


def returned_error(violation: ProtocolViolation) -> str | None:
    """The text of the error nats-server's parser returns for the violation (None: it returns none)."""
    if violation.err == ERR_AUTHORIZATION:
        return AUTHENTICATION_ERROR
    if violation.closed == CLOSED_MAX_PAYLOAD:
        return MAX_PAYLOAD_ERROR
    if violation.closed == CLOSED_PARSE_ERROR:  # a client's -ERR: closed where it was read
        return None
    return violation.reason


def end_for_violation(client: ViolatingClient, violation: ProtocolViolation, log: logging.Logger) -> None:
    """Log, tell and close, in nats-server's order for this violation and this kind of client."""
    if client.websocket and violation.closed == CLOSED_PROTOCOL_VIOLATION and violation.err != ERR_AUTHORIZATION:
        log.error("%s - %s", client, read_error(violation.reason))
        client.close(READ_ERROR)
        return
    if violation.err == ERR_AUTHORIZATION:
        log.error("%s - authentication error", client)
        client.send_err(violation.err)
        client.close(AUTH_VIOLATION)
    else:
        _tell_and_close(client, violation, log)
    returned = returned_error(violation)
    if client.websocket and returned is not None:
        log.error("%s - %s", client, read_error(returned))


def _tell_and_close(client: ViolatingClient, violation: ProtocolViolation, log: logging.Logger) -> None:
    when = violation.logged
    if when == LOGGED_BEFORE_ERR:
        log.error("%s - %s", client, violation.reason)
    if violation.err:
        client.send_err(violation.err)
    if when == LOGGED_AFTER_ERR:
        log.error("%s - %s", client, violation.reason)
    client.close(violation.closed)
    if when == LOGGED_AFTER_CLOSE and not client.websocket:  # the read loop's line; websocket: read error
        log.error("%s - %s", client, violation.reason)
