"""Server-wide message counters."""

from __future__ import annotations


class Stats:
    """Message and byte counters, as /varz reports them."""

    __slots__ = ("in_bytes", "in_msgs", "out_bytes", "out_msgs", "slow_consumers")

    def __init__(self) -> None:
        self.in_msgs = 0
        self.out_msgs = 0
        self.in_bytes = 0
        self.out_bytes = 0
        self.slow_consumers = 0
