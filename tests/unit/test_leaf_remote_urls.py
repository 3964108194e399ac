"""The order a leaf remote dials its URLs in: shuffled once with the server's seeded generator, or as given."""

from __future__ import annotations

import random

from fakejs.core.accounts import Accounts
from fakejs.core.clock import SystemClock
from fakejs.core.leaf.leafs import Leafs
from fakejs.core.leaf_config import LeafConfig, LeafRemote

URLS = [f"nats://127.0.0.1:{port}" for port in range(7001, 7011)]


def _order(no_randomize: bool, seed: int) -> list[str]:
    config = LeafConfig(remotes=[LeafRemote(urls=list(URLS), no_randomize=no_randomize)])
    accounts = Accounts(random.Random(0), lambda *failure: None)
    leafs = Leafs(config, ("ID", "name"), accounts, SystemClock(), random.Random(seed))
    (remote,) = leafs.remotes
    return remote.urls


def test_no_randomize_dials_the_urls_as_given() -> None:
    assert _order(True, seed=1) == URLS


def test_the_urls_are_shuffled_once_the_same_way_for_a_seed() -> None:
    shuffled = _order(False, seed=1)
    assert sorted(shuffled) == sorted(URLS) and shuffled != URLS
    assert _order(False, seed=1) == shuffled
