"""What a server says about itself on a route: its INFO and, when it dials, its CONNECT.

:class:`Greeting` holds the identity both carry -- the server's id and
name, the cluster's name (and whether it was generated), the route port
and the client URLs this server advertises -- and writes them in
nats-server's field order.
"""

from __future__ import annotations

import random
from typing import Any
from urllib.parse import urlsplit

from fakejs.core.auth import NONCE_RAW_LEN, new_nonce
from fakejs.core.cluster.peers import join_host_port
from fakejs.core.cluster_config import ClusterConfig
from fakejs.core.options import NATS_VERSION, RUNTIME

__all__ = ["ROUTE_PROTO", "Greeting"]

# The route protocol version nats-server 2.15 announces (message tracing across routes).
ROUTE_PROTO = 3


class Greeting:
    """This server's identity on its routes."""

    def __init__(
        self, config: ClusterConfig, identity: tuple[str, str], name: str, max_payload: int, rng: random.Random
    ) -> None:
        self.config = config
        self.server_id, self.server_name = identity
        self.dynamic_name = not config.name
        self.name = config.name or name
        self.max_payload = max_payload
        self.rng = rng
        self.pooled = config.pool_size >= 1
        self.pool_size = config.pool_size if self.pooled else 0
        self.port = 0  # the bound route port, once listening
        self.own_client_urls: list[str] = []  # what this server's clients are told (none with no_advertise)
        self.listen_urls: list[str] = []  # this server's client URLs, told to the routes unless no_advertise

    def route_info(self, nonce: bool = False, pool_idx: int = 0, account: str = "") -> dict[str, Any]:
        """This server's route INFO, in nats-server's field order (``account``: a dedicated route's)."""
        config = self.config
        host, port = self._advertised()
        info: dict[str, Any] = {
            "server_id": self.server_id,
            "server_name": self.server_name,
            "version": NATS_VERSION,
            "proto": ROUTE_PROTO,
            "go": RUNTIME,
            "host": host,
            "port": port,
            "headers": True,
        }
        if config.auth_required:
            info["auth_required"] = True
        info["max_payload"] = self.max_payload
        if config.advertise:
            info["ip"] = f"nats-route://{join_host_port(host, port)}/"
        if nonce:
            info["nonce"] = new_nonce(self.rng.randbytes(NONCE_RAW_LEN))
        info["cluster"] = self.name
        if self.dynamic_name:
            info["cluster_dynamic"] = True
        if self.listen_urls and not config.no_advertise:
            info["connect_urls"] = list(self.listen_urls)
        info["lnoc"] = True
        info["lnocu"] = True
        if self.pooled:
            info["route_pool_size"] = self.pool_size
            if pool_idx:
                info["route_pool_idx"] = pool_idx
        if account:
            info["route_account"] = account
        return info

    def _advertised(self) -> tuple[str, int]:
        advertise = self.config.advertise
        if advertise:
            host, _, port = advertise.rpartition(":") if ":" in advertise else (advertise, "", "")
            return host.strip("[]") or advertise, int(port) if port.isdigit() else self.port
        return self.config.host, self.port

    def connect_fields(self, url: str) -> dict[str, Any]:
        """The CONNECT a dialling server sends: its id, the cluster's name, the URL's (or block's) credentials."""
        parts = urlsplit(url)
        user, password = parts.username or "", parts.password or ""
        fields: dict[str, Any] = {"echo": True, "verbose": False, "pedantic": False}
        if user:
            fields["user"] = user
        if password:
            fields["pass"] = password
        fields.update({"tls_required": False, "headers": True, "name": self.server_id, "cluster": self.name})
        if self.dynamic_name:
            fields["cluster_dynamic"] = True
        fields["lnoc"] = True
        return fields
