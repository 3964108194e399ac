"""``--signal`` without a pid, or with a pid prefix: running servers found as nats-server finds them (pgrep)."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable, Iterator

import pytest

from fakejs.cli.signals import process_name, send_signal


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A process of this test's own to signal.

    A pytest-xdist worker ignores SIGINT, and a child inherits that; with a
    handler of Python's instead, the child starts with the default action.
    """
    ignored = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        process = subprocess.Popen(["sleep", "30"])
    finally:
        signal.signal(signal.SIGINT, ignored)
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def found(*pids: int) -> Callable[[str], bytes]:
    return lambda name: "".join(f"{pid}\n" for pid in pids).encode()


def test_no_running_server() -> None:
    assert send_signal("reload", found()) == f"no {process_name()} processes running"


def test_several_running_servers_are_named() -> None:
    assert send_signal("reload", found(11, 12)) == f"multiple {process_name()} processes running:\n11\n12"


def test_the_one_running_server_gets_the_signal(sleeper: subprocess.Popen[bytes]) -> None:
    assert send_signal("term", found(sleeper.pid)) == ""
    assert sleeper.wait(10) == -15


def test_a_pid_prefix_signals_the_servers_it_starts(sleeper: subprocess.Popen[bytes]) -> None:
    prefix = str(sleeper.pid)[:-1]
    others = [pid for pid in (999999990, 999999991) if not str(pid).startswith(prefix)]
    assert send_signal(f"quit={prefix}*", found(sleeper.pid, *others)) == ""
    assert sleeper.wait(10) == -2


def test_an_unknown_command_is_named_after_the_servers_are_found() -> None:
    assert send_signal("foo", found(11)) == 'unknown signal "foo"'
    assert send_signal("foo", found()) == f"no {process_name()} processes running"


def test_unreadable_pgrep_output() -> None:
    assert send_signal("reload", lambda name: b"abc\n") == "unable to resolve pid, try providing one"
