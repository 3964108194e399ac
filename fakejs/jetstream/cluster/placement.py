"""Where a replicated stream or consumer goes: nats-server's placement rules, one implementation.

The meta group's leader (:mod:`fakejs.jetstream.cluster.leader`) calls these
functions, so a stream is placed by nats-server's rules:

* a stream takes ``num_replicas`` servers (at least one) among the
  candidates: running servers of the wanted cluster (``placement.cluster``,
  else the caller's own) that carry every ``placement.tags`` entry; too few
  is nats-server's 10005 "no suitable peers for placement", naming for each
  server of the cluster left out the first wanted tag it lacks;
* a consumer takes its stream's servers, or as many of them as it asks for;
* the servers are drawn from the caller's seeded generator and listed sorted,
  then the group's id is drawn: 8 characters of base 62, named
  ``S-R3F-<id>`` (kind, replicas, ``F`` file or ``M`` memory storage).

A candidate is named by whatever the caller lists its servers by (the meta
group by peer ids).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fakejs.gocompat import ids

__all__ = [
    "GROUP_ID_LENGTH",
    "Candidate",
    "PlacementError",
    "group_name",
    "new_group_id",
    "place_consumer_replicas",
    "place_stream_replicas",
    "storage_letter",
]

GROUP_ID_LENGTH = 8
NO_PEERS = "no suitable peers for placement"


class PlacementError(Exception):
    """No set of servers can hold the asset (nats-server's 10005 with its text in ``description``)."""

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


@dataclass(frozen=True)
class Candidate:
    """A server that may hold a replica: its name (as the caller names servers), cluster and tags."""

    name: str
    cluster: str
    tags: tuple[str, ...] = ()


def storage_letter(storage: str) -> str:
    """``M`` for memory storage, else ``F`` (a group name's storage letter)."""
    return "M" if storage == "memory" else "F"


def new_group_id(rng: random.Random) -> str:
    """A group's id, drawn from ``rng`` after its servers."""
    return ids.token(rng, ids.BASE62, GROUP_ID_LENGTH)


def group_name(kind: str, replicas: int, storage: str, group_id: str) -> str:
    """nats-server's group name: ``S-R3F-<id>`` (``kind`` ``S`` or ``C``, ``storage`` a letter)."""
    return f"{kind}-R{replicas}{storage}-{group_id}"


def place_stream_replicas(
    config: Mapping[str, Any], candidates: Sequence[Candidate], own_cluster: str, rng: random.Random
) -> list[str]:
    """The sorted names of the servers a new stream of ``config`` goes to; raises :class:`PlacementError`.

    ``candidates`` are the running servers, in the caller's order (the draw depends on it);
    ``own_cluster`` is the cluster a stream without ``placement.cluster`` goes to.
    """
    replicas = max(int(config.get("num_replicas") or 1), 1)
    placement = config.get("placement") or {}
    wanted_cluster = placement.get("cluster") or own_cluster
    tags = list(placement.get("tags") or [])
    in_cluster = [candidate for candidate in candidates if candidate.cluster == wanted_cluster]
    if not in_cluster:
        raise PlacementError(NO_PEERS)
    matching = [candidate.name for candidate in in_cluster if all(tag in candidate.tags for tag in tags)]
    if len(matching) < replicas:
        raise PlacementError(_unmatched(in_cluster, tags))
    return sorted(rng.sample(matching, replicas))


def _unmatched(candidates: Sequence[Candidate], tags: Sequence[str]) -> str:
    """nats-server's text naming, for each server left out, the first wanted tag it lacks."""
    missing: list[str] = []
    for candidate in candidates:
        lacking = next((tag for tag in tags if tag not in candidate.tags), None)
        if lacking is not None and lacking not in missing:
            missing.append(lacking)
    if not missing:
        return NO_PEERS
    return NO_PEERS + ", tags not matched [" + ", ".join(f"'{tag}'" for tag in missing) + "]"


def place_consumer_replicas(stream_replicas: Sequence[str], replicas: int, rng: random.Random) -> list[str]:
    """A consumer's servers: its stream's (``replicas`` of them when asked, 0: all), sorted."""
    count = min(replicas or len(stream_replicas), len(stream_replicas))
    return sorted(rng.sample(list(stream_replicas), count))
