"""Sans-IO parser for the client side of the NATS protocol.

Feed bytes with :meth:`Parser.receive_data`, then call
:meth:`Parser.next_event` until it returns ``None`` (more data needed).  One
call yields one operation, so the caller can act on an event -- a CONNECT
that turns on headers, say -- before the next one is parsed, exactly as
nats-server's byte-at-a-time state machine does.

The accepted language, and every error, follows nats-server 2.15:

* operation names are case-insensitive; ``PUB``, ``HPUB``, ``SUB``,
  ``UNSUB``, ``HMSG`` and ``-ERR`` need a space or tab after the name;
  ``CONNECT`` and ``INFO`` take their argument after optional blanks;
  ``PING``, ``PONG`` and ``+OK`` ignore everything up to the newline;
* the first byte of an argument is taken as is (even ``\\r`` or ``\\n``)
  and the argument runs to the next ``\\n``; if a ``\\r`` occurs after
  that first byte, the byte before the ``\\n`` is dropped;
* an argument longer than ``max_control_line`` is fatal, with ``-ERR
  'maximum control line exceeded'``; an unknown operation or a payload not
  followed by CRLF is fatal with ``-ERR 'Unknown Protocol Operation'``;
* wrong argument counts or sizes, CONNECT/INFO JSON that Go cannot decode,
  HPUB without negotiated headers and a client ``-ERR`` close the
  connection silently; a payload over ``max_payload`` closes it with
  ``-ERR 'Maximum Payload Violation'``.

After a :class:`~fakejs.protocol.events.ProtocolViolation` the parser stays
broken: the connection is going away.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from fakejs.gocompat.gojson import GoJSONError
from fakejs.gocompat.goquote import quote
from fakejs.protocol.connect import decode_connect, decode_info
from fakejs.protocol.events import (
    CLOSED_MAX_CONTROL_LINE,
    CLOSED_MAX_PAYLOAD,
    CLOSED_PARSE_ERROR,
    ERR_AUTHORIZATION,
    ERR_INVALID_PUBLISH_SUBJECT,
    ERR_MAX_CONTROL_LINE,
    ERR_MAX_PAYLOAD,
    ERR_UNKNOWN_OP,
    LOGGED_AFTER_CLOSE,
    LOGGED_BEFORE_ERR,
    Connect,
    Event,
    Info,
    Notice,
    Ok,
    Ping,
    Pong,
    ProtocolViolation,
    Pub,
    Sub,
    Unsub,
)

MAX_CONTROL_LINE = 4096
MAX_PAYLOAD = 1024 * 1024
_MAX_SIZE_DIGITS = 9

# Keywords by their (upper-cased) first byte.  The flag says what follows
# the keyword: "sep" (a blank, then an argument line), "arg" (optional
# blanks, then an argument line) or "line" (anything up to a newline).
_KEYWORDS: dict[int, tuple[tuple[bytes, str], ...]] = {
    ord("P"): ((b"PUB", "sep"), (b"PING", "line"), (b"PONG", "line")),
    ord("H"): ((b"HPUB", "sep"), (b"HMSG", "sep")),
    ord("S"): ((b"SUB", "sep"),),
    ord("U"): ((b"UNSUB", "sep"),),
    ord("C"): ((b"CONNECT", "arg"),),
    ord("I"): ((b"INFO", "arg"),),
    ord("+"): ((b"+OK", "line"),),
    ord("-"): ((b"-ERR", "sep"),),
}
_BLANKS = b" \t"
# nats-server's parser state after each keyword prefix: its "parser ERROR" line names the one
# it failed in, and the position of the offending byte in the buffer it was reading.
_PREFIX_STATES: dict[bytes, int] = {
    b"+": 1, b"+O": 2, b"+OK": 3,
    b"-": 4, b"-E": 5, b"-ER": 6, b"-ERR": 7,
    b"C": 10, b"CO": 11, b"CON": 12, b"CONN": 13, b"CONNE": 14, b"CONNEC": 15, b"CONNECT": 16,
    b"H": 18, b"HP": 19, b"HPU": 20, b"HPUB": 21, b"HM": 24, b"HMS": 25, b"HMSG": 26,
    b"P": 29, b"PU": 30, b"PUB": 31, b"PI": 34, b"PIN": 35, b"PING": 36, b"PO": 37, b"PON": 38, b"PONG": 39,
    b"S": 43, b"SU": 44, b"SUB": 45,
    b"U": 59, b"UN": 60, b"UNS": 61, b"UNSU": 62, b"UNSUB": 63,
    b"I": 71, b"IN": 72, b"INF": 73, b"INFO": 74,
}  # fmt: skip
STATE_START = 0
STATE_MSG_END_R = 41
STATE_MSG_END_N = 42
PROTO_SNIPPET_SIZE = 32

# Called with each operation nats-server traces, as read: (name, argument or None).
TraceIn = Callable[[str, bytes | None], None]
# A PUB line the fast path takes: a literal subject (no empty token, no
# token holding a wildcard character), an optional reply, a size of 1-9
# digits, separated by spaces (nats-py writes two around an empty reply:
# ``PUB subject  0``), ended by CRLF, no newline before.  Anything else goes
# to the general parser.
_PLAIN_PUB = re.compile(rb"PUB ((?:[^ \t.*>\n]+\.)*[^ \t.*>\n]+) +(?:([^ \t\n]+) +)?([0-9]{1,9})\r\n")


def parse_size(token: bytes | bytearray) -> int:
    """nats-server's ``parseSize``: 1-9 ASCII digits, otherwise -1."""
    if not token or len(token) > _MAX_SIZE_DIGITS or not token.isdigit():
        return -1
    return int(token)


def split_blanks(arg: bytes) -> list[bytes]:
    """Split on spaces and tabs only (how PUB and HPUB arguments split)."""
    if b"\t" in arg:
        arg = arg.replace(b"\t", b" ")
    return [token for token in arg.split(b" ") if token]


def split_args(arg: bytes) -> list[bytes]:
    """Split on spaces, tabs, CR and LF (how SUB and UNSUB arguments split)."""
    return [token for token in arg.translate(_SPLIT_TABLE).split(b" ") if token]


# Python's bytes.split() would also split on \v and \f; Go does not.
_SPLIT_TABLE = bytes.maketrans(b"\t\r\n", b"   ")


def _text(raw: bytes | bytearray) -> str:
    return raw.decode("utf-8", "surrogateescape")


class Parser:
    """Incremental parser of client operations.

    Settings the connection changes while it runs: ``headers`` (after a
    CONNECT asking for them), ``pedantic``, ``auth_pending`` (the next
    operation must be CONNECT), ``max_payload`` and ``max_control_line``.
    """

    __slots__ = (
        "_broken",
        "_buf",
        "_pos",
        "_pub",
        "_read_start",
        "_skip_event",
        "auth_pending",
        "headers",
        "max_control_line",
        "max_payload",
        "pedantic",
        "trace",
    )

    def __init__(self, *, max_control_line: int = MAX_CONTROL_LINE, max_payload: int = MAX_PAYLOAD) -> None:
        self.max_control_line = max_control_line
        self.max_payload = max_payload
        self.headers = False
        self.pedantic = True
        self.auth_pending = False
        self._buf = bytearray()
        self._pos = 0
        self._read_start = 0  # where the bytes of the latest read begin in the buffer
        # Told each operation as read, when the connection is traced (the fast path is skipped then).
        self.trace: TraceIn | None = None
        # A PUB/HPUB whose control line is parsed: (subject, reply, hdr, size).
        self._pub: tuple[str, str, int, int] | None = None
        # PING/PONG/+OK seen, waiting for its newline: the event to emit.
        self._skip_event: Event | None = None
        self._broken: ProtocolViolation | None = None

    # -- input ---------------------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        """Append bytes read from the connection."""
        if self._pos:
            del self._buf[: self._pos]
            self._pos = 0
        self._read_start = len(self._buf)
        self._buf += data

    @property
    def buffered(self) -> int:
        """Bytes received but not yet consumed."""
        return len(self._buf) - self._pos

    def events(self) -> Iterator[Event]:
        """Yield every complete event now available."""
        while True:
            event = self.next_event()
            if event is None:
                return
            yield event

    # -- parsing -------------------------------------------------------------

    def _fail(self, err: str | None, reason: str, **how: str) -> ProtocolViolation:
        self._broken = ProtocolViolation(err, reason, **how)
        return self._broken

    def _unknown(self, state: int, index: int) -> ProtocolViolation:
        """nats-server's ``parseErr``: the state it was in, the byte's position in the read, what follows."""
        start = self._read_start if self._read_start <= index else 0
        read = self._buf[start:]
        at = index - start
        stop = at + PROTO_SNIPPET_SIZE
        if stop > len(read):
            stop = len(read) - 1
        snippet = quote(bytes(read[at:stop])) if at < len(read) else '""'
        return self._fail(ERR_UNKNOWN_OP, f"Client parser ERROR, state={state}, i={at}: proto='{snippet}...'")

    def _control_line_exceeded(self) -> ProtocolViolation:
        return self._fail(
            ERR_MAX_CONTROL_LINE, ERR_MAX_CONTROL_LINE, closed=CLOSED_MAX_CONTROL_LINE, logged=LOGGED_AFTER_CLOSE
        )

    def next_event(self) -> Event | None:
        """Return the next event, or ``None`` when more data is needed.

        Raises :class:`ProtocolViolation` when the input breaks the protocol.
        """
        if self._broken is not None:
            raise self._broken
        if self._pub is not None:
            return self._payload()
        if self._skip_event is not None:
            return self._skip_line()
        buf = self._buf
        pos = self._pos
        # The common ``PUB subject [reply] size`` with its payload already buffered, in one pass (in this
        # method: one call less per message).  For anything else (a longer line than allowed, a payload
        # too large or not all there, a bad ending) the general state machine below parses the same bytes.
        plain = _PLAIN_PUB.match(buf, pos) if not self.auth_pending and self.trace is None else None
        if plain is not None and plain.end() - pos - 6 <= self.max_control_line:
            subject, reply, size_token = plain.groups(b"")
            start = plain.end()
            stop = start + int(size_token)
            if stop - start <= self.max_payload and buf[stop : stop + 2] == b"\r\n":
                self._pos = stop + 2
                text = "utf-8"
                return Pub(
                    subject.decode(text, "surrogateescape"),
                    reply.decode(text, "surrogateescape"),
                    None,
                    bytes(buf[start:stop]),
                )
        end = len(buf)
        if pos >= end:
            return None
        first = buf[pos]
        if self.auth_pending and first not in b"Cc":
            raise self._fail(ERR_AUTHORIZATION, "operation before CONNECT while authentication is required")
        candidates = _KEYWORDS.get(first & 0xDF if 0x61 <= first <= 0x7A else first)
        if candidates is None:
            raise self._unknown(STATE_START, pos)
        head = bytes(buf[pos : pos + 8]).upper()
        avail = len(head)
        match: tuple[bytes, str] | None = None
        alive = False
        for keyword, kind in candidates:
            n = min(len(keyword), avail)
            if head[:n] == keyword[:n]:
                alive = True
                if avail >= len(keyword):
                    match = (keyword, kind)
                    break
        if not alive:
            matched = max(_common_prefix(head, keyword) for keyword, _ in candidates)
            raise self._unknown(_PREFIX_STATES[head[:matched]], pos + matched)
        if match is None:
            return None
        keyword, kind = match
        after = pos + len(keyword)
        if kind == "line":
            self._skip_event = _LINE_EVENTS[keyword]
            self._pos = after
            return self._skip_line()
        if kind == "sep":
            if after >= end:
                return None
            if buf[after] not in _BLANKS:
                raise self._unknown(_PREFIX_STATES[keyword], after)
            after += 1
        while after < end and buf[after] in _BLANKS:
            after += 1
        if after >= end:
            return None
        # The first argument byte is consumed without being interpreted.
        newline = buf.find(b"\n", after + 1)
        if newline < 0:
            partial = end - after - (1 if buf.find(b"\r", after + 1) >= 0 else 0)
            if partial > self.max_control_line:
                raise self._control_line_exceeded()
            return None
        drop = 1 if buf.find(b"\r", after + 1, newline) >= 0 else 0
        arg = bytes(buf[after : newline - drop])
        if len(arg) > self.max_control_line:
            raise self._control_line_exceeded()
        self._pos = newline + 1
        return self._dispatch(keyword, arg)

    def _skip_line(self) -> Event | None:
        newline = self._buf.find(b"\n", self._pos)
        if newline < 0:
            # Nothing before the newline matters: drop it as it comes.
            self._pos = len(self._buf)
            return None
        self._pos = newline + 1
        event, self._skip_event = self._skip_event, None
        if self.trace is not None and event is not _OK:
            self.trace("PING" if event is _PING else "PONG", None)
        return event

    def _dispatch(self, keyword: bytes, arg: bytes) -> Event | None:
        if self.trace is not None and keyword in _TRACED:
            self.trace(keyword.decode(), arg)
        if keyword == b"PUB":
            args = split_blanks(arg)
            if len(args) == 2:
                subject, reply, size_token = args[0], b"", args[1]
            elif len(args) == 3:
                subject, reply, size_token = args
            else:
                raise self._fail(None, f"processPub Parse Error: {quote(arg)}")
            size = parse_size(size_token)
            if size < 0:
                raise self._fail(None, f"processPub Bad or Missing Size: {quote(arg)}")
            return self._start_payload(subject, reply, -1, size)
        if keyword == b"HPUB":
            return self._header_pub(arg)
        if keyword == b"SUB":
            args = split_args(arg)
            if len(args) == 2:
                return Sub(_text(args[0]), "", _text(args[1]))
            if len(args) == 3:
                return Sub(_text(args[0]), _text(args[1]), _text(args[2]))
            raise self._fail(None, f"processSub Parse Error: {quote(arg)}")
        if keyword == b"UNSUB":
            args = split_args(arg)
            if len(args) == 1:
                return Unsub(_text(args[0]), -1)
            if len(args) == 2:
                return Unsub(_text(args[0]), parse_size(args[1]))
            raise self._fail(None, f"processUnsub Parse Error: {quote(arg)}")
        if keyword == b"CONNECT":
            try:
                return Connect(decode_connect(arg))
            except GoJSONError as exc:
                raise self._fail(None, str(exc)) from None
        if keyword == b"INFO":
            try:
                return Info(decode_info(arg))
            except GoJSONError as exc:
                raise self._fail(None, str(exc)) from None
        if keyword == b"HMSG":
            # Clients have no business sending HMSG; nats-server reads the
            # line, ignores it and expects an empty payload.
            self._pub = ("", "", -1, 0)
            return self._payload()
        # -ERR from a client: nats-server logs it and hangs up.
        raise self._fail(None, f"Client Error {_text(arg)}", closed=CLOSED_PARSE_ERROR)

    def _header_pub(self, arg: bytes) -> Event | None:
        if not self.headers:
            raise self._fail(None, "message headers not supported")
        args = split_blanks(arg)
        if len(args) == 3:
            subject, reply, hdr_token, size_token = args[0], b"", args[1], args[2]
        elif len(args) == 4:
            subject, reply, hdr_token, size_token = args
        else:
            raise self._fail(None, f"processHeaderPub Parse Error: {quote(arg)}")
        hdr = parse_size(hdr_token)
        if hdr < 0:
            raise self._fail(None, f"processHeaderPub Bad or Missing Header Size: {quote(arg)}")
        size = parse_size(size_token)
        if size < 0:
            raise self._fail(None, f"processHeaderPub Bad or Missing Total Size: {quote(arg)}")
        if hdr > size:
            raise self._fail(None, f"processHeaderPub Header Size larger then TotalSize: {quote(arg)}")
        return self._start_payload(subject, reply, hdr, size)

    def _start_payload(self, subject: bytes, reply: bytes, hdr: int, size: int) -> Event | None:
        if size > self.max_payload:
            raise self._fail(
                ERR_MAX_PAYLOAD,
                f"maximum payload exceeded: {size} vs {self.max_payload}",
                closed=CLOSED_MAX_PAYLOAD,
                logged=LOGGED_BEFORE_ERR,
            )
        subject_text = _text(subject)
        self._pub = (subject_text, _text(reply), hdr, size)
        if self.pedantic and not _is_literal_subject(subject):
            return Notice(ERR_INVALID_PUBLISH_SUBJECT)
        return self._payload()

    def _payload(self) -> Event | None:
        assert self._pub is not None
        subject, reply, hdr, size = self._pub
        buf = self._buf
        start = self._pos
        avail = len(buf) - start
        if avail <= size:
            return None
        if buf[start + size] != 0x0D:
            raise self._unknown(STATE_MSG_END_R, start + size)
        if avail == size + 1:
            return None
        if buf[start + size + 1] != 0x0A:
            raise self._unknown(STATE_MSG_END_N, start + size + 1)
        self._pos = start + size + 2
        self._pub = None
        if hdr > 0:
            data = bytes(buf[start : start + size])
            return Pub(subject, reply, data[:hdr], data[hdr:])
        return Pub(subject, reply, None, bytes(buf[start : start + size]))


_PING, _OK = Ping(), Ok()
_LINE_EVENTS: dict[bytes, Event] = {b"PING": _PING, b"PONG": Pong(), b"+OK": _OK}
# The client operations nats-server traces when they are read (PING and PONG have no argument).
_TRACED = frozenset({b"PUB", b"HPUB", b"SUB", b"UNSUB", b"CONNECT"})


def _common_prefix(head: bytes, keyword: bytes) -> int:
    n = 0
    while n < len(head) and n < len(keyword) and head[n] == keyword[n]:
        n += 1
    return n


def _is_literal_subject(subject: bytes) -> bool:
    """nats-server's ``IsValidLiteralSubject``: no empty or wildcard tokens."""
    for token in subject.split(b"."):
        if not token or token == b"*" or token == b">":
            return False
    return True
