"""The ``leafnodes {}`` block as fakejs serves it: the leaf port and the remotes this server dials."""

from __future__ import annotations

from dataclasses import dataclass, field

from fakejs.core.transport_config import TLSConfig

__all__ = ["DEFAULT_LEAF_RECONNECT", "LeafConfig", "LeafRemote", "LeafUser"]

# nats-server's DEFAULT_LEAF_NODE_RECONNECT: how long a leaf waits before dialling its hub again.
DEFAULT_LEAF_RECONNECT = 1.0


@dataclass
class LeafRemote:
    """One of ``leafnodes { remotes }``: the hub's URLs, the local account bound, whether it is the hub.

    ``deny_imports`` are subjects the leaf neither asks the hub for nor takes from it,
    ``deny_exports`` subjects it does not send to the hub.
    """

    urls: list[str] = field(default_factory=list)
    account: str = ""
    hub: bool = False
    # Dial the URLs in the order given (nats-server shuffles them once, when the remote is set up).
    no_randomize: bool = False
    deny_imports: list[str] = field(default_factory=list)
    deny_exports: list[str] = field(default_factory=list)
    # How the leaf logs in besides the URL's user: a ``.creds`` file (user JWT and seed) or a user nkey's seed.
    credentials: str = ""
    nkey: str = ""
    # ``tls {}``: the client side of the TLS the hub asks for (or the leaf wants: also a ``tls://`` URL).
    tls: TLSConfig | None = None

    @property
    def tls_wanted(self) -> bool:
        """The leaf starts TLS whatever the hub's INFO says: a ``tls {}`` block or a ``tls://`` URL."""
        return self.tls is not None or any(url.lower().startswith("tls://") for url in self.urls)


@dataclass(frozen=True)
class LeafUser:
    """One of ``leafnodes { authorization { users } }``: a login and the account it binds (empty: ``$G``)."""

    name: str
    password: str = ""
    account: str = ""


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
    account: str = ""  # the account the single user binds (and a leaf logged in without credentials)
    nkey: str = ""  # a user nkey the leaf logs in with (binding ``account``), when no ``user`` is set
    users: list[LeafUser] = field(default_factory=list)
    remotes: list[LeafRemote] = field(default_factory=list)
    reconnect: float = DEFAULT_LEAF_RECONNECT
    # ``tls {}``: the leaf port's TLS (INFO in plain text, then the handshake; leaves must start it).
    tls: TLSConfig | None = None

    @property
    def auth_required(self) -> bool:
        return bool(self.username or self.nkey or self.users)
