"""Subject transforms: a source filter and a destination template, as nats-server reads and applies them.

One implementation for every place nats-server maps subjects (a stream's
``subject_transform`` and ``republish`` today; account mappings and
source/mirror transforms can reuse it).  :meth:`SubjectTransform.parse`
is ``NewSubjectTransformWithStrict``, :func:`validate_mapping` is the
extra destination check streams make (``ValidateMapping``); both raise
:class:`TransformError` carrying nats-server's error text, which the
JetStream API embeds in its replies.

The destination functions are nats-server 2.15.1's: ``$n`` and
``{{wildcard(n)}}``, ``{{partition(n,i...)}}`` (FNV-1a 32-bit, so
partitions equal the real server's), ``{{split(i,delim)}}``,
``{{splitFromLeft/Right(i,pos)}}``, ``{{sliceFromLeft/Right(i,size)}}``,
``{{left/right(i,len)}}`` and ``{{random(n)}}``, which draws from the
server's seeded generator handed to :meth:`parse` (never the module
``random``).  Token slicing works on UTF-8 bytes as Go does.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

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
_BLANKS = "\t\n\f\r "  # Go's \s, and the blanks ValidateMapping refuses


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
_WILDCARD = _function("wildcard")
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
_KNOWN_FUNCTIONS = (
    _PARTITION,
    _WILDCARD,
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


@dataclass(frozen=True, slots=True)
class _Token:
    """One destination token: a literal (``kind == ""``) or a function with its arguments."""

    kind: str
    literal: str = ""
    indexes: tuple[int, ...] = ()  # source token positions the function reads
    number: int = -1  # partitions, a position, a size or a random ceiling
    delimiter: str = ""


@dataclass(frozen=True, slots=True)
class _Placeholder:
    """A parsed destination token before its wildcard ordinals are resolved."""

    kind: str  # "" (literal), "wildcard", "partition", "split", "random", or an index-int function
    ordinals: tuple[int, ...] = ()
    number: int = -1
    delimiter: str = ""


def _args(pattern: re.Pattern[str], token: str) -> list[str] | None:
    found = pattern.search(token)
    return _COMMA.split(found.group(1)) if found else None


def _index_int(token: str, kind: str, args: list[str]) -> _Placeholder:
    if len(args) < 2:
        raise TransformError.in_token(NOT_ENOUGH_ARGS, token)
    if len(args) > 2:
        raise TransformError.in_token(TOO_MANY_ARGS, token)
    try:
        index = go_atoi(args[0].strip(" "))
        number = go_atoi(args[1].strip(" "))
    except ValueError:
        raise TransformError.in_token(INVALID_ARG, token) from None
    if not -_MAX_INT32 - 1 <= number <= _MAX_INT32:
        raise TransformError.in_token(INVALID_ARG, token)
    return _Placeholder(kind, (index,), number)


def _mustache(token: str) -> _Placeholder:
    """``{{function(args)}}``: nats-server's ``indexPlaceHolders`` for the mustache forms."""
    args = _args(_WILDCARD, token)
    if args is not None:
        if len(args) == 1 and args[0] == "":
            raise TransformError.in_token(NOT_ENOUGH_ARGS, token)
        if len(args) > 1:
            raise TransformError.in_token(TOO_MANY_ARGS, token)
        try:
            return _Placeholder("wildcard", (go_atoi(args[0].strip(" ")),))
        except ValueError:
            raise TransformError.in_token(INVALID_ARG, token) from None
    args = _args(_PARTITION, token)
    if args is not None:
        try:
            count = go_atoi(args[0].strip(" "))
            if count > _MAX_INT32:
                raise ValueError(args[0])
            ordinals = tuple(go_atoi(arg.strip(" ")) for arg in args[1:])
        except ValueError:
            raise TransformError.in_token(INVALID_ARG, token) from None
        return _Placeholder("partition", ordinals, _int32(count))
    for kind, pattern in _INDEX_INT_FUNCTIONS:
        args = _args(pattern, token)
        if args is not None:
            return _index_int(token, kind, args)
    args = _args(_SPLIT, token)
    if args is not None:
        if len(args) < 2:
            raise TransformError.in_token(NOT_ENOUGH_ARGS, token)
        if len(args) > 2:
            raise TransformError.in_token(TOO_MANY_ARGS, token)
        try:
            index = go_atoi(args[0].strip(" "))
        except ValueError:
            raise TransformError.in_token(INVALID_ARG, token) from None
        if " " in args[1] or "." in args[1]:
            raise TransformError.in_token(INVALID_ARG, token)
        return _Placeholder("split", (index,), delimiter=args[1])
    args = _args(_RANDOM, token)
    if args is not None:
        if len(args) != 1:
            raise TransformError.in_token(NOT_ENOUGH_ARGS, token)
        try:
            ceiling = go_atoi(args[0].strip(" "))
            if ceiling > _MAX_INT32:
                raise ValueError(args[0])
        except ValueError:
            raise TransformError.in_token(INVALID_ARG, token) from None
        return _Placeholder("random", number=_int32(ceiling))
    raise TransformError.in_token(UNKNOWN_FUNCTION, token)


def _is_mustache(token: str) -> bool:
    return len(token) > 4 and token.startswith("{{") and token.endswith("}}")


def _placeholder(token: str) -> _Placeholder:
    """What a destination token asks for: a literal, ``$n``, or a mustache function."""
    if len(token) > 1:
        if token[0] == "$":
            try:
                return _Placeholder("wildcard", (go_atoi(token[1:]),))
            except ValueError:
                return _Placeholder("")  # "$x" is a literal token
        if _is_mustache(token):
            return _mustache(token)
    return _Placeholder("")


def _subject_info(subject: str) -> tuple[bool, list[str], int, bool]:
    """nats-server's ``subjectInfo``: valid, tokens, partial wildcard count, ends in ``>``."""
    if not subject:
        return False, [], 0, False
    tokens = subject.split(".")
    pwcs = 0
    fwc = False
    for token in tokens:
        if not token or fwc:
            return False, [], 0, False
        if token == FWC:
            fwc = True
        elif token == PWC:
            pwcs += 1
    return True, tokens, pwcs, fwc


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


class SubjectTransform:
    """A parsed transform: :meth:`match` maps a literal subject matching ``src`` onto ``dest``."""

    __slots__ = ("_any_source", "_dtoks", "_identity", "_plan", "_rng", "_stoks", "dest", "src")

    def __init__(
        self, src: str, dest: str, stoks: list[str], dtoks: list[str], plan: list[_Token], rng: random.Random | None
    ) -> None:
        self.src = src
        self.dest = dest
        self._stoks = stoks
        self._dtoks = dtoks
        self._plan = plan
        self._rng = rng
        self._any_source = src in ("", FWC)
        self._identity = self._any_source and dest in ("", FWC)

    @classmethod
    def parse(
        cls, src: str, dest: str, strict: bool = False, rng: random.Random | None = None
    ) -> SubjectTransform | None:
        """``NewSubjectTransformWithStrict``: ``None`` for an empty destination; raises :class:`TransformError`.

        ``strict`` is for import mappings, which must be reversible: only
        wildcard functions, and every source wildcard used.  ``rng`` is the
        server's seeded generator, needed when the destination uses ``{{random}}``.
        """
        if not dest:
            return None
        if not src:
            src = FWC
        s_ok, stoks, pwcs, s_fwc = _subject_info(src)
        d_ok, dtoks, d_pwcs, d_fwc = _subject_info(dest)
        if not s_ok or not d_ok or d_pwcs > 0 or s_fwc != d_fwc:
            raise TransformError(BAD_SUBJECT)
        plan: list[_Token] = []
        if pwcs > 0 or s_fwc:
            # Ordinal n (1-based) of a source '*' -> its token position; a missing ordinal reads position 0, as Go's map does.
            positions = [i for i, token in enumerate(stoks) if token == PWC]
            used = 0
            for token in dtoks:
                ph = _placeholder(token)
                if strict and ph.kind not in ("", "wildcard"):
                    raise TransformError.in_token(NOT_SUPPORTED_FOR_IMPORT, token)
                if ph.kind == "":
                    plan.append(_Token("", token))
                elif ph.kind == "random":
                    plan.append(_Token("random", number=ph.number))
                else:
                    used += len(ph.ordinals)
                    indexes = []
                    for ordinal in ph.ordinals:
                        if ordinal > pwcs:
                            raise TransformError.in_token(INDEX_OUT_OF_RANGE, f"{token}: [{ordinal}]")
                        indexes.append(positions[ordinal - 1] if ordinal >= 1 else 0)
                    plan.append(_Token(ph.kind, indexes=tuple(indexes), number=ph.number, delimiter=ph.delimiter))
            if strict and used < pwcs:
                raise TransformError.in_token(NOT_USING_ALL_WILDCARDS, dest)
        else:
            for token in dtoks:
                ph = _placeholder(token)
                if ph.kind == "":
                    plan.append(_Token("", token))
                elif ph.kind in ("random", "partition"):
                    plan.append(_Token(ph.kind, number=ph.number))
                else:
                    raise TransformError.in_token(INDEX_OUT_OF_RANGE, token)
        return cls(src, dest, stoks, dtoks, plan, rng)

    @property
    def uses_random(self) -> bool:
        return any(step.kind == "random" for step in self._plan)

    def match(self, subject: str) -> str | None:
        """The transformed subject, or ``None`` when ``subject`` is not a literal matching ``src``."""
        if self._identity:
            return subject
        tokens = subject.split(".")
        for token in tokens:
            if not token or token in (PWC, FWC):
                return None
        if not self._any_source and not _subset_match(tokens, self._stoks):
            return None
        return self.transform_tokens(tokens)

    def transform(self, subject: str) -> str:
        """Apply the destination to ``subject`` without checking that it matches (``TransformSubject``)."""
        return self.transform_tokens(subject.split("."))

    def transform_tokens(self, tokens: list[str]) -> str:
        out: list[str] = []
        plan = self._plan
        last = len(plan) - 1
        for i, step in enumerate(plan):
            if step.kind == "":
                if step.literal == FWC:
                    break
                out.append(step.literal)
            else:
                out.append(self._apply(step, tokens))
            if i < last:
                out.append(".")
        if self._dtoks[-1] == FWC:
            out.append(".".join(tokens[len(self._stoks) - 1 :]))
        return "".join(out)

    def _apply(self, step: _Token, tokens: list[str]) -> str:
        kind = step.kind
        if kind == "wildcard":
            index = step.indexes[0] if step.indexes else len(tokens)
            return tokens[index] if index < len(tokens) else ""
        if kind == "partition":
            key = b"".join(_utf8(tokens[i]) for i in step.indexes) if step.indexes else _utf8(".".join(tokens))
            buckets = step.number & 0xFFFFFFFF
            return str(fnv1a32(key) % buckets) if buckets else "0"
        if kind == "random":
            if step.number == 0:
                return "0"
            if self._rng is None:
                raise RuntimeError(f"subject transform {self.dest!r} needs the server's random generator")
            return str(self._rng.getrandbits(31) % abs(step.number))
        if kind == "split":
            return _split(tokens[step.indexes[0]], step.delimiter)
        return _slice(kind, _utf8(tokens[step.indexes[0]]), step.number)


def _subset_match(tokens: list[str], stoks: list[str]) -> bool:
    """A literal subject's tokens against a filter's (``isSubsetMatch``)."""
    for i, filter_token in enumerate(stoks):
        if i >= len(tokens):
            return False
        if filter_token == FWC:
            return True
        if filter_token != PWC and filter_token != tokens[i]:
            return False
    return len(tokens) == len(stoks)


def _split(token: str, delimiter: str) -> str:
    """``{{split}}``: the token cut at each delimiter, empty pieces dropped."""
    pieces = token.split(delimiter) if delimiter else list(token)
    out: list[str] = []
    for j, piece in enumerate(pieces):
        if piece:
            out.append(piece)
        if j < len(pieces) - 1 and pieces[j + 1] and not (j == 0 and not piece):
            out.append(".")
    return "".join(out)


def _slice(kind: str, data: bytes, size: int) -> str:
    """The position and size functions, on the token's bytes (a too-small token is kept whole)."""
    length = len(data)
    if not 0 < size < length:
        return _text(data)
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
    return _text(b".".join(parts))


def validate_mapping(src: str, dest: str) -> None:
    """``ValidateMapping``: the destination's tokens, then the transform itself; raises :class:`TransformError`."""
    if not dest:
        return
    after_fwc = False
    for token in dest.split("."):
        if not token or after_fwc:
            raise TransformError.in_token(INVALID_TRANSFORM, token)
        if _is_mustache(token):
            if not any(pattern.search(token) for pattern in _KNOWN_FUNCTIONS):
                raise TransformError.in_token(UNKNOWN_FUNCTION, token)
            continue
        if token == FWC:
            after_fwc = True
        elif any(ch in token for ch in _BLANKS):
            raise TransformError(INVALID_TRANSFORM)
    SubjectTransform.parse(src, dest)
