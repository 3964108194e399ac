"""From a parsed command line to :class:`ServerOptions`, with nats-server's checks in its order.

nats-server (``server.ConfigureOptions``) parses the flags, then answers
``-v``, ``-h`` and ``--help_tls``, then a leftover argument (``version``,
``help``, or ``unrecognized command``), then ``--signal``, then reads the
configuration file over the options the flags already set (so ``-sd`` and
a file's ``store_dir`` are a duplicate) and parses the flags again over it
(flags win), then checks the TLS and route flags.  fakejs follows the same
order, and then refuses by name every flag asking for something it does
not serve.  Flags are read by dest, never by name: every alias has its
long form's effect.

Exit statuses, as nats-server's: a flag error prints Go's message on
stderr and the usage on stdout and exits 0 (nats-server's usage function
exits before the flag package can exit 2); ``-v`` and ``-h`` exit 0; every
other refusal prints ``<who>: <reason>`` on stderr and exits 1.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fakejs._version import __version__
from fakejs.cli.event_loop import AUTO, loop_problem, spin_problem, spin_window
from fakejs.cli.flags import USAGE, parse_command_line
from fakejs.core.cluster_checks import is_fakejs_refusal, jetstream_problem
from fakejs.core.options import NATS_VERSION, ServerOptions, client_port, monitor_port
from fakejs.gocompat.goflag import FlagError, Parsed, go_quote

if TYPE_CHECKING:
    from fakejs.core.cluster_config import ClusterConfig, FileCluster
    from fakejs.core.configfile import Loaded
    from fakejs.testkit.jwt.demo import DemoFiles

# nats-server's own refusals are prefixed with its name; fakejs's with its own.
NATS_SERVER = "nats-server"
FAKEJS = "fakejs"


class Exit(Exception):
    """The command line ends the program before a server starts: what to print, and the status."""

    def __init__(self, status: int, stdout: str = "", stderr: str = "") -> None:
        super().__init__(stderr or stdout)
        self.status = status
        self.stdout = stdout
        self.stderr = stderr


def _die(who: str, message: str) -> Exit:
    return Exit(1, stderr=f"{who}: {message}\n")


def version_text() -> str:
    """nats-server's version line, which harnesses parse (``v(\\d+)\\.(\\d+)\\.(\\d+)``), then fakejs's own."""
    return (
        f"nats-server: v{NATS_VERSION}\n"
        f"fakejs: v{__version__} (a JetStream-compatible NATS server for tests; behaves as nats-server {NATS_VERSION})\n"
    )


def usage_text() -> str:
    return USAGE + "\n"


class CommandLine:
    """What the command line asks for: the server's options and what the process does around it.

    A plain class: a dataclass costs its import, and every start imports this module.
    """

    __slots__ = (
        "autojump",
        "clock",
        "cluster_size",
        "demo",
        "flags",
        "loop",
        "notices",
        "options",
        "pid_file",
        "scenario",
        "spin",
        "timeline_file",
        "tls_dir",
        "tls_selfsigned",
        "tls_verify",
        "warnings",
    )

    def __init__(
        self,
        options: ServerOptions,
        pid_file: str = "",
        clock: str = "",
        autojump: float | None = None,
        scenario: str = "",
        flags: Parsed | None = None,
    ) -> None:
        self.options = options
        self.pid_file = pid_file
        self.clock = clock  # "" or "real": the system clock; "manual": a ManualClock
        self.autojump = autojump
        self.scenario = scenario
        self.flags = flags if flags is not None else Parsed({})
        # What a configuration file had to say before the server starts: nats-server's warnings
        # (printed on stderr as they are) and fakejs's notices (logged once logging is set up).
        self.warnings = ""
        self.notices: list[str] = []
        # ``--tls-selfsigned``: make a CA and certificates at start (in ``tls_dir``, or a temporary
        # directory), serving TLS with them (``tls_verify``: clients must show a certificate).
        self.tls_selfsigned = False
        self.tls_dir = ""
        self.tls_verify = False
        # ``--cluster_size N``: N nodes in this process as one cluster (1: an ordinary server).
        self.cluster_size = 1
        # ``--demo_credentials DIR``: the files served and whether this run wrote them.
        self.demo: tuple[DemoFiles, bool] | None = None
        # ``--timeline FILE``: where the timeline's page goes when the server exits (absolute; "": no timeline).
        self.timeline_file = ""
        # ``--loop``: the event loop the server runs on (see fakejs.cli.event_loop).
        self.loop = AUTO
        # ``--spin``: seconds the loop keeps polling after a client's read (0.0: none; fakejs.server.idle_spin).
        self.spin = 0.0


def options_from_file(path: str, check_only: bool = False, base: ServerOptions | None = None) -> Loaded:
    """The options a configuration file gives, before the command line's flags are laid over them.

    This is nats-server's ``ProcessConfigFile``: a format error, or any
    option error, ends the program with nats-server's text (``nats-server:
    `` and the error lines, then an empty line for option errors) and status
    1; warnings alone are printed and the server starts, except under ``-t``,
    where they fail the test as nats-server's do.  Settings fakejs does not
    serve end it with fakejs's refusal, naming them.  ``-t`` on a file that
    passes ends with nats-server's ``configuration file ... is valid`` line.
    The file is read over ``base`` (nats-server's defaults when None): the
    command line's flags already laid over them, as nats-server parses its
    flags once before reading the file, so a file setting what a flag set
    too is refused where nats-server refuses it (``store_dir`` with ``-sd``:
    ``Duplicate 'store_dir' configuration``).  The flags given on the command
    line then override what the file set (see :func:`apply_flags`), as
    nats-server parses its flags again over it.
    """
    # Read only when a file is given: a plain start does not pay for the format or the keys.
    from fakejs.conf import EXIT_STATUS, VALID_FORMAT, ConfigError
    from fakejs.core.configfile import load_file

    try:
        loaded = load_file(path, base)
    except ConfigError as exc:
        raise Exit(EXIT_STATUS, stderr=exc.stderr_line() + "\n") from None
    context = loaded.context
    if context.errors or (check_only and context.warnings):
        raise Exit(EXIT_STATUS, stderr=f"{NATS_SERVER}: {context.report()}\n")
    if context.refusals:
        raise Exit(EXIT_STATUS, stderr=f"{FAKEJS}: " + "".join(line + "\n" for line in context.refusals))
    if check_only:
        raise Exit(0, stderr=VALID_FORMAT.format(path=path, digest=loaded.digest) + "\n")
    return loaded


# Flags whose feature fakejs does not serve: refused when set to anything but their default.
UNSUPPORTED: tuple[tuple[str, str], ...] = (
    ("client_advertise", "client advertise URLs for clusters (--client_advertise)"),
    ("syslog", "syslog logging (-s/--syslog)"),
    ("remote_syslog", "remote syslog logging (-r/--remote_syslog)"),
    ("log_size_limit", "log file rotation (--log_size_limit)"),
    ("logtime_utc", "UTC log timestamps (--logtime_utc)"),
    ("profile", "the profiling port (--profile)"),
)


def _tls_requested(flags: Parsed) -> bool:
    """nats-server's rule: ``-tls=false`` turns TLS off whatever else is given; any other TLS flag turns it on."""
    if flags.given("tls"):
        return bool(flags.values["tls"])
    return flags.given("tlsverify", "tlscert", "tlskey", "tlscacert")


# The flags that set one option each, by dest (every name of a flag sets its dest): the option, and how the
# flag's value becomes the option's (None: as it is).
FLAG_OPTIONS: tuple[tuple[str, str, Callable[[Any], Any] | None], ...] = (
    ("port", "port", client_port),
    ("addr", "host", None),
    ("name", "name", None),
    ("http_port", "http_port", monitor_port),
    ("https_port", "https_port", monitor_port),
    ("user", "user", None),
    ("password", "password", None),
    ("auth", "token", None),
    ("jetstream", "jetstream", None),
    ("store_dir", "store_dir", None),
    ("log", "log_file", None),
    ("pid", "pid_file", None),
    ("ports_file_dir", "ports_file_dir", None),
    ("debug", "debug", None),
    ("trace", "trace", None),
    ("max_traced_msg_len", "max_traced_msg_len", None),
)


def apply_flags(options: ServerOptions, flags: Parsed) -> None:
    """Lay the flags given on the command line over ``options`` (defaults, or a configuration file's).

    Flags are read by dest, so every alias (``-sd``, ``--cluster_listen``)
    does what its long form does.
    """
    values = flags.values
    for dest, option, convert in FLAG_OPTIONS:
        if flags.given(dest):
            setattr(options, option, values[dest] if convert is None else convert(values[dest]))
    # -DV, -DVV and -VV are applied after the others, in that order, as nats-server does (-DV=false turns both off)
    if flags.given("debug_trace"):
        options.debug = options.trace = values["debug_trace"]
    if flags.given("debug_verbose_trace"):
        options.debug = options.trace = options.trace_verbose = values["debug_verbose_trace"]
    if flags.given("verbose_trace"):
        options.trace = options.trace_verbose = values["verbose_trace"]
    # fakejs's own
    if flags.given("no_control"):
        options.control = not values["no_control"]
    options.control_token = values["control_token"]
    if flags.given("conformance"):
        options.conformance = values["conformance"]
    options.scenario_dirs = list(values["scenario_dir"])
    if flags.given("seed"):
        options.seed = values["seed"]
    if flags.given("max_payload"):
        if values["max_payload"] <= 0:
            raise _die(FAKEJS, "--max_payload must be positive")
        options.max_payload = values["max_payload"]


def _flag_tls(options: ServerOptions, values: dict[str, Any]) -> None:
    """``--tlscert``/``--tlskey``/``--tlscacert``/``--tlsverify`` replace the file's certificates, as nats-server."""
    # Only TLS flags load the checks of TLS files and the TLS settings
    from fakejs.core.tls_files import TLSFileError, check_files
    from fakejs.core.transport_config import TLSConfig

    had_tls = options.tls is not None
    config = replace(
        options.tls or TLSConfig(),
        cert_file=values["tlscert"],
        key_file=values["tlskey"],
        ca_file=values["tlscacert"],
        verify=bool(values["tlsverify"]),
        cipher_suites=[],
    )
    try:
        check_files(config)
    except TLSFileError as exc:
        raise _die(NATS_SERVER, str(exc)) from None
    options.tls = config
    if not had_tls:
        options.auth_timeout = config.default_auth_timeout


# The events ``--timeline FILE`` keeps: the ring an in-process server keeps by default.
_TIMELINE_SIZE = ServerOptions.timeline


def _timeline_file(given: str) -> str:
    """``--timeline FILE``: the page's path made absolute, refused at start where it could not be written."""
    if not given:
        return ""
    path = os.path.abspath(given)
    if os.path.isdir(path):
        raise _die(FAKEJS, f"--timeline {given}: a directory; give the page's file name")
    if not os.path.isdir(os.path.dirname(path)):
        raise _die(FAKEJS, f"--timeline {given}: no directory {os.path.dirname(path)} to write the page in")
    return path


# The flags that give a server a route port or change its cluster (read by fakejs.cli.cluster_flags).
ROUTE_FLAGS = ("cluster", "routes", "cluster_name", "cluster_advertise", "no_advertise", "connect_retries")


def _cluster(file_cluster: FileCluster | None, flags: Parsed) -> ClusterConfig | None:
    """The cluster the route flags and the file's ``cluster {}`` make: None without a route port."""
    if file_cluster is None and not flags.given(*ROUTE_FLAGS):
        return None  # no route port: nats-server starts no cluster
    # Only a route flag or a file's cluster loads the reading of the route flags
    from fakejs.cli.cluster_flags import ClusterFlagError, cluster_from_flags

    try:
        return cluster_from_flags(file_cluster, flags)
    except ClusterFlagError as exc:
        raise _die(NATS_SERVER, str(exc)) from None


def command_line(argv: Sequence[str]) -> CommandLine:
    """Everything the command line asks for, or :class:`Exit` with what to print and the status."""
    try:
        flags = parse_command_line(argv)
    except FlagError as exc:
        raise Exit(0, stdout=usage_text(), stderr=f"{exc}\n") from None
    values = flags.values
    if values["version"]:
        raise Exit(0, stdout=version_text())
    if values["help"]:
        raise Exit(0, stdout=usage_text())
    if values["help_tls"]:
        # Only --help_tls loads the TLS help
        from fakejs.cli.tls_usage import tls_usage_text

        raise Exit(0, stdout=tls_usage_text())
    if flags.args:
        command = flags.args[0]
        if command.lower() == "version":
            raise Exit(0, stdout=version_text())
        if command.lower() == "help":
            raise Exit(0, stdout=usage_text())
        raise _die(NATS_SERVER, f"unrecognized command: {go_quote(command)}")
    if values["signal"]:
        # Only --signal loads the signal sender
        from fakejs.cli.signals import send_signal

        problem = send_signal(values["signal"])
        raise _die(NATS_SERVER, problem) if problem else Exit(0)
    demo = None
    if values["demo_credentials"]:
        if values["config"]:
            raise _die(FAKEJS, "--demo_credentials writes and serves its own configuration: give it no -c")
        # Only --demo_credentials mints credentials (nkeys, the JWT kit)
        from fakejs.cli.demo import DemoError, make_demo_credentials

        try:
            demo = make_demo_credentials(values["demo_credentials"])
        except DemoError as exc:
            raise _die(FAKEJS, str(exc)) from None
        values["config"] = str(demo[0].config_file)
    loaded: Loaded | None = None
    if values["config"]:
        # Only -c loads the configuration file's keys: a plain start does not pay for them
        from fakejs.core.configfile import base_options

        before_file = base_options()  # nats-server parses its flags once before it reads the file
        apply_flags(before_file, flags)
        loaded = options_from_file(values["config"], values["check_config"], before_file)
        options = loaded.options
        options.config_file, options.config_digest = values["config"], loaded.digest
    elif values["check_config"]:
        raise _die(NATS_SERVER, "must specify [-c, --config] option to check configuration file syntax")
    else:
        # The command line's defaults: nats-server's, except the address (loopback for a test server).
        options = ServerOptions(jetstream=False)
    apply_flags(options, flags)
    options.warn_temporary_store = True  # a harness reading the log reads nats-server's warning
    # A server that outlives many tests keeps no timeline, unless asked for its page: its messages pay nothing for one
    timeline_file = _timeline_file(values["timeline"])
    options.timeline = _TIMELINE_SIZE if timeline_file else 0
    if values["tls_selfsigned"]:
        if flags.given("tlscert", "tlskey", "tlscacert"):
            raise _die(
                FAKEJS, "--tls-selfsigned makes its own certificates: give it no --tlscert, --tlskey or --tlscacert"
            )
    elif values["tls_dir"]:
        raise _die(FAKEJS, "--tls_dir needs --tls-selfsigned")
    elif _tls_requested(flags):
        if not values["tlscert"]:
            raise _die(NATS_SERVER, "TLS Server certificate must be present and valid")
        if not values["tlskey"]:
            raise _die(NATS_SERVER, "TLS Server private key must be present and valid")
        _flag_tls(options, values)
    if flags.given("cluster_size"):  # before the route flags: they are refused with it, not checked
        # Only --cluster_size N loads the in-process cluster's checks
        from fakejs.cli.cluster_size import cluster_size_problem

        file_cluster = loaded is not None and loaded.unserved.cluster is not None
        problem = cluster_size_problem(flags, options, file_cluster)
        if problem:
            raise _die(FAKEJS, problem)
    options.cluster = _cluster(loaded.unserved.cluster if loaded is not None else None, flags)
    defaults = flags.defaults
    for dest, feature in UNSUPPORTED:
        if values[dest] != defaults[dest]:
            raise _die(FAKEJS, f"{feature}: not supported by fakejs yet")
    if not values["logtime"]:
        raise _die(FAKEJS, "log lines without timestamps (-T=false): not supported by fakejs yet")
    clock = values["clock"]
    if clock not in ("", "real", "manual"):
        raise _die(FAKEJS, f"--clock must be real or manual, not {clock!r}")
    autojump: float | None = values["autojump"] if flags.given("autojump") else None
    if autojump is not None and clock != "manual":
        raise _die(FAKEJS, "--autojump needs --clock manual")
    if problem := loop_problem(values["loop"]) or spin_problem(values["spin"]):
        raise _die(FAKEJS, problem)
    result = CommandLine(options, options.pid_file, clock, autojump, values["scenario"], flags)
    result.tls_selfsigned = bool(values["tls_selfsigned"])
    result.tls_dir = values["tls_dir"]
    result.tls_verify = bool(values["tlsverify"])
    result.cluster_size = values["cluster_size"]
    result.demo = demo
    result.timeline_file = timeline_file
    result.loop = values["loop"]
    result.spin = spin_window(values["spin"])
    if loaded is not None:
        # Only -c loads the configuration file's keys
        from fakejs.core.configfile import start_problem

        problem = start_problem(options, loaded.unserved)
    else:
        problem = jetstream_problem(options)
    if problem:  # nats-server's checks when the server is made, after the flags
        raise _die(FAKEJS if is_fakejs_refusal(problem) else NATS_SERVER, problem)
    if loaded is not None:
        result.warnings = loaded.context.report()
        result.notices = list(loaded.context.notices)
    return result
