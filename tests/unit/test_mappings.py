"""Account subject mappings: choosing a destination (nats-server's ``selectMappedSubject``)."""

from __future__ import annotations

import random

import pytest

from fakejs.core.account_config import MapDestination, Mapping
from fakejs.core.mappings import MappingError, SubjectMappings, check_mapping


def _mappings(*mappings: Mapping, cluster: str = "") -> SubjectMappings:
    return SubjectMappings(mappings, random.Random(1), cluster)


def test_unmapped_subjects_are_none() -> None:
    mappings = _mappings(Mapping("a.*", (MapDestination("b.$1"),)))
    assert (mappings.select("a.x"), mappings.select("a.x.y"), mappings.select("c")) == ("b.x", None, None)


def test_the_source_listed_drops_the_rest() -> None:
    # The source named as a destination: what the weights leave is dropped (the empty subject).
    mappings = _mappings(Mapping("s", (MapDestination("s", 10),)))
    seen = {mappings.select("s") for _ in range(300)}
    assert seen == {"s", ""}


def test_the_rest_goes_to_the_subject_itself() -> None:
    mappings = _mappings(Mapping("s.>", (MapDestination("t.>", 50),)))
    assert {mappings.select("s.x.y") for _ in range(300)} == {"t.x.y", "s.x.y"}


def test_cluster_scoped_destinations() -> None:
    mapping = Mapping("c", (MapDestination("here", 100), MapDestination("there", 100, "east")))
    assert _mappings(mapping).select("c") == "here"
    assert _mappings(mapping, cluster="east").select("c") == "there"
    only_scoped = Mapping("c", (MapDestination("there", 100, "east"),))
    assert _mappings(only_scoped).select("c") == "c"


def test_a_later_mapping_of_the_same_source_replaces_it() -> None:
    mappings = _mappings(Mapping("a", (MapDestination("b"),)), Mapping("a", (MapDestination("c"),)))
    assert mappings.select("a") == "c"


@pytest.mark.parametrize(
    ("source", "destinations", "text"),
    [
        ("a..b", [], "invalid subject"),
        ("a", [MapDestination("b", 60), MapDestination("c", 50)], "total weight needs to be <= 100"),
        ("a", [MapDestination("b", 60, "x"), MapDestination("c", 50)], ""),
        ("a", [MapDestination("b", 10), MapDestination("b", 10, "x")], 'duplicate entry for "b"'),
        ("a.*", [MapDestination("b.$2")], "invalid mapping destination: wildcard index out of range in $2: [2]"),
    ],
)
def test_check_mapping(source: str, destinations: list[MapDestination], text: str) -> None:
    if not text:
        check_mapping(source, destinations)
        return
    with pytest.raises(MappingError) as caught:
        check_mapping(source, destinations)
    assert str(caught.value) == text
