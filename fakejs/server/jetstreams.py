"""Which accounts of a server get JetStream, and where each keeps its store.

As nats-server: with no accounts configured (besides the system account)
the global account ``$G`` has JetStream; otherwise exactly the accounts
whose ``jetstream`` is enabled do, each with its own limits and streams,
and every other account's ``$JS.API`` requests are answered with
``JetStream not enabled for account``.  ``$G`` keeps the store directory
itself; another account keeps its streams under ``<store>/accounts/<name>``.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from typing import TYPE_CHECKING

from fakejs.core.accounts import GLOBAL_ACCOUNT, Account
from fakejs.core.broker import Broker
from fakejs.core.cluster_checks import replicated_jetstream
from fakejs.core.jetstream_limits import JetStreamLimits
from fakejs.core.options import SYSTEM_ACCOUNT
from fakejs.core.router import Subscription

if TYPE_CHECKING:
    from fakejs.core.replicated_jetstream import ReplicatedJetStream
    from fakejs.jetstream import JetStreamWithApi
    from fakejs.jetstream.service.replicated_meta import MetaMember
    from fakejs.jetstream.stream.batch_limits import BatchLimits

ACCOUNTS_DIR = "accounts"
TEMPORARY_STORE_PREFIX = "fakejs-store-"


def jetstream_accounts(broker: Broker) -> list[tuple[Account, JetStreamLimits | None]]:
    """The accounts that get JetStream, with their limits (None: unlimited)."""
    options = broker.options
    system = options.system_account or SYSTEM_ACCOUNT
    others = [a for a in broker.accounts if a.name not in (GLOBAL_ACCOUNT, system)]
    if not others:
        return [(broker.accounts.default, None)]
    chosen: list[tuple[Account, JetStreamLimits | None]] = []
    for config in options.accounts:
        account = broker.accounts.get(config.name)
        if config.jetstream is not None and account is not None:
            chosen.append((account, config.jetstream))
    return chosen


def account_store(base: str, account: Account) -> str:
    """Where an account's JetStream keeps its streams under the server's store directory."""
    if account.name == GLOBAL_ACCOUNT:
        return base
    return os.path.join(base, ACCOUNTS_DIR, account.name)


def prepare_store_directory(path: str) -> str:
    """nats-server's checks of the store directory as JetStream starts; the problem in its words, or ``""``.

    A missing directory is made; one that exists must be a directory this process can write in.
    """
    try:
        status: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        try:
            os.makedirs(path)
        except OSError as exc:
            reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
            return f"could not create storage directory - mkdir {exc.filename}: {reason}"
        return ""
    except OSError:
        status = None
    if status is None or not stat.S_ISDIR(status.st_mode):
        return "storage directory is not a directory"
    try:
        descriptor, probe = tempfile.mkstemp(prefix="_test_", dir=path)
    except OSError:
        return "storage directory is not writable"
    os.close(descriptor)
    os.remove(probe)
    return ""


class AccountJetStreams:
    """Every account's JetStream on one server, and the answers of the accounts without one."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.by_account: dict[str, JetStreamWithApi] = {}
        self._disabled: list[tuple[Account, Subscription]] = []
        self._base = ""
        self._owned = False
        self._batch_limits: BatchLimits | None = None  # atomic batch limits counted across the accounts
        self._meta: MetaMember | None = None  # the server's member of a replicated JetStream's meta group

    def start(self, store_dir: str, owned: bool) -> JetStreamWithApi | None:
        """Start them (on ``store_dir``; ``owned``: made by fakejs); returns ``$G``'s, if it has one.

        Logs what nats-server logs when it starts JetStream (:mod:`fakejs.jetstream.service.banner`).
        """
        # The JetStream layer loads only when JetStream starts: a server without it does not pay for it
        from fakejs.jetstream.service import banner
        from fakejs.jetstream.service.server_limits import server_limits

        clock, log = self.broker.clock, self.broker.log
        started = clock.monotonic()
        banner.log_starting(log)
        if not store_dir:
            store_dir = tempfile.mkdtemp(prefix=TEMPORARY_STORE_PREFIX)
        problem = prepare_store_directory(store_dir)
        if problem:  # nats-server's fatal line, after its "Took" line
            banner.log_started(log, round((clock.monotonic() - started) * 1e9))
            raise ValueError(f"Can't start JetStream: {problem}")
        self._base, self._owned = store_dir, owned
        limits = server_limits(self.broker.options, store_dir)
        warn = owned and self.broker.options.warn_temporary_store
        banner.log_configuration(log, self.broker.options, store_dir, limits, warn_temporary=warn)
        js = self._start_accounts(store_dir)
        banner.log_started(log, round((clock.monotonic() - started) * 1e9))
        return js

    def _start_accounts(self, store_dir: str) -> JetStreamWithApi | None:
        # The JetStream layer loads only when JetStream starts: a server without it does not pay for it
        from fakejs.jetstream import JetStreamWithApi

        chosen = jetstream_accounts(self.broker)
        default = self.broker.accounts.default
        replicated = replicated_jetstream(self.broker.options)
        if replicated is not None:
            self._start_replicated(chosen, replicated)
        elif [account for account, _ in chosen] == [default]:
            # Only the global account: its streams are the store's (removed by stop(), when owned).
            self._start(JetStreamWithApi(self.broker, store_dir, own_store=False, account=default))
        else:
            self._start_several(chosen)
        self._serve_others()
        return self.by_account.get(GLOBAL_ACCOUNT)

    def _start_replicated(
        self, chosen: list[tuple[Account, JetStreamLimits | None]], replicated: ReplicatedJetStream
    ) -> None:
        """Each account's share of a JetStream replicated across the cluster, over the server's one member of the
        meta group (its log in the server's store directory), started once every account's share listens."""
        # Only a replicated JetStream loads the meta group's member
        from fakejs.jetstream.service.jetstream import server_batch_limits
        from fakejs.jetstream.service.replicated_meta import MetaMember

        self._meta = MetaMember(self.broker, replicated, self._base)
        if [account for account, _ in chosen] != [self.broker.accounts.default]:
            self._batch_limits = server_batch_limits(self.broker)  # counted across the accounts
        for account, limits in chosen:
            self._start_account(account, limits)
        self._meta.start()

    def _start_several(self, chosen: list[tuple[Account, JetStreamLimits | None]]) -> None:
        # The JetStream layer loads only when JetStream starts: a server without it does not pay for it
        from fakejs.jetstream.service.jetstream import server_batch_limits

        self._batch_limits = server_batch_limits(self.broker)  # counted across the accounts
        for account, limits in chosen:
            self._start_account(account, limits)

    def _serve_others(self) -> None:
        """The accounts without JetStream (the system account too) hear 10039, from the server their client is
        connected to (in a cluster, the others are not told); the system account purges."""
        # The JetStream layer loads only when JetStream starts: a server without it does not pay for it
        from fakejs.jetstream.api.disabled import serve_disabled
        from fakejs.server.account_purge import serve_account_purge

        accounts = self.broker.accounts
        system = accounts.get(self.broker.options.system_account or SYSTEM_ACCOUNT)
        for account in accounts:
            if account.name not in self.by_account:
                self._disabled.append(
                    (account, serve_disabled(account.router, local_only=self.broker.cluster is not None))
                )
        if system is not None and self.broker.cluster is None:
            self._disabled.append((system, serve_account_purge(self.broker, system, self.by_account.get)))

    def _start_account(self, account: Account, limits: JetStreamLimits | None) -> None:
        # The JetStream layer loads only when JetStream starts: a server without it does not pay for it
        from fakejs.jetstream import JetStreamWithApi

        store = account_store(self._base, account)
        batch_limits = self._batch_limits
        js = JetStreamWithApi(
            self.broker,
            store,
            own_store=False,
            account=account,
            limits=limits,
            batch_limits=batch_limits,
            replicated=None if self._meta is None else self._meta.options,
            meta=self._meta,
        )
        tiers = next((c.tiers for c in self.broker.options.accounts if c.name == account.name and c.tiers), None)
        if tiers:
            js.use_tiers(tiers)
        self._start(js)

    def follow_accounts(self) -> None:
        """After a reload changed the accounts: each has JetStream, or answers that it has none, as configured.

        An account given JetStream starts it (reading its streams back); one
        whose JetStream is taken away stops it (its streams stay on disk); a
        new account without JetStream answers 10039, as at start.
        """
        if not self._disabled and not self.by_account:
            return  # JetStream is not running
        # The JetStream layer loads only when JetStream starts: a server without it does not pay for it
        from fakejs.jetstream.api.disabled import serve_disabled

        wanted = {account.name: (account, limits) for account, limits in jetstream_accounts(self.broker)}
        for name in [name for name in self.by_account if name not in wanted]:
            js = self.by_account.pop(name)
            js.stop(keep_store=True)
            js.account.jetstream = None
        present = set(self.broker.accounts)
        for account, subscription in [
            entry for entry in self._disabled if entry[0] not in present or entry[0].name in wanted
        ]:
            account.router.unsubscribe(subscription)
            self._disabled.remove((account, subscription))
        for name, (account, limits) in wanted.items():
            if name not in self.by_account:
                self._start_account(account, limits)
        served = {account.name for account, _ in self._disabled} | set(self.by_account)
        for account in self.broker.accounts:
            if account.name not in served:
                self._disabled.append(
                    (account, serve_disabled(account.router, local_only=self.broker.cluster is not None))
                )

    def follow_limits(self) -> None:
        """After a reload: each account's JetStream takes its configured limits (nats-server's UpdateJetStreamLimits)."""
        for config in self.broker.options.accounts:
            js = self.by_account.get(config.name)
            if js is not None and config.jetstream is not None and js.limits != config.jetstream:
                js.update_limits(config.jetstream)

    def _start(self, js: JetStreamWithApi) -> None:
        self.by_account[js.account.name] = js
        js.account.jetstream = js
        js.start()

    def store_dir(self) -> str:
        """The server's store directory (to keep over a restart)."""
        return self._base

    @property
    def temporary_store(self) -> str:
        """The store directory fakejs made itself and removes at exit (no store_dir given), or ``""``."""
        return self._base if self._owned else ""

    def stop(self, keep_store: bool = False) -> None:
        # The JetStream layer loads only when JetStream starts: a server without it does not pay for it
        from fakejs.jetstream.service import banner

        banner.log_shutdown_starting(self.broker.log)
        for js in self.by_account.values():
            js.stop(keep_store)  # waiting pulls hear about it before clients go
            js.account.jetstream = None
        self.by_account.clear()
        if self._meta is not None:
            self._meta.stop()
            self._meta = None
        for account, subscription in self._disabled:
            account.router.unsubscribe(subscription)
        self._disabled.clear()
        if self._owned and not keep_store and self._base:
            shutil.rmtree(self._base, ignore_errors=True)
        self._base, self._owned = "", False
        banner.log_shutdown(self.broker.log)
