"""The ``leafnodes {}`` block as fakejs serves it: the leaf port and the remotes this server dials."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DEFAULT_LEAF_RECONNECT", "LeafConfig", "LeafRemote"]

# nats-server's DEFAULT_LEAF_NODE_RECONNECT: how long a leaf waits before dialling its hub again.
DEFAULT_LEAF_RECONNECT = 1.0


@dataclass
class LeafRemote:
    """One of ``leafnodes { remotes }``: the hub's URLs, the local account bound, whether it is the hub."""

    urls: list[str] = field(default_factory=list)
    account: str = ""
    hub: bool = False


@dataclass
class LeafConfig:
    """``leafnodes {}``: the leaf port (``port`` < 0 or 0: a free one; None: no listener) and the remotes."""

    host: str = ""
    port: int | None = None
    advertise: str = ""
    no_advertise: bool = False
    username: str = ""
    password: str = ""
    auth_timeout: float = 0.0
    remotes: list[LeafRemote] = field(default_factory=list)
    reconnect: float = DEFAULT_LEAF_RECONNECT

    @property
    def auth_required(self) -> bool:
        return bool(self.username)
