"""The other servers of a cluster as one server sees them, and how accounts spread over route pools."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from fakejs.core.cluster.link import RouteLink

__all__ = ["Peer", "join_host_port", "pool_index"]


def pool_index(pool_size: int, account: str) -> int:
    """nats-server's ``computeRoutePoolIdx``: the pool connection an account travels on (FNV-1a 32)."""
    if pool_size <= 1:
        return 0
    value = 0x811C9DC5
    for byte in account.encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value % pool_size


@dataclass
class Peer:
    """Another server of the cluster and the connections to it (``links[i]``: pool slot ``i``)."""

    server_id: str
    name: str
    links: list[RouteLink | None]
    no_pool: bool
    client_urls: list[str] = field(default_factory=list)

    def live_links(self) -> Iterator[RouteLink]:
        return (link for link in self.links if link is not None)

    def link_for(self, account: str) -> RouteLink | None:
        if self.no_pool:
            return self.links[0]
        return self.links[pool_index(len(self.links), account)]

    @property
    def full(self) -> bool:
        """Every pool slot has its connection."""
        return all(link is not None for link in self.links)


def join_host_port(host: str, port: int) -> str:
    """Go's ``net.JoinHostPort``: an IPv6 host in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
