"""Protocol trace lines in nats-server's format (``-V``, ``-DV``, ``-VV``, ``trace: true``).

A traced client's operations are logged at the TRACE level (``[TRC]``),
after the client's label (``127.0.0.1:54321 - cid:5 - "v2.16.0:python3:app"``):

* ``<<- [SUB foo  1]``: an operation the client sent, with its argument as
  received (every blank kept); CONNECT has its secrets replaced by
  ``[REDACTED]``; PING and PONG have no argument;
* ``->> [MSG foo 1 5]``, ``->> [PONG]``, ``->> [OK]``, ``->> [-ERR text]``:
  what the server sent (INFO is not traced);
* ``<<- MSG_PAYLOAD: ["hello"]`` and ``->> MSG_PAYLOAD: [...]``: a message's
  headers and payload, Go-quoted, cut at ``max_traced_msg_len`` (only the
  headers with ``trace_headers``); an empty message has no such line;
* ``<<- [MAPPING a -> b]``: a published subject a mapping changed;
* ``<-> [DELSUB 1]``: a subscription removed (UNSUB, auto-unsubscribe, close).

Only the sessions of a tracing server own a :class:`ProtocolTrace`; the
others test one attribute against ``None`` per operation.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from fakejs.core.log import TRACE
from fakejs.gocompat.goquote import quote, quote_text

# nats-server's patterns for the CONNECT fields a trace must not show (Go's \s is [\t\n\f\r ]).
_PREFIXED_SECRET = re.compile(
    rb'"?[\t\n\f\r ]*(?:auth_token[^\t\n\f\r ]*?|pass[^\t\n\f\r ]*?)"?[\t\n\f\r ]*[:=][\t\n\f\r ]*"?([^",\r\n}]*)'
)
_EXACT_SECRET = re.compile(
    rb'(?:^|[^A-Za-z0-9_])"?[\t\n\f\r ]*(?:proxy_sig|nkey|sig)"?[\t\n\f\r ]*[:=][\t\n\f\r ]*"?([^",\r\n}]*)'
)
REDACTED = b"[REDACTED]"
CRLF = 2


def _redact(pattern: re.Pattern[bytes], data: bytes) -> bytes:
    for match in reversed(list(pattern.finditer(data))):
        start, end = match.span(1)
        data = data[:start] + REDACTED + data[end:]
    return data


def redact_connect(arg: bytes) -> bytes:
    """A CONNECT argument with passwords, tokens, nkeys and signatures replaced (``removeSecretsFromTrace``)."""
    return _redact(_EXACT_SECRET, _redact(_PREFIXED_SECRET, arg))


def auth_user(opts: dict[str, Any]) -> str:
    """How nats-server names the credential a client presented (``getAuthUser``), or ``""``."""
    if opts.get("nkey"):
        return f"Nkey {quote_text(str(opts['nkey']))}"
    if opts.get("user"):
        return f"User {quote_text(str(opts['user']))}"
    if opts.get("auth_token"):
        return 'Token "[REDACTED]"'
    return ""


def client_label(opts: dict[str, Any], account: str) -> str:
    """What follows ``host:port - cid:N`` in a client's log lines once its CONNECT is accepted (nats-server's ``ncs``).

    ``"v<version>:<lang>:<name>"`` (the parts the CONNECT gave), then
    ``"<account>/<user label>"`` when it presented a credential (``jwt:<user key>``
    for a user JWT, ``nkey:<key>``, ``user:<name>`` or ``token``).
    """
    parts = [
        f"v{opts['version']}" if opts.get("version") else "",
        str(opts.get("lang") or ""),
        str(opts.get("name") or ""),
    ]
    client = ":".join(part for part in parts if part)
    user = ""
    if opts.get("nkey"):
        user = f"{'jwt' if opts.get('jwt') else 'nkey'}:{opts['nkey']}"
    elif opts.get("user"):
        user = f"user:{opts['user']}"
    elif opts.get("auth_token"):
        user = "token"
    label = f" - {quote_text(client)}" if client else ""
    if user:
        label += f" - {quote_text(f'{account}/{user}')}"
    return label


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def operation(op: str, arg: bytes | None) -> str:
    """``[OP arg]`` as Go prints the pair with ``%s`` (no argument: ``[OP]``; no operation: ``[arg]``)."""
    parts = [op] if op else []
    if arg is not None:
        parts.append(_text(arg))
    return "[" + " ".join(parts) + "]"


class ProtocolTrace:
    """The trace lines of one client connection (nats-server's ``traceInOp``, ``traceOutOp``, ``traceMsg``)."""

    __slots__ = ("_client", "_headers_only", "_log", "_max_length")

    def __init__(self, log: logging.Logger, client: object, max_length: int = 0, headers_only: bool = False) -> None:
        self._log = log
        self._client = client  # its repr is the label that starts each line
        self._max_length = max_length
        self._headers_only = headers_only

    def _line(self, text: str) -> None:
        self._log.log(TRACE, "%s - %s", self._client, text)

    def incoming(self, op: str, arg: bytes | None) -> None:
        """An operation the client sent (``<<-``), as the parser read it."""
        if op == "CONNECT" and arg is not None:
            arg = redact_connect(arg)
        self._line("<<- " + operation(op, arg))

    def mapped(self, subject: str, mapped: str) -> None:
        """A published subject a subject mapping changed."""
        self._line(f"<<- [MAPPING {subject} -> {mapped}]")

    def published(self, headers: bytes | None, payload: bytes) -> None:
        """The message of the client's PUB or HPUB."""
        if headers is None:
            self.payload(payload, 0, delivered=False)
        else:
            self.payload(headers + payload, len(headers), delivered=False)

    def removed(self, sid: str) -> None:
        """A subscription of the client went away."""
        self._line(f"<-> [DELSUB {sid}]")

    def outgoing(self, frame: bytes) -> None:
        """A frame the server queued for the client (``->>``): every kind but INFO is traced."""
        end = frame.find(b"\r\n")
        head = frame[:end]
        first = head[:1]
        if first == b"M" or first == b"H":  # MSG, HMSG: the control line, then the message
            self._line("->> [" + _text(head) + "]")
            header_size = int(head.rsplit(b" ", 2)[1]) if first == b"H" else 0
            self.payload(frame[end + CRLF : -CRLF], header_size, delivered=True)
        elif head == b"+OK":
            self._line("->> [OK]")
        elif first == b"-":  # -ERR 'text'
            self._line("->> " + operation("-ERR", head[6:-1]))
        elif head == b"PING" or head == b"PONG":
            self._line("->> [" + _text(head) + "]")

    def payload(self, body: bytes, header_size: int, delivered: bool) -> None:
        """``MSG_PAYLOAD: [...]`` for a message's headers and payload (``traceMsgInternal``)."""
        if self._headers_only:
            if header_size <= 0 or len(body) < header_size:
                return
            body = body[: max(header_size - 2 * CRLF, 0)]  # without the CRLFs that end the headers
        if not body:
            return
        prefix = "->>" if delivered else "<<-"
        limit = self._max_length
        if 0 < limit < len(body):
            self._line(f'{prefix} MSG_PAYLOAD: ["{quote(body[:limit])[1:-1]}..."]')
        else:
            self._line(f"{prefix} MSG_PAYLOAD: [{quote(body)}]")
