"""The server's own start-up and shutdown lines: nats-server's, then fakejs's facts.

:func:`log_starting` writes what nats-server 2.15.1 logs before it opens
anything (``Starting nats-server``, the version block, the warnings about
the configuration, the trusted operators, the system account); :func:`log_stopped` the lines it
logs as its listeners close.  :func:`log_fakejs_facts` comes after ``Server
is ready``, where a harness waiting for that line does not see it: lines
that start with ``fakejs:`` and say how this server differs from a plain
nats-server (its clock, its event loop, its seed, its control API, a temporary store).
JetStream's lines are :mod:`fakejs.jetstream.service.banner`'s.
"""

from __future__ import annotations

import asyncio
import datetime
import logging

from fakejs._version import __version__
from fakejs.core.auth import is_bcrypt
from fakejs.core.broker import Broker
from fakejs.core.options import NATS_VERSION, RUNTIME, SYSTEM_ACCOUNT, ServerOptions
from fakejs.gocompat import ids

# nats-server's Git line when a build carries no commit: fakejs has none to name.
NO_COMMIT = "not set"
# nats-server warns of payloads over 8 MiB ("8.00 MB" in its friendly units).
LARGE_PAYLOAD = 8 * 1024 * 1024
CONTROL_SUBJECTS = "$FAKEJS.>"
CONTROL_PATH = "/fakejs/"


def plaintext_passwords(options: ServerOptions) -> bool:
    """Whether a password is kept in plain text (nats-server's ``checkAuthforWarnings``)."""
    if options.password and not is_bcrypt(options.password):
        return True
    mapped = options.tls is not None and options.tls.verify_and_map
    for user in options.all_users():
        if user.nkey or (not user.password and mapped):
            continue
        if not is_bcrypt(user.password):
            return True
    return False


def log_starting(log: logging.Logger, broker: Broker) -> None:
    """From ``Starting nats-server`` to the system account, before any port opens."""
    options = broker.options
    log.info("Starting nats-server")
    log.info("  Version:  %s (fakejs %s)", NATS_VERSION, __version__)
    log.info("  Git:      [%s]", NO_COMMIT)
    log.debug("  Go build: %s", RUNTIME)
    if broker.cluster_name:
        log.info("  Cluster:  %s", broker.cluster_name)
    log.info("  Name:     %s", broker.name)
    if options.jetstream:
        log.info("  Node:     %s", ids.get_hash(broker.name))
    log.info("  ID:       %s", broker.server_id)
    if plaintext_passwords(options):
        log.warning("Plaintext passwords detected, use nkeys or bcrypt")
    if options.config_file:
        log.info("Using configuration file: %s (%s)", options.config_file, options.config_digest)
    if options.trusted_operators:
        log_trusted_operators(log, options)
    if options.max_payload > LARGE_PAYLOAD:
        log.warning("Maximum payloads over 8.00 MB are generally discouraged and could lead to poor performance")
    if options.trusted_operators and options.resolver_preload:
        log_preload_issues(log, options, broker.clock.time_ns() / 1e9)
    if not options.system_account:
        log.debug('Created system account: "%s"', SYSTEM_ACCOUNT)


def _go_time(seconds: int) -> str:
    """A Unix time as Go prints a ``time.Time`` in UTC: ``2026-12-06 03:06:06 +0000 UTC``."""
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def log_trusted_operators(log: logging.Logger, options: ServerOptions) -> None:
    """Operator mode: each trusted operator's audience (on nats-server's ``System`` line), name, issue and expiry."""
    # Only operator mode loads the JWT machinery
    from fakejs.core.jwt.trust import TrustedOperators

    log.info("Trusted Operators")
    for operator in TrustedOperators.from_jwts(options.trusted_operators).operators:
        log.info('  System  : "%s"', operator.audience)  # nats-server prints the JWT's ``aud`` here
        log.info('  Operator: "%s"', operator.name)
        log.info("  Issued  : %s", _go_time(operator.issued_at))
        log.info("  Expires : %s", _go_time(operator.expires) if operator.expires else "Never")
    if not options.system_account:
        log.warning("Trusted Operators should utilize a System Account")
    directory = options.resolver_directory
    if directory is not None:  # the resolver starts before JetStream does
        scope = "some" if directory.kind == "CACHE" else "all"
        log.info("Managing %s jwt in exclusive directory %s", scope, directory.directory)


def log_preload_issues(log: logging.Logger, options: ServerOptions, now: float) -> None:
    """nats-server's ``checkResolvePreloads``: each preloaded account that does not validate, with its issues."""
    # Only operator mode loads the JWT machinery
    from fakejs.core.jwt.account_validation import account_issues
    from fakejs.core.jwt.claims import ACCOUNT, JwtError, decode_kind

    for name, token in options.resolver_preload.items():
        try:
            claims = decode_kind(token, ACCOUNT)
        except JwtError:
            continue
        issues = account_issues(claims, now)
        if any(issue.blocking for issue in issues):
            log.warning("Account [%s] has validation issues:", name)
            for issue in issues:
                log.warning("  - %s", issue.text)


def log_stopped(log: logging.Logger) -> None:
    """The listeners are closed (nats-server's accept loop ends, its system connection closes)."""
    log.debug("Client accept loop exiting..")
    log.debug("SYSTEM - System connection closed: Client Closed")


class Facts:
    """What fakejs says about itself once it is ready (a plain class: a dataclass costs its import)."""

    __slots__ = ("clients_guarded", "clock", "control", "control_token", "http_url", "loop", "seed", "temporary_store")

    def __init__(
        self,
        *,
        clock: str,
        seed: int | None,
        control: bool,
        control_token: bool,
        clients_guarded: bool,
        http_url: str | None,
        temporary_store: str,
        loop: str = "asyncio",
    ) -> None:
        self.clock = clock  # "real", or "manual" with its autojump
        self.seed = seed
        self.control = control
        self.control_token = control_token  # the control API asks for the control token
        self.clients_guarded = clients_guarded  # ... or for the credentials clients connect with
        self.http_url = http_url  # the monitoring port's URL, where the control API answers too
        self.temporary_store = temporary_store  # the store fakejs made (no store_dir) and removes at exit
        self.loop = loop  # the event loop it runs on (see loop_name)


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """``uvloop``, ``asyncio`` (asyncio's own loop), or the top package of another loop's class."""
    package = type(loop).__module__.split(".")[0]
    return "asyncio" if isinstance(loop, asyncio.BaseEventLoop) else package


def clock_fact(autojump: float | None, manual: bool) -> str:
    if not manual:
        return "real"
    if autojump is None:
        return "manual (moves only when told)"
    return f"manual, autojump after {autojump:g}s of idle real time"


def _control_fact(facts: Facts) -> str:
    if not facts.control:
        return "off"
    where = f"subjects {CONTROL_SUBJECTS}"
    if facts.http_url is not None:
        where += f" and {facts.http_url}{CONTROL_PATH}"
    if facts.control_token:
        guard = "the control token required"
    elif facts.clients_guarded:
        guard = "the clients' credentials required"
    else:
        guard = "no credentials required"
    return f"{where} ({guard})"


def log_fakejs_facts(log: logging.Logger, facts: Facts) -> None:
    """fakejs's own lines, after ``Server is ready``."""
    log.info("fakejs: clock: %s", facts.clock)
    log.info("fakejs: event loop: %s", facts.loop)
    if facts.seed is None:
        log.info("fakejs: seed: none (random choices differ from run to run; --seed N repeats them)")
    else:
        log.info("fakejs: seed: %d", facts.seed)
    log.info("fakejs: control API: %s", _control_fact(facts))
    if facts.temporary_store:
        log.info('fakejs: temporary store directory "%s" is removed at exit', facts.temporary_store)


def log_scenario(log: logging.Logger, name: str, faults: int) -> None:
    """A scenario started with the server (``--scenario``)."""
    log.info("fakejs: scenario: %s (%d faults)", name, faults)
