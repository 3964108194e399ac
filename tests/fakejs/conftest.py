"""Fixtures of the test kit's tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest

from tests.fakejs.clients import Link
from tests.harness.replicated import all_joined, meta_leader, replicated_cluster, wait

if TYPE_CHECKING:
    from fakejs.server.local_cluster import Cluster


@pytest.fixture
async def link() -> AsyncIterator[Link]:
    handle = Link()
    try:
        yield handle
    finally:
        await handle.close()


@pytest.fixture
async def cluster() -> AsyncIterator[Cluster]:
    """Three routed in-process servers running JetStream replicated across them, once every one has joined
    the meta group and it has a leader; none logged an error when the test is done (modules starting another
    cluster define their own)."""
    async with replicated_cluster(3) as started:
        await wait(lambda: meta_leader(started) is not None and all_joined(started))
        yield started
        assert started.errors == []
