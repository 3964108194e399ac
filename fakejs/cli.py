"""``fakejs`` command line, compatible with nats-server's common flags.

Anything that execs ``nats-server -a HOST -p PORT -js -sd DIR ...`` can
exec ``fakejs`` with the same arguments.  Flags follow Go's ``flag``
package conventions: one or two dashes, ``-flag value`` or ``-flag=value``.
Differences from nats-server: JetStream is on by default, the default
address is 127.0.0.1, ``--max_payload`` is accepted on the command line,
and an unknown flag exits with status 2.  fakejs's own flags (``--scenario``,
``--scenario_dir``, ``--clock``, ``--autojump``, ``--seed``, ``--no_control``,
``--control_token``) have no nats-server spelling.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import signal
import sys
from collections.abc import Sequence

from fakejs._version import __version__
from fakejs.core.clock import Clock
from fakejs.core.log import configure, get_logger
from fakejs.core.options import DEFAULT_PORT, NATS_VERSION, ServerOptions
from fakejs.server.server import Server

# Where the control token may come from instead of the command line (which `ps` shows everyone).
CONTROL_TOKEN_VARIABLE = "FAKEJS_CONTROL_TOKEN"

# canonical flag -> every spelling nats-server accepts (without dashes)
_ALIASES: dict[str, tuple[str, ...]] = {
    "addr": ("a", "addr", "net"),
    "port": ("p", "port"),
    "name": ("n", "name", "server_name"),
    "http_port": ("m", "http_port"),
    "jetstream": ("js", "jetstream"),
    "store_dir": ("sd", "store_dir"),
    "user": ("user",),
    "pass": ("pass",),
    "auth": ("auth",),
    "max_payload": ("max_payload",),
    "debug": ("D", "debug"),
    "trace": ("V", "trace"),
    "debug_trace": ("DV", "DVV"),
    "verbose_trace": ("VV",),
    "log": ("l", "log"),
    "logtime": ("T", "logtime"),
    "pid": ("P", "pid"),
    "config": ("c", "config"),
    "version": ("v", "version"),
    "scenario": ("scenario",),
    "clock": ("clock",),
    "autojump": ("autojump",),
    "seed": ("seed",),
    "no_control": ("no_control",),
    "control_token": ("control_token",),
    "scenario_dir": ("scenario_dir",),
    "help": ("h", "help"),
}
_CANONICAL = {alias: name for name, aliases in _ALIASES.items() for alias in aliases}
_BOOLEAN = {"jetstream", "debug", "trace", "debug_trace", "verbose_trace", "logtime", "version", "help", "no_control"}


def _normalise(argv: Sequence[str]) -> list[str]:
    """Rewrite Go-style flags (``-port=1``, ``--js``) to argparse's ``--port 1``."""
    out: list[str] = []
    for arg in argv:
        if arg.startswith("-") and len(arg) > 1 and not _is_number(arg):
            name, eq, value = arg.lstrip("-").partition("=")
            canonical = _CANONICAL.get(name)
            if canonical is None:
                out.append(arg)
                continue
            if canonical in _BOOLEAN:
                if eq and value.lower() in ("false", "0", "f"):
                    continue
                out.append("--" + canonical)
            else:
                out.append("--" + canonical)
                if eq:
                    out.append(value)
        else:
            out.append(arg)
    return out


def _is_number(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fakejs",
        description="A JetStream-compatible NATS server for tests (nats-server %s compatible)." % NATS_VERSION,
        add_help=False,
    )
    add = parser.add_argument
    add("--addr", "-a", "--net", default="127.0.0.1", metavar="HOST", help="bind to host address (default: 127.0.0.1)")
    add("--port", "-p", type=int, default=DEFAULT_PORT, help="port for clients (default: 4222; -1 picks a free port)")
    add("--name", "-n", "--server_name", default="", help="server name (default: fakejs-<id>)")
    add(
        "--http_port", "-m", type=int, default=0, metavar="PORT", help="port for HTTP monitoring (-1 picks a free port)"
    )
    add("--jetstream", "-js", action="store_true", help="accepted for compatibility: JetStream is always on")
    add("--store_dir", "-sd", default="", metavar="DIR", help="storage directory for file-backed streams")
    add("--user", default="", help="user required for connections")
    add("--pass", dest="password", default="", metavar="PASSWORD", help="password required for connections")
    add("--auth", default="", metavar="TOKEN", help="authorization token required for connections")
    add("--max_payload", type=int, default=None, metavar="BYTES", help="maximum message payload (default: 1048576)")
    add("--debug", "-D", action="store_true", help="enable debugging output")
    add("--trace", "-V", action="store_true", help="trace the raw protocol")
    add("--debug_trace", "-DV", action="store_true", help="debug and trace")
    add("--verbose_trace", "-VV", action="store_true", help=argparse.SUPPRESS)
    add("--log", "-l", default="", metavar="FILE", help="file to redirect log output")
    add("--logtime", "-T", action="store_true", help="accepted for compatibility (timestamps are always on)")
    add("--pid", "-P", default="", metavar="FILE", help="file to store the PID")
    add("--config", "-c", default="", metavar="FILE", help="configuration file (not supported by fakejs)")
    add("--scenario", default="", metavar="FILE", help="fakejs: run a fault scenario (a TOML file or a shipped name)")
    add(
        "--clock",
        choices=("real", "manual"),
        default="",
        help="fakejs: real time (default) or a manual clock moved over the control API",
    )
    add(
        "--autojump",
        type=float,
        default=None,
        metavar="SECONDS",
        help="fakejs: with --clock manual, jump to the next timer after this much idle real time",
    )
    add(
        "--seed",
        type=int,
        default=None,
        metavar="N",
        help="fakejs: seed every random choice (server id, names, jitter); with --clock manual, "
        "the same client bytes get the same replies run after run",
    )
    add(
        "--scenario_dir",
        action="append",
        default=[],
        metavar="DIR",
        help="fakejs: a directory whose .toml files control requests may start by file name (repeatable)",
    )
    add("--no_control", action="store_true", help="fakejs: do not serve the control API ($FAKEJS.>, /fakejs/)")
    add(
        "--control_token",
        default=os.environ.get(CONTROL_TOKEN_VARIABLE, ""),
        metavar="TOKEN",
        help="fakejs: the control API needs this token (HTTP: Authorization: Bearer TOKEN; NATS: connect with "
        f"the token) even when clients need none; ${CONTROL_TOKEN_VARIABLE} keeps it off the command line",
    )
    add("--version", "-v", action="store_true", help="show version")
    add("--help", "-h", action="help", help="show this message")
    return parser


def options_from_args(args: argparse.Namespace) -> ServerOptions:
    port = args.port
    if port == 0:
        port = DEFAULT_PORT
    elif port == -1:
        port = 0
    elif port < -1:
        raise ValueError(f"invalid port {port}")
    http_port: int | None = None
    if args.http_port > 0:
        http_port = args.http_port
    elif args.http_port == -1:
        http_port = 0
    options = ServerOptions(
        host=args.addr,
        port=port,
        name=args.name,
        user=args.user,
        password=args.password,
        token=args.auth,
        store_dir=args.store_dir,
        http_port=http_port,
        http_host=args.addr,
        debug=args.debug or args.debug_trace,
        trace=args.trace or args.debug_trace or args.verbose_trace,
        log_file=args.log,
        control=not args.no_control,
        control_token=args.control_token,
        scenario_dirs=list(args.scenario_dir),
        seed=args.seed,
    )
    if args.max_payload is not None:
        if args.max_payload <= 0:
            raise ValueError("max_payload must be positive")
        options.max_payload = args.max_payload
    return options


async def serve(options: ServerOptions, pid_file: str = "", clock: Clock | None = None, scenario: str = "") -> None:
    """Run a server until SIGINT or SIGTERM (or the end of lame duck mode, SIGUSR2)."""
    server = Server(options, clock=clock)
    await server.start()
    if scenario:
        server.control.start_scenario(path=scenario)
    if pid_file:
        with open(pid_file, "w") as handle:
            handle.write(str(os.getpid()))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    log = get_logger()

    def trapped(name: str) -> None:
        log.info('Trapped "%s" signal', name)
        stop.set()

    def lame_duck() -> None:
        log.info('Trapped "user defined signal 2" signal')
        server.control.lame_duck()

    loop.add_signal_handler(signal.SIGINT, trapped, "interrupt")
    loop.add_signal_handler(signal.SIGTERM, trapped, "terminated")
    loop.add_signal_handler(signal.SIGUSR2, lame_duck)
    finished = asyncio.ensure_future(server.finished.wait())
    waiting = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({finished, waiting}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        finished.cancel()
        waiting.cancel()
        await server.stop()


# Collector thresholds for the command-line server's own process (see tune_gc).
GC_THRESHOLDS = (100_000, 50, 100)


def tune_gc() -> None:
    """Collect cycles less often: the server's process is ours, and its hot path allocates.

    Every publish allocates a few short-lived containers, and a stream keeps
    one tracked object per stored message; with Python's default thresholds
    (700, 10, 10) the cyclic collector ran every few hundred publishes and
    took about a seventh of a pipelined publish's time.  Cycles are rare
    here (nothing on the message path creates them), so fewer, larger
    collections cost no memory to speak of.  An embedded server (tests,
    the pytest plugin) leaves its host's settings alone.
    """
    gc.set_threshold(*GC_THRESHOLDS)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(_normalise(sys.argv[1:] if argv is None else argv))
    if args.version:
        print(f"nats-server: v{NATS_VERSION} (fakejs {__version__})")
        return 0
    if args.config:
        parser.error("configuration files (-c/--config) are not supported by fakejs; use command-line flags")
    try:
        options = options_from_args(args)
    except ValueError as exc:
        parser.error(str(exc))
    if args.autojump is not None and args.clock != "manual":
        parser.error("--autojump needs --clock manual")
    clock: Clock | None = None
    if args.clock == "manual":
        from fakejs.testkit.clock import ManualClock

        clock = ManualClock(autojump_threshold=args.autojump)
    if args.scenario:
        # Only a server started with a scenario pays for reading one (tomllib and the fault rules).
        from fakejs.testkit.scenarios import ScenarioError, load_scenario

        try:
            load_scenario(args.scenario)  # refuse a broken file before listening
        except ScenarioError as exc:
            parser.error(str(exc))
    configure(debug=options.debug, trace=options.trace, log_file=options.log_file)
    tune_gc()
    try:
        asyncio.run(serve(options, args.pid, clock, args.scenario))
    except OSError as exc:
        get_logger().critical("Error listening on port: %s, %s", options.port, exc)
        return 1
    except ValueError as exc:
        get_logger().critical("%s", exc)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
