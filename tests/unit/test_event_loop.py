"""The command-line server's event loop (``--loop``): uvloop where installed, asyncio's own on request."""

from __future__ import annotations

import asyncio
import sys

import pytest

from fakejs import cli
from fakejs.cli.event_loop import ASYNCIO, AUTO, LOOP_VARIABLE, UVLOOP, loop_problem, run
from fakejs.cli.settings import Exit
from fakejs.server.start_lines import loop_name

uvloop = pytest.importorskip("uvloop")


async def _running_loop() -> str:
    return loop_name(asyncio.get_running_loop())


@pytest.mark.parametrize("choice,expected", [(AUTO, "uvloop"), (UVLOOP, "uvloop"), (ASYNCIO, "asyncio")])
def test_each_choice_runs_its_loop(choice: str, expected: str) -> None:
    assert run(_running_loop(), choice) == expected


def test_unknown_choices_are_refused() -> None:
    assert loop_problem("trio") == "--loop must be auto, uvloop or asyncio, not 'trio'"
    assert [loop_problem(choice) for choice in (AUTO, UVLOOP, ASYNCIO)] == ["", "", ""]


def test_without_uvloop_auto_falls_back_and_uvloop_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop raises ImportError
    assert run(_running_loop(), AUTO) == "asyncio"
    assert loop_problem(AUTO) == ""
    assert loop_problem(UVLOOP) == "--loop uvloop: uvloop is not installed (pip install uvloop)"


def test_the_flag_and_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOOP_VARIABLE, raising=False)
    assert cli.command_line([]).loop == AUTO
    assert cli.command_line(["--loop", "asyncio"]).loop == ASYNCIO
    monkeypatch.setenv(LOOP_VARIABLE, "asyncio")
    assert cli.command_line([]).loop == ASYNCIO
    assert cli.command_line(["--loop", "uvloop"]).loop == UVLOOP  # the flag wins
    with pytest.raises(Exit) as refused:
        cli.command_line(["--loop", "fast"])
    assert (refused.value.status, refused.value.stderr) == (
        1,
        "fakejs: --loop must be auto, uvloop or asyncio, not 'fast'\n",
    )
