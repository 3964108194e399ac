"""A message refused (a subject or reply subject the client may not publish with) and a request nobody took.

As nats-server's ``processInboundClientMsg`` answers them: ``-ERR
'Permissions Violation for Publish to <subject>'`` (or ``... with Reply of
<reply>``) with an error line, the client staying; and, to a client that
asked for ``no_responders`` in its CONNECT, a ``503`` status on the reply
subject when nobody received its request.
"""

from __future__ import annotations

import logging
from typing import Protocol

from fakejs.core.router import Router
from fakejs.protocol import writer


class PublishingClient(Protocol):
    """What the refusals need of a session."""

    def send(self, frame: bytes) -> None: ...

    def send_err(self, text: str) -> None: ...


def publish_violation(client: PublishingClient, subject: str, log: logging.Logger) -> str:
    """Refuse a message the client may not publish on ``subject``; returns the error text."""
    return _refuse(client, "to", "Subject", subject, log)


def reply_violation(client: PublishingClient, reply: str, log: logging.Logger) -> str:
    """Refuse a message whose reply subject is one the server keeps for itself; returns the error text."""
    return _refuse(client, "with Reply of", "Reply", reply, log)


def _refuse(client: PublishingClient, told: str, logged: str, subject: str, log: logging.Logger) -> str:
    quoted = writer.go_quote(subject)
    text = f"Permissions Violation for Publish {told} {quoted}"
    client.send_err(text)
    log.error("%s - Publish Violation - %s %s", client, logged, quoted)
    return text


def no_responders(client: PublishingClient, router: Router, subject: str, reply: str) -> None:
    """Nobody received a request on ``subject``: the ``503`` status to the client's own subscription on ``reply``."""
    for sub in router.match(reply).psubs:
        if sub.owner is client:
            routed = router.mapped(subject)
            block = b"NATS/1.0 503\r\nNats-Subject: " + writer.encode_subject(routed) + b"\r\n\r\n"
            client.send(writer.hmsg(writer.encode_subject(reply), sub.sid_bytes, b"", block, b""))
            return
