"""The accounts of a running server made to follow new options, as nats-server's configureAccounts on a reload.

:func:`reconfigure_accounts` works on the broker's registry in place: an
account still configured keeps its identity (its router, its
subscriptions, its JetStream), its users, limits, trace destination and
subject mappings are read again; an account no longer configured is taken
out (its clients are closed by the authorization check that follows, their
users being gone); a new one is added.  Exports and imports are wired
again from scratch: a subscription already made in an importing account
receives what a new stream import carries, and stops receiving what a
removed one carried, as nats-server's rebuilt shadow subscriptions do.
Reply subjects of requests still in flight through service imports stay
open in the accounts that remain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakejs.core.accounts import GLOBAL_ACCOUNT, Account
from fakejs.core.broker import add_configured_accounts
from fakejs.core.jetstream_limits import NO_LIMIT
from fakejs.core.options import SYSTEM_ACCOUNT

if TYPE_CHECKING:
    from fakejs.core.broker import Broker

__all__ = ["reconfigure_accounts"]


def reconfigure_accounts(broker: Broker) -> list[Account]:
    """Bring the broker's accounts in line with its (new) options; returns the accounts taken out."""
    options = broker.options
    configured = {config.name for config in options.accounts}
    configured |= {user.account for user in options.all_users() if user.account}
    kept = {GLOBAL_ACCOUNT, options.system_account or SYSTEM_ACCOUNT}
    removed = [account for account in broker.accounts if account.name not in configured | kept]
    for account in removed:
        broker.accounts.remove(account.name)
    for account in broker.accounts:
        if account is not broker.accounts.default:
            account.users.clear()
        account.router.mappings = None
        account.max_subscriptions = NO_LIMIT
        account.trace_dest, account.trace_sampling = "", 0
    add_configured_accounts(broker.accounts, options)
    _rewire_imports(broker)
    return removed


def _rewire_imports(broker: Broker) -> None:
    """The imports wired anew; requests in flight keep their way back through the accounts that stay."""
    previous, broker.imports = broker.imports, None
    configs = list(broker.options.accounts)
    if any(config.imports or config.exports for config in configs):
        # Only accounts with exports or imports load that machinery
        from fakejs.core.imports import wire_imports

        broker.imports = wire_imports(broker.accounts, configs, broker.clock, broker.random)
    if previous is not None:
        previous.unwire(broker.imports)
