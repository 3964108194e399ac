"""The settings of an account resolver keeping its JWTs in a directory (``resolver { type: full | cache }``).

Their own module: only a configuration file with such a resolver, and operator mode, read them;
a plain start does not build the class.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ResolverDirectory:
    """``resolver { type: full | cache, dir, ... }``: nats-server's DirAccResolver and CacheDirAccResolver settings.

    ``limit`` is how many JWTs the directory holds (0: nats-server's default), ``interval`` how
    often a full resolver compares its directory with the other servers', ``timeout`` how long a
    lookup waits for them, ``ttl`` how long a cache keeps a JWT (seconds; 0: the default).
    """

    kind: str  # "FULL" or "CACHE"
    directory: str
    allow_delete: bool = False
    hard_delete: bool = False
    limit: int = 0
    interval: float = 0.0
    timeout: float = 1.9  # nats-server's DEFAULT_ACCOUNT_FETCH_TIMEOUT
    ttl: float = 0.0
