"""The parser: lexer items to a tree of :class:`~fakejs.conf.values.Token` values.

This is nats-server's "pedantic" parse (the one ``-c`` and ``-t`` use): every
value keeps its key's position and its file.  Three things reach outside the
text being parsed:

* ``include PATH`` parses another file (relative to the including file's
  directory) and merges its keys into the current map;
* ``$name`` looks for ``name`` in the maps being built, innermost first,
  then in the environment -- an environment value is itself parsed as a
  configuration value (``pk=<value>``), so ``PORT=4222`` gives an integer and
  a value that does not parse is an error;
* ``$2a$...`` (a bcrypt hash) is not a reference but the string itself.
"""

from __future__ import annotations

import os
from typing import Any

from fakejs.conf import scalars
from fakejs.conf.errors import ConfigError
from fakejs.conf.files import go_dir, go_join, read_config
from fakejs.conf.lexer import Item, Kind, Lexer
from fakejs.conf.values import Token, Tree

__all__ = ["parse", "parse_file"]

_ENV_KEY = "pk"
_BCRYPT_PREFIX = "2a$"
_Context = dict[str, Token] | list[Token]


class _Parser:
    """One file's (or one environment value's) parse; ``env_refs`` is shared to catch cycles."""

    def __init__(self, text: str, path: str, env_refs: set[str]) -> None:
        self.lexer = Lexer(text)
        self.path = path
        self.directory = go_dir(path)
        self.env_refs = env_refs
        self.mapping: Tree = {}
        self.contexts: list[_Context] = [self.mapping]
        self.keys: list[Item] = []

    def run(self) -> Tree:
        previous: Item | None = None
        while True:
            item = self.lexer.next_item()
            if item.kind is Kind.EOF:
                # A trailing '}' may stand where a key would, for JSON-style files.
                if previous is not None and previous.kind is Kind.KEY and previous.val != "}":
                    raise ConfigError(f"config is invalid ({self.path}:{item.line}:{item.pos})", item.line, item.pos)
                return self.mapping
            previous = item
            self.process(item)

    # -- building the tree -----------------------------------------------------------

    def set_value(self, token: Token) -> None:
        context = self.contexts[-1]
        if isinstance(context, list):
            context.append(token)
            return
        if not self.keys:
            raise ConfigError("BUG in parser, keys stack empty")
        key = self.keys.pop()
        # Map members carry their key's position: more useful in error messages.
        token.line, token.pos = key.line, key.pos
        context[key.val] = token

    def _token(self, item: Item, value: Any) -> Token:
        return Token(value, item.line, item.pos, self.path)

    def process(self, item: Item) -> None:
        kind = item.kind
        if kind is Kind.ERROR:
            raise ConfigError(f"Parse error on line {item.line}: '{item.val}'", item.line, item.pos)
        if kind is Kind.KEY:
            self.keys.append(item)
        elif kind is Kind.MAP_START:
            self.contexts.append({})
        elif kind is Kind.ARRAY_START:
            self.contexts.append([])
        elif kind in (Kind.MAP_END, Kind.ARRAY_END):
            self.set_value_after_pop(item)
        elif kind is Kind.VARIABLE:
            self.set_value(self._token(item, self.variable(item)))
        elif kind is Kind.INCLUDE:
            self.include(item)
        elif kind in _SCALARS:
            value = _SCALARS[kind](_decoded(item.val))
            if value is not None:
                self.set_value(self._token(item, value))

    def set_value_after_pop(self, item: Item) -> None:
        finished = self.contexts.pop()
        self.set_value(self._token(item, finished))

    # -- include -------------------------------------------------------------------------

    def include(self, item: Item) -> None:
        path = go_join(self.directory, item.val)
        try:
            included = _Parser(read_config(path), path, set()).run()
        except ConfigError as exc:
            raise ConfigError(f"error parsing include file '{item.val}', {exc}", exc.line, exc.pos) from None
        for key, token in included.items():
            self.keys.append(Item(Kind.KEY, key, token.line, token.pos))
            self.set_value(token)

    # -- variables ---------------------------------------------------------------------

    def variable(self, item: Item) -> Any:
        name = item.val
        try:
            found, value = self.lookup(name)
        except ConfigError as exc:
            raise ConfigError(
                f"variable reference for '{name}' on line {item.line} could not be parsed: {exc}", item.line, item.pos
            ) from None
        if not found:
            raise ConfigError(
                f"variable reference for '{name}' on line {item.line} can not be found", item.line, item.pos
            )
        if isinstance(value, Token):
            value.used_variable = True
            return value.value
        return value

    def lookup(self, name: str) -> tuple[bool, Any]:
        """Find ``name`` in the open maps, innermost first, then in the environment."""
        if name.startswith(_BCRYPT_PREFIX):
            return True, "$" + name
        for context in reversed(self.contexts):
            if isinstance(context, dict) and name in context:
                return True, context[name]
        if name in self.env_refs:
            raise ConfigError(f"variable reference cycle for '{name}'")
        text = os.environ.get(name)
        if text is None:
            return False, None
        self.env_refs.add(name)
        try:
            parsed = _Parser(f"{_ENV_KEY}={text}", "", self.env_refs).run()
        finally:
            self.env_refs.discard(name)
        token = parsed.get(_ENV_KEY)
        return (token is not None), (None if token is None else token.value)


def _decoded(val: str) -> str:
    """Join raw bytes from ``\\xNN`` escapes (kept as surrogate escapes) into the characters they spell."""
    if val.isascii():
        return val
    return val.encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")


def _identity(val: str) -> str:
    return val


_SCALARS: dict[Kind, Any] = {
    Kind.STRING: _identity,
    Kind.INTEGER: scalars.integer,
    Kind.FLOAT: scalars.floating,
    Kind.BOOL: scalars.boolean,
    Kind.DATETIME: scalars.datetime,
}


def parse(text: str, path: str = "") -> Tree:
    """Parse configuration text; ``path`` names it in messages and anchors relative includes."""
    return _Parser(text, path, set()).run()


def parse_file(path: str) -> Tree:
    """Read and parse a configuration file, with nats-server's errors for unreadable files."""
    return parse(read_config(path), path)
