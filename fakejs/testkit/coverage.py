"""What fakejs does with each thing a client of nats-server 2.15.1 can send: the facts of the coverage page.

Every row names one feature (a subject, a header, a path, an operation)
and says whether fakejs **serves** it as nats-server does, **refuses** it by
name (``how`` is the exact error a client gets) or **differs** (``how``
says how).  :mod:`fakejs.testkit.coverage_reference` renders the rows into
``docs/guide/coverage.md``, and the test suite checks each row against a
running server: a row with a :class:`Probe` is sent, and its answer must
have the probe's fingerprint (on fakejs and, for a served row, on
nats-server too).

Fingerprints: ``type:<response type>`` or ``type:<response type>/<err_code>``
for a JSON API answer, ``status:<code>`` for a status message,
``message`` for a stored message, ``silent`` for no answer at all,
``no responders`` for the 503 of a subject nobody listens on,
``data`` or ``error:<code>`` for a ``$SYS`` envelope, ``count`` for a bare number.
"""

from __future__ import annotations

from dataclasses import dataclass

SERVED = "served"
REFUSED = "refused"
DIFFERS = "differs"
STATUSES = (SERVED, REFUSED, DIFFERS)


@dataclass(frozen=True)
class Probe:
    """A request that shows a row's claim: its subject, body and the answer's fingerprint."""

    subject: str
    body: bytes = b""
    expect: str = "silent"


@dataclass(frozen=True)
class Feature:
    """One row: what a client sends, what fakejs does with it, and how to check it."""

    name: str
    status: str
    how: str = ""
    probe: Probe | None = None
    note: str = ""  # said after a refusal's quoted text


def _api(name: str, subject: str, expect: str, body: bytes = b"", how: str = "") -> Feature:
    return Feature(name, SERVED, how, Probe(subject, body, expect))


CLUSTER = "503, 10010 `JetStream clustering support required` on one server"
SNAPSHOT_REFUSAL = "snapshot failed: stream snapshots are not supported by fakejs"
RESTORE_REFUSAL = "restore failed: stream restores are not supported by fakejs"
SYSTEM_ONLY = "system account only; nats-server answers nothing from another account, nor does fakejs"

# The setup every probe below runs after, on a fresh server: stream S (subjects s.>, allow_direct)
# holding one message on s.a, and a durable pull consumer C with explicit acks.
JETSTREAM_API: tuple[Feature, ...] = (
    _api("$JS.API.INFO", "$JS.API.INFO", "type:account_info_response"),
    _api(
        "$JS.API.STREAM.CREATE.<stream>",
        "$JS.API.STREAM.CREATE.X",
        "type:stream_create_response",
        b'{"name":"X","subjects":["x"]}',
    ),
    _api(
        "$JS.API.STREAM.UPDATE.<stream>",
        "$JS.API.STREAM.UPDATE.S",
        "type:stream_update_response",
        b'{"name":"S","subjects":["s.>"],"allow_direct":true}',
    ),
    _api("$JS.API.STREAM.NAMES", "$JS.API.STREAM.NAMES", "type:stream_names_response"),
    _api("$JS.API.STREAM.LIST", "$JS.API.STREAM.LIST", "type:stream_list_response"),
    _api("$JS.API.STREAM.INFO.<stream>", "$JS.API.STREAM.INFO.S", "type:stream_info_response"),
    _api("$JS.API.STREAM.MSG.GET.<stream>", "$JS.API.STREAM.MSG.GET.S", "type:stream_msg_get_response", b'{"seq":1}'),
    _api("$JS.API.DIRECT.GET.<stream>", "$JS.API.DIRECT.GET.S", "message", b'{"seq":1}'),
    _api("$JS.API.DIRECT.GET.<stream>.<subject>", "$JS.API.DIRECT.GET.S.s.a", "message"),
    _api("$JS.API.STREAM.DELETE.<stream>", "$JS.API.STREAM.DELETE.X", "type:stream_delete_response"),
    Feature(
        "$JS.API.STREAM.SNAPSHOT.<stream>",
        REFUSED,
        SNAPSHOT_REFUSAL,
        Probe("$JS.API.STREAM.SNAPSHOT.S", b'{"deliver_subject":"snap.x"}', "type:stream_snapshot_response/10064"),
    ),
    Feature(
        "$JS.API.STREAM.RESTORE.<stream>",
        REFUSED,
        RESTORE_REFUSAL,
        Probe("$JS.API.STREAM.RESTORE.R", b'{"config":{"name":"R"}}', "type:stream_restore_response/10062"),
    ),
    _api(
        "$JS.API.CONSUMER.CREATE.<stream>",
        "$JS.API.CONSUMER.CREATE.S",
        "type:consumer_create_response",
        b'{"stream_name":"S","config":{}}',
    ),
    _api(
        "$JS.API.CONSUMER.CREATE.<stream>.<consumer>",
        "$JS.API.CONSUMER.CREATE.S.C2",
        "type:consumer_create_response",
        b'{"stream_name":"S","config":{"name":"C2"}}',
    ),
    _api(
        "$JS.API.CONSUMER.CREATE.<stream>.<consumer>.<filter>",
        "$JS.API.CONSUMER.CREATE.S.C3.s.a",
        "type:consumer_create_response",
        b'{"stream_name":"S","config":{"name":"C3","filter_subject":"s.a"}}',
    ),
    _api(
        "$JS.API.CONSUMER.DURABLE.CREATE.<stream>.<consumer>",
        "$JS.API.CONSUMER.DURABLE.CREATE.S.C4",
        "type:consumer_create_response",
        b'{"stream_name":"S","config":{"durable_name":"C4","ack_policy":"explicit"}}',
    ),
    _api("$JS.API.CONSUMER.NAMES.<stream>", "$JS.API.CONSUMER.NAMES.S", "type:consumer_names_response"),
    _api("$JS.API.CONSUMER.LIST.<stream>", "$JS.API.CONSUMER.LIST.S", "type:consumer_list_response"),
    _api("$JS.API.CONSUMER.INFO.<stream>.<consumer>", "$JS.API.CONSUMER.INFO.S.C", "type:consumer_info_response"),
    _api(
        "$JS.API.CONSUMER.DELETE.<stream>.<consumer>", "$JS.API.CONSUMER.DELETE.S.C4", "type:consumer_delete_response"
    ),
    _api("$JS.API.CONSUMER.PAUSE.<stream>.<consumer>", "$JS.API.CONSUMER.PAUSE.S.C", "type:consumer_pause_response"),
    _api(
        "$JS.API.CONSUMER.UNPIN.<stream>.<consumer>",
        "$JS.API.CONSUMER.UNPIN.S.C",
        "type:consumer_unpin_response/10160",
        b'{"group":"g"}',
    ),
    _api("$JS.API.CONSUMER.RESET.<stream>.<consumer>", "$JS.API.CONSUMER.RESET.S.C", "type:consumer_reset_response"),
    _api(
        "$JS.API.STREAM.MSG.DELETE.<stream>",
        "$JS.API.STREAM.MSG.DELETE.S",
        "type:stream_msg_delete_response",
        b'{"seq":1}',
    ),
    _api("$JS.API.STREAM.PURGE.<stream>", "$JS.API.STREAM.PURGE.S", "type:stream_purge_response"),
    _api(
        "$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>",
        "$JS.API.CONSUMER.MSG.NEXT.S.C",
        "status:404",
        b'{"batch":1,"no_wait":true}',
    ),
    _api(
        "$JS.API.STREAM.LEADER.STEPDOWN.<stream>",
        "$JS.API.STREAM.LEADER.STEPDOWN.S",
        "type:stream_leader_stepdown_response/10010",
        how=CLUSTER + "; served in [clusters](clusters.md)",
    ),
    _api(
        "$JS.API.STREAM.PEER.REMOVE.<stream>",
        "$JS.API.STREAM.PEER.REMOVE.S",
        "type:stream_remove_peer_response/10010",
        how=CLUSTER + "; served in [clusters](clusters.md)",
    ),
    _api(
        "$JS.API.STREAM.PEER.EVACUATE.<stream>",
        "$JS.API.STREAM.PEER.EVACUATE.S",
        "type:stream_evacuate_peer_response/10010",
        how=CLUSTER + "; served in a JetStream replicated across servers ([clusters](clusters.md))",
    ),
    _api(
        "$JS.API.STREAM.CANCEL_MOVE.<stream>",
        "$JS.API.STREAM.CANCEL_MOVE.S",
        "type:stream_cancel_move_response/10010",
        how=CLUSTER + "; served in a JetStream replicated across servers ([clusters](clusters.md))",
    ),
    _api(
        "$JS.API.CONSUMER.LEADER.STEPDOWN.<stream>.<consumer>",
        "$JS.API.CONSUMER.LEADER.STEPDOWN.S.C",
        "type:consumer_leader_stepdown_response/10010",
        how=CLUSTER + "; served in [clusters](clusters.md)",
    ),
    _api(
        "$JS.API.CONSUMER.PEER.REMOVE.<stream>.<consumer>",
        "$JS.API.CONSUMER.PEER.REMOVE.S.C",
        "type:consumer_remove_peer_response/10010",
        how=CLUSTER + "; served in [clusters](clusters.md)",
    ),
    _api(
        "$JS.API.CONSUMER.PEER.EVACUATE.<stream>.<consumer>",
        "$JS.API.CONSUMER.PEER.EVACUATE.S.C",
        "type:consumer_evacuate_peer_response/10010",
        how=CLUSTER + "; served in a JetStream replicated across servers ([clusters](clusters.md))",
    ),
    _api(
        "$JS.API.META.LEADER.STEPDOWN",
        "$JS.API.META.LEADER.STEPDOWN",
        "silent",
        how=SYSTEM_ONLY + "; served in [clusters](clusters.md)",
    ),
    _api("$JS.API.META.RESCUE", "$JS.API.META.RESCUE", "silent", how=SYSTEM_ONLY),
    _api(
        "$JS.API.SERVER.REMOVE",
        "$JS.API.SERVER.REMOVE",
        "silent",
        how=SYSTEM_ONLY + "; served in [clusters](clusters.md)",
    ),
    _api("$JS.API.SERVER.EVACUATE", "$JS.API.SERVER.EVACUATE", "silent", how=SYSTEM_ONLY),
    _api(
        "$JS.API.ACCOUNT.PURGE.<account>",
        "$JS.API.ACCOUNT.PURGE.A",
        "silent",
        how="from the system account: deletes the account's streams and answers `initiated` (in a cluster too);"
        " from another account no answer, as nats-server",
    ),
    _api(
        "$JS.API.ACCOUNT.STREAM.MOVE.<account>.<stream>",
        "$JS.API.ACCOUNT.STREAM.MOVE.A.S",
        "silent",
        how=SYSTEM_ONLY,
    ),
    _api(
        "$JS.API.ACCOUNT.STREAM.CANCEL_MOVE.<account>.<stream>",
        "$JS.API.ACCOUNT.STREAM.CANCEL_MOVE.A.S",
        "silent",
        how=SYSTEM_ONLY,
    ),
    _api(
        "$JS.API.STREAM.TEMPLATE.CREATE.<template>",
        "$JS.API.STREAM.TEMPLATE.CREATE.T",
        "silent",
        how="removed in nats-server 2.14: no answer, as there",
    ),
    _api(
        "$JS.API.STREAM.TEMPLATE.DELETE.<template>",
        "$JS.API.STREAM.TEMPLATE.DELETE.T",
        "silent",
        how="removed in nats-server 2.14: no answer, as there",
    ),
    _api(
        "$JS.API.STREAM.TEMPLATE.INFO.<template>",
        "$JS.API.STREAM.TEMPLATE.INFO.T",
        "silent",
        how="removed in nats-server 2.14: no answer, as there",
    ),
    _api(
        "$JS.API.STREAM.TEMPLATE.NAMES",
        "$JS.API.STREAM.TEMPLATE.NAMES",
        "silent",
        how="removed in nats-server 2.14: no answer, as there",
    ),
    _api("any other `$JS.API.` subject", "$JS.API.FOO.BAR", "silent", how="no answer, as nats-server"),
)


def _sys(name: str, subject: str, expect: str = "data", status: str = SERVED, how: str = "") -> Feature:
    return Feature(name, status, how, Probe(subject, b"", expect))


def _kind(kind: str, how: str = "") -> Feature:
    return _sys(f"$SYS.REQ.SERVER.PING.{kind}, $SYS.REQ.SERVER.<id>.{kind}", f"$SYS.REQ.SERVER.<id>.{kind}", how=how)


def _refused_kind(kind: str, feature: str) -> Feature:
    name = f"$SYS.REQ.SERVER.PING.{kind}, $SYS.REQ.SERVER.<id>.{kind}"
    text = f"{kind} ({feature}): not supported by fakejs yet"
    return _sys(name, f"$SYS.REQ.SERVER.<id>.{kind}", "error:500", REFUSED, text)


JWT = (
    "with a full (LOOKUP, PACK) or cache account resolver, as nats-server (see [operator mode](auth.md#operator-jwt-mode));"
    " without one nats-server has no responders either"
)

# Probed as user ``sys`` of the system account SYS, with user ``a`` of account A connected
# (a subject starting ``A:`` is sent by ``a``).
SYSTEM_REQUESTS: tuple[Feature, ...] = (
    _sys("$SYS.REQ.SERVER.PING", "$SYS.REQ.SERVER.PING"),
    _kind("IDZ", "the default `server_name` is `fakejs-` and 8 characters, nats-server's is the server id"),
    _kind("STATSZ"),
    _kind("VARZ"),
    _kind("SUBSZ"),
    _kind("CONNZ"),
    _kind("ROUTEZ"),
    _kind("GATEWAYZ", "no gateways: always empty"),
    _kind(
        "LEAFZ",
        "`compression` says `off`: fakejs does not compress leaf connections; `rtt` is measured from the link's first PONG, as nats-server",
    ),
    _kind("ACCOUNTZ"),
    _kind("JSZ"),
    _kind("HEALTHZ"),
    _kind("RAFTZ", "no Raft groups: always empty"),
    _refused_kind("PROFILEZ", "Go runtime profiles"),
    _refused_kind("EXPVARZ", "Go runtime variables"),
    _refused_kind("IPQUEUESZ", "internal queue sizes"),
    Feature(
        "$SYS.REQ.SERVER.<id>.KICK",
        SERVED,
        '`{"cid": N}` closes the client (reason `Kicked`)',
        Probe("$SYS.REQ.SERVER.<id>.KICK", b'{"cid":999999}', "error:500"),
    ),
    Feature(
        "$SYS.REQ.SERVER.<id>.LDM",
        SERVED,
        '`{"cid": N}` sends the client an INFO with `"ldm": true`',
        Probe("$SYS.REQ.SERVER.<id>.LDM", b'{"cid":999999}', "error:500"),
    ),
    Feature(
        "$SYS.REQ.SERVER.<id>.RELOAD",
        SERVED,
        "reloads the configuration file; what reloads and what is refused: [Reloading](configuration.md#reloading)",
    ),
    _sys("$SYS.REQ.ACCOUNT.<account>.SUBSZ", "$SYS.REQ.ACCOUNT.A.SUBSZ"),
    _sys("$SYS.REQ.ACCOUNT.<account>.CONNZ", "$SYS.REQ.ACCOUNT.A.CONNZ"),
    _sys(
        "$SYS.REQ.ACCOUNT.<account>.LEAFZ",
        "$SYS.REQ.ACCOUNT.A.LEAFZ",
        how="`compression` says `off`: fakejs does not compress leaf connections; `rtt` is measured from the link's first PONG, as nats-server",
    ),
    _sys("$SYS.REQ.ACCOUNT.<account>.JSZ", "$SYS.REQ.ACCOUNT.A.JSZ"),
    _sys(
        "$SYS.REQ.ACCOUNT.<account>.INFO",
        "$SYS.REQ.ACCOUNT.A.INFO",
        status=DIFFERS,
        how="the account's `imports`, `exports` and `responses` are not listed",
    ),
    _sys("$SYS.REQ.ACCOUNT.<account>.STATZ", "$SYS.REQ.ACCOUNT.A.STATZ"),
    _sys(
        "$SYS.REQ.ACCOUNT.<account>.CONNS",
        "$SYS.REQ.ACCOUNT.A.CONNS",
        "type:io.nats.server.advisory.v1.account_connections",
    ),
    _sys("$SYS.REQ.ACCOUNT.PING.STATZ", "$SYS.REQ.ACCOUNT.PING.STATZ"),
    _sys("$SYS.REQ.ACCOUNT.PING.CONNZ", "$SYS.REQ.ACCOUNT.PING.CONNZ"),
    _sys(
        "$SYS.REQ.ACCOUNT.PING.STATZ, $SYS.REQ.ACCOUNT.PING.CONNZ, $SYS.REQ.SERVER.PING.CONNZ from another account",
        "A:$SYS.REQ.ACCOUNT.PING.CONNZ",
        how="about the requester's account, as nats-server's imports of them into every account",
    ),
    _sys("$SYS.REQ.USER.INFO", "$SYS.REQ.USER.INFO", how="in every account"),
    _sys("$SYS.REQ.ACCOUNT.<account>.CLAIMS.LOOKUP", "$SYS.REQ.ACCOUNT.A.CLAIMS.LOOKUP", "no responders", how=JWT),
    _sys(
        "$SYS.REQ.ACCOUNT.<account>.CLAIMS.UPDATE with an empty body",
        "$SYS.REQ.ACCOUNT.A.CLAIMS.UPDATE",
        "error:500",
        how="`jwt update error - request body is empty`, as nats-server",
    ),
    Feature(
        "$SYS.REQ.ACCOUNT.<account>.CLAIMS.UPDATE, $SYS.ACCOUNT.<account>.CLAIMS.UPDATE",
        SERVED,
        "a trusted account JWT is stored (full and cache resolvers) and applied to the account in use: its clients"
        " follow its limits and revocations (see [operator mode](auth.md#operator-jwt-mode))",
        Probe("$SYS.REQ.ACCOUNT.A.CLAIMS.UPDATE", b"eyJ0eXAiOiJKV1QifQ", "error:500"),
    ),
    _sys("$SYS.REQ.CLAIMS.PACK, LIST, UPDATE, DELETE", "$SYS.REQ.CLAIMS.LIST", "no responders", how=JWT),
    Feature(
        "$SYS.REQ.ACCOUNT.NSUBS",
        SERVED,
        '`{"acc", "subject", "queue"}`: the number of the account\'s client subscriptions on it',
        Probe("$SYS.REQ.ACCOUNT.NSUBS", b'{"acc":"A","subject":"x"}', "count"),
    ),
    _sys(
        "$SYS.DEBUG.SUBSCRIBERS",
        "$SYS.DEBUG.SUBSCRIBERS",
        "count",
        how="the number of the system account's client subscriptions on `<subject> [<queue>]`",
    ),
    _sys("any other `$SYS.REQ.` subject", "$SYS.REQ.SERVER.<id>.FOOZ", "no responders", how="as nats-server"),
)


SUBSCRIPTION_COUNTS = (
    "subscription counts include the control API's subscription (`$FAKEJS.>`, absent with `control=False`"
    " or `--no_control`)"
)


def _path(path: str, how: str = "", expect: str = "200") -> Feature:
    return Feature(path, SERVED, how, Probe(path, b"", f"http:{expect}"))


def _refused_path(path: str, feature: str) -> Feature:
    return Feature(path, REFUSED, f"{path} ({feature}): not supported by fakejs yet", Probe(path, b"", "http:501"))


MONITORING: tuple[Feature, ...] = (
    _path("/varz"),
    _path(
        "/connz",
        "query options `sort`, `auth`, `subs`, `offset`, `limit`, `cid`, `state`, `acc`, `user`, `mqtt_client`",
    ),
    _path("/routez", "query option `subs`"),
    _path(
        "/subsz",
        "query options `subs`, `offset`, `limit`, `test`, `acc`; `num_cache`, `num_matches`, `cache_hit_rate`"
        " and the fanouts are 0 (fakejs keeps no subject cache)",
    ),
    _path("/subscriptionsz", "nats-server's other name for /subsz"),
    _path(
        "/jsz",
        "query options `acc`, `accounts`, `streams`, `consumers`, `direct-consumers`, `config`, `leader-only`,"
        " `stream-leader-only`, `raft`, `offset`, `limit`",
    ),
    _path(
        "/healthz",
        "query options `js-enabled-only`, `js-server-only`, `js-meta-only`, `details`, `account`, `stream`,"
        " `consumer`: as a single nats-server, only streams with file storage are found",
    ),
    _path("/accountz", "every account's name"),
    Feature(
        "/accountz?acc=<account>",
        DIFFERS,
        SUBSCRIPTION_COUNTS + "; the account's `imports`, `exports` and `responses` are not listed",
        Probe("/accountz?acc=$G", b"", "http:200"),
    ),
    _path("/accstatz", "query option `unused`"),
    _path("/gatewayz", "no gateways: always empty"),
    _path(
        "/leafz",
        "`compression` says `off`: fakejs does not compress leaf connections; `rtt` is measured from the link's first PONG, as nats-server",
    ),
    _path("/ipqueuesz", "always `{}`: fakejs has no internal queues"),
    _path(
        "/raftz",
        "404 `No Raft nodes registered`, as a single nats-server; fakejs's clusters have no Raft groups",
        "404",
    ),
    Feature("subscription counts (/varz, /subsz, /accstatz, STATSZ, ...)", DIFFERS, SUBSCRIPTION_COUNTS),
    _refused_path("/", "the monitoring home page"),
    _refused_path("/stacksz", "Go stacks"),
    _refused_path("/debug/vars", "Go runtime variables"),
    _path("any other path", "404 `404 page not found`, as nats-server", "404"),
)

PROTOCOL: tuple[Feature, ...] = (
    Feature("CONNECT", SERVED, "every field of nats-server's; `verbose` and `pedantic` default to true, as there"),
    Feature("PUB, HPUB", SERVED),
    Feature("SUB, UNSUB", SERVED),
    Feature("PING, PONG", SERVED),
    Feature("INFO, +OK, -ERR from a client", SERVED, "read and ignored, as nats-server"),
    Feature(
        "route and leaf operations (RS+, RMSG, LS+, A+, ...) from a client",
        SERVED,
        "`-ERR 'Unknown Protocol Operation'`",
    ),
    Feature("anything else", SERVED, "`-ERR 'Unknown Protocol Operation'`, connection closed"),
)

HEADERS: tuple[Feature, ...] = tuple(
    Feature(name, SERVED, how)
    for name, how in (
        ("Nats-Msg-Id", ""),
        ("Nats-Expected-Stream", ""),
        ("Nats-Expected-Last-Sequence", ""),
        ("Nats-Expected-Last-Subject-Sequence", ""),
        ("Nats-Expected-Last-Subject-Sequence-Subject", ""),
        ("Nats-Expected-Last-Msg-Id", ""),
        ("Nats-Rollup", ""),
        ("Nats-TTL", ""),
        ("Nats-Incr", ""),
        ("Nats-Batch-Id", "atomic batches"),
        ("Nats-Batch-Sequence", "atomic batches"),
        ("Nats-Batch-Commit", "atomic batches"),
        ("Nats-Schedule", ""),
        ("Nats-Schedule-Target", ""),
        ("Nats-Schedule-TTL", ""),
        ("Nats-Schedule-Rollup", ""),
        ("Nats-Schedule-Time-Zone", ""),
        ("Nats-Schedule-Source", ""),
        ("Nats-Stream-Source", "refused on a publish (10227), as nats-server"),
        ("Nats-Required-Api-Level", ""),
        ("Nats-Pin-Id", "on pull requests' answers (pinned clients)"),
        ("Nats-Trace-Dest", "[Message tracing](message-tracing.md), through routes too"),
        ("Nats-Trace-Only", "[Message tracing](message-tracing.md)"),
        ("traceparent", "[Message tracing](message-tracing.md): a sampled W3C trace context"),
        ("Accept-Encoding", "on a traced message: the trace event compressed (gzip, snappy)"),
        (
            "Nats-Trace-Origin-Account",
            "set by servers over routes; a client's stops the trace with nats-server's error line",
        ),
    )
)


CONNECT_NOTES = {
    "verbose": "true when absent (`CONNECT {}` is answered `+OK`), as nats-server",
    "pedantic": "true when absent, as nats-server",
    "protocol": "above 1: `-ERR 'invalid client protocol'`",
    "no_responders": "needs `headers`: `-ERR 'no responders requires headers support'` otherwise",
    "jwt": "operator (JWT) mode: the user JWT, with `sig` the nonce signed (not for bearer users); ignored otherwise, as nats-server",
    "account": "any value: `-ERR 'Authorization Violation'`, as nats-server",
    "new_account": "true: `-ERR 'Authorization Violation'`, as nats-server",
    "import": "for leaf nodes: ignored from a client, as nats-server",
    "export": "for leaf nodes: ignored from a client, as nats-server",
    "remote_account": "for leaf nodes: ignored from a client, as nats-server",
    "proxy_sig": "for trusted proxies, which fakejs refuses at start: ignored, as nats-server without them",
}


def connect_features(names: tuple[str, ...]) -> tuple[Feature, ...]:
    """The CONNECT fields (``names``: the fields fakejs reads) as rows."""
    return tuple(Feature(name, SERVED, CONNECT_NOTES.get(name, "")) for name in names)


# What a client of the system account hears when it subscribes, without asking.
SYSTEM_EVENTS: tuple[Feature, ...] = (
    Feature("$SYS.ACCOUNT.<account>.CONNECT", SERVED),
    Feature("$SYS.ACCOUNT.<account>.DISCONNECT", SERVED),
    Feature("$SYS.SERVER.<id>.CLIENT.AUTH.ERR", SERVED),
    Feature(
        "$SYS.ACCOUNT.CLIENT.AUTH.ERR",
        SERVED,
        "in the refused client's account (with a configuration-mode callout, the callout's account)",
    ),
    Feature("$SYS.ACCOUNT.<account>.SERVER.CONNS, $SYS.SERVER.ACCOUNT.<account>.CONNS", SERVED),
    Feature("$SYS.SERVER.<id>.STATSZ", SERVED, "while someone listens, on nats-server's schedule"),
    Feature("$SYS.SERVER.<id>.LAMEDUCK", SERVED),
    Feature("$SYS.SERVER.<id>.SHUTDOWN", SERVED),
    Feature(
        "$SYS.SERVER.<id>.OCSP.PEER.CONN.REJECT, ...OCSP.PEER.LINK.INVALID", DIFFERS, "never: OCSP is refused at start"
    ),
    Feature(
        "$SYS.LATENCY.M2.<hash>, service latency events", DIFFERS, "never: `latency` on an export is refused at start"
    ),
    Feature(
        "$SYS.ACCOUNT.<account>.LEAFNODE.CONNECT",
        SERVED,
        "never, as nats-server without gateways (it is sent for them only); a leaf connection's"
        " `$SYS.ACCOUNT.<account>.CONNECT` and `DISCONNECT` are sent",
    ),
)
