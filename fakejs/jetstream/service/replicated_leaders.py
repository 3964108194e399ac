"""Leader step-downs in a JetStream replicated across servers: whom a stream's or consumer's leader hands over to.

nats-server's ``getStepDownPreferredPlacement``: a request with no
``placement`` lets the group's Raft pick (the most up-to-date voter here); a
``placement.preferred`` server must be a member of the group and not the
leader itself (10005, ``preferred server "n2" is already leader`` / ``not
known``); a placement naming a cluster or tags picks one of the other members
that are not offline and match them all (``no replacement peer connected``
when none does).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fakejs.gocompat.gojson import Field, Struct
from fakejs.jetstream.config.stream import PLACEMENT
from fakejs.jetstream.errors import ApiError, api_error

if TYPE_CHECKING:
    from fakejs.jetstream.cluster import MetaState
    from fakejs.jetstream.replication import ReplicatedGroup

__all__ = ["STEPDOWN_REQUEST", "step_down_target"]

STEPDOWN_REQUEST = Struct("JSApiLeaderStepdownRequest", (Field("placement", PLACEMENT),))


def _no_peers(text: str) -> ApiError:
    return api_error("JSClusterNoPeersErrF", err=text)


def step_down_target(
    state: MetaState, group: ReplicatedGroup, placement: Mapping[str, Any] | None, rng: random.Random
) -> str | None:
    """The peer id the leader of ``group`` hands over to (``None``: its Raft picks), or the request's 10005."""
    if placement is None:
        return None
    members = sorted(group.members)
    preferred = str(placement.get("preferred") or "")
    if preferred:
        found = next((peer for peer in members if _name(state, peer) == preferred), None)
        if found == group.peer:
            raise _no_peers(f'preferred server "{preferred}" is already leader')
        if found is None:
            raise _no_peers(f'preferred server "{preferred}" not known')
        return found
    cluster = str(placement.get("cluster") or "")
    tags = [str(tag) for tag in placement.get("tags") or ()]
    possible = []
    for peer in members:
        record = state.peers.get(peer)
        if peer == group.peer or record is None or record.offline:
            continue
        if (cluster and record.cluster != cluster) or not all(tag in record.tags for tag in tags):
            continue
        possible.append(peer)
    if not possible:
        raise _no_peers("no replacement peer connected")
    return rng.choice(possible)


def _name(state: MetaState, peer: str) -> str:
    record = state.peers.get(peer)
    return record.name if record is not None else ""
