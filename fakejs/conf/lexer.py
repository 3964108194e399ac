"""The lexer: nats-server's configuration text as a stream of items.

This module holds the states for the top level, for JSON-style outer braces
and for keys; values, arrays and maps are in :mod:`fakejs.conf.lexvalues`.
"""

from __future__ import annotations

from fakejs.conf.lexcore import EOF, Item, Kind, State, is_blank, is_key_sep, is_nl, is_space, shown
from fakejs.conf.lexvalues import ValueStates

__all__ = ["Item", "Kind", "Lexer"]


class Lexer(ValueStates):
    """Turns configuration text into :class:`Item` objects, one :meth:`next_item` at a time."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.string_state = self.lex_string
        self.state: State | None = self.lex_top

    def next_item(self) -> Item:
        """Run the machine until it has an item to hand out."""
        while not self.items:
            if self.state is None:
                return Item(Kind.EOF, "", self.line, 0)
            self.state = self.state()
        return self.items.popleft()

    # -- top level and JSON-style outer braces -----------------------------------

    def lex_top(self) -> State | None:
        r = self.next()
        if is_space(r):
            return self.skip(self.lex_top)
        if r == "{":
            self.push(self.lex_top)
            return self.skip(self.lex_block_start)
        if r in ("#", "/"):
            return self.comment_after(r, self.lex_top) or self.end_or_eof()
        if r == EOF:
            return self.end_or_eof()
        self.backup()
        self.push(self.lex_top_value_end)
        return self.lex_key_start

    def lex_top_value_end(self) -> State | None:
        r = self.next()
        if r in ("#", "/"):
            return self.comment_after(r, self.lex_top) or self.lex_top_value_end
        if is_blank(r):
            return self.lex_top_value_end
        if is_nl(r) or r in (EOF, ";", ",", "}"):
            self.ignore()
            return self.lex_top
        return self.errorf(
            f"Expected a top-level value to end with a new line, comment or EOF, but got '{shown(r)}' instead."
        )

    def lex_block_start(self) -> State | None:
        r = self.next()
        if is_space(r):
            return self.skip(self.lex_block_start)
        if r == "{":
            self.push(self.lex_block_end)
            return self.skip(self.lex_block_start)
        if r == "}":
            self.ignore()
            return self.pop()
        if r in ("#", "/"):
            return self.comment_after(r, self.lex_block_start) or self.end_or_eof()
        if r == EOF:
            return self.end_or_eof()
        self.backup()
        self.push(self.lex_block_value_end)
        return self.lex_key_start

    def lex_block_value_end(self) -> State | None:
        r = self.next()
        if r in ("#", "/"):
            return self.comment_after(r, self.lex_block_value_end) or self.lex_block_value_end
        if is_blank(r):
            return self.lex_block_value_end
        if is_nl(r) or r in (";", ","):
            self.ignore()
            return self.lex_block_start
        if r == "}":
            self.backup()
            return self.lex_block_end
        return self.errorf(
            f"Expected a block-level value to end with a new line, comment or EOF, but got '{shown(r)}' instead."
        )

    def lex_block_end(self) -> State | None:
        r = self.next()
        if r in ("#", "/"):
            return self.comment_after(r, self.lex_block_start) or self.lex_block_end
        if is_nl(r) or is_blank(r):
            return self.lex_block_end
        if r in (";", ","):
            self.ignore()
            return self.lex_block_start
        if r == "}":
            self.ignore()
            return self.pop()
        return self.errorf(f"Expected a block-level to end with a '}}', but got '{shown(r)}' instead.")

    # -- top-level keys ---------------------------------------------------------------

    def lex_key_start(self) -> State | None:
        r = self.peek()
        if is_key_sep(r):
            return self.errorf(f"Unexpected key separator '{shown(r)}'")
        if is_space(r):
            self.next()
            return self.skip(self.lex_key_start)
        if r in ('"', "'"):
            self.next()
            return self.skip(self._quoted_key(r))
        self.ignore()
        self.next()
        return self.lex_key

    def _quoted_key(self, quote: str) -> State:
        def lex_quoted_key() -> State | None:
            r = self.peek()
            if r == quote:
                self.emit(Kind.KEY)
                self.next()
                return self.skip(self.lex_key_end)
            if r == EOF:
                return self.end_or_eof()
            self.next()
            return lex_quoted_key

        return lex_quoted_key

    def lex_key(self) -> State | None:
        r = self.peek()
        if is_space(r):
            return self.key_or_include(self.lex_key_end, None)
        if is_key_sep(r) or r == EOF:
            self.emit(Kind.KEY)
            return self.lex_key_end
        self.next()
        return self.lex_key

    def lex_key_end(self) -> State | None:
        r = self.next()
        if is_space(r):
            return self.skip(self.lex_key_end)
        if is_key_sep(r):
            return self.skip(self.lex_value)
        if r == EOF:
            self.emit(Kind.EOF)
            return None
        self.backup()
        return self.lex_value
