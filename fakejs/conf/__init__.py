"""nats-server's configuration file format: lexer, parser, and values with positions.

The format of ``nats-server -c FILE``: ``key = value``, ``key: value`` or
``key value``; ``#`` and ``//`` comments; maps ``{}`` and arrays ``[]``;
quoted and bare strings, ``(`` ... ``)`` blocks, numbers with size suffixes,
booleans, Zulu timestamps; ``include`` and ``$variables``; JSON is accepted
too.  What it yields is a tree of :class:`Token` values, each remembering its
file, line and column for later ``FILE:LINE:COL: reason`` messages;
:func:`plain` turns the tree into ordinary dicts and lists.  Errors are
:class:`ConfigError`, whose ``str()`` is nats-server's own message.

Modules: ``lexer`` (the text as a stream of items), ``lexcore`` (the
lexer's items, character classes and state machine primitives),
``lexvalues`` (the lexer's value states: strings, numbers, dates, blocks,
arrays, maps), ``parser`` (items to a tree of tokens), ``scalars`` (scalar
items to Python values, with nats-server's rules and error texts),
``values`` (positioned tokens, their plain form, the digest), ``files``
(reading files: Go's path joining and error texts) and ``errors`` (the
error a file can fail with, as nats-server reports it).

Mapping keys to server options is not done here.  The package is sans-IO
apart from reading the files it is asked to parse (and their includes) and
the environment for ``$variables``; it may import only
:mod:`fakejs.gocompat` and the standard library.
"""

from __future__ import annotations

from fakejs.conf.errors import EXIT_STATUS, PROGRAM, STDERR_FORMAT, VALID_FORMAT, ConfigError
from fakejs.conf.parser import parse, parse_file
from fakejs.conf.scalars import SUFFIXES
from fakejs.conf.values import Token, Tree, digest, plain

__all__ = [
    "EXIT_STATUS",
    "PROGRAM",
    "STDERR_FORMAT",
    "SUFFIXES",
    "VALID_FORMAT",
    "ConfigError",
    "Token",
    "Tree",
    "digest",
    "parse",
    "parse_file",
    "plain",
]
