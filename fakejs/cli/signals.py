"""``--signal COMMAND=PID`` (``-sl``): a command sent to a running server as a signal, as nats-server does on unix.

nats-server's ``processSignal``: the part after ``=`` is a pid, or the
path of a pid file holding one.  fakejs sends ``reload`` (SIGHUP) only;
the other commands nats-server knows (``stop``, ``quit``, ``term``,
``reopen``, ``ldm``) are refused by name, and fakejs does not look for
running servers when no pid is given.
"""

from __future__ import annotations

import os
import signal

__all__ = ["FAKEJS_REFUSAL", "SIGNALS", "send_signal"]

# Marks fakejs's own refusals (printed after "fakejs: ", not "nats-server: ").
FAKEJS_REFUSAL = "\0"
# The commands fakejs sends, and their signals (nats-server's CommandToSignal).
SIGNALS: dict[str, signal.Signals] = {"reload": signal.SIGHUP}
# The commands nats-server knows that fakejs does not send yet.
UNSENT = ("stop", "quit", "term", "reopen", "ldm")


def _pid_text(expression: str) -> str:
    """nats-server's maybeReadPidFile: a pid file's content when the text names a readable file."""
    try:
        with open(expression) as handle:
            return handle.read().strip()
    except OSError:
        return expression


def send_signal(argument: str) -> str:
    """Send the command's signal; ``""`` on success, else nats-server's error text (or fakejs's refusal)."""
    parts = argument.split("=")
    if len(parts) > 2:
        return f"invalid signal parameters: [{' '.join(parts[2:])}]"
    command = parts[0]
    if command in UNSENT:
        return (
            f"{FAKEJS_REFUSAL}signals to a running server (-sl {argument}): not supported by fakejs yet (only reload)"
        )
    if command not in SIGNALS:
        return f'unknown signal "{command}"'
    pid_text = _pid_text(parts[1]) if len(parts) == 2 else ""
    if not pid_text:
        return f"{FAKEJS_REFUSAL}finding running servers: not supported by fakejs, give the pid (or pid file): --signal reload=<pid>"
    try:
        pid = int(pid_text)
    except ValueError:
        return f"invalid pid: {pid_text}"
    try:
        os.kill(pid, SIGNALS[command])
    except ProcessLookupError:
        return f'\nsignal "{command}" {pid}: no such process'
    except PermissionError:
        return f'\nsignal "{command}" {pid}: operation not permitted'
    return ""
