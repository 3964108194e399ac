"""The documents about accounts, gateways and leaf nodes, shared by HTTP and the system account's requests.

``/accountz`` and ``ACCOUNTZ`` (every account's name, or one account's
details), ``/accstatz`` and ``STATZ`` (each account's connections and
traffic) and ``/gatewayz`` (fakejs has no gateways: always empty), shaped
like nats-server's.  An account that does not
exist is :class:`NoAccount` (the caller picks the status).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakejs.core.accounts import Account
from fakejs.gocompat.gotime import rfc3339
from fakejs.monitoring.query import BadRequest, Query

if TYPE_CHECKING:
    from fakejs.monitoring.source import MonitoredServer


class NoAccount(Exception):
    """``Account <name> does not exist`` (nats-server's ``accountInfo`` error)."""


def head(server: MonitoredServer, name: bool = False) -> dict[str, Any]:
    """``server_id`` (and ``server_name``) and ``now``: how the monitoring documents start."""
    broker = server.broker
    doc = {"server_id": broker.server_id}
    if name:
        doc["server_name"] = broker.name
    doc["now"] = rfc3339(broker.clock.time_ns())
    return doc


def accountz(server: MonitoredServer, account: str) -> dict[str, Any]:
    """Every account's name, or ``account``'s details (:class:`NoAccount` if it does not exist)."""
    broker = server.broker
    doc: dict[str, Any] = head(server)
    system = broker.events.account
    if system is not None:
        doc["system_account"] = system.name
    if account:
        doc["account_detail"] = account_info(server, account)
    else:
        doc["accounts"] = [each.name for each in broker.accounts]
    return doc


def account_info(server: MonitoredServer, name: str) -> dict[str, Any]:
    """nats-server's ``AccountInfo`` (the fakejs has of it)."""
    broker = server.broker
    account = broker.accounts.get(name)
    if account is None:
        raise NoAccount(f"Account {name} does not exist")
    stat = broker.events.account_stat(account)
    doc: dict[str, Any] = {"account_name": name, "update_time": rfc3339(broker.started_ns)}
    if account is broker.events.account:
        doc["is_system"] = True
    from fakejs.monitoring.connz import subsz  # loaded with the first request that needs it

    _, stats = subsz(server, {"acc": [name]})
    doc.update(
        {
            "expired": False,
            "complete": True,
            "jetstream_enabled": account.jetstream is not None,
            "leafnode_connections": 0,
            "client_connections": stat["conns"],
            "subscriptions": stats["num_subscriptions"],
            "name_tag": name,
            "sublist_stats": {
                k: v for k, v in stats.items() if k not in ("server_id", "now", "total", "offset", "limit")
            },
        }
    )
    return doc


def account_stats(server: MonitoredServer, accounts: list[Account], unused: bool) -> list[dict[str, Any]]:
    """nats-server's ``AccountStat`` of each account with clients (of each, with ``unused``)."""
    stats = [server.broker.events.account_stat(account) for account in accounts]
    return [stat for stat in stats if unused or stat["conns"]]


def accstatz(server: MonitoredServer, query: dict[str, list[str]]) -> tuple[int, Any]:
    """``/accstatz``: every account's statistics (``unused``: those without clients too)."""
    try:
        unused = Query(query).bool("unused")
    except BadRequest as error:
        return 400, str(error)
    return 200, {**head(server), "account_statz": account_stats(server, list(server.broker.accounts), unused)}


def accountz_endpoint(server: MonitoredServer, query: dict[str, list[str]]) -> tuple[int, Any]:
    """``/accountz``: ``?acc=<name>`` for one account's details (400 with the error if it does not exist)."""
    values = query.get("acc")
    try:
        return 200, accountz(server, values[0] if values else "")
    except NoAccount as error:
        return 400, str(error)


def gatewayz(server: MonitoredServer, query: dict[str, list[str]]) -> tuple[int, Any]:
    """``/gatewayz``: a server without gateways."""
    return 200, {**head(server), "outbound_gateways": {}, "inbound_gateways": {}}
