"""Dialling other servers' route ports, and dialling again, as nats-server's ``connectToRoute`` does.

One dial per URL at a time; a failed dial of a configured route is tried
again for ever (1 s apart, doubling up to 30 s with ``connect_backoff``), a
learned one ``connect_retries`` more times.  A closed route that this
server dialled (or kept in place of a duplicate it dialled) is dialled
again after a second and a random moment for a configured route, the
moment alone for a learned one.  A URL that turned out to be this server
is never dialled again.  A route dedicated to one account (nats-server's
pinned accounts, ``$SYS`` always) is dialled, and dialled again, on its
own, beside the pool's.  Every wait is on the server's clock.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from typing import Protocol
from urllib.parse import urlsplit

from fakejs.core.clock import Clock
from fakejs.core.cluster.link import RouteIO, RouteLink
from fakejs.core.cluster_config import (
    ROUTE_CONNECT_DELAY,
    ROUTE_CONNECT_MAX_DELAY,
    ROUTE_RECONNECT_DELAY,
    ClusterConfig,
)
from fakejs.protocol.writer import go_quote

__all__ = ["Dialer", "Dialling", "LinkFactory"]

# Makes the link of a dialled connection: (its I/O, the URL, configured?, the gossip mode that led here,
# the account the route is dedicated to or "").
LinkFactory = Callable[[RouteIO, str, bool, int, str], RouteLink]


class Dialer(Protocol):
    """The socket layer's side: open a TCP connection to another server's route port."""

    def dial(self, host: str, port: int, connected: Callable[[RouteIO], RouteLink], failed: Callable[[], None]) -> None:
        """Connect; on success call ``connected`` with the connection's I/O (it returns the link to feed)."""


class Dialling:
    """The dials under way and the retry rules (see the module docstring)."""

    def __init__(
        self, config: ClusterConfig, clock: Clock, rng: random.Random, log: logging.Logger, make_link: LinkFactory
    ) -> None:
        self.config = config
        self.clock = clock
        self.rng = rng
        self.log = log
        self.make_link = make_link
        self.dialer: Dialer | None = None
        self.running = False
        self._under_way: set[tuple[str, str]] = set()  # (URL, dedicated account or "")
        self._self_urls: set[str] = set()

    def is_self(self, url: str) -> None:
        """``url`` led back to this server: never dial it again."""
        self._self_urls.add(url)

    def solicit(
        self, url: str, explicit: bool, gossip_mode: int = 0, force: bool = False, attempt: int = 0, account: str = ""
    ) -> None:
        """Dial ``url`` (for ``account``'s dedicated route) unless that dial is under way (``force``: anyway)."""
        if not self.running or self.dialer is None or url in self._self_urls:
            return
        key = (url, account)
        if key in self._under_way and not force:
            return
        parts = urlsplit(url)
        if not parts.hostname or parts.port is None:
            self.log.error("Error parsing route URL %s", go_quote(url))
            return
        self._under_way.add(key)

        def connected(io: RouteIO) -> RouteLink:
            self._under_way.discard(key)
            return self.make_link(io, url, explicit, gossip_mode, account)

        def failed() -> None:
            self._under_way.discard(key)
            tries = attempt + 1
            self.log.debug("Error trying to connect to route (attempt %d): %s", tries, url)
            if not explicit and tries > self.config.connect_retries:
                return
            if explicit and url not in self.config.routes:
                return  # taken out of the configuration by a reload
            delay = ROUTE_CONNECT_DELAY
            if self.config.connect_backoff:
                delay = min(ROUTE_CONNECT_DELAY * 2 ** min(tries, 10), ROUTE_CONNECT_MAX_DELAY)
            self.clock.call_later(delay, self.solicit, url, explicit, gossip_mode, False, tries, account)

        self.dialer.dial(parts.hostname, parts.port, connected, failed)

    def redial(self, link: RouteLink) -> None:
        """Dial a closed route's URL again after nats-server's reconnect wait."""
        delay = self.rng.randrange(100) / 1000
        if link.explicit:
            delay += ROUTE_RECONNECT_DELAY
        self.clock.call_later(delay, self.solicit, link.url, link.explicit, 0, False, 0, link.account)
