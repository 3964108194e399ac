"""Server settings, with nats-server's defaults."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fakejs.core.account_config import AccountConfig
    from fakejs.core.cluster_config import ClusterConfig
    from fakejs.core.leaf_config import LeafConfig
    from fakejs.core.replicated_jetstream import ReplicatedJetStream
    from fakejs.core.resolver_directory import ResolverDirectory
    from fakejs.core.transport_config import TLSConfig, WebSocketConfig
    from fakejs.core.users import AuthCallout, User


# The nats-server release whose behaviour fakejs reproduces, and its
# JetStream API level.  Clients gate features on both.
NATS_VERSION = "2.15.1"
API_LEVEL = 5
# What INFO and /varz report in nats-server's "git_commit": the commit the nats-server 2.15.1
# release was built from (what its binary reports), naming the build whose behaviour fakejs has.
GIT_COMMIT = "b2fd3ef"
PROTO = 1
# What INFO and /varz report in nats-server's "go" field: the runtime serving instead.  The
# version is the first word of sys.version, as platform.python_version() reads it (a module
# every start would import for this one string).
RUNTIME = "python" + sys.version.split()[0]

DEFAULT_PORT = 4222


MAX_PAYLOAD = 1024 * 1024
MAX_PENDING = 64 * 1024 * 1024
MAX_CONTROL_LINE = 4096
MAX_CONNECTIONS = 64 * 1024
# nats-server's "-1": a free port (0 for the OS).
RANDOM_PORT = -1
# nats-server's system account: always there, and what ``system_account`` names by default.
SYSTEM_ACCOUNT = "$SYS"


def client_port(port: int) -> int:
    """nats-server's client port convention (flags and files): 0 is the default port, -1 a free one."""
    if port == 0:
        return DEFAULT_PORT
    return 0 if port == RANDOM_PORT else port


def monitor_port(port: int) -> int | None:
    """nats-server's monitoring port convention (http and https): 0 is no monitoring, -1 a free port."""
    if port == 0:
        return None
    return 0 if port == RANDOM_PORT else port


@dataclass
class ServerOptions:
    """Everything a server is started with.

    ``port=0`` asks the OS for a free port (the CLI maps nats-server's
    ``-p -1`` onto it).  Durations are in seconds.
    """

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    name: str = ""
    max_payload: int = MAX_PAYLOAD
    max_control_line: int = MAX_CONTROL_LINE
    max_pending: int = MAX_PENDING
    write_deadline: float = 10.0
    ping_interval: float = 120.0
    ping_max: int = 2
    # nats-server's max_connections: a client beyond it gets INFO, then ``-ERR 'maximum
    # connections exceeded'`` and is closed; a negative value refuses every client.
    max_connections: int = MAX_CONNECTIONS
    # nats-server's max_subscriptions: subscriptions per client (0: no limit); a SUB beyond
    # it is answered ``-ERR 'maximum subscriptions exceeded'`` and the client stays.
    max_subscriptions: int = 0
    first_ping_interval: float = 2.0
    auth_timeout: float = 2.0
    user: str = ""
    password: str = ""
    token: str = ""
    # ``authorization { users [...] }``: several users, each with its own password or nkey
    # and permissions; ``no_auth_user`` names the one a client without credentials becomes.
    users: list[User] = field(default_factory=list)
    no_auth_user: str = ""
    # ``authorization { auth_callout {...} }``: logins decided by a service (see fakejs.core.callout).
    auth_callout: AuthCallout | None = None
    # ``accounts { ... }``: accounts besides the global one, with their users, JetStream
    # limits, exports and imports (users with an ``account`` log in there).
    accounts: list[AccountConfig] = field(default_factory=list)
    # Operator (JWT) mode: the trusted operators' JWTs (``operator``), the account resolver
    # (``resolver``: "MEMORY", or "FULL" / "CACHE" with ``resolver_directory``) and the account JWTs it
    # starts with (``resolver_preload``: account public key -> JWT), which become ``accounts`` named by key.
    trusted_operators: list[str] = field(default_factory=list)
    account_resolver: str = ""
    resolver_directory: ResolverDirectory | None = None
    resolver_preload: dict[str, str] = field(default_factory=dict)
    # ``resolver_pinned_accounts``: only users of these accounts (and the system account's) log in; None: any.
    resolver_pinned_accounts: list[str] | None = None
    # ``default_sentinel``: the user JWT a client without one of its own logs in with ("": none).
    default_sentinel: str = ""
    jetstream: bool = True
    # ``jetstream { domain: D }``: the API answers on ``$JS.D.API.>`` too, and INFO, PubAcks,
    # stream info and ``$JS.API.INFO`` name the domain.
    jetstream_domain: str = ""
    # fakejs only, set by code (never by a file or flag): JetStream replicated across the cluster's servers.
    jetstream_replicated: ReplicatedJetStream | None = None
    store_dir: str = ""
    # The ``jetstream { }`` block's server-wide settings.  The store limits are in bytes, -1
    # meaning nats-server's default (75% of memory / of the store's free disk).
    jetstream_max_memory: int = -1
    jetstream_max_store: int = -1
    # Stored, not served: settings that only tune nats-server's internals (buffers, sync,
    # clustering, queues).
    jetstream_unique_tag: str = ""
    # ``extension_hint``: ``no_extend`` is what fakejs does anyway (it never extends a JetStream over a
    # leaf); ``will_extend`` is refused.  Checked at start in a cluster, as nats-server checks it.
    jetstream_extension_hint: str = ""
    jetstream_strict: bool = True
    jetstream_sync_interval: float | None = None
    jetstream_sync_always: bool = False
    jetstream_max_buffered_size: int = 0
    jetstream_max_buffered_msgs: int = 0
    jetstream_max_catchup: int = 0
    jetstream_request_queue_limit: int = 0
    jetstream_info_queue_limit: int = 0
    # ``jetstream { limits { batch { ... } } }``: batch publish limits, counted apart for atomic and
    # fast batches (0: nats-server's defaults -- atomic: 50 in flight per stream, 1000 per server,
    # 1000 messages, 10 seconds; fast: 1000 per stream, 50,000 per server; max_msgs is atomic only).
    jetstream_batch_inflight_per_stream: int = 0
    jetstream_batch_inflight_total: int = 0
    jetstream_batch_max_msgs: int = 0
    jetstream_batch_timeout: float = 0.0
    server_tags: list[str] = field(default_factory=list)
    # ``system_account``: "$SYS" (the default) or a configured account.
    system_account: str = ""
    pid_file: str = ""
    http_host: str = ""
    http_port: int | None = None
    # nats-server's https_port: the monitoring documents over TLS, with the ``tls {}`` settings.
    https_port: int | None = None
    # ``tls {}`` / ``--tls*``: clients must speak TLS (after INFO, or first with
    # ``handshake_first``); ``allow_non_tls``: TLS is offered, plain text still accepted.
    tls: TLSConfig | None = None
    allow_non_tls: bool = False
    # ``websocket {}``: a second client listener speaking NATS inside WebSocket frames.
    websocket: WebSocketConfig | None = None
    # ``cluster {}`` / ``--cluster``: a route port, the routes dialled, the cluster's name.
    cluster: ClusterConfig | None = None
    # ``leafnodes {}``: the leaf port and the remotes (hubs) this server dials.
    leafnodes: LeafConfig | None = None
    debug: bool = False
    trace: bool = False
    # ``-VV`` / ``trace_verbose``: trace the system account's traffic too (fakejs has no internal
    # system client, so it traces as ``trace`` does); ``trace_headers``: trace only messages' headers.
    trace_verbose: bool = False
    trace_headers: bool = False
    # ``max_traced_msg_len``: a traced message longer than this is cut (0: whole).
    max_traced_msg_len: int = 0
    log_file: str = ""
    # ``-c FILE``: the configuration file as named, and nats-server's digest of it (its start line says both).
    config_file: str = ""
    config_digest: str = ""
    # nats-server's ports_file_dir: write ``<dir>/<executable>_<pid>.ports`` (the listeners'
    # URLs, as JSON) once listening, and remove it at shutdown; empty: no ports file.
    ports_file_dir: str = ""
    lame_duck_duration: float = 120.0
    lame_duck_grace_period: float = 10.0
    # fakejs only: keep every connection's bytes in and out (see Server.transcript).
    transcripts: bool = False
    # fakejs only: judge how clients consume (pulls, acks, reactions to statuses) against
    # ADR-37/13/42/17; see Server.conformance().
    conformance: bool = False
    # fakejs only: how many events the timeline keeps (the newest; 0: none recorded); see
    # Server.timeline() and docs/guide/timeline.md.
    timeline: int = 10_000
    # fakejs only: without a store_dir, warn as nats-server does ("Temporary storage directory
    # used, ..."). The command line does; an in-process server, whose temporary store is the rule,
    # says only that it removes the store at exit.
    warn_temporary_store: bool = False
    # fakejs only: serve the control API on $FAKEJS.> (and /fakejs/ over HTTP).
    control: bool = True
    # fakejs only: a secret the control API asks for even when clients need none (HTTP:
    # ``Authorization: Bearer``; NATS: the connection's token).  Credentials that NATS
    # requires are accepted by the control API too.
    control_token: str = ""
    # fakejs only: directories whose ``*.toml`` files a control request may start by file
    # name (next to the shipped scenarios); a request never names a path.
    scenario_dirs: list[str] = field(default_factory=list)
    # fakejs only: seed of the server's one random generator (ids, nonces, pin ids, jitter);
    # with the same seed and a manual clock, the same client bytes get the same replies.
    seed: int | None = None

    @property
    def auth_required(self) -> bool:
        return bool(self.token or self.user or self.all_users() or self.trusted_operators)

    def all_users(self) -> list[User]:
        """``users`` and every account's users (each naming its account), as nats-server merges them."""
        merged = list(self.users)
        for account in self.accounts:
            merged.extend(u if u.account == account.name else replace(u, account=account.name) for u in account.users)
        return merged
