"""A hub and a leaf server started from configuration text, each of either kind (nats-server or fakejs)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from fakejs.targets.cluster import free_port
from tests.harness.configured import ConfiguredFake, ConfiguredReal
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON, Settings, Target, stop_target


@asynccontextmanager
async def hub_and_leaf(
    hub_kind: str,
    leaf_kind: str,
    tmp_path: Path,
    hub_extra: str = "",
    url_auth: str = "",
    domains: tuple[str, str] = ("", ""),
    hub_top: str = "",
) -> AsyncIterator[tuple[Target, Target]]:
    """A hub listening for leaf connections and a leaf dialling it (``url_auth``: ``user:pass@`` in its URL).

    ``domains``: the hub's and the leaf's ``jetstream { domain }`` (empty: none); ``hub_top``: more of
    the hub's configuration, outside the ``leafnodes`` block.
    """
    if "real" in (hub_kind, leaf_kind) and REAL_BINARY is None:
        pytest.skip(REAL_MISSING_REASON)
    port = free_port()
    hub_config = f"{hub_top}\nleafnodes {{ port: {port}\n{hub_extra} }}\n"
    leaf_config = f'leafnodes {{ reconnect: "100ms", remotes [ {{ url: "nats://{url_auth}127.0.0.1:{port}" }} ] }}\n'
    started: list[Target] = []
    try:
        sides = ((hub_kind, hub_config, "hub", domains[0]), (leaf_kind, leaf_config, "leaf", domains[1]))
        for kind, config, name, domain in sides:
            store = tmp_path / name
            store.mkdir()
            settings = Settings(jetstream_domain=domain)
            target: Target = (ConfiguredFake if kind == "fake" else ConfiguredReal)(config, str(store), settings)
            await target.start()
            started.append(target)
        yield started[0], started[1]
    finally:
        for target in started:
            await stop_target(target)
