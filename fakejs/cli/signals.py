"""``--signal COMMAND[=PID]`` (``-sl``): a command sent to a running server as a signal, as nats-server does on unix.

nats-server's ``ProcessSignal``: the part after ``=`` is a pid, a pid
file's path, or a pid prefix ending in ``*`` (every running server whose
pid starts so); without it, the one running server.  Running servers are
found as nats-server finds them, with ``pgrep`` and the program's name
(``fakejs``, or the name it was started under).  Commands and signals:
``stop`` (SIGKILL), ``quit`` (SIGINT), ``term`` (SIGTERM), ``reopen``
(SIGUSR1), ``reload`` (SIGHUP), ``ldm`` (SIGUSR2).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable

from fakejs.core.process import process_id

__all__ = ["SIGNALS", "process_name", "send_signal"]

# The commands and their signals (nats-server's CommandToSignal).
SIGNALS: dict[str, signal.Signals] = {
    "stop": signal.SIGKILL,
    "quit": signal.SIGINT,
    "reopen": signal.SIGUSR1,
    "reload": signal.SIGHUP,
    "ldm": signal.SIGUSR2,
    "term": signal.SIGTERM,
}
UNRESOLVED = "unable to resolve pid, try providing one"
# What Go's strconv.Atoi reads: an optional sign and decimal digits.
GO_INT = re.compile(r"[+-]?[0-9]+")


def process_name() -> str:
    """The name running servers are looked up by: the program's own (``fakejs`` when run as a module)."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return "fakejs" if not name or name.endswith(".py") or name.startswith("python") else name


def _pgrep(name: str) -> bytes:
    """``pgrep NAME``'s output; an empty one when nothing runs (its exit status 1)."""
    try:
        return subprocess.run(["pgrep", name], check=True, capture_output=True).stdout
    except subprocess.CalledProcessError:
        return b""


def _running_pids(name: str, pgrep: Callable[[str], bytes]) -> list[int] | str:
    """nats-server's resolvePids: every running server but this process, or its error text."""
    try:
        output = pgrep(name)
    except OSError:
        return UNRESOLVED
    pids: list[int] = []
    for line in output.decode(errors="replace").split("\n"):
        if not line:
            continue
        if not line.isdigit():
            return UNRESOLVED
        if int(line) != process_id():
            pids.append(int(line))
    return pids


def _pid_text(expression: str) -> str:
    """nats-server's maybeReadPidFile: a pid file's content when the text names a readable file."""
    try:
        with open(expression) as handle:
            return handle.read().strip()
    except OSError:
        return expression


def _kill_error(command: str, pid: int, number: signal.Signals) -> str:
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        return f'\nsignal "{command}" {pid}: no such process'
    except PermissionError:
        return f'\nsignal "{command}" {pid}: operation not permitted'
    return ""


def send_signal(argument: str, pgrep: Callable[[str], bytes] = _pgrep) -> str:
    """Send the command's signal; ``""`` on success, else nats-server's error text."""
    parts = argument.split("=")
    if len(parts) > 2:
        return f"invalid signal parameters: [{' '.join(parts[2:])}]"
    command = parts[0]
    expression = _pid_text(parts[1]) if len(parts) == 2 else ""
    glob = expression.endswith("*")
    prefix = expression.removesuffix("*")
    if prefix and not GO_INT.fullmatch(prefix):
        return f"invalid pid: {prefix}"
    pids = [int(prefix)] if prefix else []
    name = process_name()
    if not prefix or glob:
        found = _running_pids(name, pgrep)
        if isinstance(found, str):
            return found
        pids = found
    if len(pids) > 1 and not glob:
        return f"multiple {name} processes running:" + "".join(f"\n{pid}" for pid in pids)
    if not pids:
        return f"no {name} processes running"
    if command not in SIGNALS:
        return f'unknown signal "{command}"'
    errors = ""
    for pid in pids:
        if prefix and str(pid) != prefix and not (glob and str(pid).startswith(prefix)):
            continue
        errors += _kill_error(command, pid, SIGNALS[command])
    return errors
