"""``fakejs`` command line: nats-server's, flag for flag.

Anything that execs ``nats-server -a HOST -p PORT -js -sd DIR ...`` can
exec ``fakejs`` with the same arguments.  Flags are parsed with Go's
``flag`` rules (:mod:`fakejs.gocompat.goflag`): one or two dashes,
``-flag value`` or ``-flag=value``, booleans only as ``-flag`` or
``-flag=BOOL``, no abbreviations.  Every flag nats-server 2.15.1 defines is
known (:mod:`fakejs.cli.flags`); ``-c FILE`` reads a nats-server
configuration file (:mod:`fakejs.core.configfile`), the flags given
overriding its settings; flags asking for something fakejs does not
serve (syslog, log rotation, profiling, ...)
are refused at start by name with exit status 1 (:mod:`fakejs.cli.settings`).
``-v`` prints nats-server's version line, which harnesses parse, then
fakejs's own; ``-h`` prints nats-server's usage layout with fakejs's
differences beside the flags and fakejs's own flags in a section of their own.
As on nats-server, JetStream is on only with ``-js``.  The one deliberate
difference: the default address is 127.0.0.1, not 0.0.0.0.  fakejs's own
flags (``--scenario``, ``--scenario_dir``, ``--clock``, ``--autojump``,
``--seed``, ``--no_control``, ``--control_token``, ``--max_payload``,
``--tls-selfsigned``, ``--tls_dir``, ``--cluster_size``, ``--demo_credentials``, ``--timeline``, ``--loop``) have no nats-server spelling, nor has
``fakejs conformance run`` (:mod:`fakejs.cli.conformance`), recognised only as the first argument.  May import :mod:`fakejs.server` and every layer
below it; nothing inside fakejs imports this package.

Modules: ``flags`` (every flag nats-server and fakejs define, and the usage
text), ``settings`` (from parsed flags to ``ServerOptions``, with
nats-server's checks in its order), ``cluster_flags`` (the route flags laid
over a configuration file's cluster), ``cluster_size`` (``--cluster_size N``:
N nodes in one process), ``signals`` (``--signal COMMAND[=PID]``),
``selfsigned`` (``--tls-selfsigned``: certificates made at start),
``demo`` (``--demo_credentials DIR``: operator mode with credentials made at start),
``event_loop`` (``--loop``: uvloop where installed, or asyncio's own loop),
``tls_usage`` (``--help_tls``), ``conformance`` (``fakejs conformance run``),
``conformance_run`` (a client program run against the conformance
scenarios, one in-process server each), ``timeline_file`` (``--timeline
FILE``: the timeline's page written once the server has stopped) and
``process_end`` (the command-line process's end once its server has stopped).
"""

from __future__ import annotations

import asyncio
import gc
import signal
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from fakejs.cli.event_loop import run
from fakejs.cli.flags import CONTROL_TOKEN_VARIABLE, USAGE, parse_command_line
from fakejs.cli.settings import NATS_SERVER, CommandLine, Exit, apply_flags, command_line, options_from_file
from fakejs.core.log import configure, get_logger
from fakejs.core.options import ServerOptions
from fakejs.core.process import process_id
from fakejs.core.reload_errors import ReloadRefused
from fakejs.gocompat.gourl import ListenError

if TYPE_CHECKING:
    from fakejs.core.clock import Clock
    from fakejs.server.server import Server

__all__ = [
    "CONTROL_TOKEN_VARIABLE",
    "USAGE",
    "CommandLine",
    "Exit",
    "ServerOptions",
    "apply_flags",
    "command_line",
    "main",
    "options_from_file",
    "parse_command_line",
    "serve",
]


async def serve(
    options: ServerOptions,
    pid_file: str = "",
    clock: Clock | None = None,
    scenario: str = "",
    read_options: Callable[[], ServerOptions] | None = None,
    timeline_file: str = "",
    spin: float = 0.0,
) -> int:
    """Run a server until SIGINT or SIGTERM (or the end of lame duck mode, SIGUSR2); SIGHUP reloads.
    The exit status: 1 when the server refused to go on (:meth:`~fakejs.core.broker.Broker.refuse_to_run`).

    SIGUSR1 opens the log file again; SIGTERM during lame duck mode is only logged.

    ``read_options`` reads the command line and its configuration file again for a reload.
    ``timeline_file``: where the timeline's page is written once the server has stopped.
    ``spin``: seconds the loop keeps polling after a client's read (:mod:`fakejs.server.idle_spin`; 0.0: none).
    """
    # The server, and every layer below it, is imported once a server is asked for: after main has
    # tuned the collector for the imports (tune_gc), and not at all by -v, -h or --signal
    from fakejs.server.idle_spin import spin_for
    from fakejs.server.server import Server
    from fakejs.server.start_lines import log_scenario

    server = Server(options, clock=clock)
    server.idle_spin = spin_for(spin)
    server.read_options = read_options
    server.on_logging_reload = lambda new: configure(debug=new.debug, trace=new.trace, log_file=new.log_file)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    log = get_logger()

    def trapped(name: str) -> None:
        log.info('Trapped "%s" signal', name)
        if name == "terminated" and server.broker.lame_duck:
            return  # nats-server lets lame duck mode run its course
        stop.set()

    def lame_duck() -> None:
        log.info('Trapped "user defined signal 2" signal')
        server.control.lame_duck()

    # Trapped before the server starts: a harness may signal as soon as it reads "Server is ready".
    loop.add_signal_handler(signal.SIGINT, trapped, "interrupt")
    loop.add_signal_handler(signal.SIGTERM, trapped, "terminated")
    loop.add_signal_handler(signal.SIGHUP, reload_from_file, server)
    loop.add_signal_handler(signal.SIGUSR1, reopen_log_file, server.options)
    await server.start()
    loop.add_signal_handler(signal.SIGUSR2, lame_duck)
    if scenario:
        started = server.control.start_scenario(path=scenario)
        log_scenario(log, started["scenario"], len(started["faults"]))
    if pid_file:
        with open(pid_file, "w") as handle:
            handle.write(str(process_id()))
    finished = asyncio.ensure_future(server.finished.wait())
    waiting = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({finished, waiting}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        finished.cancel()
        waiting.cancel()
        await server.stop()
    if timeline_file:  # once stopped: the store flushed, every client closed
        # Only --timeline FILE writes a page
        from fakejs.cli.timeline_file import write_timeline_page

        write_timeline_page(server, timeline_file)
    return 1 if server.broker.refusal else 0


def reload_from_file(server: Server) -> None:
    """SIGHUP: read the configuration file (and the flags over it) again and apply it (nats-server's Reload)."""
    # Only a SIGHUP loads the reload machinery (accounts, JWTs, routes)
    from fakejs.server.reload import FAILED

    log = get_logger()
    log.info('Trapped "hangup" signal')
    try:
        server.reload()
    except ReloadRefused as refused:  # the running configuration stays
        log.error(FAILED, refused)


def reopen_log_file(options: ServerOptions) -> None:
    """SIGUSR1: the log file opened again, for log rotation (nats-server's ReOpenLogFile)."""
    log = get_logger()
    log.info('Trapped "user defined signal 1" signal')
    if not options.log_file:
        log.info("File log re-open ignored, not a file logger")
        return
    configure(debug=options.debug, trace=options.trace, log_file=options.log_file)
    log.info("File log re-opened")


def _reader(arguments: list[str], started: ServerOptions) -> Callable[[], ServerOptions]:
    """What a reload reads: the same command line, its configuration file read again.

    The certificates ``--tls-selfsigned`` made at the start stay the server's.
    """

    def read() -> ServerOptions:
        try:
            command = command_line(arguments)
        except Exit as refused:
            raise ReloadRefused(refused.stderr.strip().removeprefix(f"{NATS_SERVER}: ").strip()) from None
        if command.tls_selfsigned:
            command.options.tls = started.tls
        return command.options

    return read


# Collector thresholds for the command-line server's own process (see tune_gc).
GC_THRESHOLDS = (100_000, 50, 100)


def tune_gc() -> None:
    """Collect cycles less often: the server's process is ours, and its hot path allocates.

    Every publish allocates a few short-lived containers, and a stream keeps
    one tracked object per stored message; with Python's default thresholds
    (700, 10, 10) the cyclic collector ran every few hundred publishes and
    took about a seventh of a pipelined publish's time.  Cycles are rare
    here (nothing on the message path creates them), so fewer, larger
    collections cost no memory to speak of.  It spares the start too: the
    server's modules, imported after it (see serve), live as long as the
    process, and the default thresholds ran the collector dozens of times
    over them while they loaded.  An embedded server (tests, the pytest
    plugin) leaves its host's settings alone.
    """
    gc.set_threshold(*GC_THRESHOLDS)


def _port_problem(options: ServerOptions) -> str:
    """nats-server's fatal line for a port no socket can have (it fails at listen time)."""
    host = options.host or "0.0.0.0"
    if not 0 <= options.port <= 65535:
        return f'Error listening on port: {host}:{options.port}, "listen tcp: address {options.port}: invalid port"'
    http_port = options.http_port
    if http_port is not None and not 0 <= http_port <= 65535:
        return (
            f"Can't start monitoring: can't listen to the monitor port: listen tcp: address {http_port}: invalid port"
        )
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (the process's own when ``None``) and return its exit status.

    Called without ``argv``, as the ``fakejs`` script and ``python -m fakejs``
    call it, ``main`` is the process: once a server it started has stopped,
    the process ends there (:func:`fakejs.cli.process_end.end_process`).  Given ``argv`` it returns.
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["conformance"]:  # fakejs's own subcommand: nats-server has no positional arguments
        # Only this subcommand loads the runner and its scenarios; the server does not
        from fakejs.cli.conformance import main as conformance_main

        return conformance_main(arguments[1:])
    try:
        command = command_line(arguments)
    except Exit as end:
        sys.stderr.write(end.stderr)  # Go's flag error first, then the usage (nats-server's order)
        sys.stderr.flush()
        sys.stdout.write(end.stdout)
        return end.status
    options = command.options
    if command.warnings:  # a configuration file's warnings, as nats-server prints them before starting
        sys.stderr.write(command.warnings)
        sys.stderr.flush()
    clock: Clock | None = None
    if command.clock == "manual":
        # Only --clock manual makes a manual clock
        from fakejs.testkit.clock import ManualClock

        clock = ManualClock(autojump_threshold=command.autojump)
    if command.scenario:
        # Only a server started with a scenario pays for reading one (tomllib and the fault rules).
        from fakejs.testkit.scenarios import ScenarioError, load_scenario

        try:
            scenario = load_scenario(command.scenario)  # refuse a broken file before listening
        except ScenarioError as exc:
            sys.stderr.write(f"fakejs: {exc}\n")
            return 1
        feature = scenario.cluster_feature()
        if feature and command.cluster_size <= 1:
            sys.stderr.write(f"fakejs: {scenario.source}: {feature} needs a cluster: give --cluster_size N -js\n")
            return 1
    configure(debug=options.debug, trace=options.trace, log_file=options.log_file)
    for notice in command.notices:
        get_logger().warning("%s", notice)
    problem = _port_problem(options)
    if problem:
        get_logger().critical("%s", problem)
        return 1
    if command.demo is not None:
        # Only --demo_credentials says where its credentials are
        from fakejs.cli.demo import log_demo_credentials

        log_demo_credentials(*command.demo, get_logger())
    self_signed = None
    if command.tls_selfsigned:
        # Only --tls-selfsigned makes certificates (cryptography, trustme)
        from fakejs.cli.selfsigned import make_self_signed

        self_signed = make_self_signed(options, command.tls_dir, command.tls_verify, get_logger())
    tune_gc()
    status = 0
    try:
        if command.cluster_size > 1:
            # Only --cluster_size N loads the in-process cluster
            from fakejs.cli.cluster_size import serve_cluster

            cluster_name = command.flags.values["cluster_name"]
            run(
                serve_cluster(
                    command.cluster_size,
                    options,
                    command.pid_file,
                    clock,
                    cluster_name,
                    command.scenario,
                    command.timeline_file,
                    command.spin,
                ),
                command.loop,
            )
        else:
            reader = _reader(arguments, options)
            status = run(
                serve(options, command.pid_file, clock, command.scenario, reader, command.timeline_file, command.spin),
                command.loop,
            )
    except ListenError as exc:  # nats-server's line for the port
        get_logger().critical("%s", exc)
        return 1
    except OSError as exc:
        get_logger().critical("Error listening on port: %s, %s", options.port, exc)
        return 1
    except ValueError as exc:
        get_logger().critical("%s", exc)
        return 1
    finally:
        if self_signed is not None:
            self_signed.remove()
    if argv is None:
        # Only the process that served ends here (the fakejs script, python -m fakejs), its output flushed
        from fakejs.cli.process_end import end_process

        end_process(status)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
