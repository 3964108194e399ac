"""Starting scenarios (marker, method, file path) and scenario files that cannot run.

A scenario starts the same way from the ``@pytest.mark.fakejs(scenario=...)``
marker, from ``fakejs_server.scenario(...)`` during a test and from a path
to a TOML file.  A file that cannot run is refused, naming file, line and
key, by the loader, by the controller and by ``fakejs --scenario``.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import nats
import pytest

from fakejs.targets.handles import FakeJS
from fakejs.testkit.scenarios import ScenarioError, load_scenario, load_scenario_text
from tests.harness.js import api
from tests.harness.scenarios import SHIPPED

# -- starting a scenario ----------------------------------------------------------------------


def _setup_and_faults(fakejs_server: FakeJS) -> tuple[list[tuple[str, list[str]]], list[dict[str, Any]]]:
    state = fakejs_server.state()
    streams = [(s["name"], [c["name"] for c in s["consumers"]]) for s in state["streams"]]
    faults = [{k: v for k, v in f.items() if k != "id"} for f in state["faults"]]
    return streams, faults


@pytest.mark.fakejs(scenario="consumer-deleted")
async def test_marker_starts_the_scenario_before_the_test(fakejs_server: FakeJS) -> None:
    """``@pytest.mark.fakejs(scenario=...)``: setup and faults are in place when the test body starts."""
    streams, faults = _setup_and_faults(fakejs_server)
    assert streams == [("ORDERS", ["worker"])]
    assert faults == [
        {
            "do": "delete_consumer",
            "on": "pull.request",
            "match": {"stream": "ORDERS", "consumer": "worker"},
            "args": {"stream": "ORDERS", "consumer": "worker"},
            "after": 0,
            "times": 1,
            "delay": 0.0,
            "fired": 0,
        }
    ]
    assert fakejs_server.call(lambda: fakejs_server.server.control.scenario.name) == "consumer-deleted"


async def test_scenario_method_starts_the_same_thing_mid_test(fakejs_server: FakeJS) -> None:
    """``fakejs_server.scenario(name)``: nothing before the call, then the same setup and faults as the marker gives."""
    assert _setup_and_faults(fakejs_server) == ([], [])
    started = fakejs_server.scenario("consumer-deleted")
    assert started["scenario"] == "consumer-deleted" and len(started["faults"]) == 1
    streams, faults = _setup_and_faults(fakejs_server)
    assert streams == [("ORDERS", ["worker"])]
    assert [(f["do"], f["on"]) for f in faults] == [("delete_consumer", "pull.request")]


async def test_scenario_from_a_file_path(fakejs_server: FakeJS, tmp_path: Path) -> None:
    """A scenario need not be shipped: a path to a TOML file works the same way, and its steps fire."""
    path = tmp_path / "slow-api.toml"
    path.write_text(
        'name = "slow-api"\n'
        '[[setup.streams]]\nname = "S"\nsubjects = ["s.>"]\nstorage = "memory"\n'
        '[[steps]]\non = "api.request"\nmatch = { subject = "$JS.API.STREAM.INFO.*" }\ndo = "fail_api"\nargs = { error = "unavailable" }\n'
    )
    assert fakejs_server.scenario(str(path))["scenario"] == "slow-api"
    nc = await nats.connect(fakejs_server.url)
    try:
        failed = await api(nc, "$JS.API.STREAM.INFO.S")
        assert failed["error"]["err_code"] == 10076  # JSNotEnabledErr
        assert (await api(nc, "$JS.API.STREAM.INFO.S"))["config"]["name"] == "S"  # one-shot
    finally:
        await nc.close()


# -- scenario files that cannot run -----------------------------------------------------------

STREAM = '[[setup.streams]]\nname = "S"\nsubjects = ["s.>"]\n\n'


@pytest.mark.parametrize(
    "text,line,key,words",
    [
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\non = "pull.request"\ndo = "explode"\n',
            8,
            "steps[0].do",
            "unknown action 'explode'",
            id="unknown-action",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\nat = 1.0\ndo = "restart"\n\n[[steps]]\nat = 2.0\ndo = "reboot"\n',
            12,
            "steps[1].do",
            "unknown action 'reboot'",
            id="unknown-action-in-second-step",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\non = "pull.request"\ndo = "drop"\n',
            8,
            "steps[0].do",
            "unknown action 'drop' for 'pull.request'",
            id="change-not-allowed-at-point",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\nat = 1.0\ndo = "restart"\nwhen = 2\n',
            9,
            "steps[0].when",
            "unknown step key 'when'",
            id="unknown-step-key",
        ),
        pytest.param(
            'name = "x"\nretries = 3\n' + STREAM,
            2,
            "",
            "unknown key 'retries'",
            id="unknown-top-key",
        ),
        pytest.param(
            'name = "x"\n[setup]\nstream = []\n',
            3,
            "",
            "unknown setup key 'stream'",
            id="unknown-setup-key",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\non = "pull.request"\nat = 1.0\ndo = "restart"\n',
            7,
            "steps[0].on",
            "exactly one trigger",
            id="both-on-and-at",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\ndo = "restart"\n',
            6,
            "steps[0].on",
            "exactly one trigger",
            id="no-trigger",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\non = "pull.requests"\ndo = "restart"\n',
            7,
            "steps[0].on",
            "unknown hook point 'pull.requests'",
            id="unknown-hook-point",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\nat = -1.0\ndo = "restart"\n',
            7,
            "steps[0].at",
            "'at' must be a number of seconds >= 0",
            id="negative-at",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\nat = 1.0\ndo = "restart"\n\ntimes = -1\n',
            10,
            "steps[0].times",
            "'times' must be >= 1",
            id="bad-times",
        ),
        pytest.param(
            'name = "x"\nclock = "fast"\n',
            2,
            "",
            "'clock' must be",
            id="bad-clock",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\non = "pull.request"\nmatch = { subject = "s.a" }\ndo = "ignore"\n',
            8,
            "steps[0].match",
            "cannot match on subject",
            id="unknown-match-key",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\non = "pull.request"\nafter = "two"\ndo = "ignore"\n',
            8,
            "steps[0].after",
            "after",
            id="wrongly-typed-value",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\nat = 1.0\ndo = "delay_deliveries"\nargs = { secs = 1 }\n',
            9,
            "steps[0].args",
            'unknown field "secs" in args (delay_deliveries): expected one of "consumer", "count", "seconds", "stream"',
            id="unknown-action-argument",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\non = "pull.request"\ndo = "reply_status"\nargs = { code = "409" }\n',
            9,
            "steps[0].args",
            'field "code" of args (reply_status): expected an integer, got "409"',
            id="wrongly-typed-change-argument",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\nat = 1.0\ndo = "delete_consumer"\nargs = { stream = "S" }\n',
            9,
            "steps[0].args",
            'missing field "consumer" in args (delete_consumer): expected a string',
            id="missing-action-argument",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\non = "pull.request"\nmatch = { stream = 5 }\ndo = "ignore"\n',
            8,
            "steps[0].match",
            'field "stream" of match (pull.request): expected a string, got 5',
            id="wrongly-typed-match-value",
        ),
    ],
)
def test_bad_scenario_file_is_refused_naming_file_line_and_key(
    tmp_path: Path, text: str, line: int, key: str, words: str
) -> None:
    """A scenario that cannot run is refused at load time; the error says where (file:line) and which key."""
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(str(path))
    message = str(caught.value)
    where = f"{path}:{line}"
    assert message.startswith(f"{where} ({key}): " if key else f"{where}: "), message
    assert words in message


def test_bad_scenario_is_refused_by_the_controller_too(fakejs_server: FakeJS, tmp_path: Path) -> None:
    """Starting a broken file on a running server raises the same error and changes nothing."""
    path = tmp_path / "bad.toml"
    path.write_text('name = "x"\n' + STREAM + '[[steps]]\non = "pull.request"\ndo = "explode"\n')
    with pytest.raises(ScenarioError, match=r"bad\.toml:8 \(steps\[0\]\.do\): unknown action 'explode'"):
        fakejs_server.scenario(str(path))
    assert fakejs_server.state()["streams"] == [] and fakejs_server.state()["faults"] == []


def test_unknown_scenario_name_lists_the_shipped_ones() -> None:
    """A name that is neither a file nor a shipped scenario is refused, listing what is shipped."""
    with pytest.raises(ScenarioError, match="no scenario file 'leader-change'") as caught:
        load_scenario("leader-change")
    assert all(name in str(caught.value) for name in SHIPPED)


def test_toml_syntax_error_names_the_file() -> None:
    """Not TOML at all: the file and tomllib's line and column."""
    with pytest.raises(ScenarioError, match=r"^here\.toml: .*line 2"):
        load_scenario_text('name = "x"\n[[steps]\n', "here.toml")


# -- fakejs --scenario ------------------------------------------------------------------------


def _fakejs(*args: str) -> list[str]:
    return [sys.executable, "-m", "fakejs", "-a", "127.0.0.1", "-p", "-1", *args]


async def _ready(process: subprocess.Popen[bytes], log_path: Path, timeout: float = 15.0) -> int:
    """Wait for "Server is ready" in the log file; returns the port from the listen line."""
    deadline = time.monotonic() + timeout
    log = ""
    while "Server is ready" not in log:
        if process.poll() is not None:
            raise AssertionError(f"fakejs exited with {process.returncode}:\n{log}")
        if time.monotonic() > deadline:
            raise AssertionError(f"not ready within {timeout}s:\n{log}")
        await asyncio.sleep(0.01)
        log = log_path.read_text() if log_path.exists() else ""
    return int(log.split("Listening for client connections on 127.0.0.1:")[1].split()[0])


async def _terminate(process: subprocess.Popen[bytes]) -> int:
    process.terminate()
    return int(await asyncio.to_thread(process.wait, 10))


def test_cli_refuses_a_bad_scenario_with_status_1(tmp_path: Path) -> None:
    """``fakejs --scenario FILE`` checks the file before listening: a bad one exits 1 with the error."""
    path = tmp_path / "bad.toml"
    path.write_text('name = "x"\n' + STREAM + '[[steps]]\nat = 1.0\non = "client.connect"\ndo = "disconnect"\n')
    done = subprocess.run(_fakejs("--scenario", str(path)), capture_output=True, text=True, timeout=20, check=False)
    assert done.returncode == 1
    assert f"{path}:8 (steps[0].on): a fault needs exactly one trigger" in done.stderr
    assert "Server is ready" not in done.stderr + done.stdout


async def test_cli_runs_a_good_scenario(tmp_path: Path) -> None:
    """A good file: the server starts ("Server is ready"), with the scenario's setup and faults in place for the first client."""
    path = tmp_path / "good.toml"
    path.write_text(
        'name = "good"\n'
        + STREAM
        + '[[steps]]\non = "pull.request"\ndo = "reply_status"\nargs = { code = 409, text = "Leadership Change" }\n'
    )
    log_path = tmp_path / "server.log"
    process = subprocess.Popen(_fakejs("-js", "-sd", str(tmp_path), "-l", str(log_path), "--scenario", str(path)))
    try:
        port = await _ready(process, log_path)
        nc = await nats.connect(f"nats://127.0.0.1:{port}")
        try:
            info = await api(nc, "$JS.API.STREAM.INFO.S")
            assert info["config"]["subjects"] == ["s.>"]
            created = await api(
                nc, "$JS.API.CONSUMER.CREATE.S.C", {"stream_name": "S", "config": {"durable_name": "C"}}
            )
            assert "error" not in created
            reply = await nc.request("$JS.API.CONSUMER.MSG.NEXT.S.C", b'{"batch":1,"no_wait":true}', timeout=2)
            assert reply.headers is not None and reply.headers["Description"] == "Leadership Change"
        finally:
            await nc.close()
    finally:
        rc = await _terminate(process)
    assert rc == 0


async def test_cli_scenario_with_a_store_dir_still_to_create(tmp_path: Path) -> None:
    """``-sd`` naming a directory that does not exist yet: created, as nats-server does, and the file-backed scenario runs."""
    log_path = tmp_path / "server.log"
    store = tmp_path / "new" / "store"
    process = subprocess.Popen(_fakejs("-js", "-sd", str(store), "-l", str(log_path), "--scenario", "server-restart"))
    try:
        port = await _ready(process, log_path)
        nc = await nats.connect(f"nats://127.0.0.1:{port}")
        try:
            info = await api(nc, "$JS.API.STREAM.INFO.ORDERS")
            assert info["config"]["storage"] == "file"
        finally:
            await nc.close()
        assert store.is_dir()
    finally:
        await _terminate(process)
