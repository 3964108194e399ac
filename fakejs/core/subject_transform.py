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
from collections.abc import Callable

from fakejs.core.transform_functions import (
    BAD_SUBJECT,
    BLANKS,
    FWC,
    INDEX_OUT_OF_RANGE,
    INVALID_ARG,
    INVALID_DESTINATION,
    INVALID_TRANSFORM,
    KNOWN_FUNCTIONS,
    NO_TRANSFORMS,
    NOT_ENOUGH_ARGS,
    NOT_SUPPORTED_FOR_IMPORT,
    NOT_USING_ALL_WILDCARDS,
    PWC,
    TOO_MANY_ARGS,
    UNKNOWN_FUNCTION,
    WILDCARD,
    TransformError,
    fnv1a32,
    function_args,
    go_atoi,
    is_mustache,
    placeholder,
    slice_token,
    split_token,
    utf8,
)

__all__ = [
    "BAD_SUBJECT",
    "FWC",
    "INDEX_OUT_OF_RANGE",
    "INVALID_ARG",
    "INVALID_DESTINATION",
    "INVALID_TRANSFORM",
    "NOT_ENOUGH_ARGS",
    "NOT_SUPPORTED_FOR_IMPORT",
    "NOT_USING_ALL_WILDCARDS",
    "NO_TRANSFORMS",
    "PWC",
    "TOO_MANY_ARGS",
    "UNKNOWN_FUNCTION",
    "SubjectTransform",
    "TransformError",
    "fnv1a32",
    "go_atoi",
    "service_import_rename",
    "stream_import_renames",
    "transform_tokenize",
    "transform_untokenize",
    "validate_mapping",
]


class _Token:
    """One destination token: a literal (``kind == ""``) or a function with its arguments.

    A plain class: a dataclass costs its import, and every start imports this module.
    """

    __slots__ = ("delimiter", "indexes", "kind", "literal", "number")

    def __init__(
        self, kind: str, literal: str = "", indexes: tuple[int, ...] = (), number: int = -1, delimiter: str = ""
    ) -> None:
        self.kind = kind
        self.literal = literal
        self.indexes = indexes  # source token positions the function reads
        self.number = number  # partitions, a position, a size or a random ceiling
        self.delimiter = delimiter


def _subject_info(subject: str) -> tuple[bool, list[str], int, bool]:
    """nats-server's ``subjectInfo``: valid, tokens, partial wildcard count (``npwcs``), ends in ``>`` (``fwc``)."""
    if not subject:
        return False, [], 0, False
    tokens = subject.split(".")
    wildcards = 0
    full_wildcard = False
    for token in tokens:
        if not token or full_wildcard:
            return False, [], 0, False
        if token == FWC:
            full_wildcard = True
        elif token == PWC:
            wildcards += 1
    return True, tokens, wildcards, full_wildcard


class SubjectTransform:
    """A parsed transform: :meth:`match` maps a literal subject matching ``src`` onto ``dest``."""

    __slots__ = ("_any_source", "_dest_tokens", "_identity", "_plan", "_rng", "_source_tokens", "dest", "src")

    def __init__(
        self,
        src: str,
        dest: str,
        source_tokens: list[str],
        dest_tokens: list[str],
        plan: list[_Token],
        rng: random.Random | None,
    ) -> None:
        self.src = src
        self.dest = dest
        self._source_tokens = source_tokens
        self._dest_tokens = dest_tokens
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
        # nats-server's sfwc/dfwc (ends in '>'), npwcs (number of '*'), stokens/dtokens.
        source_valid, source_tokens, source_wildcards, source_full_wildcard = _subject_info(src)
        dest_valid, dest_tokens, dest_wildcards, dest_full_wildcard = _subject_info(dest)
        if not source_valid or not dest_valid or dest_wildcards > 0 or source_full_wildcard != dest_full_wildcard:
            raise TransformError(BAD_SUBJECT)
        plan: list[_Token] = []
        if source_wildcards > 0 or source_full_wildcard:
            # Ordinal n (1-based) of a source '*' -> its token position; a missing ordinal reads position 0, as Go's map does.
            positions = [i for i, token in enumerate(source_tokens) if token == PWC]
            used = 0
            for token in dest_tokens:
                mapping = placeholder(token)
                if strict and mapping.kind not in ("", "wildcard"):
                    raise TransformError.in_token(NOT_SUPPORTED_FOR_IMPORT, token)
                if mapping.kind == "":
                    plan.append(_Token("", token))
                elif mapping.kind == "random":
                    plan.append(_Token("random", number=mapping.number))
                else:
                    used += len(mapping.ordinals)
                    indexes = []
                    for ordinal in mapping.ordinals:
                        if ordinal > source_wildcards:
                            raise TransformError.in_token(INDEX_OUT_OF_RANGE, f"{token}: [{ordinal}]")
                        indexes.append(positions[ordinal - 1] if ordinal >= 1 else 0)
                    plan.append(
                        _Token(mapping.kind, indexes=tuple(indexes), number=mapping.number, delimiter=mapping.delimiter)
                    )
            if strict and used < source_wildcards:
                raise TransformError.in_token(NOT_USING_ALL_WILDCARDS, dest)
        else:
            for token in dest_tokens:
                mapping = placeholder(token)
                if mapping.kind == "":
                    plan.append(_Token("", token))
                elif mapping.kind in ("random", "partition"):
                    plan.append(_Token(mapping.kind, number=mapping.number))
                else:
                    raise TransformError.in_token(INDEX_OUT_OF_RANGE, token)
        return cls(src, dest, source_tokens, dest_tokens, plan, rng)

    @property
    def has_wildcards(self) -> bool:
        """Whether the source has wildcards (without, the destination is one fixed subject)."""
        return PWC in self._source_tokens or FWC in self._source_tokens

    def reverse(self) -> SubjectTransform | None:
        """The strict transform leading back from ``dest`` to ``src`` (nats-server's ``reverse``), or ``None``.

        The destination's wildcard references become the reverse's source
        wildcards, and the source's ``*`` tokens take those references in
        order, so ``a.*.*`` -> ``b.$2.$1`` reverses to ``b.*.*`` -> ``a.$2.$1``.
        """
        if not self.has_wildcards:
            return _strict_or_none(self.dest, self.src)
        source, references = transform_untokenize(self.dest)
        tokens = []
        for token in self._source_tokens:
            if token == PWC:
                if not references:
                    return None
                token = references.pop(0)
            tokens.append(token)
        return _strict_or_none(source, ".".join(tokens))

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
        if not self._any_source and not _subset_match(tokens, self._source_tokens):
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
        if self._dest_tokens[-1] == FWC:
            out.append(".".join(tokens[len(self._source_tokens) - 1 :]))
        return "".join(out)

    def _apply(self, step: _Token, tokens: list[str]) -> str:
        kind = step.kind
        if kind == "wildcard":
            index = step.indexes[0] if step.indexes else len(tokens)
            return tokens[index] if index < len(tokens) else ""
        if kind == "partition":
            key = b"".join(utf8(tokens[i]) for i in step.indexes) if step.indexes else utf8(".".join(tokens))
            buckets = step.number & 0xFFFFFFFF
            return str(fnv1a32(key) % buckets) if buckets else "0"
        if kind == "random":
            if step.number == 0:
                return "0"
            if self._rng is None:
                raise RuntimeError(f"subject transform {self.dest!r} needs the server's random generator")
            return str(self._rng.getrandbits(31) % abs(step.number))
        if kind == "split":
            return split_token(tokens[step.indexes[0]], step.delimiter)
        return slice_token(kind, utf8(tokens[step.indexes[0]]), step.number)


def _strict_or_none(src: str, dest: str) -> SubjectTransform | None:
    try:
        return SubjectTransform.parse(src, dest, strict=True)
    except TransformError:
        return None


def transform_tokenize(subject: str) -> str:
    """``*`` tokens numbered as ``$1``, ``$2``... in order: a subject written as a transform destination."""
    count = 0
    tokens = []
    for token in subject.split("."):
        if token == PWC:
            count += 1
            token = f"${count}"
        tokens.append(token)
    return ".".join(tokens)


def transform_untokenize(subject: str) -> tuple[str, list[str]]:
    """A destination's wildcard references as ``*`` tokens, and the references in order."""
    references: list[str] = []
    tokens = []
    for token in subject.split("."):
        args = function_args(WILDCARD, token)
        if (len(token) > 1 and token[0] == "$" and "1" <= token[1] <= "9") or (
            args is not None and len(args) == 1 and args[0] != ""
        ):
            references.append(token)
            token = PWC
        tokens.append(token)
    return ".".join(tokens), references


Rename = Callable[[str], str]


def _fixed(subject: str) -> Rename:
    return lambda _subject: subject


def _same(subject: str) -> str:
    return subject


def stream_import_renames(subject: str, local: str) -> tuple[Rename, Rename]:
    """A stream import's renames, exported -> ``local`` and back (nats-server's ``AddStreamImport``).

    Without wildcards the import is one subject each way; with the same
    subject on both sides it keeps the published one; otherwise a strict
    transform, its ``*`` tokens taken in order, and its :meth:`~SubjectTransform.reverse`.
    Raises :class:`TransformError` for a destination an import may not use.
    """
    if PWC not in subject.split(".") and FWC not in subject.split("."):
        return _fixed(local), _fixed(subject)
    if local == subject:
        return _same, _same
    forward = SubjectTransform.parse(subject, transform_tokenize(local), strict=True)
    assert forward is not None  # a non-empty destination
    back = forward.reverse()
    return forward.transform, back.transform if back is not None else _fixed(subject)


def service_import_rename(local: str, subject: str) -> Rename:
    """How a request on ``local`` (or a subject matching it) is renamed to the exported ``subject``.

    nats-server's ``addServiceImport``: a strict transform built the other
    way round (so ``$n`` may appear only in ``local``) and reversed.
    """
    if PWC not in subject.split(".") and FWC not in subject.split("."):
        return _fixed(subject)
    if local == subject:
        return _same
    built = SubjectTransform.parse(transform_untokenize(subject)[0], transform_tokenize(local), strict=True)
    back = built.reverse() if built is not None else None
    return back.transform if back is not None else _fixed(subject)


def _subset_match(tokens: list[str], source_tokens: list[str]) -> bool:
    """A literal subject's tokens against a filter's (``isSubsetMatch``)."""
    for i, filter_token in enumerate(source_tokens):
        if i >= len(tokens):
            return False
        if filter_token == FWC:
            return True
        if filter_token != PWC and filter_token != tokens[i]:
            return False
    return len(tokens) == len(source_tokens)


def validate_mapping(src: str, dest: str) -> None:
    """``ValidateMapping``: the destination's tokens, then the transform itself; raises :class:`TransformError`."""
    if not dest:
        return
    after_fwc = False
    for token in dest.split("."):
        if not token or after_fwc:
            raise TransformError.in_token(INVALID_TRANSFORM, token)
        if is_mustache(token):
            if not any(pattern.search(token) for pattern in KNOWN_FUNCTIONS):
                raise TransformError.in_token(UNKNOWN_FUNCTION, token)
            continue
        if token == FWC:
            after_fwc = True
        elif any(ch in token for ch in BLANKS):
            raise TransformError(INVALID_TRANSFORM)
    SubjectTransform.parse(src, dest)
