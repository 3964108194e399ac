"""nats-server's placement rules, as the simulated cluster and the meta leader both apply them."""

from __future__ import annotations

import random

import pytest

from fakejs.jetstream.cluster import (
    Candidate,
    PlacementError,
    group_name,
    new_group_id,
    place_consumer_replicas,
    place_stream_replicas,
)

SERVERS = [
    Candidate("n1", "c1", ("az:1", "ssd")),
    Candidate("n2", "c1", ("az:2",)),
    Candidate("n3", "c1", ("az:3", "ssd")),
    Candidate("x1", "c2", ("az:1",)),
]


def test_a_stream_goes_to_servers_of_its_cluster_with_every_tag() -> None:
    chosen = place_stream_replicas({"num_replicas": 2, "placement": {"tags": ["ssd"]}}, SERVERS, "c1", random.Random(1))
    assert chosen == ["n1", "n3"]
    assert place_stream_replicas({}, SERVERS, "c2", random.Random(1)) == ["x1"]
    assert place_stream_replicas({"placement": {"cluster": "c2"}}, SERVERS, "c1", random.Random(1)) == ["x1"]
    assert len(place_stream_replicas({"num_replicas": 3}, SERVERS, "c1", random.Random(2))) == 3


def test_too_few_servers_is_nats_servers_text() -> None:
    with pytest.raises(PlacementError) as refused:
        place_stream_replicas(
            {"num_replicas": 3, "placement": {"tags": ["ssd", "az:2"]}}, SERVERS, "c1", random.Random(1)
        )
    assert refused.value.description == "no suitable peers for placement, tags not matched ['az:2', 'ssd']"
    with pytest.raises(PlacementError) as refused:
        place_stream_replicas({"placement": {"cluster": "nowhere"}}, SERVERS, "c1", random.Random(1))
    assert refused.value.description == "no suitable peers for placement"
    with pytest.raises(PlacementError) as refused:
        place_stream_replicas({"num_replicas": 4}, SERVERS, "c1", random.Random(1))
    assert refused.value.description == "no suitable peers for placement"


def test_the_draws_repeat_with_the_seed_and_name_the_group() -> None:
    draws = []
    for _ in range(2):
        rng = random.Random("seed")
        peers = place_stream_replicas({"num_replicas": 3}, SERVERS, "c1", rng)
        draws.append((peers, group_name("S", len(peers), "F", new_group_id(rng))))
    assert draws[0] == draws[1]
    assert draws[0][1].startswith("S-R3F-") and len(draws[0][1]) == len("S-R3F-") + 8


def test_a_consumer_takes_its_streams_servers_or_some_of_them() -> None:
    assert place_consumer_replicas(["n3", "n1", "n2"], 0, random.Random(1)) == ["n1", "n2", "n3"]
    one = place_consumer_replicas(["n1", "n2", "n3"], 1, random.Random(1))
    assert len(one) == 1 and one[0] in {"n1", "n2", "n3"}
    assert place_consumer_replicas(["n1"], 3, random.Random(1)) == ["n1"]
