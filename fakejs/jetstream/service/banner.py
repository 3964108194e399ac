"""JetStream's start-up and shutdown log lines, in nats-server 2.15.1's words and order.

A server starting JetStream logs::

    [INF] Starting JetStream
    [WRN] Temporary storage directory used, data could be lost on system reboot   (no store_dir)
    [DBG] JetStream creating dynamic configuration - 17.66 GB memory, 58.48 GB disk
    [INF]     _ ___ _____ ___ _____ ___ ___   _   __  __        (the JetStream logo, 7 lines)
    [INF] ---------------- JETSTREAM ----------------
    [INF]   Strict:          true
    [INF]   Max Memory:      17.66 GB
    [INF]   Max Storage:     58.48 GB
    [INF]   Store Directory: "/tmp/store"
    [INF]   Domain:          hub                                 (when set)
    [INF]   API Level:       5
    [INF] -------------------------------------------
    [DBG]   Exports:
    [DBG]      $JS.API.>
    [DBG] Adding JetStream Domain Mapping "$JS.hub.API.>" -> $JS.API.> to system account

then, for each account with JetStream, its limits and what it recovered
from the store (:func:`log_account_enabled` and the ``log_*restore*``
lines), and last ``Took 2.5ms to start JetStream``.  Sizes are written as
nats-server's ``friendlyBytes`` writes them, durations as Go prints them.
"""

from __future__ import annotations

import logging

from fakejs.core.jetstream_limits import JetStreamLimits
from fakejs.core.options import API_LEVEL, ServerOptions
from fakejs.gocompat.gobytes import friendly_bytes
from fakejs.gocompat.gotime import format_duration
from fakejs.jetstream.service.server_limits import ServerLimits

LOGO = (
    "    _ ___ _____ ___ _____ ___ ___   _   __  __",
    " _ | | __|_   _/ __|_   _| _ \\ __| /_\\ |  \\/  |",
    "| || | _|  | | \\__ \\ | | |   / _| / _ \\| |\\/| |",
    " \\__/|___| |_| |___/ |_| |_|_\\___/_/ \\_\\_|  |_|",
    "",
    "         https://docs.nats.io/jetstream",
    "",
)
HEADER = "---------------- JETSTREAM ----------------"
FOOTER = "-------------------------------------------"
TEMPORARY_STORE = "Temporary storage directory used, data could be lost on system reboot"
API_EXPORT = "$JS.API.>"


def log_starting(log: logging.Logger) -> None:
    log.info("Starting JetStream")


def log_configuration(
    log: logging.Logger, options: ServerOptions, store_dir: str, limits: ServerLimits, warn_temporary: bool
) -> None:
    """Everything between ``Starting JetStream`` and the accounts: the store, the limits, the banner."""
    if warn_temporary:
        log.warning(TEMPORARY_STORE)
    if limits.dynamic:
        memory, storage = friendly_bytes(limits.max_memory), friendly_bytes(limits.max_storage)
        log.debug("JetStream creating dynamic configuration - %s memory, %s disk", memory, storage)
    for line in LOGO:
        log.info("%s", line)
    log.info("%s", HEADER)
    if options.jetstream_strict:
        log.info("  Strict:          true")
    log.info("  Max Memory:      %s", friendly_bytes(limits.max_memory))
    log.info("  Max Storage:     %s", friendly_bytes(limits.max_storage))
    log.info('  Store Directory: "%s"', store_dir)
    if options.jetstream_domain:
        log.info("  Domain:          %s", options.jetstream_domain)
    log.info("  API Level:       %d", API_LEVEL)
    log.info("%s", FOOTER)
    log.debug("  Exports:")
    log.debug("     %s", API_EXPORT)
    if options.jetstream_domain:
        mapped = f'"$JS.{options.jetstream_domain}.API.>"'
        log.debug("Adding JetStream Domain Mapping %s -> %s to system account", mapped, API_EXPORT)


def log_account_enabled(log: logging.Logger, account: str, limits: JetStreamLimits) -> None:
    log.debug('Enabled JetStream for account "%s"', account)
    log.debug("  Max Memory:      %s", friendly_bytes(limits.max_memory))
    log.debug("  Max Storage:     %s", friendly_bytes(limits.max_storage))


def log_recovering(log: logging.Logger, account: str) -> None:
    """The account's store has streams to read back."""
    log.debug('Recovering JetStream state for account "%s"', account)


def log_recovered(log: logging.Logger, account: str) -> None:
    log.debug('JetStream state for account "%s" recovered', account)


def log_restore_starting(log: logging.Logger, account: str, stream: str) -> None:
    log.info("  Starting restore for stream '%s > %s'", account, stream)


def log_restored(log: logging.Logger, account: str, stream: str, messages: int, elapsed_ns: int) -> None:
    """A stream's messages are back; the time taken is rounded to the millisecond, as nats-server does."""
    rounded = (elapsed_ns + 500_000) // 1_000_000 * 1_000_000
    took = format_duration(rounded)
    log.info("  Restored %s messages for stream '%s > %s' in %s", f"{messages:,}", account, stream, took)


def log_consumers_recovering(log: logging.Logger, account: str, stream: str, count: int) -> None:
    log.info("  Recovering %d consumers for stream - '%s > %s'", count, account, stream)


def log_started(log: logging.Logger, elapsed_ns: int) -> None:
    log.info("Took %s to start JetStream", format_duration(elapsed_ns))


def log_shutdown_starting(log: logging.Logger) -> None:
    log.info("Initiating JetStream Shutdown...")


# nats-server's internal clients: each stream has three, each consumer two; each logs its close.
CLIENTS_PER_STREAM = 3
CLIENTS_PER_CONSUMER = 2


def log_internal_clients_closed(log: logging.Logger, streams: int, consumers: int) -> None:
    """What nats-server's internal clients for an account's streams and consumers log as it shuts down."""
    for _ in range(streams * CLIENTS_PER_STREAM + consumers * CLIENTS_PER_CONSUMER):
        log.debug("JETSTREAM - JetStream connection closed: Client Closed")


def log_shutdown(log: logging.Logger) -> None:
    log.info("JetStream Shutdown")
