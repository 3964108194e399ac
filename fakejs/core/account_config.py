"""What the ``accounts { ... }`` block configures: accounts, their exports, imports and mappings.

Plain frozen data, like :mod:`fakejs.core.users`: the configuration file
(and in-process :class:`~fakejs.core.options.ServerOptions`) builds it, the
broker turns each :class:`AccountConfig` into a running account (its own
subject space, users and JetStream), the router follows the exports and
imports, and JetStream enforces the limits (:mod:`fakejs.core.jetstream_limits`: every
JetStream start reads them, and only a configuration or an account JWT reads the rest).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fakejs.core.jetstream_limits import NO_LIMIT

if TYPE_CHECKING:
    from fakejs.core.jetstream_limits import JetStreamLimits
    from fakejs.core.users import User

# nats-server's reply types for service exports.
SINGLETON = "Singleton"
STREAM = "Stream"
CHUNKED = "Chunked"


@dataclass(frozen=True)
class Export:
    """A stream or service an account offers: to everyone, or to the accounts named."""

    subject: str
    service: bool
    accounts: tuple[str, ...] = ()
    response_type: str = SINGLETON  # service exports only
    response_threshold: float = 0.0  # seconds; 0: nats-server's default


@dataclass(frozen=True)
class Import:
    """A stream or service taken from another account.

    ``local`` is where it appears in the importing account: a stream
    import's ``prefix`` (or ``to``) applied to the exported subject, a
    service import's ``to`` subject the importer publishes requests on;
    empty means the exported subject itself.
    """

    account: str
    subject: str
    service: bool
    local: str = ""
    prefix: str = ""  # stream imports: nats-server's ``prefix``
    # An account JWT's import through an activation token: the token's ``exp`` and ``nbf`` (Unix seconds, 0: unset).
    expires: int = 0
    not_before: int = 0
    # Whether the import ends at ``expires`` once wired: nats-server finds it again by the token's subject,
    # so only when that is the import's own (a stream's exported subject, a service's local one).
    ends_at_expiry: bool = True


@dataclass(frozen=True)
class MapDestination:
    """One destination of a subject mapping: a transform destination, its weight (percent) and cluster."""

    subject: str
    weight: int = 100
    cluster: str = ""


@dataclass(frozen=True)
class Mapping:
    """``mappings { source: destination(s) }``: what a client's message published on ``source`` becomes."""

    source: str
    destinations: tuple[MapDestination, ...]


@dataclass(frozen=True)
class AccountConfig:
    """One account of ``accounts { NAME { users, jetstream, exports, imports, mappings } }``.

    ``jetstream`` is None when the account has no JetStream; ``tiers``
    holds tiered limits by tier name (``R1``, ``R3``) when configured.
    """

    name: str
    users: tuple[User, ...] = ()
    jetstream: JetStreamLimits | None = None
    tiers: dict[str, JetStreamLimits] = field(default_factory=dict)
    exports: tuple[Export, ...] = ()
    imports: tuple[Import, ...] = ()
    mappings: tuple[Mapping, ...] = ()
    # ``limits { max_subscriptions }``: subscriptions per client of the account (``NO_LIMIT``: none).
    max_subscriptions: int = NO_LIMIT
    # An account JWT's ``limits { conn }``: clients logged in to the account at once (``NO_LIMIT``: any).
    max_connections: int = NO_LIMIT
    # An account JWT's ``name`` (the account itself is named by its public key).
    name_tag: str = ""
    # ``msg_trace { dest, sampling }``: where messages with a sampled ``traceparent`` are traced, how often.
    message_trace: tuple[str, int] = ("", 0)
