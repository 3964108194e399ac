"""A node's timings and batch sizes, with nats-server's defaults (``server/raft.go``)."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RaftSettings:
    """Timings in seconds and append limits.  Defaults mirror nats-server: an election timeout drawn in
    [4 s, 9 s) (``minElectionTimeout``, ``maxElectionTimeout``), a heartbeat each second (``hbInterval``), and a
    leader that heard from no quorum for 10 s steps down (``lostQuorumInterval``); an append carries at most
    4096 entries or 256 KiB, as its proposal batches do.  A node asked to campaign soon (a group just
    bootstrapped, a new group's preferred leader) does so after a campaign timeout drawn in [100 ms, 800 ms)
    (``minCampaignTimeout``, ``maxCampaignTimeout``), or after half the minimum when asked to campaign at once
    (``CampaignImmediately``)."""

    election_timeout_min: float = 4.0
    election_timeout_max: float = 9.0
    heartbeat_interval: float = 1.0
    lost_quorum_interval: float = 10.0
    transfer_timeout: float = 4.0
    max_append_entries: int = 4096
    max_append_bytes: int = 256 * 1024
    max_inflight_appends: int = 16
    campaign_timeout_min: float = 0.1
    campaign_timeout_max: float = 0.8

    def __post_init__(self) -> None:
        if not 0 < self.election_timeout_min < self.election_timeout_max:
            raise ValueError("the election timeout needs 0 < minimum < maximum")
        if not 0 < self.campaign_timeout_min < self.campaign_timeout_max:
            raise ValueError("the campaign timeout needs 0 < minimum < maximum")
        if not 0 < self.heartbeat_interval < self.election_timeout_min:
            raise ValueError("the heartbeat must come more often than the shortest election timeout")
        if self.lost_quorum_interval <= 0 or self.transfer_timeout <= 0:
            raise ValueError("the lost-quorum interval and the transfer timeout must be positive")
        if self.max_append_entries < 1 or self.max_append_bytes < 1 or self.max_inflight_appends < 1:
            raise ValueError("append limits must be at least 1")

    def election_timeout(self, rng: random.Random) -> float:
        """A timeout drawn uniformly in [minimum, maximum) (nats-server's ``randElectionTimeout``)."""
        return self.election_timeout_min + rng.random() * (self.election_timeout_max - self.election_timeout_min)

    def campaign_timeout(self, rng: random.Random, immediately: bool = False) -> float:
        """How long before a node asked to campaign does so (nats-server's ``randCampaignTimeout``, or half
        ``minCampaignTimeout`` when ``immediately``)."""
        if immediately:
            return self.campaign_timeout_min / 2
        return self.campaign_timeout_min + rng.random() * (self.campaign_timeout_max - self.campaign_timeout_min)
