"""IdleSpin: the loop kept polling for a window after each client read, then left to sleep; ``--spin``."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from fakejs import cli
from fakejs.cli.event_loop import SPIN_VARIABLE
from fakejs.cli.settings import Exit
from fakejs.server import idle_spin
from fakejs.server.idle_spin import IdleSpin, RunQueue, can_spin, spin_for


class Spun:
    """A spin on a clock the test moves, counting the turns that gave the core away."""

    def __init__(self, window: float) -> None:
        self.time = 100.0
        self.turns = 0
        self.others_waiting = False
        self.spin = IdleSpin(window, lambda: self.others_waiting, now=lambda: self.time, give_way=self.gave_way)

    def gave_way(self) -> None:
        self.turns += 1


async def turns(count: int) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


async def test_a_read_keeps_the_loop_turning_until_a_quiet_window_passes() -> None:
    spun = Spun(window=0.001)
    assert not spun.spin.running
    spun.spin.touch()
    await turns(5)
    assert spun.spin.running and spun.turns >= 4  # every turn gives the core away first
    spun.time += 0.002
    await turns(2)
    assert not spun.spin.running
    quiet = spun.turns
    await turns(5)
    assert spun.turns == quiet  # nothing queued: the loop may sleep in its poll


async def test_each_read_starts_a_new_window() -> None:
    spun = Spun(window=0.001)
    spun.spin.touch()
    await turns(2)
    spun.time += 0.0008
    spun.spin.touch()  # a read within the window: already running, so only counted
    await turns(2)
    spun.time += 0.0008  # 1.6 ms after the first read, 0.8 ms after the second
    await turns(2)
    assert spun.spin.running and spun.spin.reads == 2
    spun.time += 0.0003
    await turns(2)
    assert not spun.spin.running


async def test_a_read_after_the_spin_ended_starts_it_again() -> None:
    spun = Spun(window=0.001)
    spun.spin.touch()
    spun.time += 0.01
    await turns(2)
    assert not spun.spin.running
    spun.spin.touch()
    await turns(2)
    assert spun.spin.running


async def test_the_spin_ends_when_other_threads_wait_for_a_core() -> None:
    spun = Spun(window=0.001)
    spun.spin.touch()
    await turns(2)
    assert spun.spin.running
    spun.others_waiting = True
    await turns(2)
    assert not spun.spin.running
    spun.others_waiting = False
    spun.spin.touch()  # the next read tries again
    await turns(2)
    assert spun.spin.running


@pytest.mark.skipif(not can_spin(), reason="counts runnable threads in Linux's /proc/loadavg")
def test_the_run_queue_counts_runnable_threads_against_this_process_s_cores(tmp_path: Path) -> None:
    cores = len(os.sched_getaffinity(0))
    load = tmp_path / "loadavg"
    load.write_text(f"0.52 0.58 0.59 {cores}/467 3130\n")
    queue = RunQueue(str(load))
    assert queue.cores == cores and not queue.crowded()  # this thread and one per other core
    load.write_text(f"0.52 0.58 0.59 {cores + 1}/467 3130\n")
    assert queue.crowded()  # read again on each call


@pytest.mark.skipif(not can_spin(), reason="spins only where it can count runnable threads (Linux)")
def test_no_spin_for_a_zero_window_or_where_the_core_cannot_be_given_away(monkeypatch: pytest.MonkeyPatch) -> None:
    assert spin_for(0.0) is None
    made = spin_for(0.00025)
    assert made is not None and made.window == 0.00025
    monkeypatch.setattr(idle_spin, "can_spin", lambda: False)
    assert spin_for(0.00025) is None


def test_the_spin_flag_and_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SPIN_VARIABLE, raising=False)
    assert cli.command_line([]).spin == 0.00025  # 250 µs
    assert cli.command_line(["--spin", "0"]).spin == 0.0
    monkeypatch.setenv(SPIN_VARIABLE, "1000")
    assert cli.command_line([]).spin == 0.001
    assert cli.command_line(["--spin=50"]).spin == 0.00005  # the flag wins
    for bad in ("-1", "fast", "2.5"):
        with pytest.raises(Exit) as refused:
            cli.command_line(["--spin", bad])
        assert (refused.value.status, refused.value.stderr) == (
            1,
            f"fakejs: --spin must be a whole number of microseconds (0: never spin), not {bad!r}\n",
        )
