"""A member of a group on a server: what :class:`~fakejs.jetstream.replication.group.ReplicatedGroup` takes,
found on the server's :class:`~fakejs.core.broker.Broker`.

:func:`start_group` gives the member the server's peer id, its system
account's router, its clock and error record, a generator for the node's
election timeouts, and a log store under the server's store directory (see
:mod:`~fakejs.jetstream.replication.stores`).

The generator: a server started with a seed gives each of its members one
seeded from the seed, the group and the peer, so that a group's elections
replay whatever else the server drew from its generator before (route
connections, clients); a server without one draws the member's seed from its
own generator.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
from collections.abc import Iterable
from typing import TYPE_CHECKING

from fakejs.core.options import SYSTEM_ACCOUNT
from fakejs.core.router import Router
from fakejs.jetstream.raft import RaftSettings
from fakejs.jetstream.replication.compaction import Compaction
from fakejs.jetstream.replication.exchange import LocalWire
from fakejs.jetstream.replication.group import ReplicatedGroup
from fakejs.jetstream.replication.state_machine import StateMachine
from fakejs.jetstream.replication.stores import group_directory, open_storage
from fakejs.jetstream.replication.subjects import check_group_name, peer_id
from fakejs.jetstream.replication.transport import Wire

if TYPE_CHECKING:
    from fakejs.core.broker import Broker


def system_account(broker: Broker) -> str:
    """The name of the server's system account."""
    return broker.options.system_account or SYSTEM_ACCOUNT


def system_router(broker: Broker) -> Router:
    """The router of the server's system account, where every group's members listen."""
    account = broker.accounts.get(system_account(broker))
    if account is None:
        raise ValueError(f"server {broker.name} has no system account: its groups would have no wire")
    return account.router


def group_wire(broker: Broker) -> Wire:
    """What carries the server's members' messages: the in-process exchange its cluster shares, else its system
    account's router (the routes)."""
    replicated = broker.options.jetstream_replicated
    exchange = None if replicated is None else replicated.exchange
    return system_router(broker) if exchange is None else exchange.wire(broker.name)


def group_random(broker: Broker, group: str) -> random.Random:
    """The generator of the server's member of ``group`` (see the module docstring)."""
    seed = broker.options.seed
    if seed is None:
        return random.Random(broker.random.getrandbits(64))
    return random.Random(f"{seed}/{group}/{peer_id(broker.name)}")


def configured_compaction(broker: Broker) -> Compaction | None:
    """The compaction the server's ``ReplicatedJetStream`` sets for every group it runs, if it sets one."""
    replicated = broker.options.jetstream_replicated
    compaction = None if replicated is None else replicated.compaction
    return compaction if isinstance(compaction, Compaction) else None


def start_group(
    broker: Broker,
    name: str,
    peers: Iterable[str],
    state_machine: StateMachine,
    *,
    store_dir: str | None,
    settings: RaftSettings | None = None,
    snapshot_every: int = 0,
    compaction: Compaction | None = None,
    fsync: bool | None = None,
    preferred: str = "",
) -> ReplicatedGroup:
    """Start the server's member of the group ``name`` with first voters ``peers`` (peer ids, see
    :func:`~fakejs.jetstream.replication.subjects.peer_id`).  The ``preferred`` leader (a peer id) of a new
    group campaigns at once, as nats-server's does when its term is still 0 (on an in-process exchange, on the
    loop's next turn: by then every member of the group was started, and no clock time passes).

    Its log is kept under ``store_dir`` (the server's store directory), or in memory when that is ``None``;
    each write reaches the operating system before the node is told it is stored (a killed process loses
    none), and is synced to disk as well with ``fsync`` (by default, the server's ``sync_always``, as
    nats-server syncs its Raft log only then or on its sync interval).

    It is compacted as ``compaction`` says (see :mod:`~fakejs.jetstream.replication.compaction`; the server's
    ``ReplicatedJetStream.compaction`` in its place when set), or every ``snapshot_every`` entries.
    """
    if fsync is None:
        fsync = broker.options.jetstream_sync_always
    check_group_name(name)
    directory = None if store_dir is None else group_directory(store_dir, system_account(broker), name)
    group = ReplicatedGroup(
        name,
        peer=peer_id(broker.name),
        peers=peers,
        state_machine=state_machine,
        router=group_wire(broker),
        clock=broker.clock,
        rng=group_random(broker, name),
        storage=open_storage(directory, fsync=fsync),
        settings=settings,
        record_error=broker.record_error,
        snapshot_every=snapshot_every,
        compaction=configured_compaction(broker) or compaction,
    )
    group.start()
    if preferred and preferred == group.peer and group.node.term == 0:
        if isinstance(group.transport.router, LocalWire):  # no clock time: once every member was started
            asyncio.get_running_loop().call_soon(group.campaign)
        else:
            group.campaign_soon(immediately=True)
    return group


def remove_group_log(broker: Broker, store_dir: str, name: str) -> None:
    """The log directory of the server's member of the group ``name`` under ``store_dir``, removed for good (a
    stream or consumer deleted); nothing when it had none (a group kept in memory)."""
    directory = group_directory(store_dir, system_account(broker), name)
    if os.path.isdir(directory):
        shutil.rmtree(directory, ignore_errors=True)
