"""Account subject mappings: a client's message published on one subject is routed as another.

nats-server's ``AddWeightedMappings`` and ``selectMappedSubject``: each
mapping has a source (literal or with wildcards) and weighted destinations,
every one a subject transform (:mod:`fakejs.core.subject_transform`, so
``$n``, ``partition``, ``split``... work as on the real server).  Weights
are percentages; what they leave below 100 goes to the source subject
itself, unless the source is listed as a destination (then the rest is
dropped: the message is routed on the empty subject, as nats-server does).
Destinations scoped to a cluster apply only on a server of that cluster;
a standalone server (every fakejs server) uses the unscoped ones.

Mappings apply where nats-server applies them: to messages clients
publish, before their publish permissions are checked (so permissions see
the mapped subject), and to requests a service import hands to the
exporting account.  Messages the server publishes itself are not mapped.
Without mappings an account pays nothing; with them, one pass over the
mappings per client message.
"""

from __future__ import annotations

import random

from fakejs.core.account_config import MapDestination, Mapping
from fakejs.core.subject_transform import SubjectTransform, transform_tokenize, validate_mapping
from fakejs.core.subjects import is_valid_subject, matches
from fakejs.gocompat.goflag import go_quote

__all__ = ["MappingError", "SubjectMappings", "check_mapping"]


class MappingError(ValueError):
    """A mapping nats-server refuses; ``str()`` is its ``AddWeightedMappings`` error text."""


class _Choice:
    """One weighted destination (a plain class: a dataclass costs its import, and every start imports this module)."""

    __slots__ = ("ceiling", "transform")

    def __init__(self, transform: SubjectTransform, ceiling: int) -> None:
        self.transform = transform
        self.ceiling = ceiling  # cumulative weight: chosen when the draw (0..99) is below it


def _has_wildcard(subject: str) -> bool:
    return any(token in ("*", ">") for token in subject.split("."))


def _transform(source: str, destination: str, rng: random.Random | None) -> SubjectTransform:
    transform = SubjectTransform.parse(source, destination, rng=rng)
    if transform is None:  # an empty destination: nats-server keeps the subject
        transform = SubjectTransform.parse(source, transform_tokenize(source) if _has_wildcard(source) else source)
        assert transform is not None
    return transform


def _choices(mapping: Mapping, cluster: str, rng: random.Random | None) -> list[_Choice]:
    """nats-server's ``processDestinations`` for the destinations that apply here (checked already)."""
    source = mapping.source
    scoped = [d for d in mapping.destinations if d.cluster == cluster and cluster]
    picked = scoped or [d for d in mapping.destinations if not d.cluster]
    weighted = [(d.weight, _transform(source, d.subject, rng)) for d in picked]
    total = sum(weight for weight, _ in weighted)
    listed = any(d.subject == source for d in mapping.destinations)
    if total != 100 and not listed:
        itself = transform_tokenize(source) if _has_wildcard(source) else source
        weighted.append((100 - total if weighted else 100, _transform(source, itself, rng)))
    weighted.sort(key=lambda pair: pair[0])
    choices: list[_Choice] = []
    ceiling = 0
    for weight, transform in weighted:
        ceiling += weight
        choices.append(_Choice(transform, ceiling))
    return choices


def check_mapping(source: str, destinations: list[MapDestination]) -> None:
    """``AddWeightedMappings``'s checks, in its order; raises :class:`MappingError` with its text."""
    if not is_valid_subject(source):
        raise MappingError("invalid subject")
    seen: set[str] = set()
    totals: dict[str, int] = {}
    for dest in destinations:
        if dest.subject in seen:
            raise MappingError(f"duplicate entry for {go_quote(dest.subject)}")
        seen.add(dest.subject)
        if dest.weight > 100:
            raise MappingError("individual weights need to be <= 100")
        totals[dest.cluster] = totals.get(dest.cluster, 0) + dest.weight
        if totals[dest.cluster] > 100:
            raise MappingError("total weight needs to be <= 100")
        try:
            validate_mapping(source, dest.subject)
            SubjectTransform.parse(source, dest.subject)
        except ValueError as exc:
            raise MappingError(str(exc)) from None


class SubjectMappings:
    """One account's mappings, ready to route: :meth:`select` gives a subject's mapped subject.

    ``rng`` is the server's seeded generator: it draws the weighted choice
    and ``{{random}}``; ``cluster`` is the server's cluster name (empty when
    standalone).  A later mapping of the same source replaces an earlier one.
    """

    def __init__(self, mappings: tuple[Mapping, ...], rng: random.Random, cluster: str = "") -> None:
        self._rng = rng
        by_source: dict[str, tuple[bool, list[_Choice]]] = {}
        for mapping in mappings:
            by_source[mapping.source] = (_has_wildcard(mapping.source), _choices(mapping, cluster, rng))
        self._mappings = list(by_source.items())

    def __bool__(self) -> bool:
        return bool(self._mappings)

    @property
    def sources(self) -> list[str]:
        """Each mapping's source (nats-server tells a leaf connection of each)."""
        return [source for source, _ in self._mappings]

    def select(self, subject: str) -> str | None:
        """The subject ``subject`` is routed as, or ``None`` when no mapping covers it ("" drops it)."""
        for source, (wildcard, choices) in self._mappings:
            if (source == subject) if not wildcard else matches(source, subject):
                return self._chosen(choices, subject)
        return None

    def _chosen(self, choices: list[_Choice], subject: str) -> str:
        if len(choices) == 1 and choices[0].ceiling == 100:
            return choices[0].transform.transform(subject)
        draw = self._rng.randrange(100)
        for choice in choices:
            if draw < choice.ceiling:
                return choice.transform.transform(subject)
        return ""
