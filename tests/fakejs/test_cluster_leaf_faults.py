"""Leaf links of a cluster's nodes dropped and restored on cue: ``drop_leafs``/``restore_leafs`` on the cluster handles.

Each node runs its own ``drop_leafs`` control action (see
``tests/fakejs/test_leaf_faults.py`` for what clients see); the cluster
handles pick the node, or every running node that has leaf connections.
A real cluster cannot cut them on cue: there the methods name the feature.
"""

from __future__ import annotations

import pytest

from fakejs.core.leaf_config import LeafConfig, LeafRemote
from fakejs.targets import FakeJS, FakeOnly
from fakejs.targets.cluster import RealCluster
from fakejs.targets.fake_cluster import FakeCluster
from fakejs.testkit.control import ControlError


def test_a_cluster_without_leaf_connections_names_what_is_missing() -> None:
    cluster = FakeCluster(size=2).start()
    try:
        with pytest.raises(ControlError, match=r"no running node of this cluster has leaf connections"):
            cluster.drop_leafs()
        with pytest.raises(ControlError, match=r"this server has no leaf connections"):
            cluster.drop_leafs("n2", until_restored=True)
        assert cluster.restore_leafs() == {}  # nothing was kept down
    finally:
        cluster.stop()


def test_a_real_cluster_names_the_fakejs_feature() -> None:
    cluster = RealCluster(2)  # never started: the methods refuse before reaching a process
    with pytest.raises(FakeOnly, match=r"drop_leafs\(\) is a fakejs feature"):
        cluster.drop_leafs(0)
    with pytest.raises(FakeOnly, match=r"restore_leafs\(\) is a fakejs feature"):
        cluster.restore_leafs()


async def test_a_node_s_leaf_link_stays_down_until_restored() -> None:
    hub = FakeJS(config="port: -1\nserver_name: hub\nleafnodes { port: -1 }").start()
    remote = LeafRemote(urls=[hub.leaf_url])
    cluster = FakeCluster(size=2, leafnodes=LeafConfig(remotes=[remote], reconnect=0.05)).start()
    try:

        def remotes() -> list[str]:
            return sorted(link["remote"] for link in hub.state()["leafs"])

        await hub.wait_for(lambda: remotes() == ["n1", "n2"])
        dropped = cluster.drop_leafs("n1", until_restored=True)
        assert list(dropped) == ["n1"] and len(dropped["n1"]["dropped"]) == 1
        fired = lambda: cluster.call(lambda: cluster.server(0).control.state()["faults"][0]["fired"])  # noqa: E731
        await hub.wait_for(lambda: fired() >= 1)  # n1 dialled again, and its link was dropped again
        await hub.wait_for(lambda: remotes() == ["n2"])  # the hub sees the dropped link go (after a moment)

        assert list(cluster.restore_leafs()) == ["n1", "n2"]
        await hub.wait_for(lambda: remotes() == ["n1", "n2"])

        everyone = cluster.drop_leafs()  # every node's links, once
        assert sorted(everyone) == ["n1", "n2"]
        await hub.wait_for(lambda: remotes() == ["n1", "n2"])  # not kept down: they dial again
    finally:
        cluster.stop()
        hub.stop()
