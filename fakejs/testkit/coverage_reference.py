"""The coverage page's tables, rendered from :mod:`fakejs.testkit.coverage` and fakejs's own registries.

The configuration keys come from nats-server's list (:data:`NATS_SERVER_KEYS`)
sorted by what fakejs's configuration loader does with each; the command
line flags from :data:`FLAGS`.  The text lies between two markers on the
page (:data:`BEGIN`, :data:`END`); :func:`with_reference` puts the current
text there, so a test can tell when the page and the facts differ.
"""

from __future__ import annotations

from fakejs.core.configfile.listeners import BLOCK_ALIASES, BLOCKS
from fakejs.core.configfile.load import IGNORED_BOOLEANS, IGNORED_INTEGERS, REFUSED
from fakejs.protocol.connect import CLIENT_OPTS
from fakejs.testkit.coverage import (
    DIFFERS,
    HEADERS,
    JETSTREAM_API,
    MONITORING,
    PROTOCOL,
    SERVED,
    SYSTEM_EVENTS,
    SYSTEM_REQUESTS,
    Feature,
    connect_features,
)
from fakejs.testkit.coverage import (
    REFUSED as REFUSED_STATUS,
)
from fakejs.testkit.coverage_jetstream import (
    ACKS,
    ADVISORIES,
    CONSUMER_FIELDS,
    DIRECT_GET_FIELDS,
    PULL_FIELDS,
    STATUS_LINES,
    STREAM_FIELDS,
    error_features,
)

__all__ = ["BEGIN", "END", "FLAGS", "NATS_SERVER_KEYS", "config_features", "reference_markdown", "with_reference"]

CONNECT_FIELDS = connect_features(tuple(field.name for field in CLIENT_OPTS.fields))

BEGIN = "<!-- coverage: generated from fakejs/testkit/coverage.py; do not edit by hand -->"
END = "<!-- end of coverage -->"

# The top-level keys of nats-server 2.15.1's configuration file (``processConfigFileLine``).
NATS_SERVER_KEYS: tuple[str, ...] = tuple(
    [
        "accounts",
        "account_resolver",
        "accounts_resolver",
        "allow_non_tls",
        "authorization",
        "client_advertise",
        "cluster",
        "connect_error_reports",
        "debug",
        "default_js_domain",
        "default_sentinel",
        "disable_sublist_cache",
        "feature_flags",
        "gateway",
        "host",
        "http",
        "http_base_path",
        "http_port",
        "https",
        "https_port",
        "jetstream",
        "lame_duck_duration",
        "lame_duck_grace_period",
        "leaf",
        "leafnodes",
        "listen",
        "log_file",
        "log_max_num",
        "log_size_limit",
        "logfile",
        "logfile_max_num",
        "logfile_size_limit",
        "logtime",
        "logtime_utc",
        "mappings",
        "maps",
        "max_closed_clients",
        "max_conn",
        "max_connections",
        "max_control_line",
        "max_payload",
        "max_pending",
        "max_sub_tokens",
        "max_subs",
        "max_subscription_tokens",
        "max_subscriptions",
        "max_traced_msg_len",
        "monitor_port",
        "mqtt",
        "net",
        "no_auth_user",
        "no_fast_producer_stall",
        "no_header_support",
        "no_sublist_cache",
        "no_sys_acc",
        "no_system",
        "no_system_account",
        "ocsp",
        "ocsp_cache",
        "operator",
        "operators",
        "pid_file",
        "pidfile",
        "ping_interval",
        "ping_max",
        "port",
        "ports_file_dir",
        "prof_block_rate",
        "prof_port",
        "proxies",
        "proxy_protocol",
        "reconnect_error_reports",
        "remote_syslog",
        "resolver",
        "resolver_pinned_accounts",
        "resolver_preload",
        "resolver_tls",
        "root",
        "root_operator",
        "root_operators",
        "roots",
        "server_metadata",
        "server_name",
        "server_tags",
        "store_dir",
        "storedir",
        "syslog",
        "system",
        "system_account",
        "tls",
        "trace",
        "trace_headers",
        "trace_verbose",
        "trusted",
        "trusted_keys",
        "websocket",
        "write_deadline",
        "write_timeout",
        "ws",
    ]
)

LISTENER_ONLY = (
    "a block with only `listen`, `host` or `port` starts, with a notice that the listener is not served;"
    " anything more in it is refused by name"
)
LEAF_NODES = (
    "the leaf port and remotes, each link bound to an account, in a cluster too, see [Leaf nodes](leafnodes.md);"
    " what it does not serve yet is refused by name"
)
OPERATOR_MODE = "see [operator mode](auth.md#operator-jwt-mode)"
RESOLVER = (
    "`MEMORY` and `{ type: full | cache }` (a login asks the cluster for an account it lacks, full resolvers sync); "
    "`URL(...)` is refused by name; " + OPERATOR_MODE
)
BLOCK_NOTES = {
    "cluster": "see [Clusters](clusters.md)",
    "websocket": "see [TLS and WebSocket](tls-websocket.md)",
    **dict.fromkeys(("operator", "operators", "root", "roots", "root_operator", "root_operators"), OPERATOR_MODE),
    **dict.fromkeys(("resolver", "account_resolver", "accounts_resolver"), RESOLVER),
    "resolver_preload": OPERATOR_MODE,
}


def refusal(key: str) -> str:
    """The text a file setting a refused key fails with (after ``FILE:LINE:COL: ``)."""
    if key == "no_fast_producer_stall":
        return f"turning the fast producer stall off ({key}): not supported by fakejs yet"
    return f"{REFUSED[key]} ({key}): not supported by fakejs yet"


def _config_feature(key: str) -> Feature:
    if key in REFUSED or key == "no_fast_producer_stall":
        note = "with `true` (`false` is accepted)" if key == "no_fast_producer_stall" else ""
        return Feature(key, REFUSED_STATUS, refusal(key), note=note)
    if key in ("leafnodes", "leaf"):
        return Feature(key, DIFFERS, LEAF_NODES)
    if key in BLOCKS or key in BLOCK_ALIASES:
        return Feature(key, DIFFERS, LISTENER_ONLY)
    if key in IGNORED_BOOLEANS or key in IGNORED_INTEGERS:
        return Feature(key, DIFFERS, "read (type checked) and ignored: it changes nothing fakejs does")
    return Feature(key, SERVED, BLOCK_NOTES.get(key, ""))


def config_features() -> tuple[Feature, ...]:
    """One row per nats-server configuration key."""
    return tuple(_config_feature(key) for key in NATS_SERVER_KEYS)


def _flag(dest: str, names: str, status: str = SERVED, how: str = "") -> tuple[str, str, str, str]:
    return dest, names, status, how


# nats-server's command line flags by option (every spelling sets it): status and how.
FLAGS: tuple[tuple[str, str, str, str], ...] = (
    _flag("help", "-h, --help"),
    _flag("port", "-p, --port", how="-1 picks a free port, as nats-server"),
    _flag("name", "-n, --name, --server_name"),
    _flag("addr", "-a, --addr, --net", DIFFERS, "default 127.0.0.1 (nats-server's: 0.0.0.0)"),
    _flag("client_advertise", "--client_advertise", REFUSED_STATUS, "client advertise URLs for clusters (--client_advertise): not supported by fakejs yet"),
    _flag("debug", "-D, --debug"),
    _flag("trace", "-V, --trace"),
    _flag("verbose_trace", "-VV"),
    _flag("debug_trace", "-DV"),
    _flag("debug_verbose_trace", "-DVV"),
    _flag("logtime", "-T, --logtime", DIFFERS, "`-T=false` is refused: `log lines without timestamps (-T=false): not supported by fakejs yet`"),
    _flag("logtime_utc", "--logtime_utc", REFUSED_STATUS, "UTC log timestamps (--logtime_utc): not supported by fakejs yet"),
    _flag("user", "--user"),
    _flag("password", "--pass"),
    _flag("auth", "--auth"),
    _flag("http_port", "-m, --http_port"),
    _flag("https_port", "-ms, --https_port"),
    _flag("config", "-c, --config"),
    _flag("check_config", "-t"),
    _flag("signal", "-sl, --signal", SERVED, "`stop`, `quit`, `term`, `reopen`, `ldm`, `reload`, to a pid, pid file, prefix or the one running server"),
    _flag("pid", "-P, --pid"),
    _flag("ports_file_dir", "--ports_file_dir"),
    _flag("log", "-l, --log"),
    _flag("log_size_limit", "--log_size_limit", REFUSED_STATUS, "log file rotation (--log_size_limit): not supported by fakejs yet"),
    _flag("syslog", "-s, --syslog", REFUSED_STATUS, "syslog logging (-s/--syslog): not supported by fakejs yet"),
    _flag("remote_syslog", "-r, --remote_syslog", REFUSED_STATUS, "remote syslog logging (-r/--remote_syslog): not supported by fakejs yet"),
    _flag("version", "-v, --version"),
    _flag("profile", "--profile", REFUSED_STATUS, "the profiling port (--profile): not supported by fakejs yet"),
    _flag("routes", "--routes", how="see [Clusters](clusters.md)"),
    _flag("cluster", "--cluster, --cluster_listen"),
    _flag("cluster_advertise", "--cluster_advertise"),
    _flag("no_advertise", "--no_advertise"),
    _flag("connect_retries", "--connect_retries"),
    _flag("cluster_name", "--cluster_name"),
    _flag("help_tls", "--help_tls"),
    _flag("tls", "--tls"),
    _flag("tlsverify", "--tlsverify"),
    _flag("tlscert", "--tlscert"),
    _flag("tlskey", "--tlskey"),
    _flag("tlscacert", "--tlscacert"),
    _flag("max_traced_msg_len", "--max_traced_msg_len"),
    _flag("jetstream", "-js, --jetstream"),
    _flag("store_dir", "-sd, --store_dir"),
)  # fmt: skip


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _table(features: tuple[Feature, ...], first: str) -> str:
    lines = [f"| {first} | fakejs | how |", "| --- | --- | --- |"]
    for feature in features:
        how = f"`{_cell(feature.how)}`" if feature.status == REFUSED_STATUS else _cell(feature.how)
        how += f" {feature.note}" if feature.note else ""
        lines.append(f"| `{_cell(feature.name)}` | **{feature.status}** | {how} |")
    return "\n".join(lines) + "\n"


def _counts(features: tuple[Feature, ...]) -> str:
    counted = {status: sum(1 for f in features if f.status == status) for status in (SERVED, REFUSED_STATUS, DIFFERS)}
    return ", ".join(f"{count} {status}" for status, count in counted.items())


def _flags_table() -> str:
    lines = ["| flag | fakejs | how |", "| --- | --- | --- |"]
    for _, names, status, how in FLAGS:
        shown = f"`{_cell(how)}`" if status == REFUSED_STATUS else _cell(how)
        lines.append(f"| `{names}` | **{status}** | {shown} |")
    return "\n".join(lines) + "\n"


def flag_features() -> tuple[Feature, ...]:
    """The flags as rows (for the counts)."""
    return tuple(Feature(names, status, how) for _, names, status, how in FLAGS)


def all_features() -> tuple[Feature, ...]:
    """Every row of the page."""
    jetstream = STREAM_FIELDS + CONSUMER_FIELDS + PULL_FIELDS + DIRECT_GET_FIELDS + ACKS + ADVISORIES
    jetstream += status_features() + error_features()
    core = PROTOCOL + CONNECT_FIELDS + HEADERS + config_features() + flag_features()
    return JETSTREAM_API + SYSTEM_REQUESTS + SYSTEM_EVENTS + MONITORING + jetstream + core


def _errors() -> str:
    rows = error_features()
    answered = [row.name.split(" ", 1)[0] for row in rows if row.status == SERVED]
    unanswered = tuple(row for row in rows if row.status != SERVED)
    return (
        f"All {len(rows)} JetStream API errors of nats-server 2.15.1 are in fakejs's error table with"
        f" nats-server's `code`, `err_code` and description. {_counts(rows)}: fakejs answers with"
        f" {', '.join(answered)} where nats-server does; never with these:\n\n{_table(unanswered, 'error')}"
    )


def status_features() -> tuple[Feature, ...]:
    """The status lines as rows."""
    return tuple(row for row, _, _ in STATUS_LINES)


SECTIONS = (
    ("`$JS.API` subjects", "Probed on a fresh server holding stream `S` and pull consumer `C`.", JETSTREAM_API, "subject"),
    ("`$SYS` requests", "Sent from the system account.", SYSTEM_REQUESTS, "subject"),
    ("`$SYS` events", "What a client of the system account hears when it subscribes.", SYSTEM_EVENTS, "subject"),
    ("Monitoring endpoints", "On the `http_port`.", MONITORING, "path"),
    ("Protocol operations", "", PROTOCOL, "operation"),
    ("CONNECT fields", "", CONNECT_FIELDS, "field"),
    ("Headers clients send", "On messages published to streams, and on requests.", HEADERS, "header"),
    ("Stream configuration fields", "In `STREAM.CREATE` and `STREAM.UPDATE` requests.", STREAM_FIELDS, "field"),
    ("Consumer configuration fields", "In `CONSUMER.CREATE` requests.", CONSUMER_FIELDS, "field"),
    ("Pull request fields", "In `CONSUMER.MSG.NEXT` requests.", PULL_FIELDS, "field"),
    ("Direct Get request fields", "In `DIRECT.GET` requests.", DIRECT_GET_FIELDS, "field"),
    ("Acknowledgements and other replies", "What a client sends back on JetStream's reply subjects.", ACKS, "reply"),
    ("Status lines", "What pull requests, push consumers and Direct Get hear.", status_features(), "status"),
    (
        "Advisories",
        "Subjects under `$JS.EVENT.ADVISORY.`, as [What JetStream serves](jetstream.md#advisories) describes them.",
        ADVISORIES,
        "subject",
    ),
)  # fmt: skip


def reference_markdown() -> str:
    """The page's generated part: the counts, then a table per kind of feature."""
    everything = all_features()
    parts = [f"In all: {_counts(everything)}.\n"]
    for title, intro, features, first in SECTIONS:
        parts.append(f"### {title}\n\n{intro + ' ' if intro else ''}{_counts(features)}.\n\n{_table(features, first)}")
    configs = config_features()
    parts.append(f"### Configuration file keys\n\n{_counts(configs)}.\n\n{_table(configs, 'key')}")
    parts.append(f"### Command line flags\n\n{_counts(flag_features())}.\n\n{_flags_table()}")
    parts.append(f"### Error codes\n\n{_errors()}")
    return "\n".join(parts)


def with_reference(page: str) -> str:
    """``page`` with the current tables between its markers."""
    start = page.index(BEGIN) + len(BEGIN)
    end = page.index(END, start)
    return page[:start] + "\n\n" + reference_markdown() + "\n" + page[end:]
