"""The start checks nats-server makes on JetStream and a cluster, and what fakejs refuses of the two together.

Shared by the configuration file, the command line and the in-process
server (``Server(options)``), so that none of them starts a JetStream that
silently ignores its cluster.  A server with JetStream and a cluster with
routes runs its share of a JetStream replicated across the cluster's servers
(:func:`replicated_jetstream`), with the meta group's first voters learnt
from the routes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakejs.core.options import RUNTIME, ServerOptions
from fakejs.core.subjects import is_valid_subject

if TYPE_CHECKING:
    from fakejs.core.replicated_jetstream import ReplicatedJetStream

FAKEJS_RUNTIME_PREFIX = RUNTIME.rstrip("0123456789.")  # "python": what a fakejs route INFO's ``go`` says
# nats-server's ``extension_hint`` values (jsNoExtend, jsWillExtend).
NO_EXTEND = "no_extend"
WILL_EXTEND = "will_extend"
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
    hint = options.jetstream_extension_hint.lower()
    if hint not in ("", NO_EXTEND, WILL_EXTEND):
        return f"expected '{NO_EXTEND}' for string value, got '{hint}'"
    if options.jetstream_replicated is None and not cluster.routes:
        # nats-server then fails starting JetStream (a fatal log line): a cluster of one has no routes
        return NO_ROUTES
    return ""


def replicated_jetstream(options: ServerOptions) -> ReplicatedJetStream | None:
    """How a server of ``options`` replicates its JetStream across its cluster (``None``: it does not).

    ``jetstream_replicated`` when code set it; else a server with JetStream and
    a cluster with routes (a configuration file's ``cluster { routes }``,
    ``--routes``) learns the meta group's first voters from its routes, with
    nats-server's Raft timings.
    """
    if options.jetstream_replicated is not None:
        return options.jetstream_replicated
    cluster = options.cluster
    if options.jetstream and cluster is not None and cluster.routes:
        # Only a server with JetStream in a cluster loads the settings' class
        from fakejs.core.replicated_jetstream import ReplicatedJetStream

        return ReplicatedJetStream()
    return None


def is_fakejs_refusal(problem: str) -> bool:
    """Whether a start problem is fakejs's own (printed as ``fakejs: ...``) rather than nats-server's."""
    return problem.endswith("not supported by fakejs yet")


def is_fakejs_route(info: dict[str, Any]) -> bool:
    """Whether a route's INFO comes from a fakejs server: its ``go`` field names Python (nats-server's ``go1.x``)."""
    return str(info.get("go") or "").startswith(FAKEJS_RUNTIME_PREFIX)


def mixed_jetstream_problem(name: str, info: dict[str, Any]) -> str:
    """The error a fakejs server with a replicated JetStream logs for a route from a nats-server."""
    return (
        f"JetStream in a cluster mixing fakejs with nats-server {name or info.get('server_id')} "
        f"(version {info.get('version')}, {info.get('go')}): not supported by fakejs yet"
    )
