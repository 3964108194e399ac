"""The destination functions of a subject transform: nats-server's texts, patterns and token arithmetic.

:mod:`fakejs.core.subject_transform` parses and applies transforms; this
module holds what a destination token may be (``$n``, the ``{{function()}}``
patterns nats-server matches, their argument rules and error texts) and the
pure functions the token kinds compute with (FNV-1a for ``partition``, the
split and slice functions on UTF-8 bytes as Go does).
"""

from __future__ import annotations

import re

PWC = "*"
FWC = ">"

BAD_SUBJECT = "invalid subject"
NO_TRANSFORMS = "no matching transforms available"
INVALID_DESTINATION = "invalid mapping destination"
INVALID_TRANSFORM = f"{INVALID_DESTINATION}: invalid transform"
NOT_USING_ALL_WILDCARDS = f"{INVALID_DESTINATION}: not using all of the token wildcard(s)"
UNKNOWN_FUNCTION = f"{INVALID_DESTINATION}: unknown function"
INDEX_OUT_OF_RANGE = f"{INVALID_DESTINATION}: wildcard index out of range"
NOT_ENOUGH_ARGS = f"{INVALID_DESTINATION}: not enough arguments passed to the function"
INVALID_ARG = f"{INVALID_DESTINATION}: function argument is invalid or in the wrong format"
TOO_MANY_ARGS = f"{INVALID_DESTINATION}: too many arguments passed to the function"
NOT_SUPPORTED_FOR_IMPORT = (
    f"{INVALID_DESTINATION}: the only mapping function allowed for import transforms is {{{{Wildcard()}}}}"
)

_MAX_INT32 = 2**31 - 1
_MAX_INT64 = 2**63 - 1
BLANKS = "\t\n\f\r "  # Go's \s, and the blanks ValidateMapping refuses


class TransformError(ValueError):
    """A source or destination nats-server refuses; ``str()`` is its error text."""

    @classmethod
    def in_token(cls, base: str, token: str) -> TransformError:
        """nats-server's ``mappingDestinationErr``: the error, then the offending token."""
        return cls(f"{base} in {token}" if token else base)


def _function(name: str) -> re.Pattern[str]:
    """A mustache function pattern as nats-server writes it (each letter of a camel-case word in either case)."""
    words = re.findall(r"[A-Z]?[a-z]+", name)
    body = "".join(f"[{w[0].lower()}{w[0].upper()}]{w[1:]}" for w in words)
    return re.compile(r"{{[\t\n\f\r ]*" + body + r"[\t\n\f\r ]*\((.*)\)[\t\n\f\r ]*}}")


_COMMA = re.compile(r",[\t\n\f\r ]*")
WILDCARD = _function("wildcard")
_PARTITION = _function("partition")
_SPLIT_FROM_LEFT = _function("splitFromLeft")
_SPLIT_FROM_RIGHT = _function("splitFromRight")
_SLICE_FROM_LEFT = _function("sliceFromLeft")
_SLICE_FROM_RIGHT = _function("sliceFromRight")
_SPLIT = _function("split")
_LEFT = _function("left")
_RIGHT = _function("right")
_RANDOM = _function("random")

# Functions taking a wildcard index and an int32, in nats-server's matching order.
_INDEX_INT_FUNCTIONS = (
    ("splitFromLeft", _SPLIT_FROM_LEFT),
    ("splitFromRight", _SPLIT_FROM_RIGHT),
    ("sliceFromLeft", _SLICE_FROM_LEFT),
    ("sliceFromRight", _SLICE_FROM_RIGHT),
    ("right", _RIGHT),
    ("left", _LEFT),
)
# What ValidateMapping accepts as a known function (the 2.15.1 binary knows left and right too).
KNOWN_FUNCTIONS = (
    _PARTITION,
    WILDCARD,
    _SPLIT_FROM_LEFT,
    _SPLIT_FROM_RIGHT,
    _SLICE_FROM_LEFT,
    _SLICE_FROM_RIGHT,
    _SPLIT,
    _LEFT,
    _RIGHT,
    _RANDOM,
)


def go_atoi(text: str) -> int:
    """Go's ``strconv.Atoi``: an optional sign and ASCII digits, within int64; raises ``ValueError``."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isascii() or not body.isdigit():
        raise ValueError(text)
    value = int(text)
    if not -_MAX_INT64 - 1 <= value <= _MAX_INT64:
        raise ValueError(text)
    return value


def _int32(value: int) -> int:
    """Go's ``int32(v)`` conversion (wraps)."""
    return (value + 2**31) % 2**32 - 2**31


def fnv1a32(data: bytes) -> int:
    """Go's ``hash/fnv`` New32a sum: what ``{{partition}}`` hashes with."""
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


class Placeholder:
    """A parsed destination token before its wildcard ordinals are resolved.

    A plain class: a dataclass costs its import, and every start imports this module.
    """

    __slots__ = ("delimiter", "kind", "number", "ordinals")

    def __init__(self, kind: str, ordinals: tuple[int, ...] = (), number: int = -1, delimiter: str = "") -> None:
        self.kind = kind  # "" (literal), "wildcard", "partition", "split", "random", or an index-int function
        self.ordinals = ordinals
        self.number = number
        self.delimiter = delimiter


def function_args(pattern: re.Pattern[str], token: str) -> list[str] | None:
    found = pattern.search(token)
    return _COMMA.split(found.group(1)) if found else None


def _two_args(token: str, args: list[str]) -> None:
    """Functions of exactly two arguments: too few and too many have their own texts."""
    if len(args) < 2:
        raise TransformError.in_token(NOT_ENOUGH_ARGS, token)
    if len(args) > 2:
        raise TransformError.in_token(TOO_MANY_ARGS, token)


def _index_int(token: str, kind: str, args: list[str]) -> Placeholder:
    _two_args(token, args)
    try:
        index = go_atoi(args[0].strip(" "))
        number = go_atoi(args[1].strip(" "))
    except ValueError:
        raise TransformError.in_token(INVALID_ARG, token) from None
    if not -_MAX_INT32 - 1 <= number <= _MAX_INT32:
        raise TransformError.in_token(INVALID_ARG, token)
    return Placeholder(kind, (index,), number)


def _mustache(token: str) -> Placeholder:
    """``{{function(args)}}``: nats-server's ``indexPlaceHolders`` for the mustache forms."""
    args = function_args(WILDCARD, token)
    if args is not None:
        if len(args) == 1 and args[0] == "":
            raise TransformError.in_token(NOT_ENOUGH_ARGS, token)
        if len(args) > 1:
            raise TransformError.in_token(TOO_MANY_ARGS, token)
        try:
            return Placeholder("wildcard", (go_atoi(args[0].strip(" ")),))
        except ValueError:
            raise TransformError.in_token(INVALID_ARG, token) from None
    args = function_args(_PARTITION, token)
    if args is not None:
        try:
            count = go_atoi(args[0].strip(" "))
            if count > _MAX_INT32:
                raise ValueError(args[0])
            ordinals = tuple(go_atoi(arg.strip(" ")) for arg in args[1:])
        except ValueError:
            raise TransformError.in_token(INVALID_ARG, token) from None
        return Placeholder("partition", ordinals, _int32(count))
    for kind, pattern in _INDEX_INT_FUNCTIONS:
        args = function_args(pattern, token)
        if args is not None:
            return _index_int(token, kind, args)
    args = function_args(_SPLIT, token)
    if args is not None:
        _two_args(token, args)
        try:
            index = go_atoi(args[0].strip(" "))
        except ValueError:
            raise TransformError.in_token(INVALID_ARG, token) from None
        if " " in args[1] or "." in args[1]:
            raise TransformError.in_token(INVALID_ARG, token)
        return Placeholder("split", (index,), delimiter=args[1])
    args = function_args(_RANDOM, token)
    if args is not None:
        if len(args) != 1:
            raise TransformError.in_token(NOT_ENOUGH_ARGS, token)
        try:
            ceiling = go_atoi(args[0].strip(" "))
            if ceiling > _MAX_INT32:
                raise ValueError(args[0])
        except ValueError:
            raise TransformError.in_token(INVALID_ARG, token) from None
        return Placeholder("random", number=_int32(ceiling))
    raise TransformError.in_token(UNKNOWN_FUNCTION, token)


def is_mustache(token: str) -> bool:
    return len(token) > 4 and token.startswith("{{") and token.endswith("}}")


def placeholder(token: str) -> Placeholder:
    """What a destination token asks for: a literal, ``$n``, or a mustache function."""
    if len(token) > 1:
        if token[0] == "$":
            try:
                return Placeholder("wildcard", (go_atoi(token[1:]),))
            except ValueError:
                return Placeholder("")  # "$x" is a literal token
        if is_mustache(token):
            return _mustache(token)
    return Placeholder("")


def utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def utf8_text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def split_token(token: str, delimiter: str) -> str:
    """``{{split}}``: the token cut at each delimiter, empty pieces dropped."""
    pieces = token.split(delimiter) if delimiter else list(token)
    out: list[str] = []
    for j, piece in enumerate(pieces):
        if piece:
            out.append(piece)
        if j < len(pieces) - 1 and pieces[j + 1] and not (j == 0 and not piece):
            out.append(".")
    return "".join(out)


def slice_token(kind: str, data: bytes, size: int) -> str:
    """The position and size functions, on the token's bytes (a too-small token is kept whole)."""
    length = len(data)
    if not 0 < size < length:
        return utf8_text(data)
    if kind == "splitFromLeft":
        parts = [data[:size], data[size:]]
    elif kind == "splitFromRight":
        parts = [data[: length - size], data[length - size :]]
    elif kind == "left":
        parts = [data[:size]]
    elif kind == "right":
        parts = [data[length - size :]]
    elif kind == "sliceFromLeft":
        parts = [data[i : i + size] for i in range(0, length, size)]
    else:  # sliceFromRight
        remainder = length % size
        parts = ([data[:remainder]] if remainder else []) + [data[i : i + size] for i in range(remainder, length, size)]
    return utf8_text(b".".join(parts))
