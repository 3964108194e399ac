"""A hub and a leaf server started from configuration text, each of either kind (nats-server or fakejs)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import nats
import pytest
from nats.aio.client import Client

from fakejs.targets.cluster import free_port
from tests.harness.cluster import Inbox, interest_routed, requests_answered
from tests.harness.configured import ConfiguredFake, ConfiguredReal
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON, Settings, Target, stop_target
from tests.harness.wait import WAIT, eventually


@dataclass(frozen=True)
class LeafSetup:
    """What the pair adds to the harness's configuration.

    ``hub_extra``: more of the hub's ``leafnodes {}`` block; ``url_auth``:
    ``user:pass@`` in the leaf's URL; ``remote_extra``: more of the leaf's
    remote (``account: X``, ``deny_imports: [...]``); ``hub_top``/``leaf_top``:
    top-level text of each (``accounts {}``); ``monitor``: an HTTP port on both;
    ``jetstream``: JetStream on both (its leaf subjects add to a link's lists); ``scheme``: the
    remote URL's (``tls`` for a leaf that starts TLS whatever the hub says).
    """

    hub_extra: str = ""
    url_auth: str = ""
    remote_extra: str = ""
    hub_top: str = ""
    leaf_top: str = ""
    monitor: bool = False
    jetstream: bool = True
    scheme: str = "nats"


@asynccontextmanager
async def hub_and_leaf(
    hub_kind: str,
    leaf_kind: str,
    tmp_path: Path,
    hub_extra: str = "",
    url_auth: str = "",
    domains: tuple[str, str] = ("", ""),
    hub_top: str = "",
    setup: LeafSetup | None = None,
) -> AsyncIterator[tuple[Target, Target]]:
    """A hub listening for leaf connections and a leaf dialling it (``url_auth``: ``user:pass@`` in its URL).

    ``domains``: the hub's and the leaf's ``jetstream { domain }`` (empty: none); ``hub_top``: more of
    the hub's configuration, outside the ``leafnodes`` block; ``setup``: all the pair adds (in place
    of ``hub_extra``, ``url_auth`` and ``hub_top``).
    """
    if "real" in (hub_kind, leaf_kind) and REAL_BINARY is None:
        pytest.skip(REAL_MISSING_REASON)
    setup = setup or LeafSetup(hub_extra=hub_extra, url_auth=url_auth, hub_top=hub_top)
    port = free_port()
    hub_config = f"{setup.hub_top}\nleafnodes {{ port: {port}\n{setup.hub_extra} }}\n"
    remote = f'url: "{setup.scheme}://{setup.url_auth}127.0.0.1:{port}"\n{setup.remote_extra}'
    leaf_config = f'{setup.leaf_top}\nleafnodes {{ reconnect: "100ms", remotes [ {{ {remote} }} ] }}\n'
    base = Settings(monitor=setup.monitor, jetstream=setup.jetstream)
    started: list[Target] = []
    try:
        sides = ((hub_kind, hub_config, "hub", domains[0]), (leaf_kind, leaf_config, "leaf", domains[1]))
        for kind, config, name, domain in sides:
            store = tmp_path / name
            store.mkdir()
            settings = replace(base, jetstream_domain=domain)
            target: Target = (ConfiguredFake if kind == "fake" else ConfiguredReal)(config, str(store), settings)
            await target.start()
            started.append(target)
        yield started[0], started[1]
    finally:
        for target in started:
            await stop_target(target)


# Two accounts on each side; the leaf binds its LA to the hub's A (the URL's user a is A's).
HUB_ACCOUNTS = "accounts { A { users [ {user: a, password: a} ] }, B { users [ {user: b, password: b} ] } }"
LEAF_ACCOUNTS = "accounts { LA { users [ {user: la, password: la} ] }, LB { users [ {user: lb, password: lb} ] } }"
BOUND = LeafSetup(url_auth="a:a@", remote_extra="account: LA", hub_top=HUB_ACCOUNTS, leaf_top=LEAF_ACCOUNTS)


async def stays_within(publisher: Client, receiver: Client, outsiders: list[Client], subject: str) -> None:
    """A message from ``publisher`` reaches ``receiver`` and none of ``outsiders`` (all subscribed to it).

    An outsider would have been handed the message when the receiver was, so
    once the receiver has it a round trip on each outsider's connection
    brings anything it was wrongly sent.
    """
    inbox, leaked = Inbox(), Inbox()
    await receiver.subscribe(subject, cb=inbox.add)
    for outsider in outsiders:
        await outsider.subscribe(subject, cb=leaked.add)
        await outsider.flush()
    await interest_routed(publisher, receiver)
    await publisher.publish(subject, b"inside")
    await publisher.flush()
    await eventually(lambda: asyncio.sleep(0, inbox.payloads), what=f"{subject} at the receiver")
    for outsider in outsiders:
        await outsider.flush()
    assert inbox.payloads == [b"inside"]
    assert leaked.payloads == []


async def bound_accounts_isolated(hub: Target, leaf: Target) -> None:
    """Traffic between the hub's A and the leaf's LA stays there: B and LB see none of it, and one another's neither."""
    hub_a = await nats.connect(hub.url, user="a", password="a")
    hub_b = await nats.connect(hub.url, user="b", password="b")
    leaf_la = await nats.connect(leaf.url, user="la", password="la")
    leaf_lb = await nats.connect(leaf.url, user="lb", password="lb")
    try:
        await stays_within(hub_a, leaf_la, [hub_b, leaf_lb], f"iso.down.{secrets.token_hex(4)}")
        await stays_within(leaf_la, hub_a, [hub_b, leaf_lb], f"iso.up.{secrets.token_hex(4)}")
        service = f"svc.{secrets.token_hex(4)}"
        await requests_answered(leaf_la, hub_a, service)
        with pytest.raises(nats.errors.NoRespondersError):
            await leaf_lb.request(service, b"", timeout=WAIT)
        # The unbound accounts have no way across: B's subscriber is never LB's responder.
        await hub_b.subscribe("iso.b")
        await hub_b.flush()
        with pytest.raises(nats.errors.NoRespondersError):
            await leaf_lb.request("iso.b", b"", timeout=WAIT)
    finally:
        for nc in (hub_a, hub_b, leaf_la, leaf_lb):
            await nc.close()


# A hub user who may not publish on np.> nor subscribe to ns.>.
HUB_USER = (
    "accounts { A { users [ {user: a, password: a, permissions: "
    '{ publish: { deny: "np.>" }, subscribe: { deny: "ns.>" } } } ] } }'
)


async def only_allowed_arrive(publisher: Client, subscriber: Client, denied: str, allowed: str) -> None:
    """``denied`` and ``allowed`` published in that order (one link, in order): only ``allowed`` arrives.

    The subscriber listens to both subjects, and to a wildcard that takes both.
    """
    inbox = Inbox()
    for subject in (denied, allowed, "*." + allowed.split(".", 1)[1]):
        await subscriber.subscribe(subject, cb=inbox.add)
    await interest_routed(publisher, subscriber)
    await publisher.publish(denied, b"denied")
    await publisher.publish(allowed, b"allowed")
    await publisher.flush()
    await eventually(lambda: asyncio.sleep(0, inbox.payloads), lambda got: len(got) >= 2, what="the allowed message")
    await subscriber.flush()
    assert inbox.payloads == [b"allowed", b"allowed"]
