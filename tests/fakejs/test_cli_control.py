"""``--control_token`` and ``--scenario_dir``: fakejs-only flags guarding and feeding the control API."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from fakejs import cli
from tests.harness.command_line import finish, wait_ready


def options(argv: list[str]) -> cli.ServerOptions:
    return cli.command_line(argv).options


@pytest.mark.parametrize("argv", [["--control_token", "t"], ["-control_token=t"], ["--control_token=t"]])
def test_control_token_flag(argv: list[str]) -> None:
    assert options(argv).control_token == "t"


def test_control_token_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cli.CONTROL_TOKEN_VARIABLE, "from-env")
    assert options([]).control_token == "from-env"
    assert options(["--control_token", "flag"]).control_token == "flag"


def test_scenario_dir_repeats() -> None:
    assert options(["--scenario_dir", "a", "-scenario_dir=b", "--scenario_dir=c"]).scenario_dirs == ["a", "b", "c"]


def test_defaults_leave_the_control_api_open_and_without_directories(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(cli.CONTROL_TOKEN_VARIABLE, raising=False)
    defaults = options([])
    assert (defaults.control_token, defaults.scenario_dirs, defaults.control) == ("", [], True)


def test_help_names_the_flags() -> None:
    text = cli.USAGE
    assert "--control_token <token>" in text and "--scenario_dir <dir>" in text


async def test_command_line_server_guards_its_control_api(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text('name = "mine"\n')
    argv = ["-p", "-1", "-m", "-1", "--control_token", "ctl", "--scenario_dir", str(tmp_path)]
    process = subprocess.Popen(
        [sys.executable, "-m", "fakejs", *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        log = await wait_ready(process)
        port = re.search(r"Starting http monitor on 127\.0\.0\.1:(\d+)", log).group(1)  # type: ignore[union-attr]

        def start(headers: dict[str, str]) -> tuple[int, bytes]:
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/fakejs/scenario/start",
                data=b'{"name": "mine.toml"}',
                headers={"Content-Type": "application/json", **headers},
            )
            try:
                with urllib.request.urlopen(request, timeout=5) as response:
                    return response.status, response.read()
            except urllib.error.HTTPError as exc:
                return exc.code, exc.read()

        assert (await asyncio.to_thread(start, {}))[0] == 401
        status, body = await asyncio.to_thread(start, {"Authorization": "Bearer ctl"})
        assert status == 200 and json.loads(body)["scenario"] == "mine"
        rc, _ = await finish(process, signal.SIGTERM)
        assert rc == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
