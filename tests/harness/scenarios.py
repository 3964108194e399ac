"""The scenarios fakejs ships, by name: every one is loaded and run by a test."""

from __future__ import annotations

SHIPPED = (
    "cluster-leader-stepdown-under-load",  # the cluster-only ones: tests.fakejs.test_cluster_scenarios
    "cluster-node-loss-during-pull",
    "cluster-split-brain-heal",
    "consumer-deleted",
    "disconnect",
    "heartbeats-stop",
    "leadership-change",
    "max-waiting-exceeded",
    "pin-timeout",
    "server-restart",
)
