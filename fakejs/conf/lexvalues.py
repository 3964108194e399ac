"""The lexer's value states: strings, numbers, dates, blocks, arrays and maps.

A value's kind is decided by how it starts and what follows: a digit starts a
number that may turn into a float, an IP address, a date, a size (``1k``,
``2MiB``) or, if anything else follows, a bare string.  Bare strings end at a
blank, a newline, ``;``, ``,``, ``]`` or ``}``; a bare ``true``/``no``/... is a
boolean and a bare ``$name`` a variable reference.
"""

from __future__ import annotations

from fakejs.conf.lexcore import EOF, Kind, LexerCore, State, is_blank, is_digit, is_key_sep, is_nl, is_space, shown

_BOOLS = frozenset(("true", "false", "on", "off", "yes", "no"))
_SUFFIXES = frozenset("kKmMgGtTpPeE")
_HEX = frozenset("0123456789abcdefABCDEF")
_DATE_SHAPE = "00-00T00:00:00Z"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", '"': '"', "\\": "\\"}


def _ends_number(r: str) -> bool:
    """Characters after a number that end it (``]`` is not one of them, as in nats-server)."""
    return is_nl(r) or is_blank(r) or is_digit(r) or r in (EOF, "}", ";", ",")


class ValueStates(LexerCore):
    """The states that read one value, and the array and map states that read many."""

    def lex_value(self) -> State | None:
        r = self.next()
        if is_blank(r):
            return self.skip(self.lex_value)
        if r == "[":
            self.ignore()
            self.emit(Kind.ARRAY_START)
            return self.lex_array_value
        if r == "{":
            self.ignore()
            self.emit(Kind.MAP_START)
            return self.lex_map_key_start
        if r == "'":
            self.ignore()
            return self.lex_quoted_string
        if r == '"':
            self.ignore()
            self.string_state = self.lex_dub_quoted_string
            return self.lex_dub_quoted_string
        if r == "-":
            return self.lex_neg_number_start
        if r == "(":
            self.ignore()
            return self.lex_block
        if is_digit(r):
            self.backup()
            return self.lex_number_start
        if r == ".":
            return self.errorf("Floats must start with a digit")
        if is_nl(r):
            return self.errorf("Expected value but found new line")
        self.backup()
        self.string_state = self.lex_string
        return self.lex_string

    # -- strings -------------------------------------------------------------------------

    def lex_quoted_string(self) -> State | None:
        r = self.next()
        if r == "'":
            self.backup()
            self.emit(Kind.STRING)
            self.next()
            self.ignore()
            return self.pop()
        if r == EOF:
            return self.end_or_eof()
        return self.lex_quoted_string

    def lex_dub_quoted_string(self) -> State | None:
        r = self.next()
        if r == "\\":
            self.add_current_part(1)
            return self.lex_string_escape
        if r == '"':
            self.backup()
            self.emit_string()
            self.next()
            self.ignore()
            return self.pop()
        if r == EOF:
            return self.end_or_eof()
        return self.lex_dub_quoted_string

    def lex_string(self) -> State | None:
        r = self.next()
        if r == "\\":
            self.add_current_part(1)
            return self.lex_string_escape
        if is_nl(r) or is_blank(r) or r in (EOF, ";", ",", "]", "}"):
            self.backup()
            self._emit_bare()
            return self.pop()
        if r == "'":
            self.backup()
            self.emit_string()
            self.next()
            self.ignore()
            return self.pop()
        return self.lex_string

    def _emit_bare(self) -> None:
        """A bare word is a string, unless it is a boolean or (after ``$``) a variable name."""
        if self.parts:
            self.emit_string()
        elif self.input[self.start : self.pos].lower() in _BOOLS:
            self.emit(Kind.BOOL)
        elif self.start < len(self.input) and self.input[self.start] == "$":
            self.start += 1
            self.emit(Kind.VARIABLE)
        else:
            self.emit_string()

    def lex_string_escape(self) -> State | None:
        r = self.next()
        if r == "x":
            return self.lex_string_binary
        if r in _ESCAPES:
            return self.add_part(_ESCAPES[r])
        return self.errorf(
            f"Invalid escape character '{shown(r)}'. Only the following escape characters are allowed: "
            + '\\xXX, \\t, \\n, \\r, \\", \\\\.'
        )

    def lex_string_binary(self) -> State | None:
        for _ in range(2):
            if is_nl(self.next()):
                return self.errorf("Expected two hexadecimal digits after '\\x', but hit end of line")
        digits = self.input[self.pos - 2 : self.pos]
        if len(digits) != 2 or not all(c in _HEX for c in digits):
            return self.errorf(f"Expected two hexadecimal digits after '\\x', but got '{digits}'")
        # One raw byte; bytes >= 0x80 are kept as surrogate escapes until the value is whole.
        self.add_part(bytes.fromhex(digits).decode("utf-8", "surrogateescape"))
        return self.string_state

    def lex_block(self) -> State | None:
        """A ``(`` ... ``)`` block: raw text up to a ``)`` alone at the start of a line."""
        r = self.next()
        if r == EOF:
            return self.errorf("Unexpected EOF processing block.")
        if r != ")":
            return self.lex_block
        self.backup()
        self.backup()
        if self.next() != "\n":
            self.next()
            return self.lex_block
        self.next()
        if self.next() in ("\n", EOF):
            self.backup()
            self.backup()
            self.emit(Kind.STRING)
            self.next()
            self.ignore()
            return self.pop()
        self.backup()
        return self.lex_block

    # -- numbers, dates, addresses ----------------------------------------------------------

    def _not_a_digit(self, r: str) -> State | None:
        if r == ".":
            return self.errorf("Floats must start with a digit, not '.'.")
        return self.errorf(f"Expected a digit but got '{shown(r)}'.")

    def lex_number_start(self) -> State | None:
        r = self.next()
        if not is_digit(r):
            return self._not_a_digit(r)
        return self.lex_number_or_date_or_string_or_ip

    def lex_number_or_date_or_string_or_ip(self) -> State | None:
        r = self.next()
        if r == "-":
            if self.at(self.pos) - self.at(self.start) != 5:
                return self.errorf("All ISO8601 dates must be in full Zulu form.")
            return self.lex_date_after_year
        if is_digit(r):
            return self.lex_number_or_date_or_string_or_ip
        if r == ".":
            return self.lex_float_start
        if r in _SUFFIXES:
            return self.lex_convenient_number
        if not _ends_number(r):
            self.string_state = self.lex_string
            return self.lex_string
        self.backup()
        self.emit(Kind.INTEGER)
        return self.pop()

    def lex_convenient_number(self) -> State | None:
        r = self.next()
        if r in ("b", "B", "i", "I"):
            return self.lex_convenient_number
        self.backup()
        if _ends_number(r):
            self.emit(Kind.INTEGER)
            return self.pop()
        self.string_state = self.lex_string
        return self.lex_string

    def lex_date_after_year(self) -> State | None:
        for expected in _DATE_SHAPE:
            r = self.next()
            if expected == "0":
                if not is_digit(r):
                    return self.errorf(f"Expected digit in ISO8601 datetime, but found '{shown(r)}' instead.")
            elif r != expected:
                return self.errorf(f"Expected '{expected}' in ISO8601 datetime, but found '{shown(r)}' instead.")
        self.emit(Kind.DATETIME)
        return self.pop()

    def lex_neg_number_start(self) -> State | None:
        r = self.next()
        if not is_digit(r):
            return self._not_a_digit(r)
        return self.lex_neg_number

    def lex_neg_number(self) -> State | None:
        r = self.next()
        if is_digit(r):
            return self.lex_neg_number
        if r == ".":
            return self.lex_float_start
        if r in _SUFFIXES:
            return self.lex_convenient_number
        self.backup()
        self.emit(Kind.INTEGER)
        return self.pop()

    def lex_float_start(self) -> State | None:
        r = self.next()
        if not is_digit(r):
            return self.errorf(f"Floats must have a digit after the '.', but got '{shown(r)}' instead.")
        return self.lex_float

    def lex_float(self) -> State | None:
        r = self.next()
        if is_digit(r):
            return self.lex_float
        if r == ".":
            return self.lex_ip_addr
        self.backup()
        self.emit(Kind.FLOAT)
        return self.pop()

    def lex_ip_addr(self) -> State | None:
        r = self.next()
        if is_digit(r) or r in (".", ":", "-"):
            return self.lex_ip_addr
        self.backup()
        self.emit(Kind.STRING)
        return self.pop()

    # -- arrays ---------------------------------------------------------------------------

    def lex_array_value(self) -> State | None:
        r = self.next()
        if is_space(r):
            return self.skip(self.lex_array_value)
        if r in ("#", "/"):
            comment = self.comment_after(r, self.lex_array_value)
            if comment is not None:
                return comment
            return self.errorf("Unexpected array value terminator ','.")
        if r == ",":
            return self.errorf("Unexpected array value terminator ','.")
        if r == "]":
            return self.lex_array_end
        self.backup()
        self.push(self.lex_array_value_end)
        return self.lex_value

    def lex_array_value_end(self) -> State | None:
        r = self.next()
        if is_blank(r):
            return self.skip(self.lex_array_value_end)
        if r in ("#", "/"):
            return self.comment_after(r, self.lex_array_value_end) or self.skip(self.lex_array_value)
        if r == "," or is_nl(r):
            return self.skip(self.lex_array_value)
        if r == "]":
            return self.lex_array_end
        return self.errorf(
            f'Expected an array value terminator "," or an array terminator "]", but got \'{shown(r)}\' instead.'
        )

    def lex_array_end(self) -> State | None:
        self.ignore()
        self.emit(Kind.ARRAY_END)
        return self.pop()

    # -- maps -------------------------------------------------------------------------------

    def lex_map_key_start(self) -> State | None:
        r = self.peek()
        if is_key_sep(r):
            return self.errorf(f"Unexpected key separator '{shown(r)}'.")
        if r == "]":
            return self.errorf(f"Unexpected array end '{shown(r)}' processing map.")
        if is_space(r):
            self.next()
            return self.skip(self.lex_map_key_start)
        if r == "}":
            self.next()
            return self.skip(self.lex_map_end)
        if r == "#":
            self.next()
            self.push(self.lex_map_key_start)
            return self.lex_comment_start
        if r == "/":
            self.next()
            if self.next() == "/":
                self.push(self.lex_map_key_start)
                return self.lex_comment_start
            self.backup()
        elif r in ("'", '"'):
            self.next()
            return self.skip(self._map_quoted_key(r))
        elif r == EOF:
            return self.errorf("Unexpected EOF processing map.")
        self.ignore()
        self.next()
        return self.lex_map_key

    def _map_quoted_key(self, quote: str) -> State:
        what = "quoted map key" if quote == "'" else "double quoted map key"

        def lex_map_quoted_key() -> State | None:
            r = self.peek()
            if r == EOF:
                return self.errorf(f"Unexpected EOF processing {what}.")
            if r == quote:
                self.emit(Kind.KEY)
                self.next()
                return self.skip(self.lex_map_key_end)
            self.next()
            return lex_map_quoted_key

        return lex_map_quoted_key

    def lex_map_key(self) -> State | None:
        r = self.peek()
        if r == EOF:
            return self.errorf("Unexpected EOF processing map key.")
        if is_space(r):
            return self.key_or_include(self.lex_map_key_end, self.lex_map_value_end)
        if is_key_sep(r):
            self.emit(Kind.KEY)
            return self.lex_map_key_end
        self.next()
        return self.lex_map_key

    def lex_map_key_end(self) -> State | None:
        r = self.next()
        if is_space(r):
            return self.skip(self.lex_map_key_end)
        if is_key_sep(r):
            return self.skip(self.lex_map_value)
        self.backup()
        return self.lex_map_value

    def lex_map_value(self) -> State | None:
        r = self.next()
        if is_space(r):
            return self.skip(self.lex_map_value)
        if r == ",":
            return self.errorf('Unexpected map value terminator ",".')
        if r == "}":
            return self.skip(self.lex_map_end)
        self.backup()
        self.push(self.lex_map_value_end)
        return self.lex_value

    def lex_map_value_end(self) -> State | None:
        r = self.next()
        if is_blank(r):
            return self.skip(self.lex_map_value_end)
        if r in ("#", "/"):
            return self.comment_after(r, self.lex_map_value_end) or self.skip(self.lex_map_key_start)
        if r in (";", ",") or is_nl(r):
            return self.skip(self.lex_map_key_start)
        if r == "}":
            return self.skip(self.lex_map_end)
        return self.errorf(
            f'Expected a map value terminator "," or a map terminator "}}", but got \'{shown(r)}\' instead.'
        )

    def lex_map_end(self) -> State | None:
        self.ignore()
        self.emit(Kind.MAP_END)
        return self.pop()
