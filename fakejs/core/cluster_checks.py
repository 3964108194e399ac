"""The start checks nats-server makes on JetStream and a cluster, and fakejs's refusal of the two together.

Shared by the configuration file, the command line and the in-process
server (``Server(options)``), so that none of them starts a JetStream that
silently ignores its cluster.
"""

from __future__ import annotations

from fakejs.core.options import ServerOptions
from fakejs.core.subjects import is_valid_subject

# fakejs serves JetStream in a cluster only for servers of one process (fakejs.Cluster, --cluster_size).
JETSTREAM_CLUSTER_REFUSAL = "JetStream across fakejs processes in a cluster (jetstream with cluster {} / --cluster; fakejs --cluster_size N -js serves one in a process): not supported by fakejs yet"
# An in-process cluster clusters one account's JetStream only.
ACCOUNT_JETSTREAM_CLUSTER_REFUSAL = (
    "JetStream of account {} in a cluster (a fakejs cluster serves one account's JetStream only): "
    "not supported by fakejs yet"
)
NO_ROUTES = (
    "Can't start JetStream: JetStream cluster requires configured routes or solicited leafnode for the system account"
)


def jetstream_problem(options: ServerOptions) -> str:
    """nats-server's ``validateJetStreamOptions`` (the domain's name, a cluster's names), then clustering."""
    domain = options.jetstream_domain
    if domain:
        derived = f"$JS.{domain}.API.>"
        if not is_valid_subject(derived):
            return f'invalid domain name: derived "{derived}" is not a valid subject'
        if any(char in domain for char in " \t\r\n\f.*>"):
            return "invalid domain name: may not contain ., * or >"
    cluster = options.cluster
    if not options.jetstream or cluster is None:
        return ""
    if not options.name:
        return "jetstream cluster requires `server_name` to be set"
    if not cluster.name:
        return "jetstream cluster requires `cluster.name` to be set"
    if options.jetstream_replicated is not None:
        return ""  # replicated across the servers (set by code only; see ReplicatedJetStream)
    if not cluster.routes:
        # nats-server then fails starting JetStream (a fatal log line): a cluster of one has no routes
        return NO_ROUTES
    return JETSTREAM_CLUSTER_REFUSAL


def clustered_account(options: ServerOptions) -> str:
    """The account whose JetStream an in-process cluster clusters: the one the ``accounts`` block gives JetStream,
    else the global account (``""``)."""
    named = [account.name for account in options.accounts if account.jetstream is not None]
    return named[0] if named else ""


def clustered_accounts_problem(options: ServerOptions) -> str:
    """Why an in-process cluster cannot serve the JetStream ``options`` give its accounts ("" when it can).

    The servers of a :class:`~fakejs.server.local_cluster.Cluster` share one
    clustered JetStream, one account's (:func:`clustered_account`); a second
    account of the ``accounts`` block with ``jetstream`` enabled would have
    none (its clients would hear no responders).
    """
    named = [account.name for account in options.accounts if account.jetstream is not None]
    if len(named) > 1:
        return ACCOUNT_JETSTREAM_CLUSTER_REFUSAL.format(named[1])
    return ""


def is_fakejs_refusal(problem: str) -> bool:
    """Whether a start problem is fakejs's own (printed as ``fakejs: ...``) rather than nats-server's."""
    return problem.endswith("not supported by fakejs yet")
