"""``fakejs --timeline FILE``: the command-line server records its timeline and writes the page when it exits.

Pinned: the flag turns on a ring of the in-process default size (the
command line records nothing without it), is listed by ``--help``, and is
refused at start where no page could be written; a server stopped by
SIGTERM, SIGINT or the end of lame duck mode (SIGUSR2) writes the page,
with the publishes a client made, after the store was flushed; so does a
server forked by the warm launcher, and a cluster (``--cluster_size N``), whose
page has every node's events; a page that cannot be written is logged
and the server exits as usual.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nats
import pytest

from fakejs import cli
from fakejs.testkit.timeline import DEFAULT_SIZE
from tests.harness.timeline_pages import embedded_json
from tests.harness.warm_spawn import NO_FORKSERVER, Started, holders, listening_inode, spawn_each, start_forkserver


def test_the_flag_records_the_default_ring_and_names_the_file(tmp_path: Path) -> None:
    page = tmp_path / "timeline.html"
    command = cli.command_line(["-js", "--timeline", str(page)])
    assert (command.options.timeline, command.timeline_file) == (DEFAULT_SIZE, str(page))
    plain = cli.command_line(["-js"])
    assert (plain.options.timeline, plain.timeline_file) == (0, "")


def test_a_relative_file_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.command_line(["-timeline=page.html"]).timeline_file == str(tmp_path / "page.html")


@pytest.mark.parametrize(
    ("arguments", "refusal"),
    [
        (["--timeline", "{tmp}/missing/page.html"], "fakejs: --timeline {tmp}/missing/page.html: no directory"),
        (["--timeline", "{tmp}"], "fakejs: --timeline {tmp}: a directory"),
    ],
)
def test_refused_where_no_page_could_be_written(tmp_path: Path, arguments: list[str], refusal: str) -> None:
    with pytest.raises(cli.Exit) as refused:
        cli.command_line([argument.format(tmp=tmp_path) for argument in arguments])
    assert refused.value.status == 1
    assert refused.value.stderr.startswith(refusal.format(tmp=tmp_path))


def test_help_lists_the_flag_and_the_ring_size() -> None:
    own = cli.USAGE.split("fakejs Options:")[1].split("Common Options:")[0]
    assert "--timeline <file>" in own
    assert f"the newest {DEFAULT_SIZE} events" in own


def events(page: Path) -> list[dict[str, Any]]:
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>")
    data: list[dict[str, Any]] = embedded_json(text)["events"]
    return data


async def publish_and_close(port: int) -> None:
    nc = await nats.connect(f"nats://127.0.0.1:{port}")
    js = nc.jetstream()
    await js.add_stream(name="ORDERS", subjects=["orders.>"])
    assert (await js.publish("orders.1", b"one")).seq == 1
    await nc.close()


@pytest.fixture
def spawn() -> Iterator[Callable[..., Started]]:
    """Spawns a ``fakejs`` and waits until it is ready; what still runs at the end is killed."""
    yield from spawn_each()


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT, signal.SIGUSR2])
async def test_the_page_is_written_when_the_server_exits(
    spawn: Callable[..., Started], tmp_path: Path, how: signal.Signals
) -> None:
    page = tmp_path / "timeline.html"
    store = tmp_path / "store"
    server = spawn("--port", "-1", "-js", "-sd", str(store), "--timeline", str(page), env=NO_FORKSERVER)
    await publish_and_close(server.port)
    assert not page.exists()
    rest = server.stop(how)  # SIGUSR2: lame duck mode, with no client left to wait for
    assert server.process.returncode == 0
    (published,) = [event for event in events(page) if event["kind"] == "publish"]
    assert (published["stream"], published["subject"], published["seq"]) == ("ORDERS", "orders.1", 1)
    lines = rest.splitlines()
    exiting = next(i for i, line in enumerate(lines) if line.endswith("Server Exiting.."))
    written = next(i for i, line in enumerate(lines) if "Wrote the timeline page" in line)
    assert exiting < written and lines[written].endswith(f"to {page}")
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


async def test_the_store_keeps_what_was_acknowledged(spawn: Callable[..., Started], tmp_path: Path) -> None:
    store = tmp_path / "store"
    page = tmp_path / "timeline.html"
    server = spawn("--port", "-1", "-js", "-sd", str(store), "--timeline", str(page), env=NO_FORKSERVER)
    await publish_and_close(server.port)
    server.stop()
    again = spawn("--port", "-1", "-js", "-sd", str(store), env=NO_FORKSERVER)
    nc = await nats.connect(f"nats://127.0.0.1:{again.port}")
    assert (await nc.jetstream().stream_info("ORDERS")).state.messages == 1
    await nc.close()
    again.stop()


@pytest.mark.skipif(sys.platform != "linux", reason="warm starts are Linux's (abstract sockets, pidfds)")
async def test_a_server_forked_by_the_warm_launcher_writes_it_too(
    spawn: Callable[..., Started], tmp_path: Path
) -> None:
    start_forkserver()
    page = tmp_path / "timeline.html"
    server = spawn("--port", "-1", "-js", "--timeline", str(page))
    assert holders(listening_inode(server.port)) != [server.process.pid]  # forked
    await publish_and_close(server.port)
    server.stop()
    assert server.process.returncode == 0
    assert "publish" in [event["kind"] for event in events(page)]


async def test_a_cluster_writes_one_page_with_a_group_of_lanes_per_node(
    spawn: Callable[..., Started], tmp_path: Path
) -> None:
    page = tmp_path / "timeline.html"
    store = tmp_path / "store"
    cluster = spawn(
        "--cluster_size", "3", "-js", "--port", "-1", "-sd", str(store), "--timeline", str(page), env=NO_FORKSERVER
    )
    cluster.read_until("nodes is ready")  # every node, and the cluster's JetStream
    await publish_and_close(cluster.port)
    rest = cluster.stop()
    assert cluster.process.returncode == 0
    recorded = events(page)
    (published,) = [event for event in recorded if event["kind"] == "publish"]
    assert (published["stream"], published["seq"]) == ("ORDERS", 1)
    assert published["node"] in {"n1", "n2", "n3"}
    connected = {event["node"] for event in recorded if event["kind"] == "client.connect"}
    assert connected and connected <= {"n1", "n2", "n3"}
    assert f"to {page}" in rest and "Wrote the timeline page" in rest


async def test_a_page_that_cannot_be_written_is_logged(spawn: Callable[..., Started], tmp_path: Path) -> None:
    directory = tmp_path / "pages"
    directory.mkdir()
    page = directory / "timeline.html"
    server = spawn("--port", "-1", "--timeline", str(page), env=NO_FORKSERVER)
    directory.rmdir()
    rest = server.stop()
    assert server.process.returncode == 0
    assert f"[ERR] Could not write the timeline page to {page}: " in rest
