"""The lexer's parts: items, character classes, and the state machine's primitives.

nats-server's lexer is a state machine whose quirks are visible to users:
which characters end a bare value, when ``1k`` is a number and ``1kx`` a
string, which line an error is reported on, and the (odd) column numbers that
the option stage later prints as ``file:line:col``.  The only way to get those
right everywhere is to run the same kind of machine: one method per state,
each returning the next state.  This module holds what every state uses;
:mod:`fakejs.conf.lexvalues` and :mod:`fakejs.conf.lexer` hold the states.

Positions are counted the way nats-server counts them: in UTF-8 bytes, with
the column measured from the last newline *character* (so columns on the
first line start at 0 and on later lines at 1).  The end of input and a NUL
character look the same to the machine, as they do in nats-server.
"""

from __future__ import annotations

import unicodedata
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, auto

EOF = "\x00"
_SPACES = frozenset("\t\n\v\f\r \x85\xa0")


class Kind(Enum):
    """What an item is; the parser turns each kind into a value or a structural step."""

    ERROR = auto()
    EOF = auto()
    KEY = auto()
    TEXT = auto()
    STRING = auto()
    BOOL = auto()
    INTEGER = auto()
    FLOAT = auto()
    DATETIME = auto()
    ARRAY_START = auto()
    ARRAY_END = auto()
    MAP_START = auto()
    MAP_END = auto()
    COMMENT_START = auto()
    VARIABLE = auto()
    INCLUDE = auto()


@dataclass(slots=True)
class Item:
    """One lexed item: its kind, text, line and nats-server's column for it."""

    kind: Kind
    val: str
    line: int
    pos: int


State = Callable[[], "State | None"]


def is_space(r: str) -> bool:
    """Go's ``unicode.IsSpace``: Python's ``str.isspace`` also counts separators Go does not."""
    return r in _SPACES or (r > "\xff" and unicodedata.category(r) in ("Zs", "Zl", "Zp"))


def is_digit(r: str) -> bool:
    """Go's ``unicode.IsDigit`` (decimal digits of any script)."""
    return r.isdecimal()


def is_blank(r: str) -> bool:
    """Space or tab: the only whitespace allowed *inside* a line between tokens."""
    return r in ("\t", " ")


def is_nl(r: str) -> bool:
    return r in ("\n", "\r")


def is_key_sep(r: str) -> bool:
    return r in ("=", ":")


def shown(r: str) -> str:
    """How a character appears in an error message: a newline is spelled out, all else is literal."""
    return "\\n" if r == "\n" else r


def byte_len(text: str) -> int:
    """Length in UTF-8 bytes (surrogate escapes stand for one raw byte each)."""
    return len(text.encode("utf-8", "surrogateescape"))


class LexerCore:
    """The machine's registers and primitives, and the states shared by all contexts.

    The text is a Python string; bytes that were not valid UTF-8 are expected
    as surrogate escapes (one character per byte), which keeps byte positions
    right.
    """

    def __init__(self, text: str) -> None:
        self.input = text
        self.start = 0
        self.pos = 0
        self.width = 0
        self.line = 1
        self.lstart = 0
        self.ilstart = 0
        self.stack: list[State] = []
        self.parts: list[str] = []
        self.string_state: State = self.lex_include  # replaced before any string is read
        self.items: deque[Item] = deque()
        self.offsets: list[int] | None = None if text.isascii() else self._byte_offsets(text)

    @staticmethod
    def _byte_offsets(text: str) -> list[int]:
        offsets = [0]
        total = 0
        for ch in text:
            total += byte_len(ch)
            offsets.append(total)
        return offsets

    def at(self, index: int) -> int:
        """The byte offset of a character index."""
        return index if self.offsets is None else self.offsets[index]

    # -- primitives ------------------------------------------------------------------

    def push(self, state: State) -> None:
        self.stack.append(state)

    def pop(self) -> State | None:
        if not self.stack:
            return self.errorf("BUG in lexer: no states to pop.")
        return self.stack.pop()

    def _emit_value(self, kind: Kind, val: str) -> None:
        pos = self.at(self.pos) - self.at(self.ilstart) - byte_len(val)
        self.items.append(Item(kind, val, self.line, pos))
        self.start = self.pos
        self.ilstart = self.lstart

    def emit(self, kind: Kind) -> None:
        self._emit_value(kind, "".join(self.parts) + self.input[self.start : self.pos])

    def emit_string(self) -> None:
        val = "".join(self.parts) + self.input[self.start : self.pos]
        self.parts = []
        self._emit_value(Kind.STRING, val)

    def add_current_part(self, offset: int) -> None:
        self.parts.append(self.input[self.start : self.pos - offset])
        self.start = self.pos

    def add_part(self, text: str) -> State:
        self.parts.append(text)
        self.start = self.pos
        return self.string_state

    def next(self) -> str:
        if self.pos >= len(self.input):
            self.width = 0
            return EOF
        r = self.input[self.pos]
        if r == "\n":
            self.line += 1
            self.lstart = self.pos
        self.width = 1
        self.pos += 1
        return r

    def ignore(self) -> None:
        self.start = self.pos
        self.ilstart = self.lstart

    def backup(self) -> None:
        self.pos -= self.width
        if self.pos < len(self.input) and self.input[self.pos] == "\n":
            self.line -= 1

    def peek(self) -> str:
        r = self.next()
        self.backup()
        return r

    def errorf(self, message: str) -> State | None:
        """Report an error item; the None it returns stops the machine."""
        self.items.append(Item(Kind.ERROR, message, self.line, self.at(self.pos) - self.at(self.lstart)))
        return None

    def skip(self, state: State) -> State:
        """A state that forgets what was read so far, then carries on with ``state``."""

        def skipping() -> State:
            self.ignore()
            return state

        return skipping

    def comment_after(self, r: str, resume: State) -> State | None:
        """Start a comment if ``r`` opens one (``#``, or ``/`` followed by ``/``); None if not."""
        if r == "#":
            self.push(resume)
            return self.lex_comment_start
        if r == "/":
            if self.next() == "/":
                self.push(resume)
                return self.lex_comment_start
            self.backup()
        return None

    def end_or_eof(self) -> State | None:
        """At the end of input: an error if something was left unread, else the EOF item."""
        if self.pos > self.start:
            return self.errorf("Unexpected EOF.")
        self.emit(Kind.EOF)
        return None

    # -- comments ----------------------------------------------------------------------

    def lex_comment_start(self) -> State:
        self.ignore()
        self.emit(Kind.COMMENT_START)
        return self.lex_comment

    def lex_comment(self) -> State | None:
        r = self.peek()
        if is_nl(r) or r == EOF:
            self.emit(Kind.TEXT)
            return self.pop()
        self.next()
        return self.lex_comment

    # -- include ---------------------------------------------------------------------------

    def key_or_include(self, after_key: State, resume: State | None) -> State:
        """A bare key followed by space: the ``include`` keyword (any case), or a key."""
        if self.input[self.start : self.pos].lower() == "include":
            self.ignore()
            if resume is not None:
                self.push(resume)
            return self.lex_include_start
        self.emit(Kind.KEY)
        return after_key

    def lex_include_start(self) -> State:
        if is_blank(self.next()):
            return self.skip(self.lex_include_start)
        self.backup()
        return self.lex_include

    def _quoted_include(self, quote: str, eof_message: str) -> State:
        def lex_include_quoted() -> State | None:
            r = self.next()
            if r == quote:
                self.backup()
                self.emit(Kind.INCLUDE)
                self.next()
                self.ignore()
                return self.pop()
            if r == EOF:
                return self.errorf(eof_message)
            return lex_include_quoted

        return lex_include_quoted

    def lex_include_string(self) -> State | None:
        r = self.next()
        if is_nl(r) or is_blank(r) or r in (EOF, ";", "}"):
            self.backup()
            self.emit(Kind.INCLUDE)
            return self.pop()
        if r == "'":
            self.backup()
            self.emit(Kind.INCLUDE)
            self.next()
            self.ignore()
            return self.pop()
        return self.lex_include_string

    def lex_include(self) -> State | None:
        r = self.next()
        if r == "'":
            self.ignore()
            return self._quoted_include("'", "Unexpected EOF in quoted include")
        if r == '"':
            self.ignore()
            return self._quoted_include('"', "Unexpected EOF in double quoted include")
        found = {"[": "start of an array", "{": "start of a map", "(": "start of a block", "\\": "escape sequence"}
        if r in found:
            return self.errorf(f"Expected include value but found {found[r]}")
        if is_digit(r) or r == "-":
            return self.errorf("Expected include value but found start of a number")
        if is_nl(r):
            return self.errorf("Expected include value but found new line")
        self.backup()
        return self.lex_include_string
