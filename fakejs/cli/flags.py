"""Every flag nats-server 2.15.1 defines, fakejs's own flags, and the usage text.

The flag set is parsed with Go's rules (:mod:`fakejs.gocompat.goflag`).
Each flag has a ``dest``; names sharing one (``-p`` and ``--port``) set the
same value, the last given winning.  Which flags fakejs serves and which it
refuses is decided in :mod:`fakejs.cli.settings`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from fakejs._version import __version__
from fakejs.cli.event_loop import AUTO, DEFAULT_SPIN, LOOP_VARIABLE, SPIN_VARIABLE
from fakejs.core.options import NATS_VERSION
from fakejs.gocompat.goflag import FlagSet, Parsed

# Where the control token may come from instead of the command line (which `ps` shows everyone).
CONTROL_TOKEN_VARIABLE = "FAKEJS_CONTROL_TOKEN"


def nats_server_flags(flags: FlagSet) -> None:
    """The flags of nats-server's ``ConfigureOptions``, with its defaults."""
    flags.bool("help", "h", "help")
    flags.int("port", "port", "p")
    flags.string("name", "n", "name", "server_name")
    flags.string("addr", "addr", "a", "net")
    flags.string("client_advertise", "client_advertise")
    flags.bool("debug", "D", "debug")
    flags.bool("trace", "V", "trace")
    flags.bool("verbose_trace", "VV")
    flags.bool("debug_trace", "DV")
    flags.bool("debug_verbose_trace", "DVV")
    flags.bool("logtime", "T", "logtime", default=True)
    flags.bool("logtime_utc", "logtime_utc")
    flags.string("user", "user")
    flags.string("password", "pass")
    flags.string("auth", "auth")
    flags.int("http_port", "m", "http_port")
    flags.int("https_port", "ms", "https_port")
    flags.string("config", "c", "config")
    flags.bool("check_config", "t")
    flags.string("signal", "sl", "signal")
    flags.string("pid", "P", "pid")
    flags.string("ports_file_dir", "ports_file_dir")
    flags.string("log", "l", "log")
    flags.int("log_size_limit", "log_size_limit")
    flags.bool("syslog", "s", "syslog")
    flags.string("remote_syslog", "r", "remote_syslog")
    flags.bool("version", "version", "v")
    flags.int("profile", "profile")
    flags.string("routes", "routes")
    flags.string("cluster", "cluster", "cluster_listen")
    flags.string("cluster_advertise", "cluster_advertise")
    flags.bool("no_advertise", "no_advertise")
    flags.int("connect_retries", "connect_retries")
    flags.string("cluster_name", "cluster_name")
    flags.bool("help_tls", "help_tls")
    flags.bool("tls", "tls")
    flags.bool("tlsverify", "tlsverify")
    flags.string("tlscert", "tlscert")
    flags.string("tlskey", "tlskey")
    flags.string("tlscacert", "tlscacert")
    flags.int("max_traced_msg_len", "max_traced_msg_len")
    flags.bool("jetstream", "js", "jetstream")
    flags.string("store_dir", "sd", "store_dir")


def fakejs_flags(flags: FlagSet) -> None:
    """fakejs's own flags: no nats-server spelling (nats-server refuses them as undefined)."""
    flags.string("scenario", "scenario")
    flags.list("scenario_dir", "scenario_dir")
    flags.string("clock", "clock")
    flags.float("autojump", "autojump")
    flags.int("seed", "seed")
    flags.bool("no_control", "no_control")
    flags.bool("conformance", "conformance")
    flags.string("control_token", "control_token", default=os.environ.get(CONTROL_TOKEN_VARIABLE, ""))
    flags.int("max_payload", "max_payload")
    flags.bool("tls_selfsigned", "tls-selfsigned", "tls_selfsigned")
    flags.string("tls_dir", "tls_dir", "tls-dir")
    flags.int("cluster_size", "cluster_size", default=1)
    flags.string("demo_credentials", "demo_credentials")
    flags.string("timeline", "timeline")
    flags.string("loop", "loop", default=os.environ.get(LOOP_VARIABLE) or AUTO)
    flags.string("spin", "spin", default=os.environ.get(SPIN_VARIABLE) or DEFAULT_SPIN)


def flag_set() -> FlagSet:
    flags = FlagSet()
    nats_server_flags(flags)
    fakejs_flags(flags)
    return flags


def parse_command_line(argv: Sequence[str]) -> Parsed:
    """Parse ``argv`` (without the program name); raises ``FlagError`` with Go's message."""
    return flag_set().parse(argv)


# nats-server's usage layout (printed with a blank line before and after): its sections in its order, each of
# its flags where it lists them, what fakejs does differently said beside the flag, and fakejs's own flags in a
# section of their own before the common options.
USAGE = f"""
Usage: fakejs [options]
       fakejs conformance run --client-cmd <command> [--scenario <name>]... [--json]

fakejs {__version__}: a JetStream-compatible NATS server for tests, taking nats-server {NATS_VERSION}'s options.
Options marked "refused" are known but not served: fakejs exits with status 1 naming them.

Server Options:
    -a, --addr, --net <host>         Bind to host address (default: 127.0.0.1; nats-server's: 0.0.0.0)
    -p, --port <port>                Use port for clients (default: 4222; -1 picks a free port)
    -n, --name
        --server_name <server_name>  Server name (default: auto)
    -P, --pid <file>                 File to store PID
    -m, --http_port <port>           Use port for http monitoring (-1 picks a free port)
    -ms,--https_port <port>          Use port for https monitoring (needs TLS)
    -c, --config <file>              Configuration file (command-line flags override its settings)
    -t                               Test configuration and exit (needs -c)
    -sl,--signal <signal>[=<pid>]    Send signal to nats-server process (ldm, stop, quit, term, reopen, reload)
        --client_advertise <string>  Client URL to advertise to other servers (refused)
        --ports_file_dir <dir>       Creates a ports file in the specified directory (<executable_name>_<pid>.ports).

Logging Options:
    -l, --log <file>                 File to redirect log output
    -T, --logtime                    Timestamp log entries (default: true; -T=false is refused)
        --logtime_utc                Timestamps in UTC instead of local timezone (refused)
    -s, --syslog                     Log to syslog or windows event log (refused)
    -r, --remote_syslog <addr>       Syslog server addr (refused)
    -D, --debug                      Enable debugging output
    -V, --trace                      Trace the raw protocol
    -VV                              Verbose trace (as -V: the system account's internal traffic is not traced)
    -DV                              Debug and trace
    -DVV                             Debug and verbose trace (as -DV)
        --log_size_limit <limit>     Logfile size limit (refused)
        --max_traced_msg_len <len>   Maximum printable length for traced messages (0 for unlimited)

JetStream Options:
    -js, --jetstream                 Enable JetStream functionality
    -sd, --store_dir <dir>           Set the storage directory

Authorization Options:
        --user <user>                User required for connections
        --pass <password>            Password required for connections
        --auth <token>               Authorization token required for connections

TLS Options:
        --tls                        Enable TLS, do not verify clients (default: false)
        --tlscert <file>             Server certificate file
        --tlskey <file>              Private key for server certificate
        --tlsverify                  Enable TLS, verify client certificates
        --tlscacert <file>           Client certificate CA for verification

Cluster Options:
        --routes <rurl-1, rurl-2>    Routes to solicit and connect
        --cluster <cluster-url>      Cluster URL for solicited routes (nats://[user:pass@]host:port, port -1: free)
        --cluster_name <string>      Cluster Name, if not set one will be dynamically generated
        --no_advertise <bool>        Do not advertise known cluster information to clients
        --cluster_advertise <string> Cluster URL to advertise to other servers
        --connect_retries <number>   For implicit routes, number of connect retries
        --cluster_listen <url>       Cluster url from which members can solicit routes (as --cluster)

Profiling Options:
        --profile <port>             Profiling HTTP port (refused)

fakejs Options:
        --scenario <file|name>       Start a fault scenario (a TOML file or a shipped name)
        --scenario_dir <dir>         Control requests may start this directory's .toml files by name (repeatable)
        --clock <real|manual>        Real time (default) or a manual clock moved over the control API
        --autojump <seconds>         With --clock manual, jump to the next timer after this much idle real time
        --seed <n>                   Seed every random choice (server id, names, jitter); with --clock manual,
                                     the same client bytes get the same replies run after run
        --conformance                Judge how clients consume against ADR-37 (report: $FAKEJS.CONFORMANCE,
                                     GET /fakejs/conformance)
        --no_control                 Do not serve the control API ($FAKEJS.>, /fakejs/)
        --control_token <token>      The control API needs this token (HTTP: Authorization: Bearer <token>;
                                     NATS: connect with the token); ${CONTROL_TOKEN_VARIABLE} keeps it off the command line
        --max_payload <bytes>        Maximum message payload (default: 1048576; a configuration file setting on nats-server)
        --tls-selfsigned             Serve TLS with a CA and certificates made at start (paths logged; with
                                     --tlsverify clients must show the client certificate made alongside)
        --tls_dir <dir>              Where --tls-selfsigned writes them (default: a temporary directory)
        --cluster_size <n>           Run n nodes in this process as one cluster (ports from -p and -m up,
                                     nodes named <-n or "n">1..n, one ports file listing them all)
        --demo_credentials <dir>     Operator (JWT) mode with an operator, an account with JetStream and a
                                     user made in <dir> (server.conf, user.creds; kept if there; paths logged)
        --timeline <file>            Record the timeline (the newest 10000 events) and write it to <file> as
                                     one HTML page when the server exits
        --loop <auto|uvloop|asyncio> The event loop (default: auto, uvloop where installed; ${LOOP_VARIABLE})
        --spin <microseconds>        Keep polling this long after a client's read before sleeping, giving the
                                     core to any other thread that wants it (default: 250; 0: never; ${SPIN_VARIABLE})

Common Options:
    -h, --help                       Show this message
    -v, --version                    Show version (nats-server's line, then fakejs's)
        --help_tls                   TLS help (what fakejs serves of TLS)
"""
